"""The asyncio client: `AsyncClient` and its bidirectional `AsyncStreamSession` (grpc.aio)."""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, BinaryIO

import grpc
import grpc.aio
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


class AsyncStreamSession:
    """One StreamingSynthesize call: `await send(...)` text while `async for` reads events.

    Requests go through an unbounded queue that gRPC drains in its own task, so sending never
    waits for audio. Leaving an `async with` block cancels the call if it has not ended."""

    def __init__(self, method: Any, config: tts_pb2.SynthesisConfig, **call_args: Any) -> None:
        self._requests: asyncio.Queue[tts_pb2.StreamingSynthesizeRequest | None] = asyncio.Queue()
        self._closed = False
        self._ended = False
        self._ids = itertools.count(1)
        self._answered = asyncio.Event()
        self._call = method(self._request_stream(config), **call_args)

    async def _request_stream(
        self, config: tts_pb2.SynthesisConfig
    ) -> AsyncIterator[tts_pb2.StreamingSynthesizeRequest]:
        # The config alone, then the rest once the server has answered it (its format, or the
        # status of a config it refuses). A write that meets a call the server has just ended
        # makes grpc.aio report INTERNAL "Internal error from Core" in place of the server's
        # status (grpc/grpc#36066): a refused voice must read as VoiceNotFound, not INTERNAL.
        yield _convert.config_request(config)
        await self._answered.wait()
        while (request := await self._requests.get()) is not None:
            yield request

    def _put(self, request: tts_pb2.StreamingSynthesizeRequest | None) -> None:
        if self._ended:
            raise ended_by_server()
        if self._closed:
            raise ValueError("the stream is closed: no more requests can be sent")
        self._requests.put_nowait(request)

    async def send(self, text: str) -> None:
        """Append text; the server speaks it a sentence or clause at a time as it can cut it."""
        self._put(_convert.text_request(text))

    async def flush(self) -> int:
        """Speak everything sent so far now. Returns the id that the matching FlushDone carries."""
        id = next(self._ids)
        self._put(_convert.flush_request(id))
        return id

    async def clear(self) -> int:
        """Barge-in: drop unspoken text and unsent audio. Returns the id of the ClearDone."""
        id = next(self._ids)
        self._put(_convert.clear_request(id))
        return id

    async def close(self) -> None:
        """Half-close: the server finishes what it holds, then ends with a Summary."""
        if not self._closed:
            self._put(None)
            self._closed = True

    async def cancel(self) -> None:
        """End the call now; the server stops its work."""
        await self.close()
        self._call.cancel()

    async def __aiter__(self) -> AsyncIterator[StreamEvent]:
        summary = False
        try:
            async for response in self._call:
                self._answered.set()
                event = _convert.event(response)
                summary = isinstance(event, Summary)
                if summary:
                    # The call is over: half-close at once, so that the server's status ends
                    # it cleanly (a server that ended the stream first, as a drain does, waits).
                    ended = not self._closed
                    await self.close()
                    self._ended = ended
                yield event
        except grpc.RpcError as exc:
            if not ended_after_summary(exc, summary):
                raise from_rpc_error(exc) from exc
        finally:
            self._answered.set()

    async def __aenter__(self) -> AsyncStreamSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.cancel()


class AsyncClient:
    """The asyncio twin of `Client`, with the same options and methods; create it in a running
    event loop."""

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
            self._channel = grpc.aio.insecure_channel(resolved, options=opts)
        else:
            self._channel = grpc.aio.secure_channel(resolved, credentials, options=opts)
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
    ) -> AsyncGenerator[SynthesisEvent, None]:
        """Speak one text: yields AudioFormat, then AudioChunk (and Timestamps), then Summary.

        `await aclose()` on the generator cancels the call."""
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
    ) -> AsyncStreamSession:
        """Open a bidirectional session; `timeout` bounds the whole session."""
        config = _convert.synthesis_config(**options)
        return AsyncStreamSession(
            self._stub.StreamingSynthesize,
            config,
            timeout=timeout,
            metadata=merge_metadata(self._metadata, metadata),
        )

    async def synthesize_to_file(
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

        Writes are small and local, so they run on the event loop."""
        check(options, FileOptions)  # before the file is made
        summary: Summary | None = None
        with AudioFileWriter(file, format=format) as writer:
            async for event in self.synthesize(
                text, encoding=writer.encoding, timeout=timeout, metadata=metadata, **options
            ):
                writer.write(event)
                if isinstance(event, Summary):
                    summary = event
        return _convert.ended(summary)

    async def voices(
        self,
        *,
        language: str | None = None,
        timeout: float | None = None,
        metadata: Metadata | None = None,
    ) -> VoiceList:
        """The voices the server has (default first), optionally only one language ("en")."""
        request = tts_pb2.ListVoicesRequest(language=language or "")
        try:
            response = await self._stub.ListVoices(
                request, timeout=timeout, metadata=merge_metadata(self._metadata, metadata)
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from exc
        return _convert.voice_list(response)

    async def health(
        self,
        *,
        service: str = "",
        timeout: float | None = None,
        metadata: Metadata | None = None,
    ) -> HealthStatus:
        """The standard gRPC health check; "" asks about the server as a whole."""
        request = health_pb2.HealthCheckRequest(service=service)
        try:
            response = await self._health.Check(
                request, timeout=timeout, metadata=merge_metadata(self._metadata, metadata)
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from exc
        return HealthStatus(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))

    async def close(self) -> None:
        """Close the channel; calls still running are cancelled."""
        await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


async def _events(call: Any) -> AsyncGenerator[SynthesisEvent, None]:
    try:
        async for response in call:
            yield _convert.synthesis_event(response)
    except grpc.RpcError as exc:
        raise from_rpc_error(exc) from exc
    finally:
        call.cancel()  # a no-op once the call has ended; stops it when the caller stops early
