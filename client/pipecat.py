"""voxlite as a Pipecat text-to-speech service: `VoxliteTTSService` (extra `voxlite[pipecat]`)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
from loguru import logger
from pipecat.frames.frames import (
    AggregatedTextProgressFrame,
    CancelFrame,
    EndFrame,
    ErrorFrame,
    Frame,
    StartFrame,
    TTSAudioRawFrame,
    TTSStoppedFrame,
    TTSTextFrame,
)
from pipecat.services.settings import TTSSettings
from pipecat.services.tts_service import TextAggregationMode, TTSService
from pipecat.transcriptions.language import Language
from pipecat.utils.context.word_timestamp_tracker import WordTimestamp
from pipecat.utils.errors import ErrorCategory
from pipecat.utils.types import NOT_GIVEN, NotGiven, is_given

from ._async import AsyncClient
from ._channel import Metadata, Target
from ._errors import Cancelled, DeadlineExceeded, Overloaded, Unavailable, VoxliteError
from ._events import AudioChunk, AudioFormat, ClearDone, FlushDone, Summary, Timestamps
from ._options import VoiceOptions
from ._pipecat_call import Call
from ._plugin import Connection, PcmCalls

__all__ = ["VoxliteTTSService", "VoxliteTTSSettings"]

T = TypeVar("T")

# Pipecat's kind of each failure, by its gRPC code as livekit.py maps them to HTTP's; any other
# code (UNKNOWN, which the service's own errors carry, among them) is the server's.
_CATEGORY: dict[grpc.StatusCode, ErrorCategory] = {
    grpc.StatusCode.INVALID_ARGUMENT: ErrorCategory.INVALID_REQUEST,
    grpc.StatusCode.NOT_FOUND: ErrorCategory.INVALID_REQUEST,
    grpc.StatusCode.UNAUTHENTICATED: ErrorCategory.AUTHENTICATION,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ErrorCategory.RATE_LIMIT,
    grpc.StatusCode.UNAVAILABLE: ErrorCategory.CONNECTIVITY,
    grpc.StatusCode.DEADLINE_EXCEEDED: ErrorCategory.CONNECTIVITY,
    grpc.StatusCode.CANCELLED: ErrorCategory.CONNECTIVITY,
    grpc.StatusCode.FAILED_PRECONDITION: ErrorCategory.SERVER,
}
# How a call can end while nothing is pending on it, which is no error of the session's: a
# server full when the pipeline starts refuses the call opened then (the first turn's text
# opens another, or is sent again on one, and that one's refusal is the turn's error).
_IDLE_ENDINGS = (Unavailable, DeadlineExceeded, Cancelled, Overloaded)
# Settings that a call's config fixes: changing one moves the text that follows to a new call.
_CALL_SETTINGS = frozenset({"voice", "language", "speaking_rate"})
# How long a graceful stop waits for the server to finish a call before cancelling it.
_CLOSE_TIMEOUT_S = 5.0
# Contexts remembered as silent for a known reason: many more than a turn can still be ending.
_UNHEARD_KEPT = 64
# Han characters and kana: text in them has no spaces between its words.
_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass
class VoxliteTTSSettings(TTSSettings):
    """What a `TTSUpdateSettingsFrame` can change at run time: `voice`, `language` and
    `speaking_rate` (1.0 is the voice's normal pace; None the server's default)."""

    speaking_rate: float | NotGiven | None = field(default_factory=lambda: NOT_GIVEN)


class VoxliteTTSService(TTSService):
    """Speech from a voxlite server, streamed as the LLM writes, with word timestamps.

    One StreamingSynthesize call serves the whole session (a conversation keeps its place on
    a busy server): LLM text goes out piece by piece (token aggregation by default: voxlite
    cuts sentences and clauses itself), the end of each turn is a flush, an interruption a
    clear. Audio comes back as 16-bit PCM at the pipeline's output rate. A call that ends
    (the server restarted, went idle) is replaced at the next text.

    `server`, `credentials`, `tls`, `token`, `metadata` and `timeout` are those of
    `voxlite.client.AsyncClient` (`timeout`: deadline of each call; None, the default, suits
    a call that lasts the session). `voice`, `language` and `speaking_rate` can change at run
    time with `TTSUpdateSettingsFrame(delta=VoxliteTTSService.Settings(...))`.
    """

    Settings = VoxliteTTSSettings
    _settings: VoxliteTTSSettings

    def __init__(
        self,
        server: Target = "localhost:50051",
        voice: str | None = None,
        language: Language | str | None = None,
        *,
        speaking_rate: float | None = None,
        speaker: str | None = None,
        noise_scale: float | None = None,
        noise_w: float | None = None,
        sample_rate: int | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        tls: bool = False,
        token: str | None = None,
        metadata: Metadata | None = None,
        timeout: float | None = None,
        text_aggregation_mode: TextAggregationMode | None = TextAggregationMode.TOKEN,
        settings: VoxliteTTSSettings | None = None,
        **kwargs: Any,
    ) -> None:
        store = self.Settings(
            model=None, voice=voice, language=language, speaking_rate=speaking_rate
        )
        if settings is not None:
            store.apply_update(settings)
        super().__init__(
            text_aggregation_mode=text_aggregation_mode,
            push_text_frames=False,  # TTSTextFrames come from the word timestamps
            push_start_frame=True,
            sample_rate=sample_rate,
            settings=store,
            **kwargs,
        )
        self._connection = Connection(
            server, credentials=credentials, tls=tls, token=token, metadata=metadata
        )
        self._timeout = timeout
        self._fixed: VoiceOptions = {
            "speaker": speaker,
            "noise_scale": noise_scale,
            "noise_w": noise_w,
        }
        self._client: AsyncClient | None = None
        self._calls: list[Call] = []
        """Live calls in the order they were opened; the last takes new text unless it is
        half-closed."""
        self._flushed: set[str] = set()
        """Contexts whose text has all been sent."""
        self._queues: dict[str, asyncio.Queue[Any]] = {}
        """Each open audio context's queue in Pipecat, kept to rescue what it drops with it."""
        self._failed: set[str] = set()
        """Contexts whose call failed, with an ErrorFrame: the rest of their turn is not sent, so
        a turn while the server is down or full is one error, not one a token."""
        self._unheard: dict[str, None] = {}
        """Contexts that end with no audio for a reason already told: their call failed, or the
        server acknowledged their text with nothing in it to say (a reply of emoji or "...").
        The latest _UNHEARD_KEPT, oldest first: Pipecat may end one more than once."""

    def can_generate_metrics(self) -> bool:
        return True

    @property
    def supports_processing_metrics(self) -> bool:
        # run_tts hands the text over and returns; TTFB carries the latency.
        return False

    def language_to_service_language(self, language: Language) -> str | None:
        return language.value  # BCP-47 already, as voxlite takes it

    def _classify_error(self, exception: Exception) -> ErrorCategory | None:
        if isinstance(exception, VoxliteError):
            return _CATEGORY.get(exception.code, ErrorCategory.SERVER)
        return None

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        self._client = self._connection.client()
        self._current_call(eager=True)  # opened now, so the first turn does not wait for it

    async def stop(self, frame: EndFrame) -> None:
        await super().stop(frame)  # plays out what is queued first
        await self._close(cancel=False)

    async def cancel(self, frame: CancelFrame) -> None:
        await super().cancel(frame)
        await self._close(cancel=True)

    async def cleanup(self) -> None:
        await super().cleanup()
        await self._close(cancel=True)

    async def _close(self, *, cancel: bool) -> None:
        calls = list(self._calls)
        for call in calls:
            if cancel:
                call.cancelled = True
                await call.session.cancel()
            elif not call.half_closed:
                call.half_closed = True
                await call.session.close()
        tasks = [c.task for c in calls if c.task is not None]
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=_CLOSE_TIMEOUT_S)
            for call in calls:
                if call.task in late:
                    call.cancelled = True
                    await call.session.cancel()
            await asyncio.wait(tasks)
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    # -- the subclass interface of TTSService --------------------------------------------------

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame | None, None]:
        if context_id in self._failed:
            yield None  # its error is out; the next turn tries a new call
            return
        try:
            await self._current_call().send(context_id, text)
            await self.start_tts_usage_metrics(text)
        except (VoxliteError, ValueError) as exc:
            yield ErrorFrame(error=f"voxlite: {exc}", exception=exc)
            return
        yield None  # the audio comes on the call's receive task

    async def flush_audio(self, context_id: str | None = None) -> None:
        context_id = context_id or self.get_active_audio_context_id()
        if not context_id:
            return
        self._flushed.add(context_id)
        for call in self._calls:
            await call.flush(context_id)
        await self._finish_if_done(context_id)

    async def on_turn_context_completed(self) -> None:
        turn = self._turn_context_id
        await super().on_turn_context_completed()  # flushes only a context Pipecat still has
        if turn:
            # The server holds the turn's last words until a flush, even when Pipecat has
            # closed the audio context meanwhile (stop_frame_timeout_s without audio).
            await self.flush_audio(turn)
            self._failed.discard(turn)

    async def _record_context_audio_outcome(self, context_id: str, received_audio: bool) -> None:
        """Pipecat writes a service off after three contexts in a row end with no audio, taking
        that for a provider silent with no error. A voxlite context ends so only after its
        error was pushed (a server down or full: CONNECTIVITY, RATE_LIMIT, which pass), or when
        it had nothing to say; counted, three such turns would silence the agent for good, the
        server back or not. Others still count. (A Pipecat internal: were it renamed, such
        turns would count again.)"""
        if received_audio or context_id not in self._unheard:
            await super()._record_context_audio_outcome(context_id, received_audio)

    async def _apply_force_complete(self, context_id: str) -> None:
        """Pipecat, ending an audio context, records the words it never timed as spoken (for
        providers that drop word timestamps). voxlite times every word it speaks: a context
        ending with words untimed is a turn whose call failed (a server gone, a drain), and
        what it did not speak is not said in the LLM's context. (A Pipecat internal: were it
        renamed, those words would be recorded again.)"""
        if context_id not in self._unheard:
            await super()._apply_force_complete(context_id)
            return
        frames = self._aggregated_frame_sequencer.force_complete(
            context_id, self._word_timestamp_tracker.last_pts
        )
        unsaid = (TTSTextFrame, AggregatedTextProgressFrame)
        await self._push_word_frames([f for f in frames if not isinstance(f, unsaid)])

    def _unheard_too(self, context_ids: list[str]) -> None:
        for context_id in context_ids:
            self._unheard[context_id] = None
        while len(self._unheard) > _UNHEARD_KEPT:
            del self._unheard[next(iter(self._unheard))]

    async def create_audio_context(self, context_id: str) -> None:
        await super().create_audio_context(context_id)
        queue = _pipecat_queue(self, context_id)
        if queue is not None:
            self._queues[context_id] = queue

    async def on_audio_context_completed(self, context_id: str) -> None:
        """Pipecat ends a context that got nothing for `stop_frame_timeout_s`, but it awaits
        other work between the timeout and removing the context's queue, and audio that
        arrives meanwhile goes into that queue and is lost with it. What is left in it is
        played in the context opened again, in its order; nothing here waits, so no later
        audio can come first."""
        await super().on_audio_context_completed(context_id)
        queue = self._queues.pop(context_id, None)
        left = []
        while queue is not None and not queue.empty():
            item = queue.get_nowait()
            if item is None or isinstance(item, Frame | WordTimestamp):  # not keepalives
                left.append(item)
        if any(item is not None for item in left):
            await self.create_audio_context(context_id)
            for item in left:
                await self.append_to_audio_context(context_id, item)

    async def on_audio_context_interrupted(self, context_id: str) -> None:
        await self.stop_all_metrics()
        self._flushed.discard(context_id)
        self._failed.discard(context_id)
        self._queues.pop(context_id, None)
        for call in list(self._calls):
            await call.drop(context_id)
        await super().on_audio_context_interrupted(context_id)

    # TTSService itself narrows AIService's ServiceSettings to TTSSettings here.
    async def _update_settings(self, delta: TTSSettings) -> dict[str, Any]:  # type: ignore[override]
        changed = await super()._update_settings(delta)
        if not changed.keys() & _CALL_SETTINGS or not self._calls:
            return changed
        turn = self._turn_context_id
        if turn and self.audio_context_available(turn):
            # The turn goes on in a new context on the new call; what was said so far ends
            # its own (as TTSService's other call-bound services do on such a change).
            await self._push_sequencer_frames(
                await self._aggregated_frame_sequencer.finalize(turn), turn
            )
            await self.flush_audio(turn)
            self._turn_context_id = None
            self._turn_context_id = self.create_context_id()
        call = self._calls[-1]
        if not call.half_closed:
            call.half_closed = True  # speaks what it holds, then ends with its summary
            await call.session.close()
        return changed

    # -- calls ---------------------------------------------------------------------------------

    def _voice_options(self) -> VoiceOptions:
        s = self._settings
        return {
            **self._fixed,
            "voice": _given(s.voice),
            "language": _given(s.language),
            "speaking_rate": _given(s.speaking_rate),
        }

    def _current_call(self, *, eager: bool = False) -> Call:
        if self._calls and not self._calls[-1].half_closed:
            return self._calls[-1]
        if self._client is None:
            raise ValueError("the service has not started (or has stopped): no StartFrame")
        calls = PcmCalls(
            self._voice_options(), self.sample_rate, word_timestamps=True, timeout=self._timeout
        )
        call = Call(calls.stream(self._client), eager=eager)
        call.task = self.create_task(self._receive(call), name="voxlite-receive")
        self._calls.append(call)
        return call

    async def _receive(self, call: Call) -> None:
        """Route the call's answers to their audio contexts until it ends."""
        try:
            async for event in call.session:
                if isinstance(event, AudioChunk):
                    run = call.audio(event)
                    if run is not None:
                        if not self.audio_context_available(run.context_id):
                            # Pipecat closed it after stop_frame_timeout_s without audio (a
                            # stalled server or client, an LLM pausing): it is still owed
                            # this audio, as Pipecat itself reopens the current turn's.
                            await self.create_audio_context(run.context_id)
                        audio = TTSAudioRawFrame(
                            event.audio, self.sample_rate, 1, context_id=run.context_id
                        )
                        await self.append_to_audio_context(run.context_id, audio)
                elif isinstance(event, Timestamps):
                    timed = call.words(event)
                    if timed is not None and timed[1]:
                        words, spaced = _spaced(event.text, timed[1])
                        await self.add_word_timestamps(
                            words, timed[0].context_id, includes_inter_frame_spaces=spaced
                        )
                elif isinstance(event, FlushDone | ClearDone):
                    run = call.acknowledge(event)
                    if run is not None and not run.dropped:
                        if not call.context_ms.get(run.context_id):
                            self._unheard_too([run.context_id])  # nothing in it to say
                        await self._finish_if_done(run.context_id)
                elif isinstance(event, AudioFormat):
                    call.take()
                    if event.sample_rate_hz != self.sample_rate:
                        raise VoxliteError(
                            f"the server answered at {event.sample_rate_hz} Hz, "
                            f"not the {self.sample_rate} Hz asked for"
                        )
                elif isinstance(event, Summary):
                    break
        except VoxliteError as exc:
            idle = not call.live_contexts() and isinstance(exc, _IDLE_ENDINGS)
            refused_first = isinstance(exc, Overloaded) and call.eager and not call.taken
            if refused_first and not idle and not call.cancelled and self._client is not None:
                # The start's call, refused by a server full then, had the first turn's text
                # already: the server spoke none of it, and a new call sends it again (its
                # own refusal is the turn's error).
                logger.debug(f"{self}: voxlite call refused at the start: {exc!r}")
                await self._send_again(call)
            elif call.cancelled or idle:
                # Nothing was waiting on it: we cancelled it, or it ended while idle (the
                # server's idle timeout, a restart); the next text opens another.
                logger.debug(f"{self}: voxlite call ended: {exc!r}")
            else:
                await self.push_error(f"voxlite: {exc.details}", exception=exc)
                self._failed.update(call.live_contexts())
                self._unheard_too(call.live_contexts())
        finally:
            # Ends the request stream too (gRPC's task reading it would wait forever).
            await call.session.cancel()
            if call in self._calls:
                self._calls.remove(call)
            # What the call still owed will not come: end those contexts, not leave them
            # hanging until the playback timeout; a failed turn still being written ends at
            # its flush, as one context (Pipecat opens a closed turn's context again).
            for context_id in call.live_contexts():
                if context_id in self._failed and context_id not in self._flushed:
                    continue
                self._flushed.add(context_id)
                await self._finish_if_done(context_id)

    async def _send_again(self, call: Call) -> None:
        """The text of a call the server refused before taking it, on a new call."""
        runs = [run for run in call.runs if not run.dropped]
        call.runs.clear()
        self._calls.remove(call)
        again = self._current_call()
        for run in runs:
            for text in run.texts:
                await again.send(run.context_id, text)
            if run.flush_id is not None:
                await again.flush(run.context_id)

    async def _finish_if_done(self, context_id: str) -> None:
        if context_id not in self._flushed or any(c.pending(context_id) for c in self._calls):
            return
        self._flushed.discard(context_id)
        if self.audio_context_available(context_id):
            await self.append_to_audio_context(context_id, TTSStoppedFrame(context_id=context_id))
            await self.remove_audio_context(context_id)


