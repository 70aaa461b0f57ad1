"""The synchronous client: `Client` and its bidirectional `StreamSession`."""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections.abc import Generator, Iterator
from typing import Any, BinaryIO

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from typing_extensions import Unpack
from voxlite.tts.v1 import tts_pb2, tts_pb2_grpc

from . import _convert
from ._channel import (
    Metadata,
    Options,
    Target,
    as_pairs,
    channel_options,
    merge_metadata,
    resolve_target,
    security,
)
from ._errors import ended_after_summary, ended_by_server, from_rpc_error
from ._events import HealthStatus, StreamEvent, Summary, SynthesisEvent, VoiceList
from ._files import AudioFileWriter
from ._options import FileOptions, SynthesisOptions, check

_END = object()


class StreamSession:
    """One StreamingSynthesize call: send text while iterating the events that come back.

    `send()`, `flush()`, `clear()` and `close()` only queue a request (gRPC sends it from its own
    thread), so they never wait for audio; any thread may call them while another iterates.
    Leaving a `with` block cancels the call if it has not ended."""

    def __init__(self, method: Any, config: tts_pb2.SynthesisConfig, **call_args: Any) -> None:
        self._requests: queue.Queue[object] = queue.Queue()
        self._requests.put(_convert.config_request(config))
        self._lock = threading.Lock()
        self._closed = False
        self._ended = False
        self._ids = itertools.count(1)
        self._call = method(iter(self._requests.get, _END), **call_args)

    def _put(self, request: object) -> None:
        with self._lock:
            if self._ended:
                raise ended_by_server()
            if self._closed:
                raise ValueError("the stream is closed: no more requests can be sent")
            self._requests.put(request)

    def send(self, text: str) -> None:
        """Append text; the server speaks it a sentence or clause at a time as it can cut it."""
        self._put(_convert.text_request(text))

    def flush(self) -> int:
        """Speak everything sent so far now. Returns the id that the matching FlushDone carries."""
        with self._lock:
            id = next(self._ids)
        self._put(_convert.flush_request(id))
        return id

    def clear(self) -> int:
        """Barge-in: drop unspoken text and unsent audio. Returns the id of the ClearDone."""
        with self._lock:
            id = next(self._ids)
        self._put(_convert.clear_request(id))
        return id

    def close(self) -> None:
        """Half-close: the server finishes what it holds, then ends with a Summary."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._requests.put(_END)

    def cancel(self) -> None:
        """End the call now; the server stops its work."""
        self.close()
        self._call.cancel()

    def _end(self) -> None:
        """The Summary came: the call is over. Half-close at once, so that the server's status
        ends it cleanly (a server that ended the stream first, as in a drain, waits for it)."""
        with self._lock:
            self._ended = not self._closed
        self.close()

    def __iter__(self) -> Iterator[StreamEvent]:
        summary = False
        try:
            for response in self._call:
                event = _convert.event(response)
                summary = isinstance(event, Summary)
                if summary:
                    self._end()
                yield event
        except grpc.RpcError as exc:
            if not ended_after_summary(exc, summary):
                raise from_rpc_error(exc) from exc

    def __enter__(self) -> StreamSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.cancel()


class Client:
    """A connection to a voxlite server; failed calls raise `VoxliteError` subclasses.

    `target` is "host:port"; "dns:///name:port" (round robin over the name's addresses); or
    several "host:port" as a list or a comma-separated string (round robin over all; host names
    among them are resolved once, here). `metadata` is sent with every call, before the call's
    own; `options` are gRPC channel arguments. Use it as a context manager, or call `close()`.

    `synthesize()`, `stream()` and `synthesize_to_file()` take the synthesis options (voice,
    language, encoding, ...) as keywords, each documented in `SynthesisOptions`
    (voxlite.client._options); `timeout` bounds a call in seconds; `metadata` is sent with it,
    after the client's.

    TLS: `tls=True` trusts the system's CAs; `root_certificates` (PEM) trusts those instead;
    `certificate_chain` with `private_key` (PEM) present a client certificate (mutual TLS).
    Any of them turns TLS on. Or pass ready `credentials` (grpc.ssl_channel_credentials(...),
    possibly composed with call credentials) instead of those options.

    `token` is sent as "authorization: Bearer <token>" with every call: as call credentials
    over TLS; over plaintext (gRPC refuses call credentials there) as plain metadata, which
    anyone on the path can read, so keep that to loopback or a private network."""

    def __init__(
        self,
        target: Target = "localhost:50051",
        *,
        credentials: grpc.ChannelCredentials | None = None,
        metadata: Metadata | None = None,
        options: Options | None = None,
        tls: bool = False,
        root_certificates: bytes | None = None,
        certificate_chain: bytes | None = None,
        private_key: bytes | None = None,
        token: str | None = None,
    ) -> None:
        resolved, round_robin = resolve_target(target)
        opts = channel_options(round_robin, options)
        credentials, token_metadata = security(
            credentials=credentials,
            tls=tls,
            root_certificates=root_certificates,
            certificate_chain=certificate_chain,
            private_key=private_key,
            token=token,
        )
        if credentials is None:
            self._channel = grpc.insecure_channel(resolved, options=opts)
        else:
            self._channel = grpc.secure_channel(resolved, credentials, options=opts)
        self._metadata = token_metadata + as_pairs(metadata)
        self._stub = tts_pb2_grpc.TextToSpeechServiceStub(self._channel)
        self._health = health_pb2_grpc.HealthStub(self._channel)

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
        config = _convert.synthesis_config(**options)
        request = tts_pb2.SynthesizeRequest(text=text, config=config)
        call = self._stub.Synthesize(
            request, timeout=timeout, metadata=merge_metadata(self._metadata, metadata)
        )
        return _events(call)

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
        return StreamSession(
            self._stub.StreamingSynthesize,
            config,
            timeout=timeout,
            metadata=merge_metadata(self._metadata, metadata),
        )

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
        request = tts_pb2.ListVoicesRequest(language=language or "")
        try:
            response = self._stub.ListVoices(
                request, timeout=timeout, metadata=merge_metadata(self._metadata, metadata)
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from exc
        return _convert.voice_list(response)

    def health(
        self,
        *,
        service: str = "",
        timeout: float | None = None,
        metadata: Metadata | None = None,
    ) -> HealthStatus:
        """The standard gRPC health check; "" asks about the server as a whole."""
        request = health_pb2.HealthCheckRequest(service=service)
        try:
            response = self._health.Check(
                request, timeout=timeout, metadata=merge_metadata(self._metadata, metadata)
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from exc
        return HealthStatus(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))

    def close(self) -> None:
        """Close the channel; calls still running are cancelled."""
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
