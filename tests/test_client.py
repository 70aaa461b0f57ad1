"""The client library against real servers on loopback: events, sessions, files, errors, targets."""

from __future__ import annotations

import io
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import pytest
import soundfile
import voxlite.client
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from voxlite.client import (
    AsyncClient,
    AudioChunk,
    AudioFileWriter,
    AudioFormat,
    Cancelled,
    ClearDone,
    Client,
    DeadlineExceeded,
    Encoding,
    FailedPrecondition,
    FlushDone,
    HealthStatus,
    InvalidRequest,
    Overloaded,
    StreamEvent,
    Summary,
    Timestamps,
    TimestampsWriter,
    Unauthenticated,
    Unavailable,
    VoiceNotFound,
    VoxliteError,
    WordTimestamp,
    _convert,
)
from voxlite.client._channel import (
    ROUND_ROBIN,
    channel_options,
    resolve_target,
    target_tls,
    url_target,
)
from voxlite.client._errors import from_rpc_error
from voxlite.client._plugin import Connection
from voxlite.client._subtitles import WIDE_CHARS_PER_CUE
from voxlite.tts.v1 import tts_pb2

from .helpers import QUIET, ServerThread, base_config, ffmpeg_pcm, wait_until

PCM: dict[str, Any] = {"encoding": Encoding.PCM_S16LE, **QUIET}
TEXT = "Good morning. The meeting starts at nine, in the small room."
LONG_TEXT = " ".join(f"This is sentence number {i} of a long answer." for i in range(20))


def audio_of(events: list[Any]) -> bytes:
    return b"".join(e.audio for e in events if isinstance(e, AudioChunk))


@pytest.fixture
def client(server: ServerThread) -> Iterator[Client]:
    with Client(server.address) as c:
        yield c


@pytest.fixture
def refused_address() -> Iterator[str]:
    """An address nothing listens on: the port stays bound (not listening) during the test."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{sock.getsockname()[1]}"


def test_public_names_are_pinned() -> None:
    assert voxlite.client.__all__ == [
        "AsyncClient",
        "AsyncStreamSession",
        "AudioChunk",
        "AudioFileWriter",
        "AudioFormat",
        "Cancelled",
        "ClearDone",
        "Client",
        "DeadlineExceeded",
        "Encoding",
        "FailedPrecondition",
        "FileOptions",
        "FlushDone",
        "HealthStatus",
        "InvalidRequest",
        "Metadata",
        "Options",
        "Overloaded",
        "StreamEvent",
        "StreamSession",
        "Summary",
        "SynthesisEvent",
        "SynthesisOptions",
        "Target",
        "Timestamps",
        "TimestampsWriter",
        "Unauthenticated",
        "Unavailable",
        "Voice",
        "VoiceList",
        "VoiceLoadFailure",
        "VoiceNotFound",
        "VoxliteError",
        "WordTimestamp",
    ]
    for name in voxlite.client.__all__:
        assert getattr(voxlite.client, name) is not None


def test_the_client_imports_no_framework() -> None:
    """The plugins are extras: `import voxlite.client` must work without Pipecat or LiveKit."""
    code = (
        "import sys, voxlite.client; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pipecat', 'livekit')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_language_goes_into_the_config() -> None:
    config = _convert.synthesis_config(encoding=Encoding.PCM_S16LE, language="de-DE")
    assert getattr(config, "language") == "de-DE"  # noqa: B009 (not in the stubs yet)


@pytest.mark.parametrize("name", ["pcm_s16le", "PCM_S16LE", "AUDIO_ENCODING_PCM_S16LE"])
def test_an_encoding_is_taken_by_its_value_or_the_protos_name(name: str) -> None:
    """Bug: encoding="PCM_S16LE", the proto's own spelling, was a bare ValueError."""
    config = _convert.synthesis_config(encoding=name)
    assert config.audio.encoding == tts_pb2.AUDIO_ENCODING_PCM_S16LE


def test_an_unknown_encoding_names_the_ones_there_are() -> None:
    with pytest.raises(ValueError, match="'wav' is not one of ogg_opus, opus, pcm_s16le"):
        _convert.synthesis_config(encoding="wav")


def test_options_left_out_leave_the_servers_defaults() -> None:
    config = _convert.synthesis_config()
    assert config.audio.encoding == tts_pb2.AUDIO_ENCODING_OGG_OPUS
    assert (config.voice, config.speaker, config.speaking_rate) == ("", "", 0.0)
    assert not config.HasField("noise_scale")
    assert not config.HasField("noise_w")
    assert not config.enable_word_timestamps
    quiet = _convert.synthesis_config(voice=None, noise_scale=0.0, noise_w=0.0)
    assert quiet.HasField("noise_scale")
    assert (quiet.noise_scale, quiet.noise_w) == (0.0, 0.0)


def test_a_misspelt_option_is_refused_as_python_would(refused_address: str, tmp_path: Path) -> None:
    path = tmp_path / "a.opus"
    with Client(refused_address) as client:  # never connects: the options are checked first
        with pytest.raises(TypeError, match="unexpected option 'voise'"):
            client.synthesize(TEXT, voise="en_US-joe-medium")  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="unexpected option 'rate'"):
            client.stream(rate=2.0)  # type: ignore[call-arg]
        # The file's format sets the encoding, and a file keeps no word timestamps.
        with pytest.raises(TypeError, match="unexpected option 'word_timestamps'"):
            client.synthesize_to_file(TEXT, path, word_timestamps=True)  # type: ignore[call-arg]
    assert not path.exists()


