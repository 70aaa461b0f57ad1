"""The vocoder's window sizes: small first (audio at once), then growing (less spent on margins)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class VocoderSchedule:
    """Sizes of the vocoder's windows, in latent frames (about 11.6 ms each at 22050 Hz)."""

    first: int = 8
    """The first window when the listener has no audio in hand: small, so that its audio exists
    as soon as possible."""
    growth: float = 2.0
    """Each later window is this many times the previous one: fourfold ran fewer frames but let
    calls stutter past capacity (bench/capacity.py; docs/benchmarks.md#capacity-live-voices)..."""
    largest: int = 128
    """...up to this size: larger windows waste less on their margins, smaller ones keep each
    job short, so that no stream waits long behind another's window (bench/capacity.py chose
    128; docs/benchmarks.md#capacity-live-voices)."""

    def __post_init__(self) -> None:
        if self.first < 1 or self.largest < self.first or self.growth < 1:
            raise ValueError(f"invalid vocoder schedule {self}")

    def next_size(self, previous: int, ahead: int = 0) -> int:
        """The next window's size after one of `previous` frames (0: none yet), when the
        listener has `ahead` frames of audio in hand: never smaller than the usual growth, and
        as large as the audio in hand allows, which is time the window may take."""
        grown = self.first if previous == 0 else max(previous + 1, int(previous * self.growth))
        return min(self.largest, max(grown, ahead))

    def windows(self, frames: int) -> Iterator[tuple[int, int]]:
        """(start, end) frame ranges that tile [0, frames), with nothing in hand."""
        start, size = 0, 0
        while start < frames:
            size = self.next_size(size)
            end = min(frames, start + size)
            yield start, end
            start = end
