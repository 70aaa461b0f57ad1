"""voxlite.client.livekit through LiveKit Agents' own TTS interfaces against real servers."""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("livekit.agents", reason="the livekit extra is not installed")

from livekit.agents import APIConnectionError, APIConnectOptions, APIStatusError, tts
from livekit.agents.metrics import TTSMetrics
from livekit.agents.types import USERDATA_TIMED_TRANSCRIPT, TimedString
from voxlite.client import AsyncClient, AudioChunk, Encoding
from voxlite.client.livekit import TTS

from bench._servers import free_port

from .helpers import (
    ServerThread,
    base_config,
    check_example_languages,
    eventually,
    llm_pieces,
    pcm_seconds,
    speech_fraction,
    streamed_seconds,
)

RATE = 16000
NO_RETRY = APIConnectOptions(max_retry=0)
LONG_TEXT = " ".join(
    f"Point {n} of the plan is a sentence long enough to keep the voice busy." for n in range(40)
)


def make_tts(server: ServerThread, **options: Any) -> TTS:
    options.setdefault("noise_scale", 0.0)
    options.setdefault("noise_w", 0.0)
    return TTS(server.address, sample_rate=RATE, **options)


class Listener:
    """Reads a stream's audio as LiveKit's voice pipeline does, in a task of its own."""

    def __init__(self, stream: tts.SynthesizeStream) -> None:
        self.events: list[tts.SynthesizedAudio] = []
        self.task = asyncio.ensure_future(self._read(stream))

    async def _read(self, stream: tts.SynthesizeStream) -> None:
        async for event in stream:
            self.events.append(event)

    def pcm(self) -> bytes:
        return b"".join(e.frame.data.tobytes() for e in self.events)

    def words(self) -> list[TimedString]:
        return [w for e in self.events for w in e.frame.userdata.get(USERDATA_TIMED_TRANSCRIPT, [])]


async def streamed_whole(voice: tts.TTS[Any], text: str) -> Listener:
    """A stream of `text` as an LLM writes it, its input ended, read to its end."""
    stream = voice.stream()
    listener = Listener(stream)
    for piece in llm_pieces(text):
        stream.push_text(piece)
    stream.end_input()
    await asyncio.wait_for(listener.task, timeout=120)
    await stream.aclose()
    return listener


@pytest.mark.asyncio
async def test_stream_speaks_pieces_as_pushed_flushes_and_ends_with_end_input(
    server: ServerThread,
) -> None:
    text = "Let me look that up for you, one moment. I found it in your calendar"
    async with make_tts(server) as voice:
        stream = voice.stream()
        listener = Listener(stream)
        for piece in llm_pieces(text):
            stream.push_text(piece)
            await asyncio.sleep(0.01)  # an LLM's pace; nothing is timed
        # The first sentence is spoken while the text still streams; the second has no end
        # mark, so only the flush gets it spoken, before the input ends.
        await eventually(lambda: bool(listener.events), "audio while the text streams")
        stream.flush()
        expected = await streamed_seconds(server.address, text, RATE)
        await eventually(
            lambda: pcm_seconds(listener.pcm(), RATE) >= expected - 0.05, "the flushed text's audio"
        )
        assert not listener.task.done()
        stream.end_input()
        await asyncio.wait_for(listener.task, timeout=60)
        await stream.aclose()

    frames = [e.frame for e in listener.events]
    assert all(f.sample_rate == RATE and f.num_channels == 1 for f in frames)
    assert pcm_seconds(listener.pcm(), RATE) == pytest.approx(expected, abs=0.05)
    assert speech_fraction(listener.pcm(), RATE) > 0.6
    assert listener.events[-1].is_final
    assert len({e.segment_id for e in listener.events}) == 1
    # Word alignment: the pieces give the text back, their times in order.
    words = listener.words()
    assert "".join(words) == text
    times = [(w.start_time, w.end_time) for w in words]
    spans = [(a, b) for a, b in times if isinstance(a, float) and isinstance(b, float)]
    assert len(spans) == len(words)
    assert [a for a, _ in spans] == sorted(a for a, _ in spans)
    assert all(0 <= a <= b <= expected + 0.1 for a, b in spans)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("zh", "价格是25元，请在12/25之前付款。谢谢！"),
        ("ja", "お電話ありがとうございます。価格は2,980円です。"),
        # No language: TTS(server) as README builds it, its voice picked by the text.
        (None, "您好，请问有什么可以帮您？"),
    ],
)
async def test_a_chinese_or_japanese_transcript_is_the_text_as_written(
    kokoro_server: ServerThread, language: str | None, text: str
) -> None:
    """Bug: the server named Mandarin words as its text rules wrote them (二十五元 for 25元),
    which the transcript could not find in the text: it held both, "二十五元 25元，请…".
    Japanese had no timed transcript at all. The timed pieces now give the text back."""
    async with make_tts(kokoro_server, language=language) as voice:
        listener = await streamed_whole(voice, text)
    words = listener.words()
    assert "".join(words) == text
    assert len(words) > len(re.findall("[。！]", text))  # words, not whole sentences
    starts = [w.start_time for w in words if isinstance(w.start_time, float)]
    assert len(starts) == len(words)
    assert starts == sorted(starts)