# -- synthesize and stream ----------------------------------------------------------------------


def test_synthesize_yields_typed_events_as_they_arrive(client: Client) -> None:
    events = list(client.synthesize(TEXT, word_timestamps=True))
    fmt, summary = events[0], events[-1]
    assert isinstance(fmt, AudioFormat)
    assert (fmt.encoding, fmt.sample_rate_hz, fmt.channels) == (Encoding.OGG_OPUS, 24000, 1)
    assert fmt.voice == "en_US-joe-medium"
    assert isinstance(summary, Summary)
    chunks = [e for e in events if isinstance(e, AudioChunk)]
    assert [c.sequence for c in chunks] == list(range(len(chunks)))
    assert chunks[0].audio.startswith(b"OggS")
    assert sum(c.duration_ms for c in chunks) == pytest.approx(summary.audio_duration_ms)
    stamps = [e for e in events if isinstance(e, Timestamps)]
    assert " ".join(s.text for s in stamps) == TEXT
    assert [s.segment for s in stamps] == list(range(summary.segments))
    assert summary.segments >= 2
    assert all(isinstance(w, WordTimestamp) for s in stamps for w in s.words)
    assert [w.word for w in stamps[0].words] == ["Good", "morning"]
    assert {type(e) for e in events} == {AudioFormat, AudioChunk, Timestamps, Summary}


@pytest.mark.asyncio
async def test_sync_and_async_clients_produce_the_same_audio(
    client: Client, server: ServerThread
) -> None:
    sync_once = audio_of(list(client.synthesize(TEXT, **PCM)))
    with client.stream(**PCM) as session:
        session.send(TEXT)
        session.close()
        sync_stream = audio_of(list(session))
    async with AsyncClient(server.address) as aclient:
        async_once = audio_of([e async for e in aclient.synthesize(TEXT, **PCM)])
        async with aclient.stream(**PCM) as asession:
            await asession.send(TEXT)
            await asession.close()
            async_stream = audio_of([e async for e in asession])
    assert len(sync_once) > 24000 * 2  # over a second of 24 kHz PCM
    assert async_once == sync_once
    assert sync_stream == sync_once
    assert async_stream == sync_once


def test_stream_session_sends_while_it_receives(client: Client) -> None:
    """clear() goes out mid-utterance while the same session is being iterated."""
    with client.stream(encoding="pcm_s16le") as session:
        session.send(LONG_TEXT)
        assert session.flush() == 1
        events = iter(session)
        first = next(e for e in events if isinstance(e, AudioChunk))
        assert first.sequence == 0
        clear_id = session.clear()
        assert clear_id == 2
        before_clear: list[StreamEvent] = [first]
        for event in events:
            before_clear.append(event)
            if isinstance(event, ClearDone):
                break
        done = before_clear[-1]
        assert done == ClearDone(2, max(e.sequence for e in audio_events(before_clear)))
        assert FlushDone(1) in before_clear
        # Cut short: how much was spoken first depends on the machine's speed, not all of it.
        assert sum(e.duration_ms for e in audio_events(before_clear)) < 30000

        def send_more() -> None:
            session.send("Okay.")
            session.close()

        sender = threading.Thread(target=send_more)
        sender.start()
        rest = list(events)
        sender.join()
    assert isinstance(rest[-1], Summary)
    assert audio_events(rest), "text sent from another thread after the clear is spoken"
    with pytest.raises(ValueError, match="closed"):
        session.send("too late")


def audio_events(events: list[StreamEvent]) -> list[AudioChunk]:
    return [e for e in events if isinstance(e, AudioChunk)]


@pytest.mark.asyncio
async def test_async_stream_session_flushes_and_clears(server: ServerThread) -> None:
    async with AsyncClient(server.address) as aclient, aclient.stream(**PCM) as session:
        await session.send("Hello there, how are")
        flush_id = await session.flush()
        events: list[StreamEvent] = []
        cleared = False
        async for event in session:
            events.append(event)
            if event == FlushDone(flush_id):
                await session.send(LONG_TEXT)
                await session.flush()
            elif isinstance(event, AudioChunk) and event.segment >= 2 and not cleared:
                cleared = True
                assert await session.clear() == 3
            elif isinstance(event, ClearDone):
                await session.close()
    assert isinstance(events[0], AudioFormat)
    assert isinstance(events[-1], Summary)
    assert ClearDone(3, audio_events(events)[-1].sequence) in events
    assert events[-1].audio_duration_ms < 30000  # the long text (about 50 s) was cut short


def test_closing_the_iterator_early_cancels_the_call(client: Client, server: ServerThread) -> None:
    events = client.synthesize(LONG_TEXT)
    next(events)
    next(events)
    events.close()
    wait_until(lambda: server.server.admission.active == 0)


# -- voices, health -----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_voices_and_health(client: Client, server: ServerThread) -> None:
    voices = client.voices()
    [voice] = voices
    assert voice.name == "en_US-joe-medium"
    assert (voice.language, voice.native_sample_rate_hz, voice.quality) == (
        "en-US",
        22050,
        "medium",
    )
    assert voice.default
    assert voice.speakers == ()
    # The proto's fields that say what to ask of a voice (they were left out).
    assert (voice.gender, voice.family, voice.word_timestamps) == ("", "piper", True)
    assert voices.failed == ()
    assert len(client.voices(language="de")) == 0
    assert client.health() is HealthStatus.SERVING
    # A service the server does not know: the health protocol's NOT_FOUND, not a missing voice.
    assert client.health(service="no.such.Service") is HealthStatus.SERVICE_UNKNOWN
    async with AsyncClient(server.address) as aclient:
        assert len(await aclient.voices(language="en")) == 1
        assert await aclient.health() is HealthStatus.SERVING
        assert await aclient.health(service="no.such.Service") is HealthStatus.SERVICE_UNKNOWN


