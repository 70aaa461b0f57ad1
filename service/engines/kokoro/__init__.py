"""Kokoro-82M: Mandarin, Japanese, Spanish, French, Italian and Portuguese voices behind the
engine interface."""

from .family import DEFAULT_VOICES, KokoroFamily

__all__ = ["DEFAULT_VOICES", "KokoroFamily"]
