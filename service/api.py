"""The gRPC servicer: validates requests, runs sessions, maps domain errors to status codes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, Protocol, TypeVar

import grpc
from google.protobuf.message import DecodeError
from voxlite.tts.v1 import tts_pb2, tts_pb2_grpc

from . import calls
from .audio import Encoding, InvalidAudioConfig, resolve_audio_settings
from .cache import PhraseCache
from .errors import (
    AtCapacity,
    IdleTimeout,
    InvalidRequest,
    Overloaded,
    Unavailable,
    VoiceNotFound,
    VoiceUnavailable,
    VoxliteError,
)
from .metrics import Metrics
from .registry import VoiceRegistry
from .session import (
    AudioEvent,
    ClearDoneEvent,
    Event,
    FlushDoneEvent,
    FormatEvent,
    Session,
    SessionLimits,
    StreamSettings,
    SummaryEvent,
    TimestampsEvent,
)

_LOG = logging.getLogger(__name__)
T = TypeVar("T")

SERVICE_NAME = tts_pb2.DESCRIPTOR.services_by_name["TextToSpeechService"].full_name

_STATUS: dict[type[VoxliteError], grpc.StatusCode] = {
    InvalidRequest: grpc.StatusCode.INVALID_ARGUMENT,
    VoiceNotFound: grpc.StatusCode.NOT_FOUND,
    VoiceUnavailable: grpc.StatusCode.FAILED_PRECONDITION,
    Overloaded: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Unavailable: grpc.StatusCode.UNAVAILABLE,
    IdleTimeout: grpc.StatusCode.DEADLINE_EXCEEDED,
}
_ENCODINGS = {
    tts_pb2.AUDIO_ENCODING_UNSPECIFIED: Encoding.OGG_OPUS,
    tts_pb2.AUDIO_ENCODING_OGG_OPUS: Encoding.OGG_OPUS,
    tts_pb2.AUDIO_ENCODING_OPUS: Encoding.OPUS,
    tts_pb2.AUDIO_ENCODING_PCM_S16LE: Encoding.PCM_S16LE,
    tts_pb2.AUDIO_ENCODING_MULAW: Encoding.MULAW,
    tts_pb2.AUDIO_ENCODING_ALAW: Encoding.ALAW,
}
_ENCODING_TO_PROTO = {
    v: k for k, v in _ENCODINGS.items() if k != tts_pb2.AUDIO_ENCODING_UNSPECIFIED
}
MIN_RATE, MAX_RATE = 0.25, 4.0
MAX_LOAD = 0.93
"""New calls are refused while the model workers were busier than this over the last seconds
(scheduler.LOAD_WINDOW): they are saturated, and queues only grow..."""
OVERLOAD_SECONDS = 0.0
"""...or while a queued model job is past its deadline: a playing stream is down to its last
300 ms of audio (session.DEADLINE_LEAD), or a new stream's first window has waited longer than
scheduler.START_GRACE. Measured with bench/capacity.py: laxer thresholds (0.97 busy over 5 s,
or 100 to 250 ms late) admitted calls until most callers stuttered; these, with the pacing
below, keep the admitted calls in real time."""
BUSY_SLACK = 0.5
"""The load counts only while a queued job is due within this many seconds: its listener has
under BUSY_SLACK + session.DEADLINE_LEAD seconds of audio in hand. Workers kept busy by
streams synthesizing ahead of their listeners are no reason to refuse a call."""
BUSY_LOAD = 0.8
BUSY_ADMIT_INTERVAL = 0.2
"""Over BUSY_LOAD, at most one new call per this many seconds: a little faster than the
server finishes calls at capacity (3.7 replies a second at 20 callers, bench/capacity.py)."""
ADMIT_POLL = 0.01
"""How often a call waiting for admission looks again, in seconds."""
WAITER_MAX_LOAD = BUSY_LOAD
"""A call that waited is let in only below this load: one let in the moment the load dips
under MAX_LOAD keeps the machine at its edge, and at 24 callers 16 of 118 calls stuttered
(bench/capacity.py); at 0.8, none of 121..."""
WAITER_SLACK = 0.1
"""...and only while no queued job is due within this many seconds (nobody is short of audio):
past capacity the load alone let in calls that made others stutter (8 of 124 calls at 24
callers in one run); with this, 0 of 125 and 0 of 126 (bench/capacity.py)."""
MAX_NOISE = 2.0


def status_of(error: VoxliteError) -> grpc.StatusCode:
    for cls in type(error).__mro__:
        if cls in _STATUS:
            return _STATUS[cls]
    return grpc.StatusCode.INTERNAL


def _check_range(name: str, value: float, low: float, high: float) -> None:
    if math.isnan(value) or not low <= value <= high:
        raise InvalidRequest(f"{name} must be between {low:g} and {high:g}, got {value:g}")


class Admission:
    """How many synthesis calls run now; refuses calls over the limit, when the machine is at
    capacity (after waiting up to `wait` seconds for it to have room), and while draining."""

    def __init__(
        self,
        max_streams: int,
        overdue: Callable[[], float] = lambda: 0.0,
        load: Callable[[], float] = lambda: 0.0,
        slack: Callable[[], float] = lambda: math.inf,
        wait: float = 0.0,
    ) -> None:
        self.max_streams = max_streams
        self.wait = wait
        self._line = asyncio.Lock()
        self._overdue = overdue
        self._load = load
        self._slack = slack
        self._admitted_at = -math.inf
        self.active = 0
        self.waiting_calls = 0
        """Calls waiting for room, in line or first in it."""
        self.ready = False
        self.draining = False
        self.sessions: set[Session] = set()
        self.idle = asyncio.Event()
        self.idle.set()

    async def admit(self) -> None:
        """enter(), but a call that finds the machine at capacity waits, in arrival order, up
        to `wait` seconds for room before it is refused: a moment's crowd of new calls is
        taken a little later instead of turned away (design: refused at once, or after a
        short, bounded wait)."""
        give_up = time.monotonic() + self.wait
        if not self._line.locked():
            try:
                return self.enter()
            except AtCapacity:
                if self.wait <= 0:
                    raise
        self.waiting_calls += 1
        try:
            await asyncio.wait_for(self._line.acquire(), max(0.0, give_up - time.monotonic()))
        except TimeoutError:
            self.waiting_calls -= 1
            raise AtCapacity(
                f"the server is at capacity (calls are waiting for room; this one waited "
                f"{self.wait * 1000:.0f} ms): retry in a moment or on another replica"
            ) from None
        except BaseException:
            self.waiting_calls -= 1
            raise
        try:
            while True:
                try:
                    return self.enter(max_load=WAITER_MAX_LOAD, min_slack=WAITER_SLACK)
                except AtCapacity:
                    if time.monotonic() + ADMIT_POLL > give_up:
                        raise
                await asyncio.sleep(ADMIT_POLL)
        finally:
            self.waiting_calls -= 1
            self._line.release()

    @property
    def waiting(self) -> bool:
        """Some call is waiting for room."""
        return self._line.locked()

    def enter(self, max_load: float = MAX_LOAD, min_slack: float = 0.0) -> None:
        """Count a call in, or refuse it now."""
        if self.draining:
            raise Unavailable("the server is shutting down: retry on another replica")
        if not self.ready:
            raise Unavailable("the server is starting (loading voices): retry in a moment")
        if self.active >= self.max_streams:
            raise Overloaded(
                f"the server is at its limit of {self.max_streams} concurrent streams: retry "
                "later or on another replica"
            )
        # The streams already here come first: one more would make them all stutter.
        if (late := self._overdue()) > OVERLOAD_SECONDS:
            raise AtCapacity(
                f"the server is at capacity (its model work runs {late * 1000:.0f} ms late): "
                "retry in a moment or on another replica"
            )
        slack = self._slack()
        if slack < min_slack:
            raise AtCapacity(
                f"the server is at capacity (a stream's audio is due within {slack * 1000:.0f} "
                "ms): retry in a moment or on another replica"
            )
        # Busy workers are a danger only to streams with little audio in hand. With nothing
        # waiting they are one caller's calls back to back; with every waiting job due in a
        # while they are streams synthesizing ahead of their listeners. Neither is a reason
        # to turn a caller away.
        load = self._load() if slack < BUSY_SLACK else 0.0
        if load > max_load:
            raise AtCapacity(
                f"the server is at capacity (its model workers are {load:.0%} busy): retry in "
                "a moment or on another replica"
            )
        # Near capacity, calls are let in one at a time: the load is an average over seconds,
        # and a crowd of retrying callers let in together would overshoot it.
        now = time.monotonic()
        if load > BUSY_LOAD and now - self._admitted_at < BUSY_ADMIT_INTERVAL:
            raise AtCapacity(
                f"the server is near capacity (its model workers are {load:.0%} busy) and has "
                "just taken another call: retry in a moment or on another replica"
            )
        self._admitted_at = now
        self.active += 1
        self.idle.clear()

    def leave(self) -> None:
        self.active -= 1
        if self.active == 0:
            self.idle.set()


class SessionRunner(Protocol):
    """How one session runs its model work (see scheduler.py)."""

    def run(self, fn: Callable[[], T], /, deadline: float | None = None) -> Awaitable[T]: ...

    def close(self) -> None: ...


class RunnerSource(Protocol):
    """The server's scheduler: hands each session its runner."""

    def runner(self) -> SessionRunner: ...

    def load(self) -> float: ...


