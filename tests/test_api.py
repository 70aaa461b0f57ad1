"""The gRPC API against a real server on loopback: events, streaming, barge-in, errors."""

from __future__ import annotations

import itertools
import math
import re
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2
from voxlite.service.engines.engine import VoiceRequest
from voxlite.service.engines.piper import PiperVoice
from voxlite.tts.v1 import tts_pb2, tts_pb2_grpc

from .helpers import (
    LONG_TEXT,
    QUIET,
    Duplex,
    ServerThread,
    audio_bytes,
    base_config,
    decode_ogg,
    held_workers,
    kinds,
    park_after,
    speak,
    wait_until,
)

pb = tts_pb2
SERVICE = "voxlite.tts.v1.TextToSpeechService"


@pytest.fixture
def duplex(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> Iterator[Callable[..., Duplex]]:
    calls: list[Duplex] = []

    def make(**kwargs: Any) -> Duplex:
        d = Duplex(stub, **kwargs)
        calls.append(d)
        return d

    yield make
    for d in calls:
        d.close()
        d.call.cancel()


# -- health, reflection-free basics ---------------------------------------------------------------


def test_health_is_serving_for_the_server_and_the_service(
    server: ServerThread, channel: grpc.Channel
) -> None:
    assert server.health(channel) == health_pb2.HealthCheckResponse.SERVING
    assert server.health(channel, SERVICE) == health_pb2.HealthCheckResponse.SERVING


def test_list_voices_reports_the_default_voice(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> None:
    response = stub.ListVoices(pb.ListVoicesRequest(), timeout=10)
    [voice] = response.voices
    assert voice.name == "en_US-joe-medium"
    assert voice.language == "en-US"
    assert voice.native_sample_rate_hz == 22050
    assert voice.quality == "medium"
    assert voice.default
    assert not voice.speakers
    assert len(stub.ListVoices(pb.ListVoicesRequest(language="en"), timeout=10).voices) == 1
    assert len(stub.ListVoices(pb.ListVoicesRequest(language="de"), timeout=10).voices) == 0


# -- Synthesize ---------------------------------------------------------------------------------


def test_synthesize_sends_format_audio_summary_and_a_playable_ogg(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, tmp_path: Path
) -> None:
    responses = list(
        stub.Synthesize(
            pb.SynthesizeRequest(text="Sure, I can help with that. See you soon!"), timeout=30
        )
    )
    order = kinds(responses)
    assert order[0] == "format"
    assert order[-1] == "summary"
    assert set(order[1:-1]) == {"audio"}
    fmt = responses[0].format
    assert fmt.encoding == pb.AUDIO_ENCODING_OGG_OPUS
    assert (fmt.sample_rate_hz, fmt.channels, fmt.frame_duration_ms) == (24000, 1, 20)
    assert fmt.voice == "en_US-joe-medium"
    assert fmt.native_sample_rate_hz == 22050

    chunks = [r.audio for r in responses[1:-1]]
    assert [c.sequence for c in chunks] == list(range(len(chunks)))
    for a, b in itertools.pairwise(chunks):
        assert b.start_ms == pytest.approx(a.start_ms + a.duration_ms)
    assert chunks[0].audio.startswith(b"OggS")

    path = tmp_path / "out.opus"
    path.write_bytes(audio_bytes(responses))
    info = subprocess.run(["opusinfo", str(path)], capture_output=True, text=True, check=True)
    assert "WARNING" not in info.stdout + info.stderr
    samples, rate = decode_ogg(path.read_bytes())
    summary = responses[-1].summary
    assert rate == 24000
    assert len(samples) / rate * 1000 == pytest.approx(summary.audio_duration_ms, abs=1)
    assert summary.audio_duration_ms == pytest.approx(sum(c.duration_ms for c in chunks), abs=1e-6)
    assert summary.segments == 3  # "Sure," / "I can help with that." / "See you soon!"
    assert summary.time_to_first_audio_ms > 0
    assert math.isfinite(summary.real_time_factor)
    assert summary.real_time_factor > 0
    assert np.abs(samples).max() > 0.1


def test_synthesize_sends_audio_window_by_window(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    """One sentence arrives as several chunks: audio is sent as each vocoder window is encoded."""
    config = pb.SynthesisConfig(audio=pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE))
    text = "The weather today is sunny with a light breeze from the west."
    responses = list(stub.Synthesize(pb.SynthesizeRequest(text=text, config=config), timeout=30))
    audio = [r.audio for r in responses if r.WhichOneof("response") == "audio"]
    assert len(audio) >= 4
    assert {a.segment for a in audio} == {0}


def test_synthesize_pcm_equals_the_engine(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, voice: PiperVoice
) -> None:
    """What the client receives is the engine's audio, gain applied, unchanged (native rate)."""
    text = "Sure, I can help with that."
    config = pb.SynthesisConfig(
        audio=pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE, sample_rate_hz=22050), **QUIET
    )
    got = np.frombuffer(
        audio_bytes(list(stub.Synthesize(pb.SynthesizeRequest(text=text, config=config)))), "<i2"
    )
    params = voice.params(VoiceRequest(noise_scale=0.0, noise_w=0.0))
    segments = ["Sure,", "I can help with that."]
    expected = np.concatenate([speak(voice, s, params) for s in segments])
    expected16 = np.rint(np.clip(expected * voice.gain, -1, 1) * 32767).astype(np.int16)
    assert got.shape == expected16.shape
    assert np.abs(got.astype(np.int32) - expected16).max() <= 1


@pytest.mark.parametrize(
    ("encoding", "rate", "bytes_per_sample"),
    [
        (pb.AUDIO_ENCODING_MULAW, 8000, 1),
        (pb.AUDIO_ENCODING_ALAW, 8000, 1),
        (pb.AUDIO_ENCODING_PCM_S16LE, 16000, 2),
    ],
)
def test_synthesize_other_encodings(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, encoding: Any, rate: int, bytes_per_sample: int
) -> None:
    config = pb.SynthesisConfig(
        audio=pb.AudioConfig(encoding=encoding, sample_rate_hz=0 if rate == 8000 else rate)
    )
    responses = list(
        stub.Synthesize(pb.SynthesizeRequest(text="Hello there.", config=config), timeout=30)
    )
    assert responses[0].format.sample_rate_hz == rate
    data = audio_bytes(responses)
    assert len(data) / bytes_per_sample / rate * 1000 == pytest.approx(
        responses[-1].summary.audio_duration_ms, abs=1
    )


def test_raw_opus_sends_one_packet_per_chunk(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> None:
    import opuslib

    config = pb.SynthesisConfig(
        audio=pb.AudioConfig(encoding=pb.AUDIO_ENCODING_OPUS, frame_duration_ms=40)
    )
    responses = list(
        stub.Synthesize(pb.SynthesizeRequest(text="Hello there.", config=config), timeout=30)
    )
    fmt = responses[0].format
    assert fmt.frame_duration_ms == 40
    assert fmt.opus_pre_skip > 0
    decoder = opuslib.Decoder(fmt.sample_rate_hz, 1)
    frame = fmt.sample_rate_hz * 40 // 1000
    packets = [r.audio.audio for r in responses if r.WhichOneof("response") == "audio"]
    decoded = [decoder.decode(p, frame) for p in packets]
    assert all(len(d) == frame * 2 for d in decoded)  # each chunk is exactly one 40 ms packet


def test_word_timestamps_are_relative_to_the_stream(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    config = pb.SynthesisConfig(enable_word_timestamps=True, **QUIET)
    text = "Good morning. The meeting starts at nine."
    responses = list(stub.Synthesize(pb.SynthesizeRequest(text=text, config=config), timeout=30))
    stamps = [r.timestamps for r in responses if r.WhichOneof("response") == "timestamps"]
    assert [s.segment for s in stamps] == [0, 1]
    assert [s.text for s in stamps] == ["Good morning.", "The meeting starts at nine."]
    words = [w for s in stamps for w in s.words]
    assert [w.word for w in words] == ["Good", "morning", "The", "meeting", "starts", "at", "nine"]
    first_segment_end = max(
        r.audio.start_ms + r.audio.duration_ms
        for r in responses
        if r.WhichOneof("response") == "audio" and r.audio.segment == 0
    )
    # Segment 1's words start after segment 0's audio; all words lie within the stream.
    assert stamps[1].words[0].start_ms >= first_segment_end - 25  # within one Opus frame
    assert words[-1].end_ms <= responses[-1].summary.audio_duration_ms
    assert all(a.end_ms <= b.start_ms + 1e-6 for a, b in itertools.pairwise(words))
    # Each segment's timestamps come before its audio.
    order = [
        (
            r.WhichOneof("response"),
            r.timestamps.segment if r.HasField("timestamps") else r.audio.segment,
        )
        for r in responses
        if r.WhichOneof("response") in ("timestamps", "audio")
    ]
    assert order.index(("timestamps", 1)) < order.index(("audio", 1))


# -- StreamingSynthesize ------------------------------------------------------------------------


def test_streaming_text_in_pieces_then_flush_then_more_text(duplex: Callable[..., Duplex]) -> None:
    call = duplex(timeout=60)
    call.config(audio=pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE))
    assert call.next().WhichOneof("response") == "format"
    for ch in "Hello there, how are you today":  # no sentence end: only the flush ends it
        call.send(text=ch)
    call.send(flush=pb.Flush(id=41))
    done = call.until("flush_done")
    assert done.flush_done.id == 41
    before_flush = [r for r in call.received if r.WhichOneof("response") == "audio"]
    assert before_flush, "the flushed text must have been spoken before flush_done"
    assert {a.audio.segment for a in before_flush} == {0, 1}  # "Hello there," / "how are you today"
    call.send(text="Goodbye now.")
    call.close()
    rest = call.rest()
    assert kinds(rest)[-1] == "summary"
    later = [r.audio for r in rest if r.WhichOneof("response") == "audio"]
    assert later
    assert {a.segment for a in later} == {2}
    seqs = [r.audio.sequence for r in call.received if r.WhichOneof("response") == "audio"]
    assert seqs == list(range(len(seqs)))
    assert rest[-1].summary.segments == 3


def test_streaming_output_is_a_valid_ogg_across_flushes(duplex: Callable[..., Duplex]) -> None:
    call = duplex(timeout=60)
    call.config()
    call.send(text="First part.")
    call.send(flush=pb.Flush(id=1))
    call.until("flush_done")
    call.send(text="Second part, after a flush.")
    call.close()
    call.rest()
    samples, _ = decode_ogg(audio_bytes(call.received))
    assert len(samples) > 24000  # well over a second of audio


def test_a_stream_cleared_before_its_first_audio_reports_no_first_audio(
    server: ServerThread, duplex: Callable[..., Duplex]
) -> None:
    """Bug: the Summary of an Ogg stream cleared before any audio gave a time to first audio
    (the Ogg header's, which carries none) where the proto says 0."""
    call = duplex(timeout=60)
    with held_workers(server):  # no model run: nothing is spoken before the clear
        call.config()
        call.send(text="Nobody hears this sentence of the cleared reply.")
        call.send(flush=pb.Flush(id=1))
        call.send(clear=pb.Clear(id=2))
        call.until("clear_done")
    call.close()
    summary = call.rest()[-1].summary
    assert summary.audio_duration_ms == 0
    assert summary.time_to_first_audio_ms == 0


def test_clear_stops_speech_and_the_stream_goes_on(
    server: ServerThread, duplex: Callable[..., Duplex]
) -> None:
    call = duplex(timeout=60)
    call.config(audio=pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE))
    call.send(text=LONG_TEXT)
    call.send(flush=pb.Flush(id=1))
    first = call.until("audio")
    assert first.audio.sequence == 0
    # The request is read while audio is being produced: the clear acts mid-utterance.
    call.send(clear=pb.Clear(id=9))
    events: list[Any] = []
    while True:
        r = call.next()
        events.append(r)
        if r.WhichOneof("response") == "clear_done":
            break
    clear_done = events[-1].clear_done
    assert clear_done.id == 9
    audio_before = [r.audio for r in call.received if r.WhichOneof("response") == "audio"]
    assert clear_done.last_sequence == audio_before[-1].sequence
    # The pending flush was acknowledged (its text dropped) before the clear.
    assert kinds(events)[-2:] == ["flush_done", "clear_done"]
    spoken_ms = sum(a.duration_ms for a in audio_before)
    # How much is spoken before the clear lands depends on the machine's speed; what must not
    # happen is all of it.
    assert spoken_ms < 30000, "the long text (about 50 s) must have been cut short"
    wait_until(lambda: server.server.scheduler.jobs_running == 0)

    call.send(text="Okay, new topic.")
    call.send(flush=pb.Flush(id=2))
    after = []
    while True:
        r = call.next()
        if r.WhichOneof("response") == "flush_done":
            break
        after.append(r)
    assert after
    assert all(r.WhichOneof("response") == "audio" for r in after)
    assert after[0].audio.sequence == clear_done.last_sequence + 1
    assert min(r.audio.segment for r in after) > max(a.segment for a in audio_before)
    call.close()
    assert kinds(call.rest())[-1] == "summary"


def test_cancelled_streams_free_their_work(
    server: ServerThread, stub: tts_pb2_grpc.TextToSpeechServiceStub
) -> None:
    calls = []
    for _ in range(3):
        d = Duplex(stub, timeout=60)
        d.config()
        d.send(text=LONG_TEXT)
        d.send(flush=pb.Flush(id=1))
        calls.append(d)
    for d in calls:
        d.until("audio")  # mid-utterance
    assert server.server.admission.active >= 3
    sessions = list(server.server.admission.sessions)
    assert len(sessions) >= 3
    for d in calls:
        d.call.cancel()
        d.close()
    # Nothing keeps synthesizing for the cancelled streams: their producers are over, and no
    # job of theirs is queued or running.
    scheduler = server.server.scheduler
    wait_until(lambda: all(s.finished for s in sessions))
    wait_until(lambda: server.server.admission.active == 0 and scheduler.jobs_running == 0)
    assert scheduler.jobs_queued == 0


def test_deadline_stops_the_work(
    server: ServerThread, stub: tts_pb2_grpc.TextToSpeechServiceStub
) -> None:
    responses = stub.Synthesize(pb.SynthesizeRequest(text=LONG_TEXT), timeout=0.5)
    with pytest.raises(grpc.RpcError) as info:
        list(responses)
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    wait_until(
        lambda: server.server.admission.active == 0 and server.server.scheduler.jobs_running == 0
    )


# -- errors -------------------------------------------------------------------------------------


def error_of(fn: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        fn()
    return info.value


def synthesize_error(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str = "Hello.", **config: Any
) -> grpc.RpcError:
    request = pb.SynthesizeRequest(text=text, config=pb.SynthesisConfig(**config))
    return error_of(lambda: list(stub.Synthesize(request, timeout=10)))


@pytest.mark.parametrize(
    ("config", "code", "message"),
    [
        (
            {"voice": "xx_XX-nobody"},
            grpc.StatusCode.NOT_FOUND,
            "voice 'xx_XX-nobody' not found: choose one of en_US-joe-medium",
        ),
        (
            {"audio": pb.AudioConfig(encoding=pb.AUDIO_ENCODING_OPUS, sample_rate_hz=22050)},
            grpc.StatusCode.INVALID_ARGUMENT,
            "audio.sample_rate_hz 22050 cannot be carried by Opus: use 8000, 12000, 16000, 24000",
        ),
        (
            {"audio": pb.AudioConfig(encoding=pb.AUDIO_ENCODING_MULAW, sample_rate_hz=16000)},
            grpc.StatusCode.INVALID_ARGUMENT,
            "use 8000",
        ),
        (
            {"audio": pb.AudioConfig(encoding=pb.AUDIO_ENCODING_OGG_OPUS, frame_duration_ms=25)},
            grpc.StatusCode.INVALID_ARGUMENT,
            "audio.frame_duration_ms 25 is not an Opus frame duration: use 10, 20, 40",
        ),
        (
            {"audio": pb.AudioConfig(encoding=cast(Any, 99))},  # not a known enum value
            grpc.StatusCode.INVALID_ARGUMENT,
            "audio.encoding 99 is unknown: use one of",
        ),
        (
            {"speaking_rate": 10.0},
            grpc.StatusCode.INVALID_ARGUMENT,
            "speaking_rate must be between 0.25 and 4, got 10",
        ),
        (
            {"speaking_rate": -1.0},
            grpc.StatusCode.INVALID_ARGUMENT,
            "speaking_rate must be between 0.25 and 4",
        ),
        (
            {"noise_scale": -0.5},
            grpc.StatusCode.INVALID_ARGUMENT,
            "noise_scale must be between 0 and 2, got -0.5",
        ),
        (
            {"noise_w": 7.0},
            grpc.StatusCode.INVALID_ARGUMENT,
            "noise_w must be between 0 and 2, got 7",
        ),
        (
            {"speaker": "alice"},
            grpc.StatusCode.INVALID_ARGUMENT,
            "has a single speaker: leave speaker empty",
        ),
    ],
)
def test_bad_config_is_refused_with_what_to_fix(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
    config: dict[str, Any],
    code: grpc.StatusCode,
    message: str,
) -> None:
    error = synthesize_error(stub, **config)
    assert error.code() == code
    assert message in error.details()
    # The streaming RPC validates its config the same way.
    d = Duplex(stub, timeout=10)
    d.config(**config)
    d.close()
    error = error_of(d.rest)
    assert error.code() == code
    assert message in error.details()


def _api_field(path: str) -> bool:
    """Whether a dotted path (audio.sample_rate_hz) names a field of SynthesisConfig."""
    descriptor: Any = pb.SynthesisConfig.DESCRIPTOR
    for name in path.split("."):
        if descriptor is None or name not in descriptor.fields_by_name:
            return False
        descriptor = descriptor.fields_by_name[name].message_type
    return True


OPUS, OGG = pb.AUDIO_ENCODING_OPUS, pb.AUDIO_ENCODING_OGG_OPUS
PCM_ENC, MULAW, ALAW = pb.AUDIO_ENCODING_PCM_S16LE, pb.AUDIO_ENCODING_MULAW, pb.AUDIO_ENCODING_ALAW


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"audio": pb.AudioConfig(encoding=OPUS, sample_rate_hz=22050)}, "audio.sample_rate_hz"),
        ({"audio": pb.AudioConfig(encoding=PCM_ENC, sample_rate_hz=4000)}, "audio.sample_rate_hz"),
        ({"audio": pb.AudioConfig(encoding=ALAW, sample_rate_hz=16000)}, "audio.sample_rate_hz"),
        ({"audio": pb.AudioConfig(encoding=OGG, frame_duration_ms=25)}, "audio.frame_duration_ms"),
        (
            {"audio": pb.AudioConfig(encoding=MULAW, frame_duration_ms=20)},
            "audio.frame_duration_ms",
        ),
        ({"audio": pb.AudioConfig(encoding=OPUS, bitrate_bps=100)}, "audio.bitrate_bps"),
        ({"audio": pb.AudioConfig(encoding=PCM_ENC, bitrate_bps=32000)}, "audio.bitrate_bps"),
        ({"audio": pb.AudioConfig(encoding=cast(Any, 99))}, "audio.encoding"),
        ({"speaking_rate": 10.0}, "speaking_rate"),
        ({"noise_scale": 3.0}, "noise_scale"),
        ({"noise_w": -1.0}, "noise_w"),
        ({"speaker": "alice"}, "speaker"),
    ],
)
def test_invalid_config_messages_name_the_api_field(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, config: dict[str, Any], field: str
) -> None:
    """Bug: "audio: frame_ms 25 is not an Opus frame duration" named the server's own variable,
    not the request's field (audio.frame_duration_ms). Each message names the field at fault
    as the API spells it."""
    assert _api_field(field)
    error = synthesize_error(stub, **config)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert re.search(rf"(^|[^.\w]){re.escape(field)}\b", error.details()), error.details()
    if "." in field:  # a nested field goes by its whole path, first
        assert error.details().startswith(field + " "), error.details()


