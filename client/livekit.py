"""voxlite as a LiveKit Agents text-to-speech plugin: `TTS` (extra `voxlite[livekit]`)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import unicodedata
import weakref
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Literal

import grpc
from livekit.agents import (
    APIConnectionError,
    APIConnectOptions,
    APIError,
    APIStatusError,
    APITimeoutError,
    tts,
    utils,
)
from livekit.agents.types import DEFAULT_API_CONNECT_OPTIONS, NOT_GIVEN, NotGivenOr, TimedString
from livekit.agents.utils import is_given

from ._async import AsyncClient, AsyncStreamSession
from ._channel import Metadata, Target
from ._errors import Cancelled, DeadlineExceeded, InvalidRequest, Unavailable, VoxliteError
from ._events import AudioChunk, AudioFormat, FlushDone, StreamEvent, Timestamps
from ._options import VoiceOptions
from ._plugin import Connection, PcmCalls

__all__ = ["TTS", "ChunkedStream", "SynthesizeStream"]

# The HTTP status of each gRPC code, as gRPC-HTTP gateways map them: LiveKit's APIStatusError
# tells from it whether a failure is worth retrying (4xx but 408, 429 and 499 are not).
_HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNIMPLEMENTED: 501,
}


def _api_error(exc: VoxliteError) -> APIError:
    """The LiveKit error for a failed call: retryable when trying again may work."""
    message = f"voxlite: {exc.details}"
    if isinstance(exc, DeadlineExceeded):
        return APITimeoutError(message)
    if isinstance(exc, Unavailable | Cancelled):
        # Cancelled here is the server's (a restart, a proxy): our own cancels are asyncio's.
        return APIConnectionError(message)
    # By kind, not code: a request over gRPC's size limit is RESOURCE_EXHAUSTED on the wire
    # but can never succeed (InvalidRequest), where a 429 would have LiveKit send it again.
    status = 400 if isinstance(exc, InvalidRequest) else _HTTP_STATUS.get(exc.code, 500)
    return APIStatusError(message, status_code=status, body=exc.code.name)


@dataclasses.dataclass(frozen=True)
class _Request:
    """What the calls of a stream or synthesis are made with, fixed when it is created."""

    acquire: Callable[[], tuple[AsyncClient, bool]]
    """The client, and whether its connection served a call already."""
    calls: PcmCalls

    def start(self, output_emitter: tts.AudioEmitter, *, stream: bool) -> tuple[AsyncClient, bool]:
        """Set the emitter up for the call's PCM; the client, and whether its connection
        served a call already."""
        client, reused = self.acquire()
        output_emitter.initialize(
            request_id=utils.shortuuid(),
            sample_rate=self.calls.sample_rate_hz,
            num_channels=1,
            mime_type="audio/pcm",
            stream=stream,
        )
        return client, reused


class TTS(tts.TTS[Literal["metrics_collected", "error"]]):
    """Speech from a voxlite server: `synthesize()` over Synthesize, `stream()` over
    StreamingSynthesize, 16-bit PCM at `sample_rate`, words aligned with the audio.

    One gRPC channel (one HTTP/2 connection) carries every call, turn after turn.
    `server`, `credentials`, `tls`, `token`, `metadata` and `timeout` are those of
    `voxlite.client.AsyncClient` (`timeout`: deadline of each call); a call also fails with
    `APITimeoutError` when the server has not answered within `conn_options.timeout`.
    """

    def __init__(
        self,
        server: Target = "localhost:50051",
        voice: str | None = None,
        language: str | None = None,
        *,
        sample_rate: int = 24000,
        speaking_rate: float | None = None,
        speaker: str | None = None,
        noise_scale: float | None = None,
        noise_w: float | None = None,
        word_timestamps: bool = True,
        credentials: grpc.ChannelCredentials | None = None,
        tls: bool = False,
        token: str | None = None,
        metadata: Metadata | None = None,
        timeout: float | None = None,
    ) -> None:
        super().__init__(
            capabilities=tts.TTSCapabilities(streaming=True, aligned_transcript=word_timestamps),
            sample_rate=sample_rate,
            num_channels=1,
        )
        self._connection = Connection(
            server, credentials=credentials, tls=tls, token=token, metadata=metadata
        )
        self._calls = PcmCalls(
            voice={
                "voice": voice,
                "language": language,
                "speaker": speaker,
                "speaking_rate": speaking_rate,
                "noise_scale": noise_scale,
                "noise_w": noise_w,
            },
            sample_rate_hz=sample_rate,
            word_timestamps=word_timestamps,
            timeout=timeout,
        )
        self._client: AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._used = False
        self._streams = weakref.WeakSet[SynthesizeStream]()
        self._prewarm_task: asyncio.Task[None] | None = None

    @property
    def model(self) -> str:
        return self._calls.voice.get("voice") or "default"

    @property
    def provider(self) -> str:
        return "voxlite"

    def update_options(
        self,
        *,
        voice: NotGivenOr[str | None] = NOT_GIVEN,
        language: NotGivenOr[str | None] = NOT_GIVEN,
        speaking_rate: NotGivenOr[float | None] = NOT_GIVEN,
    ) -> None:
        """Change the voice, language or rate of the streams and syntheses made from now on."""
        changes: VoiceOptions = {}
        if is_given(voice):
            changes["voice"] = voice
        if is_given(language):
            changes["language"] = language
        if is_given(speaking_rate):
            changes["speaking_rate"] = speaking_rate
        # New calls: the streams and syntheses already made keep theirs.
        self._calls = dataclasses.replace(self._calls, voice=self._calls.voice | changes)

    def synthesize(
        self, text: str, *, conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS
    ) -> ChunkedStream:
        request = _Request(self._acquire, self._calls)
        return ChunkedStream(tts=self, input_text=text, conn_options=conn_options, request=request)

    def stream(
        self, *, conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS
    ) -> SynthesizeStream:
        request = _Request(self._acquire, self._calls)
        stream = SynthesizeStream(tts=self, conn_options=conn_options, request=request)
        self._streams.add(stream)
        return stream

    def prewarm(self) -> None:
        """Connect now (a health check), so that the first turn does not wait for it."""
        try:
            client, _ = self._acquire()
        except RuntimeError:
            return  # no event loop running: the first call connects
        self._prewarm_task = asyncio.ensure_future(self._warm(client))

    async def aclose(self) -> None:
        for stream in list(self._streams):
            await stream.aclose()
        self._streams.clear()
        if self._prewarm_task is not None:
            await utils.aio.cancel_and_wait(self._prewarm_task)
            self._prewarm_task = None
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    def _acquire(self) -> tuple[AsyncClient, bool]:
        """The client for this event loop, and whether its connection served a call already."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            # A gRPC channel belongs to the loop it was made in.
            self._client, self._client_loop, self._used = self._connection.client(), loop, False
        used, self._used = self._used, True
        return self._client, used

    async def _warm(self, client: AsyncClient) -> None:
        with contextlib.suppress(VoxliteError):  # the first call reports what is wrong
            await client.health(timeout=DEFAULT_API_CONNECT_OPTIONS.timeout)


