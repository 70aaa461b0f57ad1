"""Kokoro-82M: Mandarin and Japanese voices behind the engine interface."""

from .family import DEFAULT_VOICES, KokoroFamily

__all__ = ["DEFAULT_VOICES", "KokoroFamily"]
