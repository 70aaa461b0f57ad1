"""Ogg Opus muxer (RFC 3533, RFC 7845): no maintained Python library writes pages per flush."""

from __future__ import annotations

import secrets
import struct
import zlib
from collections.abc import Sequence

__all__ = ["OggOpusWriter", "ogg_crc32", "opus_packet_samples_48k"]

OGG_CAPTURE_PATTERN = b"OggS"

# Header type flags (RFC 3533 section 6).
FLAG_CONTINUED = 0x01
FLAG_BOS = 0x02
FLAG_EOS = 0x04

# A page with no packet ending on it carries granule position -1 (RFC 3533 section 6).
NO_GRANULE = -1

_MAX_SEGMENTS = 255
_VENDOR = b"voxlite"
# version, flags, granule, serial, sequence, crc, segment count.
_PAGE_HEADER = struct.Struct("<4sBBqIIIB")


# Ogg's CRC-32 is the unreflected ("MSB-first") variant with init 0 and no final xor. It
# equals zlib's reflected CRC-32 of the same bytes with their bits reversed, itself reversed,
# once zlib's inversion before and after is undone: zlib's C code, not a loop in Python
# (about a hundred times faster on a 4 KB page).
_REVERSED_BYTES = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def ogg_crc32(data: bytes) -> int:
    """Ogg page checksum (polynomial 0x04C11DB7, not reflected, init 0, no final xor)."""
    reflected = zlib.crc32(data.translate(_REVERSED_BYTES), 0xFFFFFFFF) ^ 0xFFFFFFFF
    return int(f"{reflected:032b}"[::-1], 2)


def opus_packet_samples_48k(packet: bytes) -> int:
    """Duration of an Opus packet in 48 kHz samples, read from its TOC byte (RFC 6716 3.1)."""
    if not packet:
        raise ValueError("empty Opus packet has no TOC byte")
    toc = packet[0]
    config = toc >> 3
    if config < 12:  # SILK-only: 10, 20, 40, 60 ms
        frame = (480, 960, 1920, 2880)[config & 3]
    elif config < 16:  # hybrid: 10, 20 ms
        frame = (480, 960)[config & 1]
    else:  # CELT-only: 2.5, 5, 10, 20 ms
        frame = (120, 240, 480, 960)[config & 3]
    code = toc & 3
    if code == 0:
        frames = 1
    elif code in (1, 2):
        frames = 2
    else:
        if len(packet) < 2:
            raise ValueError("code 3 Opus packet lacks its frame count byte")
        frames = packet[1] & 0x3F
    return frame * frames


