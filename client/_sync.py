"""The synchronous client: `Client` and its bidirectional `StreamSession`."""

from __future__ import annotations

import os
import queue
from collections.abc import Generator, Iterator
from typing import Any, BinaryIO

import grpc
from typing_extensions import Unpack
from voxlite.tts.v1 import tts_pb2

from . import _convert
from ._base import (
    BaseClient,
    BaseStreamSession,
    health_request,
    health_status,
    synthesize_request,
    unknown_service,
    voices_request,
)
from ._channel import Metadata
from ._errors import VoxliteError, ended_after_summary, from_rpc_error
from ._events import HealthStatus, StreamEvent, Summary, SynthesisEvent
from ._files import AudioFileWriter
from ._options import FileOptions, SynthesisOptions, check
from ._voices import VoiceList


class StreamSession(BaseStreamSession):
    """One StreamingSynthesize call: send text while iterating the events that come back.

    `send()`, `flush()`, `clear()` and `close()` only queue a request (gRPC sends it from its own
    thread), so they never wait for audio; any thread may call them while another iterates.
    Leaving a `with` block cancels the call if it has not ended.

    Unlike the asyncio twin it sends text at once, without waiting for the config's answer:
    grpc/grpc#36066 (a write meeting the call's end hides the server's status) is grpc.aio's."""

    def __init__(self, method: Any, config: tts_pb2.SynthesisConfig, **call_args: Any) -> None:
        super().__init__()
        self._requests: queue.Queue[tts_pb2.StreamingSynthesizeRequest | None] = queue.Queue()
        self._requests.put(_convert.config_request(config))
        self._call = method(iter(self._requests.get, None), **call_args)

    def _enqueue(self, request: tts_pb2.StreamingSynthesizeRequest | None) -> None:
        self._requests.put(request)

    def send(self, text: str) -> None:
        """Append text; the server speaks it a sentence or clause at a time as it can cut it."""
        self._send(text)

    def flush(self) -> int:
        """Speak everything sent so far now. Returns the id that the matching FlushDone carries."""
        return self._flush()

    def clear(self) -> int:
        """Barge-in: drop unspoken text and unsent audio. Returns the id of the ClearDone."""
        return self._clear()

    def close(self) -> None:
        """Half-close: the server finishes what it holds, then ends with a Summary."""
        self._close()

    def cancel(self) -> None:
        """End the call now; the server stops its work."""
        self._close()
        self._call.cancel()

    def __iter__(self) -> Iterator[StreamEvent]:
        summary = False
        try:
            for response in self._call:
                event = self._event(response)
                summary = isinstance(event, Summary)
                yield event
        except grpc.RpcError as exc:
            if not ended_after_summary(exc, summary):
                raise from_rpc_error(exc) from exc
        finally:
            if self._call.done():
                # gRPC's thread that sends the requests waits on the queue for ever, also
                # after the call ended (a session refused and never closed): the end lets it go.
                self._requests.put(None)

    def __enter__(self) -> StreamSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.cancel()