class ChunkedStream(tts.ChunkedStream):
    """One text over Synthesize."""

    def __init__(
        self, *, tts: TTS, input_text: str, conn_options: APIConnectOptions, request: _Request
    ) -> None:
        super().__init__(tts=tts, input_text=input_text, conn_options=conn_options)
        self._request = request

    async def _run(self, output_emitter: tts.AudioEmitter) -> None:
        client, self._connection_reused = self._request.start(output_emitter, stream=False)
        calls = self._request.calls
        events = calls.synthesize(client, self._input_text)
        transcript = _Transcript(self._input_text)
        try:
            await _relay(events, output_emitter, calls, self._conn_options.timeout, transcript)
        except VoxliteError as exc:
            raise _api_error(exc) from exc
        finally:
            await events.aclose()  # cancels the call if it is still running
        output_emitter.flush()


class SynthesizeStream(tts.SynthesizeStream):
    """One segment over StreamingSynthesize: text pieces as they are pushed, `flush()` speaks
    what is buffered, `end_input()` half-closes; closing the stream cancels the call."""

    def __init__(self, *, tts: TTS, conn_options: APIConnectOptions, request: _Request) -> None:
        super().__init__(tts=tts, conn_options=conn_options)
        self._request = request

    async def _run(self, output_emitter: tts.AudioEmitter) -> None:
        client, self._connection_reused = self._request.start(output_emitter, stream=True)
        calls = self._request.calls
        session = calls.stream(client)
        transcript = _Transcript()
        # A call naming neither voice nor language is answered once its text picks the voice:
        # the wait for the answer starts when the server owes one (a flush, the input's end),
        # not while the LLM is still writing the first clause.
        owed = asyncio.Event()
        if calls.voice.get("voice") or calls.voice.get("language"):
            owed.set()
        async with session:  # cancels the call on the way out unless it ended
            sender = asyncio.create_task(self._send(session, output_emitter, transcript, owed))
            try:
                timeout = self._conn_options.timeout
                await _relay(session, output_emitter, calls, timeout, transcript, owed)
                await sender
            except VoxliteError as exc:
                raise _api_error(exc) from exc
            finally:
                await utils.aio.gracefully_cancel(sender)

    async def _send(
        self,
        session: AsyncStreamSession,
        output_emitter: tts.AudioEmitter,
        transcript: _Transcript,
        owed: asyncio.Event,
    ) -> None:
        # Read at the start of each attempt: a retry replays the input into a fresh channel.
        input_ch = self._input_ch
        started = unflushed = False
        async for data in input_ch:
            if isinstance(data, self._FlushSentinel):
                if unflushed:
                    await session.flush()
                    owed.set()
                    unflushed = False
                continue
            if not started:
                output_emitter.start_segment(segment_id=utils.shortuuid())
                started = True
            self._mark_started()
            transcript.text += data
            await session.send(data)
            unflushed = True
        await session.close()  # the server speaks what it holds, then ends the call
        owed.set()


