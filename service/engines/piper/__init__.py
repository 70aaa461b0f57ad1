"""Piper (VITS) voices: the graph split at load, the flow and vocoder run window by window."""

from .family import EMBEDDED_VOICE, PiperFamily, embedded_voice_files
from .model import PiperParams
from .voice import PiperVoice

__all__ = ["EMBEDDED_VOICE", "PiperFamily", "PiperParams", "PiperVoice", "embedded_voice_files"]
