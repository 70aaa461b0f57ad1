"""Per-call bookkeeping: a request id, the final status code, metrics and one access-log line."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc

from ..call.events import AudioEvent, FormatEvent, SummaryEvent
from ..ops.logs import ACCESS_LOG, request_id, serving
from ..ops.metrics import Metrics
from .security import Continuation

REQUEST_ID = "x-request-id"
_QUIET_PREFIXES = ("/grpc.health.v1.Health/",)
"""Logged at DEBUG: orchestrator probes every few seconds would drown the other lines."""
_CODES = {code.value[0]: code for code in grpc.StatusCode}
UNREACHED_WINDOW = 10.0
UNREACHED_LINES = 10
"""Calls that end before their handler has a request (reset on arrival, refused by an
interceptor) get at most UNREACHED_LINES lines each UNREACHED_WINDOW seconds; the rest are
counted and summed up in one line when the window ends. A rapid-reset flood otherwise wrote a
line per reset stream (bench/floods.py; docs/reliability.md#http2-floods)."""


class _Spoken(Protocol):
    @property
    def first_audio_ms(self) -> float | None: ...


@dataclass
class CallRecord:
    request_id: str
    method: str
    """"Service/Method", e.g. "TextToSpeechService/Synthesize"."""
    peer: str
    quiet: bool = False
    """Logged at DEBUG (health checks)."""
    started: float = field(default_factory=time.monotonic)
    voice: str | None = None
    summary: SummaryEvent | None = None
    audio_ms: float = 0.0
    """The audio handed to gRPC so far: what the log line says of a call cut before its
    summary (a drain, a deadline, an idle stream)."""
    session: _Spoken | None = None
    """The call's session, once it has one (note_session)."""
    ended: bool = False
    reached: bool = False
    """The handler had its request: a unary request arrived, or a stream's first message was
    read."""


_CURRENT: contextvars.ContextVar[CallRecord | None] = contextvars.ContextVar(
    "voxlite_call", default=None
)


def note(event: object) -> None:
    """Remember the voice (from the format event), the audio and the summary for the call's
    log line."""
    record = _CURRENT.get()
    if record is None:
        return
    if isinstance(event, AudioEvent):
        record.audio_ms += event.duration_ms
    elif isinstance(event, FormatEvent):
        record.voice = event.voice
    elif isinstance(event, SummaryEvent):
        record.summary = event


def note_session(session: _Spoken) -> None:
    """The call's session: the log line and the metric take its time to first audio from it,
    also when the call is cut before its summary (a barge-in's cancel)."""
    record = _CURRENT.get()
    if record is not None:
        record.session = session


def method_label(method: str) -> str:
    """ "/voxlite.tts.v1.TextToSpeechService/Synthesize" -> "TextToSpeechService/Synthesize"."""
    service, _, name = method.lstrip("/").rpartition("/")
    return f"{service.rsplit('.', 1)[-1]}/{name}"


def _request_id(metadata: Any) -> str:
    """The caller's x-request-id when it is a sane one, else a new random one."""
    for key, value in metadata or ():
        if key == REQUEST_ID and isinstance(value, str):
            return request_id(value)
    return request_id(None)


class _Context:
    """The servicer context, remembering the code a handler aborts with: grpc sends it but
    keeps no record of it (`context.code()` stays OK after `abort()`)."""

    def __init__(self, context: Any) -> None:
        self._context = context
        self.aborted: grpc.StatusCode | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    async def abort(self, code: grpc.StatusCode, *args: Any, **kwargs: Any) -> None:
        self.aborted = code
        await self._context.abort(code, *args, **kwargs)

    async def abort_with_status(self, status: Any) -> None:
        self.aborted = status.code
        await self._context.abort_with_status(status)

    def final_code(self, error: BaseException | None) -> grpc.StatusCode:
        if self.aborted is not None:
            return self.aborted
        if error is None:  # finished, perhaps with a code the handler set
            code = self._context.code()
            if code is None or isinstance(code, grpc.StatusCode):
                return code or grpc.StatusCode.OK
            return _CODES.get(int(code), grpc.StatusCode.UNKNOWN)
        if isinstance(error, asyncio.CancelledError | GeneratorExit):
            # The call ended under the handler: the client cancelled, its deadline passed
            # (gRPC cancels the handler then), or it went away mid-write.
            remaining = self._context.time_remaining()
            if remaining is not None and remaining < 0.05:
                return grpc.StatusCode.DEADLINE_EXCEEDED
            return grpc.StatusCode.CANCELLED
        return grpc.StatusCode.UNKNOWN


class _Requests:
    """A request stream that marks its call reached once the first message is read."""

    def __init__(self, requests: Any, record: CallRecord) -> None:
        self._requests = requests
        self._iterator: Any = None
        self._record = record

    def __aiter__(self) -> _Requests:
        return self

    async def __anext__(self) -> Any:
        if self._iterator is None:  # not before: grpc's iterator warns if never iterated
            self._iterator = self._requests.__aiter__()
        request = await self._iterator.__anext__()
        self._record.reached = True
        return request


class _UnreachedLines:
    """The access-log budget of calls that never reached their handler (UNREACHED_LINES)."""

    def __init__(self) -> None:
        self._window_end = 0.0
        self._lines = 0
        self._unlogged: Counter[tuple[str, str]] = Counter()

    def allow(self, method: str, code: str) -> bool:
        now = time.monotonic()
        if now >= self._window_end:
            self.flush()
            self._window_end, self._lines = now + UNREACHED_WINDOW, 0
        if self._lines < UNREACHED_LINES:
            self._lines += 1
            return True
        if not self._unlogged:
            with contextlib.suppress(RuntimeError):  # no loop: summed up by the next window
                asyncio.get_running_loop().call_later(self._window_end - now, self.flush)
        self._unlogged[method, code] += 1
        return False

    def flush(self) -> None:
        if not self._unlogged:
            return
        counts = {f"{method} {code}": n for (method, code), n in self._unlogged.most_common()}
        total = sum(counts.values())
        self._unlogged.clear()
        fields = {"unlogged_calls": total, "by_method_and_code": counts}
        ACCESS_LOG.warning(
            "%d more calls ended before reaching their handler in %.0f s, not logged one by "
            "one: %s",
            total,
            UNREACHED_WINDOW,
            ", ".join(f"{k}={n}" for k, n in counts.items()),
            extra={"fields": fields},
        )


_HANDLER_KINDS: dict[tuple[bool, bool], tuple[str, Callable[..., grpc.RpcMethodHandler]]] = {
    (False, False): ("unary_unary", grpc.unary_unary_rpc_method_handler),
    (False, True): ("unary_stream", grpc.unary_stream_rpc_method_handler),
    (True, False): ("stream_unary", grpc.stream_unary_rpc_method_handler),
    (True, True): ("stream_stream", grpc.stream_stream_rpc_method_handler),
}
"""A handler's behavior by (request streaming, response streaming), and how to make one."""


async def _answering(context: Any, record: CallRecord) -> None:
    """The call's headers, with its request id, before its first answer."""
    await context.send_initial_metadata(((REQUEST_ID, record.request_id),))


class CallObserver(grpc.aio.ServerInterceptor):
    """Counts, times and logs every call; sends its request id back (trailers, and headers).

    It wraps every handler the server runs (all services). The servicer adds what only it
    knows (the voice, the session's summary) with `note(event)`, which finds the call through
    a context variable: each gRPC call runs in its own task, so the variable is per call."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics
        self._unreached = _UnreachedLines()

    async def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:  # UNIMPLEMENTED: not counted (method names come from clients)
            return None
        name, make = _HANDLER_KINDS[handler.request_streaming, handler.response_streaming]
        behavior = getattr(handler, name)
        wrapped = self._wrap(
            behavior, details.method, details.invocation_metadata, handler.request_streaming
        )
        return make(
            wrapped,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    def _wrap(self, behavior: Any, method: str, metadata: Any, streaming: bool) -> Any:
        # grpc dispatches on the function's kind (coroutine or async generator): keep it.
        if inspect.isasyncgenfunction(behavior):

            async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
                record, observed, request = await self._begin(
                    method, metadata, context, request, streaming
                )
                error: BaseException | None = None
                responses = behavior(request, observed)
                answered = False
                try:
                    async for response in responses:
                        if not answered:
                            answered = True
                            await _answering(context, record)
                        yield response
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    # Also reached through GeneratorExit, when grpc stopped iterating (a write
                    # failed, the call was cancelled during one): close the servicer's too.
                    await responses.aclose()
                    self._end(record, observed, error)

            return stream
        if not inspect.iscoroutinefunction(behavior):
            return behavior  # a synchronous handler: none on this asyncio server

        async def call(request: Any, context: Any) -> Any:
            record, observed, request = await self._begin(
                method, metadata, context, request, streaming
            )
            error: BaseException | None = None
            try:
                response = await behavior(request, observed)
                await _answering(context, record)
                return response
            except BaseException as exc:
                error = exc
                raise
            finally:
                self._end(record, observed, error)

        return call

    async def _begin(
        self, method: str, metadata: Any, context: Any, request: Any, streaming: bool
    ) -> tuple[CallRecord, _Context, Any]:
        """The call's record, begun (its request id sent back), the context the servicer is
        given, and its request: a stream's wrapped to note when its first message is read, a
        unary one (already here) noted as reached."""
        record = CallRecord(
            _request_id(metadata),
            method_label(method),
            context.peer(),
            quiet=method.startswith(_QUIET_PREFIXES),
        )
        # Not reset: every call runs in a task of its own, which ends with the call.
        _CURRENT.set(record)
        serving(record.request_id)
        self._metrics.call_started(record.method)
        observed = _Context(context)
        # The id goes back in the trailers of every call, and in the headers of one that
        # answers (_answering). Headers sent now would make a refusal a response with headers
        # and trailers, whose status Envoy cannot retry on: a refusal is trailers alone.
        context.set_trailing_metadata(((REQUEST_ID, record.request_id),))
        if streaming:
            return record, observed, _Requests(request, record)
        record.reached = True
        return record, observed, request

    def _end(self, record: CallRecord, context: _Context, error: BaseException | None) -> None:
        if record.ended:
            return
        record.ended = True
        code = context.final_code(error).name
        first_audio_ms = record.session.first_audio_ms if record.session else None
        self._metrics.call_finished(record.method, code, record.summary, first_audio_ms)
        summary = record.summary
        audio_ms = summary.audio_ms if summary else record.audio_ms or None
        fields = {
            "request_id": record.request_id,
            "method": record.method,
            "voice": record.voice,
            "code": code,
            "audio_seconds": round(audio_ms / 1000, 3) if audio_ms is not None else None,
            "ttfa_ms": round(first_audio_ms, 1) if first_audio_ms is not None else None,
            "duration_ms": round((time.monotonic() - record.started) * 1000, 1),
            "peer": record.peer,
        }
        level = logging.DEBUG if record.quiet else logging.INFO
        if not ACCESS_LOG.isEnabledFor(level):
            return
        if not record.reached and not self._unreached.allow(record.method, code):
            return
        text = " ".join(f"{k}={'-' if v is None else v}" for k, v in fields.items())
        ACCESS_LOG.log(level, "%s", text, extra={"fields": fields})