@pytest.mark.asyncio
async def test_a_transcript_with_prices_is_the_text_as_written(server: ServerThread) -> None:
    """Bug: the marks after a word went with it, the "$" of the next word too, which then was
    not found: "It costs $25." came out "It costs $$25 ", its last mark lost."""
    text = "It costs $25. Total: $1,299.99 today, or (about) €1.300!"
    async with make_tts(server) as voice:
        listener = await streamed_whole(voice, text)
    assert "".join(listener.words()) == text


@pytest.mark.asyncio
async def test_a_stream_waits_for_a_slow_llms_first_clause(kokoro_server: ServerThread) -> None:
    """Bug: a stream naming neither voice nor language (the README's TTS(server)) failed with
    "no answer within 10 s" when the LLM took longer for its first clause (a tool call, a
    reasoning model): a server with voices of other scripts answers such a stream once its
    text picks the voice, and the plugin counted the LLM's time as the server's. LiveKit opens
    the stream before any text. Here nothing completes a clause for longer than the timeout:
    the answer is owed only from the flush."""
    quick = APIConnectOptions(max_retry=0, timeout=1.0)
    async with TTS(kokoro_server.address, sample_rate=RATE) as voice:
        stream = voice.stream(conn_options=quick)
        listener = Listener(stream)
        stream.push_text("Sure,")
        await asyncio.sleep(3 * quick.timeout)  # the LLM thinks: no clause is complete
        assert not listener.task.done()
        stream.push_text(" I can help with that.")
        stream.flush()
        stream.end_input()
        await asyncio.wait_for(listener.task, timeout=120)
        await stream.aclose()
    assert speech_fraction(listener.pcm(), RATE) > 0.4
    assert "".join(listener.words()) == "Sure, I can help with that."


@pytest.mark.asyncio
async def test_a_stream_with_nothing_to_say_is_silence_not_an_error(server: ServerThread) -> None:
    """Bug: a reply of only "..." came back with no audio, which LiveKit took for a failed
    attempt: it tried again and again (dead air, an error event each) and failed."""
    async with make_tts(server) as voice:
        errors: list[Any] = []
        voice.on("error", errors.append)
        stream = voice.stream(conn_options=NO_RETRY)
        listener = Listener(stream)
        stream.push_text("...")
        stream.end_input()
        await asyncio.wait_for(listener.task, timeout=60)
        await stream.aclose()
    assert not errors
    assert listener.events
    assert speech_fraction(listener.pcm(), RATE) == 0


@pytest.mark.asyncio
async def test_synthesize_speaks_one_text(server: ServerThread) -> None:
    text = "Your order has shipped and should arrive on Thursday."
    async with AsyncClient(server.address) as client:
        events = client.synthesize(
            text, encoding=Encoding.PCM_S16LE, sample_rate_hz=RATE, noise_scale=0, noise_w=0
        )
        expected = sum([e.duration_ms async for e in events if isinstance(e, AudioChunk)]) / 1000
    async with make_tts(server) as voice:
        frame = await voice.synthesize(text).collect()
    assert frame.sample_rate == RATE
    pcm = frame.data.tobytes()
    assert pcm_seconds(pcm, RATE) == pytest.approx(expected, abs=0.05)
    assert speech_fraction(pcm, RATE) > 0.6


@pytest.mark.asyncio
async def test_turns_reuse_the_connection_and_report_metrics(server: ServerThread) -> None:
    metrics: list[TTSMetrics] = []
    async with make_tts(server) as voice:
        voice.on("metrics_collected", metrics.append)
        for text in ("First turn.", "Second turn."):
            stream = voice.stream()
            listener = Listener(stream)
            stream.push_text(text)
            stream.end_input()
            await asyncio.wait_for(listener.task, timeout=60)
            await stream.aclose()
            assert listener.events
        await eventually(lambda: len(metrics) == 2, "a metrics event per turn")
    assert [m.connection_reused for m in metrics] == [False, True]
    assert all(m.ttfb > 0 and m.audio_duration > 0 and m.streamed for m in metrics)


@pytest.mark.asyncio
async def test_update_options_changes_the_rate_of_later_streams(server: ServerThread) -> None:
    durations = []
    voice = make_tts(server)
    async with voice:
        for rate in (1.0, 2.0):
            voice.update_options(speaking_rate=rate)
            frame = await voice.synthesize("The same words at two speeds.").collect()
            durations.append(frame.duration)
    assert durations[1] < 0.7 * durations[0]


@pytest.fixture
def lone_server(cache_dir: Path, tmp_path: Path) -> Iterator[ServerThread]:
    srv = ServerThread(base_config(cache_dir, tmp_path))
    yield srv
    srv.close()


