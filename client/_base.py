"""What the sync and asyncio clients share: everything but I/O (httpx's `_client.BaseClient`)."""

from __future__ import annotations

import itertools
import threading
from typing import Any

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
    target_tls,
)
from ._errors import VoxliteError, ended_by_server
from ._events import HealthStatus, StreamEvent, Summary
from ._options import SynthesisOptions


class BaseStreamSession:
    """The state of one StreamingSynthesize call, the same in both twins: the ids of flushes and
    clears, whether the caller half-closed and whether the server ended the call first.

    Subclasses own the I/O: `_enqueue` hands a request (None: the half-close) to the queue gRPC
    sends from, without waiting, and they read the events. The one deliberate difference: the
    asyncio twin holds the requests after the config back until the server has answered it
    (`AsyncStreamSession._request_stream` says why); the sync twin sends them at once."""

    def __init__(self) -> None:
        # The sync session's methods run on any thread; the asyncio one's all run on its event
        # loop, where the lock is never contended.
        self._lock = threading.Lock()
        self._closed = False
        self._ended = False
        self._ids = itertools.count(1)

    def _enqueue(self, request: tts_pb2.StreamingSynthesizeRequest | None) -> None:
        raise NotImplementedError

    def _put(self, request: tts_pb2.StreamingSynthesizeRequest) -> None:
        with self._lock:
            if self._ended:
                raise ended_by_server()
            if self._closed:
                raise ValueError("the stream is closed: no more requests can be sent")
            self._enqueue(request)

    def _send(self, text: str) -> None:
        self._put(_convert.text_request(text))

    def _flush(self) -> int:
        with self._lock:
            id = next(self._ids)
        self._put(_convert.flush_request(id))
        return id

    def _clear(self) -> int:
        with self._lock:
            id = next(self._ids)
        self._put(_convert.clear_request(id))
        return id

    def _close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._enqueue(None)

    def _event(self, response: tts_pb2.StreamingSynthesizeResponse) -> StreamEvent:
        """The event of a response. On the Summary the call is over: half-close at once, so that
        the server's status ends it cleanly (a server that ended the stream first, as in a
        drain, waits for it); a request sent after it is then refused as ended by the server."""
        event = _convert.event(response)
        if isinstance(event, Summary):
            with self._lock:
                self._ended = not self._closed
            self._close()
        return event


class BaseClient:
    """The channel's options, credentials and metadata, and the requests, for `Client` and
    `AsyncClient`; a subclass opens the channel (`_open`) and makes the calls."""

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
        tls_given = credentials is not None or any(
            x is not None for x in (root_certificates, certificate_chain, private_key)
        )
        target, tls = target_tls(target, tls, tls_given=tls_given)
        resolved, round_robin = resolve_target(target)
        credentials, token_metadata = security(
            credentials=credentials,
            tls=tls,
            root_certificates=root_certificates,
            certificate_chain=certificate_chain,
            private_key=private_key,
            token=token,
        )
        self._channel = self._open(resolved, credentials, channel_options(round_robin, options))
        self._closed = False
        self._metadata = token_metadata + as_pairs(metadata)
        self._stub = tts_pb2_grpc.TextToSpeechServiceStub(self._channel)
        self._health = health_pb2_grpc.HealthStub(self._channel)

    @staticmethod
    def _open(
        target: str, credentials: grpc.ChannelCredentials | None, options: list[tuple[str, object]]
    ) -> Any:
        """The channel (plaintext when `credentials` is None)."""
        raise NotImplementedError

    def _call_args(self, timeout: float | None, metadata: Metadata | None) -> dict[str, Any]:
        """A call's keywords: its timeout, and the client's metadata followed by the call's.
        Refuses a closed client in words of its own (gRPC's differ by twin: a bare ValueError,
        an aio UsageError)."""
        if self._closed:
            raise ValueError(
                f"the {type(self).__name__} is closed: open a new one to make more calls"
            )
        return {"timeout": timeout, "metadata": merge_metadata(self._metadata, metadata)}


def synthesize_request(text: str, **options: Unpack[SynthesisOptions]) -> tts_pb2.SynthesizeRequest:
    return tts_pb2.SynthesizeRequest(text=text, config=_convert.synthesis_config(**options))


def voices_request(language: str | None) -> tts_pb2.ListVoicesRequest:
    return tts_pb2.ListVoicesRequest(language=language or "")


def health_request(service: str) -> health_pb2.HealthCheckRequest:
    return health_pb2.HealthCheckRequest(service=service)


def unknown_service(error: VoxliteError) -> HealthStatus:
    """SERVICE_UNKNOWN for the health check's NOT_FOUND (the protocol's answer for a service
    the server does not know), else `error` raised."""
    if error.code != grpc.StatusCode.NOT_FOUND:
        raise error
    return HealthStatus.SERVICE_UNKNOWN


def health_status(response: health_pb2.HealthCheckResponse) -> HealthStatus:
    return HealthStatus(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))