# -- errors -------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_file_spoken_to_by_a_refused_call_is_left_as_it_was(
    client: Client, server: ServerThread, tmp_path: Path
) -> None:
    """Bug: synthesize_to_file emptied an existing file when the server refused the call (an
    unknown voice, a text the voice says nothing of after the format); a new path stays
    unmade."""
    for name in ("keep.opus", "keep.wav"):
        kept = tmp_path / name
        kept.write_bytes(b"an earlier reply")
        with pytest.raises(VoiceNotFound):
            client.synthesize_to_file("Hello.", kept, voice="xx_XX-nobody")
        with pytest.raises(InvalidRequest):
            client.synthesize_to_file("^", kept)
        async with AsyncClient(server.address) as aclient:
            with pytest.raises(InvalidRequest):
                await aclient.synthesize_to_file("^", kept)
        assert kept.read_bytes() == b"an earlier reply"
    with pytest.raises(InvalidRequest):
        client.synthesize_to_file("^", tmp_path / "new.wav")
    assert not (tmp_path / "new.wav").exists()


@pytest.mark.asyncio
async def test_unknown_voice_is_voice_not_found(client: Client, server: ServerThread) -> None:
    with pytest.raises(VoiceNotFound) as info:
        list(client.synthesize("Hello.", voice="xx_XX-nobody"))
    assert info.value.code == grpc.StatusCode.NOT_FOUND
    assert info.value.details.startswith("voice 'xx_XX-nobody' not found: choose one of")
    assert str(info.value) == info.value.details
    with client.stream(voice="xx_XX-nobody") as session, pytest.raises(VoiceNotFound):
        list(session)
    async with AsyncClient(server.address) as aclient:
        with pytest.raises(VoiceNotFound) as ainfo:
            [e async for e in aclient.synthesize("Hello.", voice="xx_XX-nobody")]
    assert ainfo.value.code == grpc.StatusCode.NOT_FOUND


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("voice", "pieces", "refused", "words"),
    [
        ("xx_XX-nobody", ["Hello ", "there, ", "how are ", "you?"], VoiceNotFound, "xx_XX-nobody"),
        (
            "en_US-joe-medium",
            ["Hello. 你好。", *(f"And more text {k}. " for k in range(50))],
            InvalidRequest,
            "Han characters",
        ),
    ],
)
async def test_an_async_stream_the_server_refuses_keeps_the_servers_status(
    server: ServerThread,
    voice: str,
    pieces: list[str],
    refused: type[VoxliteError],
    words: str,
) -> None:
    """Bug: text written as the server ended the call (at its config, a voice it refuses; or
    later, Chinese to the English voice) made grpc.aio report INTERNAL "Internal error from
    Core" in place of the server's status (grpc/grpc#36066), in about half the calls: a
    caller catching VoiceNotFound or InvalidRequest missed it, and a Pipecat test failed so
    on a busy machine. The session sends text once the server has answered a config naming a
    voice, and keeps the status the server sent as the call ends."""
    async with AsyncClient(server.address) as aclient:
        for _ in range(20):
            async with aclient.stream(voice=voice) as session:
                for piece in pieces:
                    await session.send(piece)
                await session.close()
                with pytest.raises(refused) as info:
                    [event async for event in session]
            assert info.value.code == refused.status
            assert words in info.value.details


@pytest.mark.asyncio
@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10 cannot tell who cancelled")
async def test_an_async_call_cancelled_by_its_caller_raises_cancelled(
    server: ServerThread,
) -> None:
    """Bug: a read of an async call that another task cancelled (a hang-up handler's
    session.cancel(), the client's close()) raised asyncio.CancelledError in a task nobody
    cancelled: past `except VoxliteError`, and a TaskGroup's reader vanished silently."""
    async with AsyncClient(server.address) as aclient, aclient.stream(**PCM) as session:
        await session.send(LONG_TEXT)
        await session.flush()
        events = session.__aiter__()
        assert isinstance(await events.__anext__(), AudioFormat)
        await session.cancel()
        with pytest.raises(Cancelled, match="cancel"):
            [event async for event in events]
    aclient = AsyncClient(server.address)
    replies = aclient.synthesize(LONG_TEXT, **PCM)
    assert isinstance(await replies.__anext__(), AudioFormat)
    await aclient.close()
    with pytest.raises(Cancelled, match="its client was closed"):
        [event async for event in replies]


@pytest.mark.asyncio
async def test_an_async_synthesize_closed_before_it_is_read_starts_no_call(
    server: ServerThread,
) -> None:
    """Bug: synthesize() started its call at once, but only a generator that had been read
    cancelled it: one closed unread (a barge-in before the first audio) left the server
    speaking, its slot taken, until the client closed."""

    def active() -> float:
        value = server.server.metrics.registry.get_sample_value("voxlite_active_streams")
        return float(value or 0.0)

    async with AsyncClient(server.address) as aclient:
        unread = aclient.synthesize(LONG_TEXT + " Never read.", **PCM)
        await unread.aclose()
        assert [e async for e in aclient.synthesize("Read.", **PCM)]
        wait_until(lambda: active() == 0)


