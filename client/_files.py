"""Audio files written chunk by chunk as the audio arrives."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import BinaryIO

from ._events import AudioChunk, AudioFormat, Encoding, StreamEvent

FORMATS: dict[str, Encoding] = {
    "opus": Encoding.OGG_OPUS,
    "ogg": Encoding.OGG_OPUS,
    "wav": Encoding.PCM_S16LE,
    "raw": Encoding.PCM_S16LE,
    "ulaw": Encoding.MULAW,
    "alaw": Encoding.ALAW,
}
"""File formats by name (= extension) and the encoding each asks of the server."""

_UNKNOWN_SIZE = 0xFFFFFFFF  # RIFF size of a stream whose length is not known (pipes, stdout)


def format_for_path(path: str | os.PathLike[str]) -> str:
    """The file format its extension names, e.g. "wav" for "speech.WAV"."""
    name = Path(path).suffix.lower().removeprefix(".")
    if name not in FORMATS:
        raise ValueError(
            f"cannot tell the audio format of {os.fspath(path)!r} from its extension: use one of "
            + ", ".join(f".{f}" for f in FORMATS)
        )
    return name


class AudioFileWriter:
    """Writes the audio events of a call to a file, each chunk as it arrives.

    Formats: "opus"/"ogg" (Ogg Opus: the chunks are whole Ogg pages, appended as they come),
    "wav" (16-bit PCM with a RIFF header; the sizes are patched at close, or set to 0xFFFFFFFF
    when the output cannot seek, such as a pipe), "raw" (16-bit little-endian PCM), "ulaw" and
    "alaw" (G.711, 8000 Hz, no header). Ask the server for `writer.encoding`, then pass every
    event to `write()`; events that carry no audio are ignored. `file` is a path (the format
    comes from its extension unless `format` is given) or a binary file object (`format`
    required), which is flushed but left open at close."""

    def __init__(self, file: str | os.PathLike[str] | BinaryIO, *, format: str | None = None):
        if format is None:
            if not isinstance(file, str | os.PathLike):
                raise ValueError("give the format of a file object: format='wav', 'opus', ...")
            format = format_for_path(file)
        if format not in FORMATS:
            raise ValueError(f"unknown audio format {format!r}: use one of {', '.join(FORMATS)}")
        self.format = format
        self.encoding = FORMATS[format]
        """The encoding to request from the server."""
        self._owned = isinstance(file, str | os.PathLike)
        self._file: BinaryIO = open(file, "wb") if isinstance(file, str | os.PathLike) else file  # noqa: SIM115
        self._data_bytes = 0
        self._header_at: int | None = None

    def write(self, event: StreamEvent) -> None:
        if isinstance(event, AudioFormat):
            if event.encoding != self.encoding:
                raise ValueError(
                    f"a {self.format} file needs {self.encoding} audio, the server sends "
                    f"{event.encoding}"
                )
            if self.format == "wav":
                self._write_wav_header(event.sample_rate_hz, event.channels)
        elif isinstance(event, AudioChunk):
            self._file.write(event.audio)
            self._file.flush()  # readers of a growing file (players, pipes) see audio at once
            self._data_bytes += len(event.audio)

    def _write_wav_header(self, rate: int, channels: int) -> None:
        seekable = self._file.seekable()
        self._header_at = self._file.tell() if seekable else None
        riff_size, data_size = (36, 0) if seekable else (_UNKNOWN_SIZE, _UNKNOWN_SIZE)
        block = 2 * channels
        self._file.write(
            b"RIFF"
            + struct.pack("<I", riff_size)
            + b"WAVEfmt "
            + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * block, block, 16)
            + b"data"
            + struct.pack("<I", data_size)
        )

    def close(self) -> None:
        """Patch the WAV sizes when the file can seek; close the file if this writer opened it."""
        if self._file.closed:
            return
        if self._header_at is not None:
            end = self._file.tell()
            data = min(self._data_bytes, _UNKNOWN_SIZE - 36)
            self._file.seek(self._header_at + 4)
            self._file.write(struct.pack("<I", 36 + data))
            self._file.seek(self._header_at + 40)
            self._file.write(struct.pack("<I", data))
            self._file.seek(end)
            self._header_at = None
        self._file.flush()
        if self._owned:
            self._file.close()

    def __enter__(self) -> AudioFileWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