def _spaced(text: str, words: list[tuple[str, float]]) -> tuple[list[tuple[str, float]], bool]:
    """A segment's words for Pipecat, and whether they carry their own spacing. Pipecat puts a
    space between two words unless they say they do, and keeps no space of the text itself: in
    Chinese or Japanese text, which puts none between words, they say so (the context records
    价格是25元, not 价格 是 25元), and words the text writes with spaces between them ("iPhone 15
    Pro" inside Chinese) go as one, timed from the first, which keeps those spaces."""
    if _UNSPACED.search(text) is None:
        return words, False
    joined: list[tuple[str, float]] = []
    position, end = 0, -1  # where to look for the next word; where the last one found ends
    for word, start in words:
        found = text.find(word, position)
        if found < 0:  # not as the text has it: alone
            joined.append((word, start))
            end = -1
            continue
        if joined and end >= 0 and found > end and text[end:found].isspace():
            joined[-1] = (joined[-1][0] + text[end:found] + word, joined[-1][1])
        else:
            joined.append((word, start))
        position = end = found + len(word)
    return joined, True


def _pipecat_queue(service: TTSService, context_id: str) -> asyncio.Queue[Any] | None:
    """The queue Pipecat holds a context's audio in, or None where its internals differ (then
    audio it drops at a timeout is not rescued)."""
    contexts = getattr(getattr(service, "_audio_context_manager", None), "_contexts", None)
    queue = contexts.get(context_id) if isinstance(contexts, dict) else None
    return queue if isinstance(queue, asyncio.Queue) else None


def _given(value: T | NotGiven) -> T | None:
    return value if is_given(value) else None