def test_empty_text_is_refused(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> None:
    for text in ("", "   \n\t"):
        error = synthesize_error(stub, text=text)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "text is empty" in error.details()


def test_text_over_the_limit_is_refused(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> None:
    error = synthesize_error(stub, text="word " * 1001)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "over the limit of 5000" in error.details()
    assert "split it" in error.details()


def test_text_before_config_is_refused(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> None:
    d = Duplex(stub, timeout=10)
    d.send(text="Hello.")
    d.close()
    error = error_of(d.rest)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "the first message must be config, got text" in error.details()


def test_stream_without_any_message_is_refused(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> None:
    d = Duplex(stub, timeout=10)
    d.close()
    error = error_of(d.rest)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "send config first" in error.details()


def test_second_config_is_refused(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> None:
    d = Duplex(stub, timeout=10)
    d.config()
    d.send(text="Hello.")
    d.config()
    error = error_of(d.rest)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "config was already sent: send it once, as the first message" in error.details()


def test_empty_request_is_refused(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> None:
    d = Duplex(stub, timeout=10)
    d.config()
    d.send()
    error = error_of(d.rest)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "set one of config, text, flush or clear" in error.details()


# -- limits (a server with small limits) ---------------------------------------------------------


@pytest.fixture(scope="module")
def limited(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    srv = ServerThread(
        base_config(cache_dir, tmp_path_factory.mktemp("voices"), max_streams=2, max_text_chars=200)
    )
    park_after(srv, math.inf)  # the limit itself: its quiet streams keep their slots
    yield srv
    srv.close()


def test_too_many_streams_are_refused(limited: ServerThread) -> None:
    with limited.channel() as channel:
        stub = limited.stub(channel)
        open_calls = []
        for _ in range(2):
            d = Duplex(stub, timeout=30)
            d.config()
            assert d.next().WhichOneof("response") == "format"
            open_calls.append(d)
        error = synthesize_error(stub)
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "limit of 2 concurrent streams" in error.details()
        # Once one ends, a new call is admitted.
        open_calls[0].close()
        open_calls[0].rest()
        wait_until(lambda: limited.server.admission.active == 1)
        assert (
            kinds(list(stub.Synthesize(pb.SynthesizeRequest(text="Hi."), timeout=30)))[-1]
            == "summary"
        )
        open_calls[1].close()
        open_calls[1].rest()


def test_buffered_text_over_the_limit_is_refused(limited: ServerThread) -> None:
    with limited.channel() as channel:
        d = Duplex(limited.stub(channel), timeout=30)
        d.config()
        for _ in range(30):  # 300 characters, no sentence end: nothing can be spoken yet
            d.send(text="blah blah ")
        error = error_of(d.rest)
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "over the limit of 200" in error.details()
        assert "flush" in error.details()


def test_one_bad_stream_does_not_harm_another(
    server: ServerThread, stub: tts_pb2_grpc.TextToSpeechServiceStub
) -> None:
    config = pb.SynthesisConfig(audio=pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE), **QUIET)
    clean = audio_bytes(
        list(stub.Synthesize(pb.SynthesizeRequest(text="Stay on the line.", config=config)))
    )
    results: list[bytes] = []

    def good() -> None:
        results.append(
            audio_bytes(
                list(stub.Synthesize(pb.SynthesizeRequest(text="Stay on the line.", config=config)))
            )
        )

    thread = threading.Thread(target=good)
    thread.start()
    for _ in range(5):
        synthesize_error(stub, speaking_rate=100.0)
        d = Duplex(stub, timeout=10)
        d.send(text="no config")
        d.close()
        error_of(d.rest)
    thread.join(timeout=30)
    assert results == [clean]