class TextToSpeechServicer(tts_pb2_grpc.TextToSpeechServiceServicer):
    """voxlite.tts.v1.TextToSpeechService on a VoiceRegistry."""

    def __init__(
        self,
        registry: VoiceRegistry,
        scheduler: RunnerSource,
        admission: Admission,
        *,
        max_text_chars: int,
        idle_timeout: float | None = None,
        session_factory: Callable[..., Session] = Session,
        metrics: Metrics | None = None,
        cache: PhraseCache | None = None,
    ) -> None:
        self.metrics = metrics or Metrics()
        """The server's metrics (its scheduler and caches report there too)."""
        self._registry = registry
        self._scheduler = scheduler
        self._admission = admission
        self._max_text_chars = max_text_chars
        self._idle_timeout = idle_timeout
        self._cache = cache
        self._session_factory = session_factory

    # -- validation ----------------------------------------------------------------------------

    def settings(self, config: tts_pb2.SynthesisConfig) -> StreamSettings:
        """Check a request's config and resolve it against the voice; raises with what to fix."""
        voice = self._registry.get(config.voice)
        rate = config.speaking_rate or 1.0
        _check_range("speaking_rate", rate, MIN_RATE, MAX_RATE)
        noise_scale = config.noise_scale if config.HasField("noise_scale") else None
        noise_w = config.noise_w if config.HasField("noise_w") else None
        if noise_scale is not None:
            _check_range("noise_scale", noise_scale, 0.0, MAX_NOISE)
        if noise_w is not None:
            _check_range("noise_w", noise_w, 0.0, MAX_NOISE)
        audio = config.audio
        if audio.encoding not in _ENCODINGS:
            raise InvalidRequest(
                f"audio.encoding {audio.encoding} is unknown: use one of "
                + ", ".join(tts_pb2.AudioEncoding.Name(e) for e in _ENCODINGS if e)
            )
        try:
            audio_settings = resolve_audio_settings(
                _ENCODINGS[audio.encoding],
                audio.sample_rate_hz,
                audio.bitrate_bps,
                audio.frame_duration_ms,
            )
        except InvalidAudioConfig as exc:
            raise InvalidRequest(f"audio.{exc}") from exc  # names the field: audio.sample_rate_hz
        params = voice.params(
            speaking_rate=rate, noise_scale=noise_scale, noise_w=noise_w, speaker=config.speaker
        )
        return StreamSettings(voice, params, audio_settings, config.enable_word_timestamps)

    def _check_text(self, text: str, *, piece: bool = False) -> None:
        if len(text) <= self._max_text_chars:
            return
        if piece:
            raise InvalidRequest(
                f"a text piece of {len(text)} characters is over the limit of "
                f"{self._max_text_chars}: send it in smaller pieces"
            )
        raise InvalidRequest(
            f"text has {len(text)} characters, over the limit of {self._max_text_chars}: split "
            "it into several requests or use StreamingSynthesize"
        )

    # -- RPCs ----------------------------------------------------------------------------------

    async def ListVoices(
        self,
        request: tts_pb2.ListVoicesRequest | Malformed,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> tts_pb2.ListVoicesResponse:
        try:
            request = _parsed(request)
        except VoxliteError as exc:
            await _abort(context, exc)
        default = self._registry.default_name
        voices = [
            tts_pb2.Voice(
                name=v.info.name,
                language=v.info.language,
                native_sample_rate_hz=v.info.native_rate,
                speakers=list(v.info.speakers),
                quality=v.info.quality,
                default=v.info.name == default,
            )
            for v in self._registry.voices()
            if v.info.language.lower().startswith(request.language.lower().replace("-", "_"))
        ]
        failed = [
            tts_pb2.VoiceLoadError(path=f.path, reason=f.reason) for f in self._registry.failures
        ]
        return tts_pb2.ListVoicesResponse(voices=voices, failed=failed)

    async def Synthesize(
        self,
        request: tts_pb2.SynthesizeRequest | Malformed,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[tts_pb2.SynthesizeResponse]:
        try:
            await self._admission.admit()
        except VoxliteError as exc:
            await _abort(context, exc)
        watchdog = Watchdog(self._idle_timeout)
        try:
            request = _parsed(request)
            if not request.text.strip():
                raise InvalidRequest("text is empty: put the words to speak in the text field")
            self._check_text(request.text)
            session = self._session(self.settings(request.config))
            session.push_text(request.text)
            session.end()
            # Closed here, not whenever the garbage collector gets to it: its synthesis stops
            # as the call ends, however it ends.
            async with contextlib.aclosing(session.events()) as events:
                async for event in events:
                    calls.note(event)
                    yield _synthesize_response(event)
                    watchdog.touch()
        except VoxliteError as exc:
            await _abort(context, exc)
        except asyncio.CancelledError:
            if watchdog.error is None:
                raise
            await _abort(context, watchdog.error)
        finally:
            watchdog.stop()
            self._admission.leave()

    async def StreamingSynthesize(
        self,
        request_iterator: AsyncIterator[tts_pb2.StreamingSynthesizeRequest | Malformed],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[tts_pb2.StreamingSynthesizeResponse]:
        try:
            await self._admission.admit()
        except VoxliteError as exc:
            await _abort(context, exc)
        watchdog = Watchdog(self._idle_timeout)
        reader: asyncio.Task[None] | None = None
        try:
            requests = request_iterator.__aiter__()
            try:
                first = _parsed(await requests.__anext__())
            except StopAsyncIteration:
                raise InvalidRequest(
                    "the stream ended before its config: send config first"
                ) from None
            if first.WhichOneof("request") != "config":
                raise InvalidRequest(
                    "the first message must be config, got "
                    + (first.WhichOneof("request") or "an empty message")
                )
            session = self._session(first.config)
            watchdog.touch()
            reader = asyncio.ensure_future(self._read(requests, session, watchdog))
            async with contextlib.aclosing(session.events()) as events:
                async for event in events:
                    calls.note(event)
                    yield _streaming_response(event)
                    watchdog.touch()
        except VoxliteError as exc:
            await _abort(context, exc)
        except asyncio.CancelledError:
            if watchdog.error is None:
                raise
            await _abort(context, watchdog.error)
        finally:
            watchdog.stop()
            if reader is not None:
                reader.cancel()
            self._admission.leave()

    def _session(self, config: tts_pb2.SynthesisConfig | StreamSettings) -> Session:
        settings = config if isinstance(config, StreamSettings) else self.settings(config)
        runner = self._scheduler.runner()
        session = self._session_factory(
            settings,
            runner.run,
            limits=SessionLimits(max_buffered_chars=self._max_text_chars),
            cache=self._cache,
            load=self._scheduler.load,
        )
        session.closers.append(runner.close)
        # Known to the admission for the whole call: a drain ends what is still open.
        self._admission.sessions.add(session)
        session.closers.append(lambda: self._admission.sessions.discard(session))
        return session

    async def _read(
        self,
        requests: AsyncIterator[tts_pb2.StreamingSynthesizeRequest | Malformed],
        session: Session,
        watchdog: Watchdog,
    ) -> None:
        """Feed requests to the session as they arrive, while audio is being produced."""
        try:
            async for raw in requests:
                watchdog.touch()
                request = _parsed(raw)
                kind = request.WhichOneof("request")
                if kind == "text":
                    self._check_text(request.text, piece=True)
                    session.push_text(request.text)
                elif kind == "flush":
                    session.flush(request.flush.id)
                elif kind == "clear":
                    session.clear(request.clear.id)
                elif kind == "config":
                    raise InvalidRequest(
                        "config was already sent: send it once, as the first message"
                    )
                else:
                    raise InvalidRequest("empty request: set one of config, text, flush or clear")
            session.end()
        except VoxliteError as exc:
            session.fail(exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the call broke (client gone): stop the session's work
            _LOG.debug("request stream ended: %r", exc)
            session.fail(exc)


class Watchdog:
    """Ends a call that has neither received a request nor sent anything for `seconds`.

    It cancels the handler's task, which is the only way to interrupt a write blocked on a
    client that stopped reading; the handler then ends the call with `error`.
    """

    def __init__(self, seconds: float | None) -> None:
        self._seconds = seconds
        self.error: IdleTimeout | None = None
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()
        self._task: asyncio.Task[None] | None = None
        if seconds:
            handler = asyncio.current_task()
            assert handler is not None
            self._task = asyncio.ensure_future(self._watch(handler, seconds))

    def touch(self) -> None:
        self._last = self._loop.time()

    async def _watch(self, handler: asyncio.Task[Any], seconds: float) -> None:
        # Sleep until the deadline the latest activity set, as often as activity moves it.
        while True:
            remaining = self._last + seconds - self._loop.time()
            if remaining <= 0:
                break
            await asyncio.sleep(remaining)
        self.error = IdleTimeout(
            f"the stream was idle for {seconds:g} s (nothing received or sent) and was closed: "
            "send text, or half-close the stream when done (server setting "
            "--idle-timeout-seconds)"
        )
        handler.cancel()

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


class Malformed:
    """Request bytes that do not parse as the expected message (INVALID_ARGUMENT, not INTERNAL)."""

    def __init__(self, message: str, error: Exception) -> None:
        self.message, self.error = message, error


def _parsed(request: T | Malformed) -> T:
    if isinstance(request, Malformed):
        raise InvalidRequest(
            f"the request is not a valid {request.message} ({request.error}): send a serialized "
            f"{request.message} message"
        )
    return request


def _lenient(message: Any) -> Callable[[bytes], Any]:
    """A deserializer that hands bad bytes to the handler instead of failing the call with
    INTERNAL, as grpc does when a deserializer raises."""

    def parse(data: bytes) -> Any:
        try:
            return message.FromString(data)
        except DecodeError as exc:
            return Malformed(message.DESCRIPTOR.full_name, exc)

    return parse


def add_to_server(servicer: TextToSpeechServicer, server: grpc.aio.Server) -> None:
    """Register the service like the generated add_..._to_server, with lenient parsing."""
    pb = tts_pb2
    handlers = {
        "StreamingSynthesize": grpc.stream_stream_rpc_method_handler(
            servicer.StreamingSynthesize,
            request_deserializer=_lenient(pb.StreamingSynthesizeRequest),
            response_serializer=pb.StreamingSynthesizeResponse.SerializeToString,
        ),
        "Synthesize": grpc.unary_stream_rpc_method_handler(
            servicer.Synthesize,
            request_deserializer=_lenient(pb.SynthesizeRequest),
            response_serializer=pb.SynthesizeResponse.SerializeToString,
        ),
        "ListVoices": grpc.unary_unary_rpc_method_handler(
            servicer.ListVoices,
            request_deserializer=_lenient(pb.ListVoicesRequest),
            response_serializer=pb.ListVoicesResponse.SerializeToString,
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))


async def _abort(context: grpc.aio.ServicerContext[Any, Any], exc: VoxliteError) -> NoReturn:
    await context.abort(status_of(exc), str(exc))
    raise AssertionError("context.abort() returned")  # it raises, always


def _format(event: FormatEvent) -> tts_pb2.AudioFormat:
    opus = event.settings.encoding in (Encoding.OPUS, Encoding.OGG_OPUS)
    return tts_pb2.AudioFormat(
        encoding=_ENCODING_TO_PROTO[event.settings.encoding],
        sample_rate_hz=event.settings.sample_rate_hz,
        channels=1,
        frame_duration_ms=event.settings.frame_ms if opus else 0,
        voice=event.voice,
        native_sample_rate_hz=event.native_rate,
        opus_pre_skip=event.pre_skip,
    )


def _common(event: Event) -> dict[str, Any]:
    if isinstance(event, FormatEvent):
        return {"format": _format(event)}
    if isinstance(event, AudioEvent):
        return {
            "audio": tts_pb2.AudioChunk(
                audio=event.data,
                sequence=event.sequence,
                start_ms=event.start_ms,
                duration_ms=event.duration_ms,
                segment=event.segment,
            )
        }
    if isinstance(event, TimestampsEvent):
        return {
            "timestamps": tts_pb2.Timestamps(
                segment=event.segment,
                text=event.text,
                words=[
                    tts_pb2.WordTimestamp(word=w.word, start_ms=w.start_ms, end_ms=w.end_ms)
                    for w in event.words
                ],
            )
        }
    if isinstance(event, SummaryEvent):
        return {
            "summary": tts_pb2.Summary(
                audio_duration_ms=event.audio_ms,
                segments=event.segments,
                time_to_first_audio_ms=event.time_to_first_audio_ms,
                real_time_factor=event.real_time_factor,
            )
        }
    if isinstance(event, FlushDoneEvent):
        return {"flush_done": tts_pb2.FlushDone(id=event.id)}
    if isinstance(event, ClearDoneEvent):
        return {"clear_done": tts_pb2.ClearDone(id=event.id, last_sequence=event.last_sequence)}
    raise TypeError(event)


def _synthesize_response(event: Event) -> tts_pb2.SynthesizeResponse:
    return tts_pb2.SynthesizeResponse(**_common(event))


def _streaming_response(event: Event) -> tts_pb2.StreamingSynthesizeResponse:
    return tts_pb2.StreamingSynthesizeResponse(**_common(event))