def test_closing_the_client_under_a_call_is_cancelled_not_a_server_gone(
    server: ServerThread,
) -> None:
    """Bug: Client.close() while another thread read a call gave that thread Unavailable,
    'its server went away ... try again', so a retry loop retried on the closed client."""
    tts = Client(server.address)
    replies = tts.synthesize(LONG_TEXT, **PCM)
    assert isinstance(next(replies), AudioFormat)
    tts.close()
    with pytest.raises(Cancelled, match="its client was closed"):
        list(replies)


@pytest.mark.asyncio
async def test_a_closed_client_refuses_calls_in_its_own_words(
    server: ServerThread, tmp_path: Path
) -> None:
    """Bug: a call on a closed Client raised gRPC's bare "Cannot invoke RPC on closed channel!",
    and on a closed AsyncClient grpc.aio's UsageError, which no except of the library's caught."""
    tts = Client(server.address)
    assert tts.health() is HealthStatus.SERVING
    tts.close()
    calls: list[Callable[[], object]] = [
        tts.voices,
        tts.health,
        lambda: tts.synthesize("Hello."),
        tts.stream,
        lambda: tts.synthesize_to_file("Hello.", tmp_path / "hello.wav"),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"^the Client is closed: open a new one"):
            call()
    assert not (tmp_path / "hello.wav").exists()
    aio = AsyncClient(server.address)
    assert await aio.health() is HealthStatus.SERVING
    await aio.close()
    for acall in (
        aio.voices,
        aio.health,
        lambda: aio.synthesize_to_file("Hi.", tmp_path / "a.wav"),
    ):
        with pytest.raises(ValueError, match=r"^the AsyncClient is closed: open a new one"):
            await acall()
    for start in (lambda: aio.synthesize("Hello."), aio.stream):
        with pytest.raises(ValueError, match=r"^the AsyncClient is closed: open a new one"):
            start()


def test_a_refused_session_left_unclosed_keeps_no_thread(server: ServerThread) -> None:
    """Bug: a stream session the server refused, iterated but never closed, left gRPC's thread
    that sends its requests waiting on the queue for ever: one thread more per such call."""
    with Client(server.address) as tts:
        # Once closed, as a caller should: the threads such a call starts once are counted.
        with tts.stream(voice="xx_XX-nobody") as closed:
            closed.send("Hello.")
            with pytest.raises(VoiceNotFound):
                list(closed)
        before = threading.active_count()
        for _ in range(5):
            session = tts.stream(voice="xx_XX-nobody")
            session.send("Hello.")
            with pytest.raises(VoiceNotFound):
                list(session)
        wait_until(lambda: threading.active_count() <= before)


def test_bad_values_are_invalid_request(client: Client) -> None:
    with pytest.raises(InvalidRequest, match=r"speaking_rate must be between 0\.25 and 4"):
        list(client.synthesize("Hello.", speaking_rate=10))
    with pytest.raises(InvalidRequest, match="cannot be carried by Opus"):
        list(client.synthesize("Hello.", sample_rate_hz=22050))


def test_errors_mid_iteration_keep_code_and_details(client: Client) -> None:
    """A failure after audio has arrived is raised from the iteration, mapped."""
    with client.stream() as session:
        session.send("Hello there.")
        session.flush()
        events = iter(session)
        assert isinstance(next(events), AudioFormat)
        session.send("x" * 6000)  # over the server's text limit
        with pytest.raises(InvalidRequest, match="over the limit of 5000"):
            list(events)


def test_deadline_and_cancel(client: Client) -> None:
    with pytest.raises(DeadlineExceeded) as info:
        list(client.synthesize(LONG_TEXT, timeout=0.3))
    assert info.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    session = client.stream()
    session.send(LONG_TEXT)
    session.flush()
    events = iter(session)
    next(events)
    session.cancel()
    with pytest.raises(Cancelled):
        list(events)


def test_server_down_is_unavailable(refused_address: str) -> None:
    with Client(refused_address) as down:
        with pytest.raises(Unavailable) as info:
            down.health(timeout=10)
        assert info.value.code == grpc.StatusCode.UNAVAILABLE
        assert info.value.details
        with pytest.raises(Unavailable):
            down.voices(timeout=10)
        with pytest.raises(Unavailable):
            list(down.synthesize("Hello.", timeout=10))


class FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode) -> None:
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return f"because {self._code.name}"


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (grpc.StatusCode.INVALID_ARGUMENT, InvalidRequest),
        (grpc.StatusCode.NOT_FOUND, VoiceNotFound),
        (grpc.StatusCode.FAILED_PRECONDITION, FailedPrecondition),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, Overloaded),
        (grpc.StatusCode.UNAVAILABLE, Unavailable),
        (grpc.StatusCode.DEADLINE_EXCEEDED, DeadlineExceeded),
        (grpc.StatusCode.CANCELLED, Cancelled),
        (grpc.StatusCode.UNAUTHENTICATED, Unauthenticated),
        (grpc.StatusCode.INTERNAL, VoxliteError),
        (grpc.StatusCode.UNIMPLEMENTED, VoxliteError),
    ],
)
def test_every_status_code_maps_to_one_exception(
    code: grpc.StatusCode, cls: type[VoxliteError]
) -> None:
    error = from_rpc_error(FakeRpcError(code))
    assert type(error) is cls
    assert (error.code, error.details) == (code, f"because {code.name}")
    assert VoiceNotFound("gone").code == grpc.StatusCode.NOT_FOUND