class Client(BaseClient):
    """A connection to a voxlite server; failed calls raise `VoxliteError` subclasses.

    `target` is "host:port"; "dns:///name:port" (round robin over the name's addresses); or
    several "host:port" as a list or a comma-separated string (round robin over all; host names
    among them are resolved once, here). `metadata` is sent with every call, before the call's
    own; `options` are gRPC channel arguments. Use it as a context manager, or call `close()`.

    `synthesize()`, `stream()` and `synthesize_to_file()` take the synthesis options (voice,
    language, encoding, ...) as keywords, each documented in `voxlite.client.SynthesisOptions`;
    `timeout` bounds a call in seconds; `metadata` is sent with it, after the client's.

    TLS: `tls=True` trusts the system's CAs; `root_certificates` (PEM) trusts those instead;
    `certificate_chain` with `private_key` (PEM) present a client certificate (mutual TLS).
    Any of them turns TLS on. Or pass ready `credentials` (grpc.ssl_channel_credentials(...),
    possibly composed with call credentials) instead of those options.

    `token` is sent as "authorization: Bearer <token>" with every call: as call credentials
    over TLS; over plaintext (gRPC refuses call credentials there) as plain metadata, which
    anyone on the path can read, so keep that to loopback or a private network."""

    @staticmethod
    def _open(
        target: str, credentials: grpc.ChannelCredentials | None, options: list[tuple[str, object]]
    ) -> Any:
        if credentials is None:
            return grpc.insecure_channel(target, options=options)
        return grpc.secure_channel(target, credentials, options=options)

    def synthesize(
        self,
        text: str,
        *,
        timeout: float | None = None,
        metadata: Metadata | None = None,
        **options: Unpack[SynthesisOptions],
    ) -> Generator[SynthesisEvent, None, None]:
        """Speak one text: yields AudioFormat, then AudioChunk (and Timestamps), then Summary.

        Events are yielded as they arrive; `close()` on the generator (or dropping it) cancels the
        call."""
        request = synthesize_request(text, **options)
        return _events(self._stub.Synthesize(request, **self._call_args(timeout, metadata)))

    def stream(
        self,
        *,
        timeout: float | None = None,
        metadata: Metadata | None = None,
        **options: Unpack[SynthesisOptions],
    ) -> StreamSession:
        """Open a bidirectional session: `send()` text pieces as they come, iterate the events.

        `timeout` bounds the whole session."""
        config = _convert.synthesis_config(**options)
        call_args = self._call_args(timeout, metadata)
        return StreamSession(self._stub.StreamingSynthesize, config, **call_args)

    def synthesize_to_file(
        self,
        text: str,
        file: str | os.PathLike[str] | BinaryIO,
        *,
        format: str | None = None,
        timeout: float | None = None,
        metadata: Metadata | None = None,
        **options: Unpack[FileOptions],
    ) -> Summary:
        """Speak `text` into a file, written chunk by chunk as audio arrives.

        The format comes from the extension (see `AudioFileWriter`) unless `format` is given."""
        check(options, FileOptions)  # before the file is made
        summary: Summary | None = None
        with AudioFileWriter(file, format=format) as writer:
            for event in self.synthesize(
                text, encoding=writer.encoding, timeout=timeout, metadata=metadata, **options
            ):
                writer.write(event)
                if isinstance(event, Summary):
                    summary = event
        return _convert.ended(summary)

    def voices(
        self,
        *,
        language: str | None = None,
        timeout: float | None = None,
        metadata: Metadata | None = None,
    ) -> VoiceList:
        """The voices the server has (default first), optionally only one language ("en")."""
        response = self._unary(self._stub.ListVoices, voices_request(language), timeout, metadata)
        return _convert.voice_list(response)

    def health(
        self,
        *,
        service: str = "",
        timeout: float | None = None,
        metadata: Metadata | None = None,
    ) -> HealthStatus:
        """The standard gRPC health check; "" asks about the server as a whole, and a service
        the server does not know is SERVICE_UNKNOWN."""
        try:
            response = self._unary(self._health.Check, health_request(service), timeout, metadata)
        except VoxliteError as exc:
            return unknown_service(exc)
        return health_status(response)

    def _unary(
        self, method: Any, request: Any, timeout: float | None, metadata: Metadata | None
    ) -> Any:
        try:
            return method(request, **self._call_args(timeout, metadata))
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from exc

    def close(self) -> None:
        """Close the channel; calls still running are cancelled, and later calls refused."""
        self._closed = True
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _events(call: Any) -> Generator[SynthesisEvent, None, None]:
    try:
        for response in call:
            yield _convert.synthesis_event(response)
    except grpc.RpcError as exc:
        raise from_rpc_error(exc) from exc
    finally:
        call.cancel()  # a no-op once the call has ended; stops it when the caller stops early
