"""The asyncio client: `AsyncClient` and its bidirectional `AsyncStreamSession` (grpc.aio)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, BinaryIO

import grpc
import grpc.aio
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
from ._errors import (
    VoxliteError,
    cancelled_here,
    delivered_status,
    ended_after_summary,
    from_rpc_error,
    grpc_aio_own,
)
from ._events import HealthStatus, StreamEvent, Summary, SynthesisEvent
from ._files import AudioFileWriter
from ._options import FileOptions, SynthesisOptions, check
from ._voices import VoiceList

SENT_STATUS_WAIT = 5.0
"""Seconds a failed stream's read waits for the server's status to replace grpc.aio's own
(AsyncStreamSession._sent_status): it arrives within milliseconds; the bound only keeps a
status that never comes from holding the caller."""


class AsyncStreamSession(BaseStreamSession):
    """One StreamingSynthesize call: `await send(...)` text while `async for` reads events.

    Requests go through an unbounded queue that gRPC drains in its own task, so sending never
    waits for audio. Leaving an `async with` block cancels the call if it has not ended."""

    def __init__(self, method: Any, config: tts_pb2.SynthesisConfig, **call_args: Any) -> None:
        super().__init__()
        self._requests: asyncio.Queue[tts_pb2.StreamingSynthesizeRequest | None] = asyncio.Queue()
        self._answered = asyncio.Event()
        self._call = method(self._request_stream(config), **call_args)
        self._delivered: tuple[grpc.StatusCode, str] | None = None
        self._call.add_done_callback(self._keep_status)

    def _keep_status(self, call: Any) -> None:
        """The server's status, kept as the call ends: grpc.aio may replace it afterwards
        (delivered_status), or have put its own first, which the server's then replaces."""
        self._delivered = delivered_status(call)

    async def _sent_status(self) -> tuple[grpc.StatusCode, str] | None:
        """The status the server sent, where grpc.aio put its own first: a write that fails
        as the server ends the call sets INTERNAL at once, and the read raises it while the
        server's status (on its way: it is why the write failed) has yet to replace it."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + SENT_STATUS_WAIT
        status = delivered_status(self._call)
        while grpc_aio_own(self._delivered) and grpc_aio_own(status) and status is not None:
            if loop.time() > give_up:
                break
            await asyncio.sleep(0.01)
            status = delivered_status(self._call)
        return status

    async def _request_stream(
        self, config: tts_pb2.SynthesisConfig
    ) -> AsyncIterator[tts_pb2.StreamingSynthesizeRequest]:
        # The one difference from the sync twin, which sends at once: a config that names a
        # voice or a language goes alone, the rest once the server has answered it (its
        # format, or the status of a config it refuses). A write that meets a call the server
        # has just ended makes grpc.aio report INTERNAL "Internal error from Core" in place of
        # the server's status (grpc/grpc#36066): a refused voice must read as VoiceNotFound,
        # not INTERNAL. A config naming neither is answered only once text has picked the
        # voice (the proto's SynthesisConfig): waiting for it would wait for ever.
        yield _convert.config_request(config)
        if config.voice or config.language:
            await self._answered.wait()
        while (request := await self._requests.get()) is not None:
            yield request

    def _enqueue(self, request: tts_pb2.StreamingSynthesizeRequest | None) -> None:
        self._requests.put_nowait(request)

    async def send(self, text: str) -> None:
        """Append text; the server speaks it a sentence or clause at a time as it can cut it."""
        self._send(text)

    async def flush(self) -> int:
        """Speak everything sent so far now. Returns the id that the matching FlushDone carries."""
        return self._flush()

    async def clear(self) -> int:
        """Barge-in: drop unspoken text and unsent audio. Returns the id of the ClearDone."""
        return self._clear()

    async def close(self) -> None:
        """Half-close: the server finishes what it holds, then ends with a Summary."""
        self._close()

    async def cancel(self) -> None:
        """End the call now; the server stops its work."""
        self._close()
        self._call.cancel()

    async def __aiter__(self) -> AsyncIterator[StreamEvent]:
        summary = False
        try:
            async for response in self._call:
                self._answered.set()
                event = self._event(response)
                summary = isinstance(event, Summary)
                yield event
        except grpc.RpcError as exc:
            if not ended_after_summary(exc, summary):
                raise from_rpc_error(exc, self._delivered, await self._sent_status()) from exc
        except asyncio.CancelledError:
            if (error := cancelled_here(self._call)) is not None:
                raise error from None
            raise
        finally:
            self._answered.set()

    async def __aenter__(self) -> AsyncStreamSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.cancel()


class AsyncClient(BaseClient):
    """The asyncio twin of `Client`, with the same options and methods; create it in a running
    event loop."""

    @staticmethod
    def _open(
        target: str, credentials: grpc.ChannelCredentials | None, options: list[tuple[str, object]]
    ) -> Any:
        if credentials is None:
            return grpc.aio.insecure_channel(target, options=options)
        return grpc.aio.secure_channel(target, credentials, options=options)

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
        request = synthesize_request(text, **options)
        call_args = self._call_args(timeout, metadata)
        # The call starts with the iteration: a generator closed before it started none.
        return _events(lambda: self._stub.Synthesize(request, **call_args))

    def stream(
        self,
        *,
        timeout: float | None = None,
        metadata: Metadata | None = None,
        **options: Unpack[SynthesisOptions],
    ) -> AsyncStreamSession:
        """Open a bidirectional session; `timeout` bounds the whole session."""
        config = _convert.synthesis_config(**options)
        call_args = self._call_args(timeout, metadata)
        return AsyncStreamSession(self._stub.StreamingSynthesize, config, **call_args)

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
        response = await self._unary(
            self._stub.ListVoices, voices_request(language), timeout, metadata
        )
        return _convert.voice_list(response)

    async def health(
        self,
        *,
        service: str = "",
        timeout: float | None = None,
        metadata: Metadata | None = None,
    ) -> HealthStatus:
        """The standard gRPC health check; "" asks about the server as a whole, and a service
        the server does not know is SERVICE_UNKNOWN."""
        try:
            request = health_request(service)
            response = await self._unary(self._health.Check, request, timeout, metadata)
        except VoxliteError as exc:
            return unknown_service(exc)
        return health_status(response)

    async def _unary(
        self, method: Any, request: Any, timeout: float | None, metadata: Metadata | None
    ) -> Any:
        try:
            return await method(request, **self._call_args(timeout, metadata))
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from exc

    async def close(self) -> None:
        """Close the channel; calls still running are cancelled, and later calls refused."""
        self._closed = True
        await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


async def _events(start: Callable[[], Any]) -> AsyncGenerator[SynthesisEvent, None]:
    call = start()
    try:
        async for response in call:
            yield _convert.synthesis_event(response)
    except grpc.RpcError as exc:
        raise from_rpc_error(exc) from exc
    except asyncio.CancelledError:
        if (error := cancelled_here(call)) is not None:
            raise error from None
        raise
    finally:
        call.cancel()  # a no-op once the call has ended; stops it when the caller stops early
