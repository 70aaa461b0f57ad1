"""The gRPC servicer: each RPC's requests read, sessions run, domain errors as status codes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError
from voxlite.tts.v1 import tts_pb2, tts_pb2_grpc

from ..call import markup, textlang
from ..call.events import Event
from ..call.opening import SessionOpener, check_readable, opening_text, segments_of
from ..call.segmenter import Segmenter
from ..call.session import Session
from ..call.tokens import tenant
from ..call.watchdog import Watchdog
from ..capacity.admission import Admission, Caller, Slot
from ..engines.engine import language_matches
from ..engines.registry import VoiceRegistry
from ..errors import IdleTimeout, InvalidRequest, Overloaded, Unavailable, VoxliteError, fault
from . import calls, convert
from .status import abort

_LOG = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

HALF_CLOSE_WAIT = 1.0
"""Seconds a stream that the server ended waits, after its Summary, for its client to half-close
(the client library does on the Summary: a round trip); a client that never does gets its
status then."""
QUEUE_DEADLINE_MARGIN = 0.2
"""Seconds before its deadline a queued Synthesize call gives up: its refusal, which says how
long the queue is, then reaches the caller instead of a bare DEADLINE_EXCEEDED."""
SERVICE_NAME = tts_pb2.DESCRIPTOR.services_by_name["TextToSpeechService"].full_name


class TextToSpeechServicer(tts_pb2_grpc.TextToSpeechServiceServicer):
    """voxlite.tts.v1.TextToSpeechService on a VoiceRegistry."""

    def __init__(
        self,
        registry: VoiceRegistry,
        admission: Admission,
        opener: SessionOpener,
        *,
        idle_timeout: float | None = None,
        config_wait: float = 10.0,
        tenants: bool = False,
    ) -> None:
        self._registry = registry
        self._admission = admission
        self._opener = opener
        """Where each call's session is opened (the HTTP API's too)."""
        self._max_text_chars = opener.max_text_chars
        self._idle_timeout = idle_timeout
        self._config_wait = config_wait
        self._tenants = tenants
        """Calls carry tokens (auth is on): each token is a tenant."""

    # -- requests ------------------------------------------------------------------------------

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
            await abort(context, exc)
        registry = self._registry
        voices = [
            convert.voice_entry(
                v,
                default=v.info.name == registry.default_name,
                language_default=registry.speaks_for(v),
            )
            for v in registry.voices()
            if language_matches(v.info.language, request.language)
        ]
        failed = [
            tts_pb2.VoiceLoadError(path=f.path, reason=f.reason) for f in self._registry.failures
        ]
        loading = registry.loading()
        return tts_pb2.ListVoicesResponse(voices=voices, failed=failed, loading=loading)

    async def Synthesize(
        self,
        request: tts_pb2.SynthesizeRequest | Malformed,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[tts_pb2.SynthesizeResponse]:
        async def start(call: _Call) -> Session:
            self._admission.check_open()
            parsed = _parsed(request)
            if not parsed.text.strip():
                raise InvalidRequest("text is empty: put the words to speak in the text field")
            if not textlang.has_words(markup.spoken(parsed.text)):
                raise InvalidRequest(
                    "text has nothing to speak, only punctuation, spaces, markup, emoji or "
                    "invisible characters: put the words to speak in the text field"
                )
            self._check_text(parsed.text)
            segments = segments_of(parsed.text)
            first = opening_text(parsed.text, segments)
            session = await self._admitted(context, call, parsed.config, first, segments)
            session.speak_whole(parsed.text)
            return session

        async for response in self._speak(context, start, convert.synthesize_response):
            yield response

    async def StreamingSynthesize(
        self,
        request_iterator: AsyncIterator[tts_pb2.StreamingSynthesizeRequest | Malformed],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[tts_pb2.StreamingSynthesizeResponse]:
        async def start(call: _Call) -> Session:
            requests = _ReadAhead(request_iterator.__aiter__())
            # The call holds no slot until its config arrives, and may wait only so long.
            try:
                first = _parsed(await asyncio.wait_for(requests.__anext__(), self._config_wait))
            except StopAsyncIteration:
                raise InvalidRequest(
                    "the stream ended before its config: send config first"
                ) from None
            except TimeoutError:
                raise IdleTimeout(
                    f"no config arrived within {self._config_wait:g} s of the stream opening: "
                    "send config as the first message (server setting --config-timeout-seconds)"
                ) from None
            if first.WhichOneof("request") != "config":
                raise InvalidRequest(
                    "the first message must be config, got "
                    + (first.WhichOneof("request") or "an empty message")
                )
            early: list[tts_pb2.StreamingSynthesizeRequest] = []
            ended, opening = False, ""
            self._admission.check_open()  # a stream begun while the server drains, refused
            if self._by_text(first.config):
                # What no voice changes is checked now: a bad rate need not wait for text.
                convert.voice_request(first.config)
                convert.audio_settings(first.config.audio)
                # Taken now: if the drain begins before its first sentence picks the voice,
                # it is spoken as a running stream is, not refused (Admission.enter's taken).
                with self._admission.unvoiced_stream():
                    opening, early, ended = await self._opening(requests)
                    session = await self._admitted(context, call, first.config, opening, taken=True)
            else:
                session = await self._admitted(context, call, first.config)
            call.watchdog.touch()
            call.reader = asyncio.ensure_future(
                self._read(requests, session, call, early=early, ended=ended)
            )
            return session

        async for response in self._speak(context, start, convert.streaming_response):
            yield response

    def _by_text(self, config: tts_pb2.SynthesisConfig) -> bool:
        """Whether a stream's voice waits for its first segment: its config names neither
        voice nor language, and a voice of a language the text may pick is here or loading
        (with none, as on an English-only server, the default voice and its format go at once,
        and text it cannot speak is refused)."""
        if config.voice or config.language:
            return False
        return any(self._registry.may_speak(language) for language in textlang.LANGUAGES)

    async def _opening(
        self, requests: _ReadAhead
    ) -> tuple[str, list[tts_pb2.StreamingSynthesizeRequest], bool]:
        """A stream whose config names neither voice nor language: its requests up to its first
        segment (text that completes one, a flush, or the half-close), whose script picks the
        voice; when that segment leaves it open (textlang.undecided), up to the text that
        settles it. Returns that text, the requests read (to replay once the stream has a
        session), and whether the stream half-closed. A clear starts over. Holds no slot, and
        waits at most the idle timeout. When the server drains, the text so far picks the
        voice (the drain speaks it, as a running stream's); a stream with none gives up once
        it has been quiet for the drain's quiet time."""
        sent = _BeforeVoice(self._max_text_chars)
        loop = asyncio.get_running_loop()
        give_up = None if self._idle_timeout is None else loop.time() + self._idle_timeout
        settle_by = None  # when a first segment that leaves the language open is decided as is
        admission = self._admission
        drained = asyncio.ensure_future(admission.drained.wait())
        last = loop.time()  # the last request's arrival
        quiet_by = None  # draining with nothing to speak: when the stream is ended
        try:
            while True:
                if drained.done():
                    if textlang.has_words(markup.spoken(sent.seen)):
                        return sent.so_far(), sent.early, False
                    quiet_by = last + admission.drain_quiet
                deadlines = [t for t in (give_up, settle_by, quiet_by) if t is not None]
                left = max(0.0, min(deadlines) - loop.time()) if deadlines else None
                pending = requests.next()  # read on by _read() if not taken here
                watched = {pending} if drained.done() else {pending, drained}
                await asyncio.wait(watched, timeout=left, return_when=asyncio.FIRST_COMPLETED)
                if not pending.done():
                    if drained.done() and quiet_by is None:
                        continue  # the drain has begun
                    if quiet_by is not None and loop.time() >= quiet_by:
                        raise Unavailable(
                            "the server is shutting down, and this stream sent no text to "
                            f"speak for {admission.drain_quiet:g} s: open a new stream on "
                            "another replica"
                        )
                    if sent.opening:  # no more text came to settle it: its own script decides
                        return sent.seen, sent.early, False
                    raise IdleTimeout(
                        f"no text completed a sentence within {self._idle_timeout:g} s of the "
                        "config, which names neither voice nor language (the voice, and so the "
                        "format, waits for the first sentence): send text and flush, or name a "
                        "voice or language"
                    )
                try:
                    request = _parsed(await requests.__anext__())  # pending's, at once
                except StopAsyncIteration:
                    return sent.so_far(ended=True), sent.early, True
                last = loop.time()
                if request.WhichOneof("request") == "text":  # as any stream's piece
                    self._check_text(request.text, piece=True)
                if sent.add(request):
                    return sent.decided(), sent.early, False
                if request.WhichOneof("request") == "clear":
                    settle_by = None
                elif sent.opening and settle_by is None:
                    settle_by = loop.time() + _SETTLE_SECONDS
        except BaseException:
            requests.close()
            raise
        finally:
            drained.cancel()

    async def _admitted(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        call: _Call,
        config: tts_pb2.SynthesisConfig,
        first: str = "",
        segments: list[str] | None = None,
        *,
        taken: bool = False,
    ) -> Session:
        """The call's session, once its settings are checked and the admission takes it (by
        who calls, and what its voice costs). `first`: the text of its first segment.
        `segments`: a Synthesize call's text, cut as its session cuts it: such a call waits in
        the admission's queue for room, and needs none when the phrase cache holds every
        segment (no model work). `taken`: a stream taken before the drain began
        (Admission.enter)."""
        who = tenant(context.invocation_metadata()) if self._tenants else None
        caller = Caller(_address(context.peer()), who)
        wait = None
        if segments is not None and (left := context.time_remaining()) is not None:
            wait = left - QUEUE_DEADLINE_MARGIN
        session, call.slot = await self._opener.open(
            caller, convert.call_config(config), first, segments, wait, taken=taken
        )
        return session

    async def _speak(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        start: Callable[[_Call], Awaitable[Session]],
        respond: Callable[[Event], R],
    ) -> AsyncIterator[R]:
        """The path both synthesis RPCs take: the session (which `start` makes, admitting the
        call) and its events as responses, the idle watchdog, and every error as its status."""
        call = _Call(Watchdog(self._idle_timeout))
        try:
            session = await start(call)
            calls.note_session(session)
            call.watchdog.watch(
                lambda: session.working,
                unread=lambda: session.unread,
                abort=lambda e: abort(context, e),
            )
            # Closed here, not whenever the garbage collector gets to it: its synthesis stops
            # as the call ends, however it ends.
            async with contextlib.aclosing(session.events()) as events:
                async for event in events:
                    calls.note(event)
                    yield respond(event)
                    call.watchdog.touch()
            if call.reader is not None and not call.reader.done():
                # The server ended a stream its client holds open (a drain): the client half-
                # closes on the Summary, and the status then ends the call on both sides. A
                # status sent before would go with RST_STREAM(NO_ERROR), which HAProxy 2.6
                # passes on as CANCEL, at times ahead of the last events (deploy/README.md).
                await asyncio.wait([call.reader], timeout=HALF_CLOSE_WAIT)
        except VoxliteError as exc:
            await abort(context, exc)
        except grpc.aio.AbortError:
            raise
        except Exception as exc:
            if context.done():  # the client gone or the call ended: nothing to tell anyone
                raise
            await abort(context, fault(exc))
        finally:
            call.watchdog.stop()
            if call.reader is not None:
                call.reader.cancel()
            if call.slot is not None:
                self._admission.leave(call.slot)

    async def _take_back(self, slot: Slot) -> None:
        """A parked stream's slot back, or why not (the same status a new call would get)."""
        try:
            await self._admission.admit(slot=slot)
        except VoxliteError as exc:
            park = self._admission.policy.park_after
            raise type(exc)(
                f"this stream gave its slot to another call after {park:g} s with nothing to "
                f"speak, and cannot take one back now: {exc}"
            ) from None

    async def _read(
        self,
        requests: _ReadAhead,
        session: Session,
        call: _Call,
        *,
        early: Sequence[tts_pb2.StreamingSynthesizeRequest] = (),
        ended: bool = False,
    ) -> None:
        """Feed requests to the session as they arrive, while audio is being produced: first
        `early`, those read before the session began (and the half-close if `ended`). Only
        progress keeps the stream from being idle: text that completes a segment, a flush, a
        clear, the half-close (any message at all would let one byte every few minutes hold a
        slot for ever). A stream whose slot went to another call while it was quiet takes one
        again, as a new call would, before its next text."""
        try:
            for request in early:
                await self._apply(request, session, call)
            if not ended:
                async for raw in requests:
                    await self._apply(_parsed(raw), session, call)
            session.end()
            call.watchdog.touch()
        except VoxliteError as exc:
            session.fail(exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the call broke (client gone): stop the session's work
            _LOG.debug("request stream ended: %r", exc)
            session.fail(exc)

    async def _apply(
        self, request: tts_pb2.StreamingSynthesizeRequest, session: Session, call: _Call
    ) -> None:
        """One request of a stream, given to its session."""
        watchdog = call.watchdog
        kind = request.WhichOneof("request")
        if kind in ("text", "flush") and call.slot is not None and not call.slot.held:
            await self._take_back(call.slot)
        if kind == "text":
            self._check_text(request.text, piece=True)
            settings = session.settings
            check_readable(settings.voice, request.text, self._registry, settings.by_text)
            if session.push_text(request.text):
                watchdog.touch()
        elif kind == "flush":
            session.flush(request.flush.id)
            watchdog.touch()
        elif kind == "clear":
            session.clear(request.clear.id)
            watchdog.touch()
        else:
            raise _misplaced(kind)


def _misplaced(kind: str | None) -> InvalidRequest:
    """The error for a stream's request after its first that is not text, flush or clear."""
    if kind == "config":
        return InvalidRequest("config was already sent: send it once, as the first message")
    return InvalidRequest("empty request: set one of config, text, flush or clear")


# How long a stream whose first segment leaves its language open ("本日、", "OK、") waits for
# the few characters that settle it before its own script decides: a language model writes
# them within a fraction of a second; a caller that stops there must not stall.
_SETTLE_SECONDS = 1.0


class _BeforeVoice:
    """What a stream naming neither voice nor language has sent before its first sentence picks
    its voice."""

    def __init__(self, max_chars: int) -> None:
        self._max_chars = max_chars
        self._segmenter = Segmenter()
        self.seen = ""
        """The text so far (since a clear)."""
        self.opening = ""
        """Its first segment with words, once cut: while it leaves the language open
        (textlang.undecided: "本日、"), the voice waits for a kana or a Chinese character."""
        self.early: list[tts_pb2.StreamingSynthesizeRequest] = []
        """The requests read, to replay once the stream has a session."""
        self._held = 0  # characters and requests kept: blank text completes no segment

    def add(self, request: tts_pb2.StreamingSynthesizeRequest) -> bool:
        """Take one request; True once the text picks the voice (decided())."""
        kind = request.WhichOneof("request")
        self.early.append(request)
        self._held += len(request.text) if kind == "text" else 1
        if self._held > self._max_chars:
            raise Overloaded(
                f"the stream sent {self._held} characters and requests with no sentence end "
                f"before its first sentence, over the limit of {self._max_chars}: end a "
                "sentence or flush sooner (its voice waits for one), or name a voice or "
                "language in config"
            )
        found: list[str] = []
        if kind == "text":
            found = self._segmenter.push(request.text)
        elif kind == "flush":
            found = self._segmenter.flush()
        elif kind == "clear":
            self._segmenter.clear()
            # The text before it is dropped: replayed, it would be read against the voice the
            # text after it picks. The flushes and clears stay, for their acks.
            self.early = [r for r in self.early if r.WhichOneof("request") != "text"]
            self._held = len(self.early)
        else:
            raise _misplaced(kind)
        self.seen = "" if kind == "clear" else self.seen + request.text
        self.opening = "" if kind == "clear" else self.opening or _first(found)
        waits = textlang.undecided(self.opening)
        return bool(self.opening) and not (
            waits and kind == "text" and textlang.undecided(self.seen)
        )

    def decided(self) -> str:
        """The text that picks the voice: the first segment, or all so far when it left the
        language open."""
        return self.seen if textlang.undecided(self.opening) else self.opening

    def so_far(self, *, ended: bool = False) -> str:
        """The text that picks the voice now, with no more to come before it (the drain, or
        the half-close when `ended`)."""
        if self.opening:
            return self.seen
        found = _first(self._segmenter.flush())
        return found if ended else found or self.seen


def _first(segments: list[str]) -> str:
    """The first segment with words to say, or "": one of only emoji or marks tells no
    language."""
    return next((s for s in segments if textlang.has_words(markup.spoken(s))), "")


@dataclass
class _Call:
    """What the servicer holds for one synthesis call while it runs."""

    watchdog: Watchdog
    slot: Slot | None = None
    """Set once the call is admitted (and so must leave)."""
    reader: asyncio.Task[None] | None = None
    """The task feeding a stream's requests to its session."""


def _address(peer: str) -> str:
    """A gRPC peer ("ipv4:10.0.0.7:50122", "ipv6:[::1]:50122") without its port."""
    host, sep, port = peer.rpartition(":")
    return host if sep and port.isdigit() else peer


class _ReadAhead:
    """A stream's requests, whose next read may begin before its reader takes the request
    (the wait for a stream's first sentence also watches the drain): a read begun is never
    cancelled to be begun again, which could lose the request it was reading, but handed to
    the next reader."""

    def __init__(self, requests: AsyncIterator[Any]) -> None:
        self._requests = requests
        self._next: asyncio.Future[Any] | None = None

    def next(self) -> asyncio.Future[Any]:
        """The next request's read, begun now or before."""
        if self._next is None:
            self._next = asyncio.ensure_future(self._requests.__anext__())
        return self._next

    def close(self) -> None:
        """The call is over: a read under way is not wanted."""
        if self._next is not None:
            self._next.cancel()

    def __aiter__(self) -> _ReadAhead:
        return self

    async def __anext__(self) -> Any:
        read = self.next()
        try:
            return await read
        finally:
            self._next = None


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