@pytest.mark.asyncio
async def test_closing_a_stream_mid_utterance_frees_the_servers_work(
    lone_server: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="voxlite.access")
    async with make_tts(lone_server) as voice:
        stream = voice.stream()
        listener = Listener(stream)
        stream.push_text(LONG_TEXT)
        stream.flush()
        await eventually(lambda: bool(listener.events), "the first audio")
        await stream.aclose()
        admission, scheduler = lone_server.server.admission, lone_server.server.scheduler
        await eventually(
            lambda: admission.active == 0 and scheduler.jobs_running == 0, "the server's work"
        )

        def calls() -> list[dict[str, Any]]:
            return [getattr(r, "fields", None) or {} for r in caplog.records]

        await eventually(lambda: bool(calls()), "the call's access log line")
    [call] = [c for c in calls() if c.get("method", "").endswith("StreamingSynthesize")]
    assert call["code"] == "CANCELLED"


@pytest.mark.asyncio
async def test_errors_map_to_livekits_types(
    server: ServerThread, lone_server: ServerThread
) -> None:
    errors: list[tts.TTSError] = []
    async with make_tts(server, voice="xx_XX-nobody-low") as voice:
        voice.on("error", errors.append)
        with pytest.raises(APIStatusError) as unknown:
            await voice.synthesize("Hello.", conn_options=NO_RETRY).collect()
        stream = voice.stream(conn_options=NO_RETRY)
        stream.push_text("Hello.")
        stream.end_input()
        with pytest.raises(APIStatusError) as streamed:
            async for _ in stream:
                pass
        await stream.aclose()
    for info in (unknown, streamed):
        assert info.value.status_code == 404
        assert not info.value.retryable
        assert "xx_XX-nobody-low" in info.value.message
    assert [e.recoverable for e in errors] == [False, False]

    async with make_tts(server, speaking_rate=9.0) as voice:
        with pytest.raises(APIStatusError) as invalid:
            await voice.synthesize("Hello.", conn_options=NO_RETRY).collect()
    assert invalid.value.status_code == 400
    assert not invalid.value.retryable
    async with make_tts(server) as voice:  # over gRPC's 1 MiB: never taken, however often sent
        with pytest.raises(APIStatusError) as oversized:
            await voice.synthesize("word " * 250_000, conn_options=NO_RETRY).collect()
    assert oversized.value.status_code == 400
    assert not oversized.value.retryable

    address = lone_server.address
    lone_server.close()
    async with TTS(address) as voice:
        with pytest.raises(APIConnectionError) as gone:
            await voice.synthesize("Hello.", conn_options=NO_RETRY).collect()
    assert gone.value.retryable


@pytest.mark.asyncio
async def test_the_language_reaches_the_server(server: ServerThread) -> None:
    async with make_tts(server, language="en-US") as voice:
        frame = await voice.synthesize("Hello there.", conn_options=NO_RETRY).collect()
    assert frame.duration > 0
    async with make_tts(server, language="xx-XX") as voice:
        with pytest.raises(APIStatusError) as info:
            await voice.synthesize("Hello there.", conn_options=NO_RETRY).collect()
    assert info.value.status_code == 404


def test_the_public_signature() -> None:
    """`TTS(server, voice=None, language=None, ...)`: every other argument keyword-only and
    optional (users and outside tests rely on it), the client's connection options among them."""
    params = list(inspect.signature(TTS).parameters.values())
    first = [(p.name, p.kind, p.default) for p in params[:3]]
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert first == [
        ("server", positional, "localhost:50051"),
        ("voice", positional, None),
        ("language", positional, None),
    ]
    rest = params[3:]
    keyword = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD)
    assert all(p.kind in keyword for p in rest)
    assert all(p.default is not inspect.Parameter.empty for p in rest if p.kind != p.VAR_KEYWORD)
    assert {"credentials", "tls", "token", "metadata", "timeout"} <= {p.name for p in rest}
    with pytest.raises(ValueError, match="token"):
        TTS("localhost:50051", token="not a token")


def test_the_example_speaks_the_language_asked_for(server: ServerThread, tmp_path: Path) -> None:
    """Bug: examples/livekit_agent.py had no --language. It speaks its scripted replies in the
    language asked for, with the server's voice for it, and refuses one it has no replies in."""
    check_example_languages("livekit_agent.py", server, tmp_path)


def test_the_example_says_so_when_no_server_answers(tmp_path: Path) -> None:
    """Bug: with no server it wrote a WAV of 0.0 s and exited 0, the error only in noise."""
    script = Path(__file__).resolve().parents[1] / "examples" / "livekit_agent.py"
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    result = subprocess.run(
        [sys.executable, str(script), "--server", address, "-o", str(tmp_path / "a.wav")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1
    assert "livekit_agent: voxlite: failed to connect" in result.stderr