class OggOpusWriter:
    """Turns Opus packets into whole Ogg pages, flushed whenever the caller asks.

    Granule positions follow RFC 7845: a page's granule is the number of 48 kHz samples decoded
    from all packets that end on or before it, counted from the start of the stream, so the
    pre-skip samples are part of that count (playback position = granule - pre-skip).
    """

    def __init__(self, *, pre_skip: int, input_sample_rate: int, serial: int | None = None) -> None:
        """pre_skip is in 48 kHz samples; input_sample_rate is informational (OpusHead)."""
        if not 0 <= pre_skip <= 0xFFFF:
            raise ValueError(f"pre_skip {pre_skip} must fit in 16 bits")
        if not 0 < input_sample_rate <= 0xFFFFFFFF:
            raise ValueError(f"input_sample_rate {input_sample_rate} must be a positive 32-bit int")
        self.pre_skip = pre_skip
        self.input_sample_rate = input_sample_rate
        self.serial = secrets.randbits(32) if serial is None else serial & 0xFFFFFFFF
        self._sequence = 0
        self._granule = 0  # 48 kHz samples of all packets written so far
        self._last_page_granule = 0  # granule of the last page on which a packet ended
        self._headers_written = False
        self._finished = False

    @property
    def granule_position(self) -> int:
        """48 kHz samples in all packets written so far (pre-skip included)."""
        return self._granule

    @property
    def finished(self) -> bool:
        return self._finished

    def _opus_head(self) -> bytes:
        # RFC 7845 5.1: version 1, one channel, pre-skip, input rate, gain 0 dB, mapping family 0.
        return struct.pack(
            "<8sBBHIhB", b"OpusHead", 1, 1, self.pre_skip, self.input_sample_rate, 0, 0
        )

    @staticmethod
    def _opus_tags() -> bytes:
        return b"OpusTags" + struct.pack("<I", len(_VENDOR)) + _VENDOR + struct.pack("<I", 0)

    def _page(self, flags: int, granule: int, lacing: Sequence[int], body: bytes) -> bytes:
        header = _PAGE_HEADER.pack(
            OGG_CAPTURE_PATTERN, 0, flags, granule, self.serial, self._sequence, 0, len(lacing)
        )
        page = bytearray(header)
        page += bytes(lacing)
        page += body
        struct.pack_into("<I", page, 22, ogg_crc32(bytes(page)))
        self._sequence += 1
        return bytes(page)

    def _header_pages(self) -> bytes:
        # Each header alone on its own page; audio must start on a fresh page (RFC 7845 3).
        head = self._opus_head()
        tags = self._opus_tags()
        return self._page(FLAG_BOS, 0, _lacing(len(head)), head) + self._page(
            0, 0, _lacing(len(tags)), tags
        )

    def write(
        self,
        packets: Sequence[bytes],
        *,
        end_of_stream: bool = False,
        end_granule: int | None = None,
    ) -> bytes:
        """Return whole pages carrying these packets (headers first on the first call).

        With end_of_stream the last page gets the EOS flag and, when end_granule is given, that
        granule instead of the packet total, so a decoder trims the padding after it. The trim
        must be shorter than the audio on that last page (RFC 7845 4.5), else ValueError.
        Nothing is returned (b"") for no packets unless headers are still due.
        """
        if self._finished:
            raise RuntimeError("Ogg stream already ended")
        if end_of_stream and not packets:
            raise ValueError("the end-of-stream page needs at least one packet")
        out = bytearray()
        if not self._headers_written:
            out += self._header_pages()
            self._headers_written = True
        if not packets:
            return bytes(out)

        total = self._granule + sum(opus_packet_samples_48k(p) for p in packets)
        final_granule = total
        if end_of_stream and end_granule is not None:
            if not self.pre_skip <= end_granule <= total:
                raise ValueError(
                    f"end_granule {end_granule} must lie between pre-skip {self.pre_skip} "
                    f"and the packet total {total}"
                )
            final_granule = end_granule

        # Build the pages segment by segment so a packet may span pages (continued flag).
        pages: list[tuple[int, int, list[int], bytearray]] = []  # flags, granule, lacing, body
        lacing: list[int] = []
        body = bytearray()
        granule = NO_GRANULE
        continued = False
        running = self._granule
        for packet in packets:
            running += opus_packet_samples_48k(packet)
            values = _lacing(len(packet))
            offset = 0
            for i, value in enumerate(values):
                lacing.append(value)
                body += packet[offset : offset + value]
                offset += value
                if i == len(values) - 1:
                    granule = running
                if len(lacing) == _MAX_SEGMENTS:
                    pages.append((FLAG_CONTINUED if continued else 0, granule, lacing, body))
                    continued = i != len(values) - 1
                    lacing, body, granule = [], bytearray(), NO_GRANULE
        if lacing:
            pages.append((FLAG_CONTINUED if continued else 0, granule, lacing, body))

        if end_of_stream:
            flags, granule, lacing, body = pages[-1]
            # The page before the last one with a finished packet bounds how far we may trim.
            previous = self._last_page_granule
            for _, g, _, _ in pages[:-1]:
                if g != NO_GRANULE:
                    previous = g
            if final_granule <= previous:
                raise ValueError(
                    f"end_granule {final_granule} would trim more than the last page holds "
                    f"(previous page ends at granule {previous})"
                )
            pages[-1] = (flags | FLAG_EOS, final_granule, lacing, body)

        for flags, granule, lacing, body in pages:
            out += self._page(flags, granule, lacing, bytes(body))
            if granule != NO_GRANULE:
                self._last_page_granule = granule
        self._granule = total
        self._finished = end_of_stream
        return bytes(out)


def _lacing(length: int) -> list[int]:
    # A packet of n bytes is n // 255 values of 255 then one value < 255 (0 when n % 255 == 0).
    return [255] * (length // 255) + [length % 255]