# -- files --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["speech.opus", "speech.ogg", "speech.wav"])
def test_synthesize_to_file_is_readable_by_independent_decoders(
    client: Client, tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    summary = client.synthesize_to_file(TEXT, path)
    samples, rate = soundfile.read(path, dtype="float32")
    assert rate == 24000
    assert len(samples) / rate * 1000 == pytest.approx(summary.audio_duration_ms, abs=1)
    assert np.abs(samples).max() > 0.1
    if path.suffix != ".wav":
        info = subprocess.run(["opusinfo", str(path)], capture_output=True, text=True, check=True)
        assert "WARNING" not in info.stdout + info.stderr


@pytest.mark.asyncio
@pytest.mark.parametrize("rate", [24000, 16000])
async def test_an_mp3_file_holds_the_speech_the_server_sent(
    client: Client, server: ServerThread, tmp_path: Path, rate: int
) -> None:
    """An MP3 file (no gRPC encoding is MP3: the writer encodes the server's PCM), read by
    ffmpeg: as long as the speech (LAME's own delay and padding at most 0.15 s more) and as
    loud, at the rate asked for."""
    pcm = np.frombuffer(audio_of(list(client.synthesize(TEXT, sample_rate_hz=rate, **PCM))), "<i2")
    reference = pcm.astype(np.float32) / 32768
    summary = client.synthesize_to_file(TEXT, tmp_path / "a.mp3", sample_rate_hz=rate, **QUIET)
    data = (tmp_path / "a.mp3").read_bytes()
    mp3 = ffmpeg_pcm(data, rate)
    seconds = summary.audio_duration_ms / 1000
    assert seconds <= mp3.size / rate < seconds + 0.15
    assert np.sqrt(np.mean(mp3**2)) == pytest.approx(np.sqrt(np.mean(reference**2)), rel=0.2)
    assert soundfile.info(str(tmp_path / "a.mp3")).samplerate == rate
    pipe = Unseekable()  # an asyncio call, into a pipe: the same bytes
    async with AsyncClient(server.address) as aclient:
        await aclient.synthesize_to_file(TEXT, pipe, format="mp3", sample_rate_hz=rate, **QUIET)
    assert pipe.getvalue() == data


@pytest.mark.parametrize(
    ("name", "rate", "bytes_per_sample"),
    [("a.raw", 16000, 2), ("a.ulaw", 8000, 1), ("a.alaw", 8000, 1)],
)
def test_headerless_files_hold_exactly_the_audio(
    client: Client, tmp_path: Path, name: str, rate: int, bytes_per_sample: int
) -> None:
    path = tmp_path / name
    summary = client.synthesize_to_file("Hello there.", path, sample_rate_hz=rate)
    size = path.stat().st_size
    assert size / bytes_per_sample / rate * 1000 == pytest.approx(summary.audio_duration_ms, abs=1)


def test_wav_holds_the_pcm_the_server_sent(client: Client, tmp_path: Path) -> None:
    pcm = audio_of(list(client.synthesize(TEXT, **PCM)))
    client.synthesize_to_file(TEXT, tmp_path / "a.wav", **QUIET)
    samples, rate = soundfile.read(tmp_path / "a.wav", dtype="int16")
    assert rate == 24000
    assert samples.tobytes() == pcm


class Unseekable(io.BytesIO):
    def seekable(self) -> bool:
        return False


@pytest.mark.asyncio
async def test_wav_to_a_stream_that_cannot_seek_marks_its_size_unknown(
    client: Client, server: ServerThread
) -> None:
    out = Unseekable()
    client.synthesize_to_file("Hello there.", out, format="wav")
    data = out.getvalue()
    assert data[4:8] == data[40:44] == b"\xff\xff\xff\xff"
    samples, rate = soundfile.read(io.BytesIO(data), dtype="int16")
    assert (len(samples), rate) == ((len(data) - 44) // 2, 24000)
    aout = Unseekable()
    async with AsyncClient(server.address) as aclient:
        await aclient.synthesize_to_file("Hello there.", aout, format="wav")
    assert aout.getvalue()[:44] == data[:44]


def test_file_writer_writes_each_chunk_as_it_arrives(client: Client, tmp_path: Path) -> None:
    path = tmp_path / "growing.raw"
    with AudioFileWriter(path) as writer:
        assert writer.encoding is Encoding.PCM_S16LE
        sizes = []
        for event in client.synthesize(TEXT, encoding=writer.encoding):
            writer.write(event)
            if isinstance(event, AudioChunk):
                sizes.append(path.stat().st_size)  # read while the writer is still open
    assert len(sizes) > 3
    assert sizes == sorted(sizes)
    assert sizes[0] > 0


class Pipe(io.BytesIO):
    """A file object that cannot seek, as a pipe."""

    def seekable(self) -> bool:
        return False


def test_an_ogg_file_cut_short_is_ended_at_close(client: Client, tmp_path: Path) -> None:
    """Bug: a call that failed part-way left an Ogg file without its end-of-stream page
    (opusinfo: "EOS not set on stream 1"). At close the writer flags the last page written as
    the end, where the file can seek; on a pipe it says the stream is not complete."""
    events = list(client.synthesize(LONG_TEXT, **QUIET))
    chunks = [i for i, e in enumerate(events) if isinstance(e, AudioChunk)]
    cut = events[: chunks[len(chunks) // 2]]  # half the audio, as a drain would leave it
    path = tmp_path / "cut.opus"
    with AudioFileWriter(path) as writer:
        for event in cut:
            writer.write(event)
        assert not writer.complete
    assert writer.complete
    data = path.read_bytes()
    last = data.rindex(b"OggS")
    assert data[last + 5] & 0x04  # the end-of-stream flag, on the last page only
    assert not any(data[m.start() + 5] & 0x04 for m in re.finditer(b"OggS", data[:last]))
    info = subprocess.run(["opusinfo", str(path)], capture_output=True, text=True, check=True)
    assert "WARNING" not in info.stdout + info.stderr, info.stdout  # checks each page's CRC too
    spoken = sum(e.duration_ms for e in cut if isinstance(e, AudioChunk)) / 1000
    assert soundfile.info(str(path)).duration == pytest.approx(spoken, abs=0.05)
    pipe = Pipe()
    with AudioFileWriter(pipe, format="opus") as writer:
        for event in cut:
            writer.write(event)
    assert not writer.complete
    assert pipe.getvalue() == b"".join(e.audio for e in cut if isinstance(e, AudioChunk))


def test_file_format_comes_from_the_extension(tmp_path: Path) -> None:
    expected = {
        "a.opus": "ogg_opus",
        "b.OGG": "ogg_opus",
        "c.wav": "pcm_s16le",
        "d.raw": "pcm_s16le",
    }
    expected |= {"e.ulaw": "mulaw", "f.alaw": "alaw", "g.mp3": "pcm_s16le"}  # MP3: encoded here
    for name, encoding in expected.items():
        with AudioFileWriter(tmp_path / name) as writer:
            assert writer.encoding == encoding
    with pytest.raises(ValueError, match=r"use one of \.opus, \.ogg, \.wav.*\.mp3"):
        AudioFileWriter(tmp_path / "a.flac")
    with pytest.raises(ValueError, match="give the format"):
        AudioFileWriter(io.BytesIO())


def test_a_wav_or_mp3_writer_given_chunks_without_their_format_says_so(
    client: Client, tmp_path: Path
) -> None:
    """Bug: a caller that passed only the audio chunks to write() (leaving out the AudioFormat
    before them) got a .wav without its header: raw PCM under a name players open as WAV."""
    events = list(client.synthesize("Hello.", **PCM))
    chunks = [e for e in events if isinstance(e, AudioChunk)]
    for name in ("a.wav", "a.mp3"):
        needs = r"file needs the call's AudioFormat \(its sample rate\) before its audio"
        with AudioFileWriter(tmp_path / name) as writer, pytest.raises(ValueError, match=needs):
            writer.write(chunks[0])
        assert not (tmp_path / name).exists()
    with AudioFileWriter(tmp_path / "a.raw") as raw:  # headerless: the chunks are the file
        for chunk in chunks:
            raw.write(chunk)
    assert (tmp_path / "a.raw").read_bytes() == audio_of(events)


# -- timestamps files ---------------------------------------------------------------------------


def test_subtitles_and_json_lines_match_the_timestamps(client: Client, tmp_path: Path) -> None:
    text = "Good morning. " + " ".join(f"word{i}" for i in range(10)) + "."
    events = list(client.synthesize(text, word_timestamps=True))
    stamps = [e for e in events if isinstance(e, Timestamps)]
    for name in ("t.srt", "t.vtt", "t.jsonl"):
        with TimestampsWriter(tmp_path / name) as writer:
            for event in events:
                writer.write(event)

    records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert records == [
        {"word": w.word, "start_ms": w.start_ms, "end_ms": w.end_ms, "segment": s.segment}
        for s in stamps
        for w in s.words
    ]
    # A cue: the words of one segment, at most 7, from the first start to the last end.
    groups = [s.words[i : i + 7] for s in stamps for i in range(0, len(s.words), 7)]
    assert [len(g) for g in groups] == [2, 7, 3]
    for name, sep in (("t.srt", ","), ("t.vtt", ".")):
        cues = parse_cues((tmp_path / name).read_text(), sep)
        # Each cue's text as the text writes it: with its punctuation.
        written = ["Good morning.", " ".join(f"word{i}" for i in range(7)), "word7 word8 word9."]
        assert cues == [
            (round(g[0].start_ms), round(g[-1].end_ms), t)
            for g, t in zip(groups, written, strict=True)
        ]
    assert (tmp_path / "t.vtt").read_text().startswith("WEBVTT\n\n")
    assert (tmp_path / "t.srt").read_text().startswith("1\n00:00:00,")


def test_chinese_and_japanese_cues_have_no_spaces_and_are_cut_between_words() -> None:
    """Bug: SRT cues for Mandarin put spaces between the words (Chinese writes none) and were
    cut every 7 words, whatever the length. A cue holds the words as the script writes them (a
    space only between two Latin words); a segment over WIDE_CHARS_PER_CUE characters is cut
    between two words into cues of about equal length. The words are jieba's, as the Mandarin
    voices send them."""
    words = ["我们", "的", "营业时间", "是", "早上", "九点", "到", "晚上", "六点"]
    latin = ["iPhone", "Pro", "的", "价格"]
    out = io.StringIO()
    with TimestampsWriter(out, format="srt") as writer:
        for segment, names in enumerate((words, latin)):
            spans = tuple(WordTimestamp(w, 100 * i, 100 * i + 90) for i, w in enumerate(names))
            writer.write(Timestamps(segment, "".join(names), spans))
        # Names not in the segment's text: the words joined as the script writes them.
        writer.write(Timestamps(2, "", tuple(WordTimestamp(w, 0, 90) for w in latin)))
    cues = parse_cues(out.getvalue(), ",")
    assert cues == [
        (0, 390, "我们的营业时间是"),
        (400, 890, "早上九点到晚上六点"),
        (0, 390, "iPhonePro的价格"),
        (0, 90, "iPhone Pro的价格"),
    ]
    assert len("".join(words)) > WIDE_CHARS_PER_CUE


def test_cues_keep_the_texts_punctuation_and_end_within_the_audio() -> None:
    """Bugs: Chinese cues ran clauses together with no comma ("这个价格是25元会议在"), and after
    a call cut short the last cues ran past the end of the audio (each segment's words come
    before its audio). A segment's words in two events continue where the first left off."""
    out = io.StringIO()
    text = "你好\uff0c今天天气很好。"
    first = (WordTimestamp("你好", 0, 500),)
    rest = tuple(
        WordTimestamp(w, 700 + 300 * i, 950 + 300 * i)
        for i, w in enumerate(["今天", "天气", "很好"])
    )
    second = (WordTimestamp("Next", 2000, 2400), WordTimestamp("one", 2500, 2900))
    with TimestampsWriter(out, format="srt", with_audio=True) as writer:
        writer.write(Timestamps(0, text, first))
        assert out.getvalue() == ""  # waits for its audio
        writer.write(AudioChunk(b"", 0, 0.0, 600.0, 0))
        writer.write(Timestamps(0, text, rest))
        writer.write(AudioChunk(b"", 1, 600.0, 1300.0, 0))
        writer.write(Timestamps(1, "Next one.", second))
        writer.write(AudioChunk(b"", 2, 1900.0, 300.0, 1))  # the call ends at 2200 ms
    assert parse_cues(out.getvalue(), ",") == [
        (0, 500, "你好\uff0c"),
        (700, 1550, "今天天气很好。"),
        (2000, 2200, "Next"),
    ]


def parse_cues(text: str, sep: str) -> list[tuple[int, int, str]]:
    """(start_ms, end_ms, text) of each cue in an SRT or VTT file."""
    clock = rf"(\d\d):(\d\d):(\d\d){re.escape(sep)}(\d\d\d)"
    cues = []
    for match in re.finditer(rf"{clock} --> {clock}\n(.+)\n", text):
        h1, m1, s1, ms1, h2, m2, s2, ms2 = (int(g) for g in match.groups()[:8])
        start = ((h1 * 60 + m1) * 60 + s1) * 1000 + ms1
        end = ((h2 * 60 + m2) * 60 + s2) * 1000 + ms2
        cues.append((start, end, match.group(9)))
    return cues


# -- targets, load balancing, TLS and metadata --------------------------------------------------


def test_targets_are_parsed_into_grpc_targets() -> None:
    assert resolve_target("localhost:50051") == ("localhost:50051", False)
    assert resolve_target("dns:///tts.internal:50051") == ("dns:///tts.internal:50051", True)
    assert resolve_target("10.0.0.1:1, 10.0.0.2:2") == ("ipv4:10.0.0.1:1,10.0.0.2:2", True)
    assert resolve_target(["10.0.0.1:1", "10.0.0.2:2"]) == ("ipv4:10.0.0.1:1,10.0.0.2:2", True)
    assert resolve_target(["[::1]:1", "[::2]:2"]) == ("ipv6:[::1]:1,[::2]:2", True)
    assert resolve_target(["localhost:1", "127.0.0.2:2"]) == ("ipv4:127.0.0.1:1,127.0.0.2:2", True)
    for bad in (["10.0.0.1:1", "dns:///x:2"], "10.0.0.1,10.0.0.2:2", ""):
        with pytest.raises(ValueError, match=r"host:port|empty"):
            resolve_target(bad)
    with pytest.raises(Unavailable, match="do not all have IPv4 addresses"):
        resolve_target(["10.0.0.1:1", "[::1]:2"])
    no_bdp = ("grpc.http2.bdp_probe", 0)
    assert channel_options(True, None) == [("grpc.service_config", ROUND_ROBIN), no_bdp]
    assert channel_options(True, [("grpc.service_config", "{}")]) == [
        ("grpc.service_config", "{}"),
        no_bdp,
    ]
    assert channel_options(False, [("a", 1)]) == [("a", 1), no_bdp]
    assert channel_options(False, [("grpc.http2.bdp_probe", 1)]) == [("grpc.http2.bdp_probe", 1)]


@pytest.fixture(scope="module")
def second(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    """Another server, whose voices folder holds a broken voice file."""
    voices = tmp_path_factory.mktemp("broken-voices")
    (voices / "xx_XX-broken-low.onnx").write_bytes(b"not a model")
    (voices / "xx_XX-broken-low.onnx.json").write_text("{}")
    srv = ServerThread(base_config(cache_dir, voices))
    yield srv
    srv.close()


def test_a_target_written_as_a_url_is_its_host_and_port() -> None:
    """Bug: "http://host:50051" (a server's address copied as a URL) failed every call with
    gRPC's "Misformatted domain name". The scheme says plaintext or TLS."""
    assert url_target("http://tts:50051") == ("tts:50051", False)
    assert url_target("grpc://tts:50051/") == ("tts:50051", False)
    assert url_target("HTTPS://tts.example.com") == ("tts.example.com:443", True)
    assert url_target("http://[::1]") == ("[::1]:80", False)
    assert url_target("grpcs://a:1, b:2") == ("a:1,b:2", True)
    assert url_target(["https://a:1", "https://b:2"]) == (["a:1", "b:2"], True)
    for unchanged in ("tts:50051", "dns:///tts.internal:50051", "unix:///run/voxlite.sock"):
        assert url_target(unchanged) == (unchanged, None)
    assert target_tls("https://a:1", False, tls_given=False) == ("a:1", True)
    assert target_tls("https://a:1", False, tls_given=True) == ("a:1", False)  # credentials=
    assert target_tls("a:1", True, tls_given=False) == ("a:1", True)
    refusals = {
        "http://tts:8000/v1": "has a path \\(/v1\\): a gRPC server is reached at host:port",
        "grpc://tts": "names no port: give grpc://host:port",
        "http://a:1,https://b:2": "asks for plaintext and 'https://b:2' for TLS",
    }
    for target, message in refusals.items():
        with pytest.raises(ValueError, match=message):
            url_target(target)
    with pytest.raises(ValueError, match="says plaintext, but TLS options were given"):
        Client("http://tts:50051", tls=True)
    with pytest.raises(ValueError, match="says plaintext, but TLS options were given"):
        target_tls("http://tts:50051", False, tls_given=True)
    with pytest.raises(ValueError, match="says plaintext, but TLS options were given"):
        Connection(server="http://tts:50051", tls=True)  # the plugins' options


def test_a_request_over_the_servers_message_limit_is_invalid_not_overloaded(
    client: Client,
) -> None:
    """Bug: a text over 1 MiB raised Overloaded ("retry later") with gRPC's "Received message
    larger than max": a caller that retries Overloaded sent it again for ever."""
    with pytest.raises(InvalidRequest, match="split it into several requests") as raised:
        list(client.synthesize("word " * 250_000))
    assert raised.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    with client.stream() as session:
        session.send("word " * 250_000)
        session.close()
        with pytest.raises(InvalidRequest, match="over the server's"):
            list(session)


def test_a_url_target_reaches_the_server(server: ServerThread) -> None:
    with Client(f"http://{server.address}") as tts:
        assert tts.health() == HealthStatus.SERVING
        summary = list(tts.synthesize("Through a URL."))[-1]
    assert isinstance(summary, Summary)
    assert summary.audio_duration_ms > 0


def test_several_addresses_are_balanced_round_robin(
    server: ServerThread, second: ServerThread
) -> None:
    def jobs() -> list[int]:
        return [server.server.scheduler.jobs_total, second.server.scheduler.jobs_total]

    before = jobs()
    with Client(f"{server.address},{second.address}") as both:
        for _ in range(20):  # calls go to connected servers in turn; both connect early on
            assert isinstance(list(both.synthesize("Hi."))[-1], Summary)
            if all(a > b for a, b in zip(jobs(), before, strict=True)):
                break
    after = jobs()
    assert after[0] > before[0]
    assert after[1] > before[1]


def test_voices_reports_files_that_failed_to_load(second: ServerThread) -> None:
    with Client(second.address) as c:
        voices = c.voices()
    assert [v.name for v in voices] == ["en_US-joe-medium"]
    [failed] = voices.failed
    assert "xx_XX-broken-low.onnx" in failed.path
    assert failed.reason


class RecordingHealth(health.HealthServicer):
    def __init__(self) -> None:
        super().__init__()
        self.metadata: list[tuple[str, str]] = []

    def Check(self, request: Any, context: Any) -> Any:
        self.metadata += [(m.key, m.value) for m in context.invocation_metadata()]
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)


@pytest.fixture
def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A key and a certificate for tts.test, made by the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=tts.test"),
            *("-addext", "subjectAltName=DNS:tts.test"),
        ],
        check=True,
        capture_output=True,
    )
    return key, cert


@pytest.mark.asyncio
async def test_tls_credentials_options_and_metadata(self_signed: tuple[Path, Path]) -> None:
    key, cert = self_signed
    recorder = RecordingHealth()
    tls_server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    health_pb2_grpc.add_HealthServicer_to_server(recorder, tls_server)
    port = tls_server.add_secure_port(
        "127.0.0.1:0", grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])
    )
    tls_server.start()
    try:
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        options = [("grpc.ssl_target_name_override", "tts.test")]
        with Client(
            f"127.0.0.1:{port}",
            credentials=credentials,
            metadata={"x-tenant": "acme"},
            options=options,
        ) as secure:
            assert secure.health(metadata=[("x-request", "1")]) is HealthStatus.SERVING
        async with AsyncClient(
            f"127.0.0.1:{port}", credentials=credentials, options=options
        ) as asecure:
            assert await asecure.health(metadata={"x-request": "2"}) is HealthStatus.SERVING
        with Client(f"127.0.0.1:{port}") as plain, pytest.raises(Unavailable):
            plain.health(timeout=10)  # plaintext to a TLS port fails
    finally:
        tls_server.stop(None)
    assert ("x-tenant", "acme") in recorder.metadata
    assert ("x-request", "1") in recorder.metadata
    assert ("x-request", "2") in recorder.metadata