async def _relay(
    events: AsyncIterable[StreamEvent],
    output_emitter: tts.AudioEmitter,
    calls: PcmCalls,
    answer_timeout: float,
    transcript: _Transcript,
    owed: asyncio.Event | None = None,
) -> None:
    """Hand a call's audio and words to LiveKit until the call ends. The first answer (the
    format) is due within `answer_timeout` once `owed` is set (at once without it)."""
    answers = aiter(events)
    answered = asyncio.ensure_future(_next(answers))
    try:
        if owed is not None and not owed.is_set():
            waiting = asyncio.ensure_future(owed.wait())
            try:
                await asyncio.wait((answered, waiting), return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiting.cancel()
        # The format comes first: a server that is not answering shows here.
        first = await asyncio.wait_for(answered, answer_timeout)
    except asyncio.TimeoutError:
        raise APITimeoutError(f"voxlite: no answer within {answer_timeout:g} s") from None
    except StopAsyncIteration:
        return
    finally:
        if not answered.done():  # left unanswered (the turn cancelled): no task left behind
            answered.add_done_callback(_retrieved)
            answered.cancel()
    if isinstance(first, AudioFormat) and first.sample_rate_hz != calls.sample_rate_hz:
        raise APIError(
            f"voxlite answered at {first.sample_rate_hz} Hz, not {calls.sample_rate_hz}",
            retryable=False,
        )
    heard = False
    async for event in answers:
        if isinstance(event, AudioChunk):
            heard = True
            output_emitter.push(event.audio)
        elif isinstance(event, Timestamps):
            output_emitter.push_timed_transcript(transcript.timed(event))
        elif isinstance(event, FlushDone):
            output_emitter.flush()  # all of the flushed text's audio is out: release it
    if not heard and transcript.text.strip():
        # Text with nothing to say ("...", a lone sign) has no audio, which LiveKit takes for
        # a failed attempt and retries (dead air before the next reply, then an error): its
        # audio is what it sounds like, 10 ms of silence.
        output_emitter.push(bytes(2 * calls.sample_rate_hz // 100))
    if rest := transcript.rest():
        output_emitter.push_timed_transcript(rest)


async def _next(answers: AsyncIterator[StreamEvent]) -> StreamEvent:
    return await anext(answers)


def _retrieved(future: asyncio.Future[StreamEvent]) -> None:
    """Takes a cancelled read's outcome, so that asyncio logs no exception never retrieved."""
    if not future.cancelled():
        future.exception()


class _Transcript:
    """Cuts the text sent into pieces, one a word with its times in seconds, so that the
    pieces joined give back the text as written (voxlite's words carry no spaces or marks)."""

    def __init__(self, text: str = "") -> None:
        self.text = text
        self._position = 0
        self._end = 0.0

    def timed(self, timestamps: Timestamps) -> list[TimedString]:
        pieces = []
        for word in timestamps.words:
            index = self.text.find(word.word, self._position)
            if index < 0:
                piece = f"{word.word} "  # not as sent (the server rewrote it): the word alone
            else:
                # What stands between the last word and this one goes with this one ("$" of
                # "$25"); the spaces and closing marks after it go with it too, as far as the
                # text is known, but no mark that may start the next word.
                end = index + len(word.word)
                while end < len(self.text) and _closes(self.text[end]):
                    end += 1
                piece, self._position = self.text[self._position : end], end
            self._end = word.end_ms / 1000
            pieces.append(TimedString(piece, start_time=word.start_ms / 1000, end_time=self._end))
        return pieces

    def rest(self) -> list[TimedString]:
        """What the words left of the text as written (a mark after the last word, "."), at
        the end of the last word: the pieces joined give the whole text back."""
        rest, self._position = self.text[self._position :], len(self.text)
        return [TimedString(rest, start_time=self._end, end_time=self._end)] if rest else []


def _closes(ch: str) -> bool:
    """A space or a mark that closes what is before it (",", ".", ")", "」"), not one that may
    open the next word ("$", "#", "¿", a quote)."""
    return ch.isspace() or (
        unicodedata.category(ch) in ("Po", "Pe", "Pf") and ch not in _OPENING_MARKS
    )


_OPENING_MARKS = frozenset("#@&*%'\"\u00bf\u00a1")
