"""Audio files written chunk by chunk as the audio arrives."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import BinaryIO

from ..service.audio.mp3 import Mp3Encoder
from ..service.audio.ogg import FLAG_EOS, ogg_crc32
from ._events import AudioChunk, AudioFormat, Encoding, StreamEvent
from ._writer import FileWriter

FORMATS: dict[str, Encoding] = {
    "opus": Encoding.OGG_OPUS,
    "ogg": Encoding.OGG_OPUS,
    "wav": Encoding.PCM_S16LE,
    "raw": Encoding.PCM_S16LE,
    "ulaw": Encoding.MULAW,
    "alaw": Encoding.ALAW,
    "mp3": Encoding.PCM_S16LE,
}
"""File formats by name (= extension) and the encoding each asks of the server (mp3: PCM,
encoded here, as no gRPC encoding is MP3)."""

_UNKNOWN_SIZE = 0xFFFFFFFF  # RIFF size of a stream whose length is not known (pipes, stdout)
_OGG_FLAGS_AT, _OGG_CRC_AT, _OGG_SEGMENTS_AT = 5, 22, 26  # offsets in an Ogg page header


def format_for_path(path: str | os.PathLike[str]) -> str:
    """The file format its extension names, e.g. "wav" for "speech.WAV"."""
    name = Path(path).suffix.lower().removeprefix(".")
    if name not in FORMATS:
        raise ValueError(
            f"cannot tell the audio format of {os.fspath(path)!r} from its extension: use one of "
            + ", ".join(f".{f}" for f in FORMATS)
        )
    return name


class AudioFileWriter(FileWriter[bytes]):
    """Writes the audio events of a call to a file, each chunk as it arrives.

    Formats: "opus"/"ogg" (Ogg Opus: the chunks are whole Ogg pages, appended as they come),
    "wav" (16-bit PCM with a RIFF header; the sizes are patched at close, or set to 0xFFFFFFFF
    when the output cannot seek, such as a pipe), "raw" (16-bit little-endian PCM), "ulaw" and
    "alaw" (G.711, 8000 Hz, no header), "mp3" (MPEG Layer III at 64 kbit/s, encoded here from
    the server's PCM as it arrives). A call that fails part-way still leaves a valid file
    at close where the file can seek: the WAV sizes count the audio written, and the last Ogg
    page written gets the end-of-stream flag the server had not sent yet (after close,
    `complete` is False only for an Ogg stream cut short on a pipe). Ask the server for
    `writer.encoding`, then pass every event to `write()`; events that carry no audio are
    ignored. `file` is a path (the format comes from its extension unless `format` is given),
    opened at the first audio: a call refused before it leaves no file, and a file already
    there untouched; or a binary file object (`format` required), which is flushed but left
    open at close."""

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
        super().__init__(file, mode="wb", lazy=True)
        self._data_bytes = 0
        self._held: list[bytes] = []
        self._wav: tuple[int, int] | None = None
        """A WAV file's rate and channels, for its header at the first audio."""
        self._mp3: Mp3Encoder | None = None
        """An MP3 file's encoder, made at the format (its rate)."""
        self._formatted = False
        """Whether the call's AudioFormat came."""
        self._header_at: int | None = None
        # The last Ogg page written and where it starts, to mark it the last at close.
        self._last_page: bytes | None = None
        self._last_page_at: int | None = None

    def write(self, event: StreamEvent) -> None:
        if isinstance(event, AudioFormat):
            self._formatted = True
            if event.encoding != self.encoding:
                raise ValueError(
                    f"a {self.format} file needs {self.encoding} audio, the server sends "
                    f"{event.encoding}"
                )
            if self.format == "wav":
                self._wav = (event.sample_rate_hz, event.channels)
            if self.format == "mp3":
                self._mp3 = Mp3Encoder(event.sample_rate_hz)
        elif isinstance(event, AudioChunk):
            if self.format in ("wav", "mp3") and not self._formatted:
                # A WAV's header and an MP3's encoder need the rate: the chunks alone would
                # make a file that no player reads as one.
                raise ValueError(
                    f"a {self.format} file needs the call's AudioFormat (its sample rate) before "
                    "its audio: pass every event of the call to write(), not only the chunks"
                )
            if not self.opened and not event.duration_ms:
                self._held.append(event.audio)  # Ogg's header pages: no file until audio
                return
            if self._wav is not None:
                self._write_wav_header(*self._wav)
                self._wav = None
            for audio in [*self._held, event.audio]:
                if self.encoding is Encoding.OGG_OPUS:
                    self._note_last_page(audio)
                if self._mp3 is not None:
                    audio = self._mp3.encode(audio)
                self._file.write(audio)
                self._data_bytes += len(audio)
            self._held = []
            self._file.flush()  # readers of a growing file (players, pipes) see audio at once

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

    @property
    def complete(self) -> bool:
        """Whether what was written reads to its end as a valid file of its format."""
        return self._last_page is None or bool(self._last_page[_OGG_FLAGS_AT] & FLAG_EOS)

    def _note_last_page(self, chunk: bytes) -> None:
        # Chunks are whole Ogg pages (the API's contract): walk them to the last one's start.
        start = 0
        while start + _OGG_SEGMENTS_AT < len(chunk) and chunk.startswith(b"OggS", start):
            segments = chunk[start + _OGG_SEGMENTS_AT]
            body_at = start + _OGG_SEGMENTS_AT + 1 + segments
            end = body_at + sum(chunk[start + _OGG_SEGMENTS_AT + 1 : body_at])
            if end > len(chunk):
                break
            if end == len(chunk):
                self._last_page = chunk[start:]
                self._last_page_at = self._file.tell() + start if self._file.seekable() else None
                return
            start = end
        self._last_page = self._last_page_at = None  # not whole pages: leave the bytes as sent

    def _end_ogg_stream(self) -> None:
        """Flag the last page written as the stream's end, as a decoder expects of a whole
        stream; a call that failed part-way never sent the page that carries the flag."""
        if self._last_page is None or self._last_page_at is None or self.complete:
            return
        page = bytearray(self._last_page)
        page[_OGG_FLAGS_AT] |= FLAG_EOS
        struct.pack_into("<I", page, _OGG_CRC_AT, 0)
        struct.pack_into("<I", page, _OGG_CRC_AT, ogg_crc32(bytes(page)))
        end = self._file.tell()
        self._file.seek(self._last_page_at)
        self._file.write(page)
        self._file.seek(end)
        self._last_page = bytes(page)

    def _finish(self) -> None:
        """Patch the WAV sizes, or end the Ogg stream, when the file can seek; write the MP3
        encoder's last frames."""
        if self._mp3 is not None:
            self._file.write(self._mp3.finish())
        self._end_ogg_stream()
        if self._header_at is not None:
            end = self._file.tell()
            data = min(self._data_bytes, _UNKNOWN_SIZE - 36)
            self._file.seek(self._header_at + 4)
            self._file.write(struct.pack("<I", 36 + data))
            self._file.seek(self._header_at + 40)
            self._file.write(struct.pack("<I", data))
            self._file.seek(end)
            self._header_at = None
