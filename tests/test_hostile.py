"""A barrage of hostile and malformed requests at a real server, with a canary stream running
through it: every request ends with valid audio or a documented status whose message says what
to fix, never INTERNAL, UNKNOWN or a hang, and the canary's audio equals a clean run."""

from __future__ import annotations

import io
import itertools
import math
import queue
import random
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import grpc
import numpy as np
import pytest
import soundfile
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from .helpers import QUIET, ServerThread, base_config

pytestmark = pytest.mark.slow
SERVICE = "/voxlite.tts.v1.TextToSpeechService/"
DOCUMENTED = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
}
CALL_TIMEOUT = 30.0
CANARY_SENTENCES = [
    "The canary sings through the storm.",
    "Every word of it should arrive unharmed.",
    "Nothing another caller does may change it.",
    "It keeps singing, one sentence at a time.",
    "Still here, still in tune.",
    "And that is the end of the song.",
]
PCM = pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE)


@pytest.fixture(scope="module")
def hostile_server(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerThread]:
    # A short idle timeout, so that streams which never half-close end on their own.
    config = base_config(
        cache_dir,
        tmp_path_factory.mktemp("voices"),
        idle_timeout_seconds=3.0,
        max_streams=64,
        phrase_cache_mb=0,  # the canary must really be synthesized again, not replayed
    )
    srv = ServerThread(config)
    yield srv
    srv.close()


# -- the cases ------------------------------------------------------------------------------------

HOSTILE_TEXTS = [
    "\x00",
    "a\x00b\x00c.",
    "\x07\x08\x1b[31mred\x1b[0m alert.",
    "🙂🙂🙂 👍🏽 🇺🇸",
    "שלום עולם, مرحبا بالعالم.",
    "\u202eright to left override\u202c and back.",
    "Mixed: English, Русский, 日本語, हिन्दी, Ελληνικά.",
    "<speak><prosody rate='fast'>SSML is not parsed</prosody></speak>",
    "<script>alert('x')</script> &amp; &lt;b&gt;",
    '{"json": [1, 2, 3], "nested": {"a": null}}',
    "SELECT * FROM users; DROP TABLE voices; --",
    "%s %n %x %d {0} {} ${HOME} $(rm -rf /)",
    "...",
    "!!!???...;;;,,,",
    "- - - — – --",
    "     ",
    "\t\n\r\n\t",
    "\u200b\u200c\u200d\ufeff",
    "[[ həlˈoʊ wˈɜːld ]]",
    "[[",
    "]] [[ ]] [[[[[[",
    "x" * 800,
    "a " * 400,
    "1" * 500,
    "3.14159265358979323846264338327950288419716939937510582097494459",
    "$" * 100,
    "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ。",
    "𝕳𝖊𝖑𝖑𝖔 𝖂𝖔𝖗𝖑𝖉",
    "a\u0301\u0301\u0301\u0301\u0301 e\u0308\u0308",
    "\\N{BELL} \\x00 \\u0000",
    "Dr. Mr. Mrs. e.g. i.e. etc. vs. U.S.A.",
    "\n".join(["line"] * 200),
    "Ends with a dangling [[ raw phoneme block",
    "零一二三四五六七八九十。",
    "🤖" * 60,
    "\ud7ff\ue000\uffff",
]


@dataclass
class Outcome:
    name: str
    code: grpc.StatusCode
    details: str
    audio: bytes
    summary_ms: float | None
    encoding: int


def outcome_of(name: str, encoding: int, call: Callable[[], Iterator[Any]]) -> Outcome:
    audio, summary = b"", None
    try:
        for response in call():
            kind = response.WhichOneof("response")
            if kind == "audio":
                audio += response.audio.audio
            elif kind == "summary":
                summary = response.summary.audio_duration_ms
    except grpc.RpcError as exc:
        return Outcome(name, exc.code(), exc.details() or "", audio, summary, encoding)
    return Outcome(name, grpc.StatusCode.OK, "", audio, summary, encoding)


def synthesize_case(stub: Any, name: str, text: str, **config: Any) -> Callable[[], Outcome]:
    encoding = config.get("audio", pb.AudioConfig()).encoding
    request = pb.SynthesizeRequest(text=text, config=pb.SynthesisConfig(**config))
    return lambda: outcome_of(
        name, encoding, lambda: stub.Synthesize(request, timeout=CALL_TIMEOUT)
    )


def stream_case(
    stub: Any, name: str, requests: list[pb.StreamingSynthesizeRequest]
) -> Callable[[], Outcome]:
    encoding = (
        requests[0].config.audio.encoding if requests and requests[0].HasField("config") else 0
    )
    return lambda: outcome_of(
        name, encoding, lambda: stub.StreamingSynthesize(iter(requests), timeout=CALL_TIMEOUT)
    )


def raw_case(
    channel: grpc.Channel, name: str, method: str, data: bytes, streaming: bool
) -> Callable[[], Outcome]:
    """Bytes that are not a valid protobuf message, sent with a generic (untyped) call."""
    if streaming:
        rpc = channel.stream_stream(SERVICE + method)
        return lambda: outcome_of(name, 0, lambda: _typed(rpc(iter([data]), timeout=CALL_TIMEOUT)))
    if method == "ListVoices":
        unary = channel.unary_unary(SERVICE + method)
        return lambda: outcome_of(name, 0, lambda: iter([unary(data, timeout=CALL_TIMEOUT)]))
    rpc = channel.unary_stream(SERVICE + method)
    return lambda: outcome_of(name, 0, lambda: _typed(rpc(data, timeout=CALL_TIMEOUT)))


def _typed(responses: Iterator[bytes]) -> Iterator[Any]:
    for raw in responses:
        yield pb.SynthesizeResponse.FromString(raw)


def config_cases(stub: Any) -> list[Callable[[], Outcome]]:
    """Every config field out of range, unknown enum values, odd names."""
    bad: list[tuple[str, dict[str, Any]]] = []
    for rate in (-1.0, 0.1, 0.24, 4.01, 100.0, math.nan, math.inf, -math.inf):
        bad.append((f"speaking_rate={rate}", {"speaking_rate": rate}))
    for field in ("noise_scale", "noise_w"):
        for value in (-0.01, -5.0, 2.01, 1e9, math.nan, math.inf):
            bad.append((f"{field}={value}", {field: value}))
    for encoding in (6, 7, 99, -1, 2**31 - 1):  # not values of the enum
        audio = pb.AudioConfig(encoding=cast(Any, encoding))
        bad.append((f"encoding={encoding}", {"audio": audio}))
    rates = {
        pb.AUDIO_ENCODING_OGG_OPUS: (22050, 44100, 11025, 1, -8000, 96000),
        pb.AUDIO_ENCODING_OPUS: (22050, 32000, 7999),
        pb.AUDIO_ENCODING_PCM_S16LE: (7999, 48001, -1, 2**31 - 1),
        pb.AUDIO_ENCODING_MULAW: (16000, 24000, 44100),
        pb.AUDIO_ENCODING_ALAW: (16000, 1),
    }
    for encoding, values in rates.items():
        for hz in values:
            bad.append(
                (
                    f"rate {encoding}/{hz}",
                    {"audio": pb.AudioConfig(encoding=encoding, sample_rate_hz=hz)},
                )
            )
    for bitrate in (1, 5999, 510001, -32000):
        bad.append(
            (
                f"bitrate={bitrate}",
                {"audio": pb.AudioConfig(encoding=pb.AUDIO_ENCODING_OPUS, bitrate_bps=bitrate)},
            )
        )
    for frame in (1, 5, 15, 25, 80, 120, -20):
        bad.append(
            (
                f"frame={frame}",
                {
                    "audio": pb.AudioConfig(
                        encoding=pb.AUDIO_ENCODING_OGG_OPUS, frame_duration_ms=frame
                    )
                },
            )
        )
    for extra in ({"bitrate_bps": 32000}, {"frame_duration_ms": 20}):
        bad.append(
            (
                f"pcm+{extra}",
                {"audio": pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE, **extra)},
            )
        )
    for voice in (
        "nobody",
        "../../etc/passwd",
        "en_US-joe-medium.onnx",
        "x" * 5000,
        "\x00",
        "EN_US-JOE-MEDIUM",
    ):
        bad.append((f"voice={voice[:20]!r}", {"voice": voice}))
    for speaker in ("0", "alice", "-1", "\x00"):
        bad.append((f"speaker={speaker!r}", {"speaker": speaker}))
    return [synthesize_case(stub, name, "Hello.", **config) for name, config in bad]


def stream_cases(stub: Any) -> list[Callable[[], Outcome]]:
    def req(**kw: Any) -> pb.StreamingSynthesizeRequest:
        return pb.StreamingSynthesizeRequest(**kw)

    cfg = req(config=pb.SynthesisConfig(audio=PCM))
    big = "word " * 1200  # 6000 characters: one piece over the limit
    cases: list[tuple[str, list[pb.StreamingSynthesizeRequest]]] = [
        ("nothing at all", []),
        ("text before config", [req(text="Hello.")]),
        ("flush before config", [req(flush=pb.Flush(id=1))]),
        ("empty first message", [req()]),
        ("config twice", [cfg, cfg]),
        ("config after text", [cfg, req(text="Hello. "), cfg]),
        ("empty message later", [cfg, req(text="Hi. "), req()]),
        ("piece over the limit", [cfg, req(text=big)]),
        ("buffer over the limit", [cfg] + [req(text="no sentence end here ")] * 300),
        ("flush storm", [cfg] + [req(flush=pb.Flush(id=i)) for i in range(2000)]),
        ("clear storm", [cfg] + [req(clear=pb.Clear(id=i)) for i in range(2000)]),
        (
            "flush and clear storm with text",
            [cfg]
            + [
                r
                for i in range(300)
                for r in (
                    req(text=f"Word {i}. "),
                    req(clear=pb.Clear(id=i)),
                    req(flush=pb.Flush(id=i)),
                )
            ],
        ),
        (
            "only flushes of nothing then text",
            [cfg] + [req(flush=pb.Flush(id=1))] * 50 + [req(text="Done.")],
        ),
        (
            "huge ids",
            [
                cfg,
                req(text="Hi. "),
                req(flush=pb.Flush(id=2**64 - 1)),
                req(clear=pb.Clear(id=2**64 - 1)),
            ],
        ),
        ("text with NULs", [cfg, req(text="a\x00b. "), req(text="\x00" * 100)]),
        ("empty pieces", [cfg] + [req(text="")] * 500 + [req(text="End.")]),
        ("unknown voice streaming", [req(config=pb.SynthesisConfig(voice="nobody"))]),
        ("bad rate streaming", [req(config=pb.SynthesisConfig(speaking_rate=-3.0))]),
    ]
    return [stream_case(stub, name, requests) for name, requests in cases]


def never_closing_streams(
    stub: Any, gates: list[queue.Queue[object]]
) -> list[Callable[[], Outcome]]:
    """Streams that never half-close: the idle timeout ends them with DEADLINE_EXCEEDED.
    Each waits on a gate that the test opens only at its end (to let gRPC's sender go)."""

    def case(name: str, first: list[pb.StreamingSynthesizeRequest]) -> Callable[[], Outcome]:
        def call() -> Iterator[Any]:
            gate: queue.Queue[object] = queue.Queue()
            gates.append(gate)
            requests = itertools.chain(first, iter(gate.get, None))
            return stub.StreamingSynthesize(requests, timeout=CALL_TIMEOUT)  # type: ignore[no-any-return]

        return lambda: outcome_of(name, pb.AUDIO_ENCODING_PCM_S16LE, call)

    cfg = pb.StreamingSynthesizeRequest(config=pb.SynthesisConfig(audio=PCM))
    return [
        case("open, config only", [cfg]),
        case(
            "open, text without flush", [cfg, pb.StreamingSynthesizeRequest(text="half a sentence")]
        ),
        case("open after speaking", [cfg, pb.StreamingSynthesizeRequest(text="Hello there. ")]),
    ]


def raw_cases(channel: grpc.Channel) -> list[Callable[[], Outcome]]:
    rng = random.Random(7)
    blobs = [b"\xff", b"\xff\xff\xff\xff", b"\x0a\xff\xff\xff\x0f", b"\x12\x05abc",
             b"\x08" + b"\xff" * 11, b"\x0a\x02\xff\xfe", b"\x1a\x80"]  # fmt: skip
    blobs += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) for _ in range(10)]
    cases = []
    for i, blob in enumerate(blobs):
        for method, streaming in (
            ("Synthesize", False),
            ("StreamingSynthesize", True),
            ("ListVoices", False),
        ):
            cases.append(raw_case(channel, f"raw {method} #{i}", method, blob, streaming))
    return cases


def oversized_cases(stub: Any) -> list[Callable[[], Outcome]]:
    huge = "a" * (2 * 1024 * 1024)
    return [
        synthesize_case(stub, "2 MiB text", huge),
        stream_case(
            stub,
            "2 MiB piece",
            [
                pb.StreamingSynthesizeRequest(config=pb.SynthesisConfig()),
                pb.StreamingSynthesizeRequest(text=huge),
            ],
        ),
        synthesize_case(stub, "5001 characters", "a" * 5001),
    ]


# -- the canary ---------------------------------------------------------------------------------


def canary(stub: Any, pace: threading.Event | None) -> bytes:
    """Speak the canary text one sentence at a time; with `pace`, one sentence per wait."""
    requests: queue.Queue[object] = queue.Queue()
    call = stub.StreamingSynthesize(iter(requests.get, None), timeout=300)
    requests.put(pb.StreamingSynthesizeRequest(config=pb.SynthesisConfig(audio=PCM, **QUIET)))
    audio = b""
    for sentence in CANARY_SENTENCES:
        if pace is not None:
            pace.wait(timeout=0.4)
        requests.put(pb.StreamingSynthesizeRequest(text=sentence + " "))
    requests.put(None)
    for response in call:
        if response.WhichOneof("response") == "audio":
            audio += response.audio.audio
    return audio


# -- the test -----------------------------------------------------------------------------------


def check(outcome: Outcome) -> None:
    assert outcome.code in DOCUMENTED, f"{outcome.name}: {outcome.code} {outcome.details!r}"
    if outcome.code is grpc.StatusCode.OK:
        assert outcome.summary_ms is not None, f"{outcome.name}: no summary"
        if outcome.encoding in (0, pb.AUDIO_ENCODING_OGG_OPUS):
            samples, rate = soundfile.read(io.BytesIO(outcome.audio), dtype="float32")
            assert len(samples) / rate * 1000 == pytest.approx(outcome.summary_ms, abs=1), (
                outcome.name
            )
        elif outcome.encoding == pb.AUDIO_ENCODING_PCM_S16LE:
            assert len(outcome.audio) / 2 / 24 == pytest.approx(outcome.summary_ms, abs=1), (
                outcome.name
            )
        return
    # A status that says what went wrong (and so what to fix): gRPC's own for the size limit,
    # ours otherwise; never an exception's text.
    assert len(outcome.details) > 20, f"{outcome.name}: {outcome.details!r}"
    for leak in ("Traceback", "Exception", "Error(", "object at 0x"):
        assert leak not in outcome.details, f"{outcome.name}: {outcome.details!r}"


def test_barrage_of_hostile_requests_with_a_canary(hostile_server: ServerThread) -> None:
    with hostile_server.channel() as channel:
        stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
        clean = canary(stub, None)

        cases: list[Callable[[], Outcome]] = []
        for i, text in enumerate(HOSTILE_TEXTS):
            cases.append(synthesize_case(stub, f"text #{i}", text))
            cases.append(
                synthesize_case(stub, f"text #{i} pcm", text, audio=PCM, speaking_rate=2.5)
            )
        cases += config_cases(stub)
        cases += stream_cases(stub)
        gates: list[queue.Queue[object]] = []
        cases += never_closing_streams(stub, gates)
        cases += raw_cases(channel)
        cases += oversized_cases(stub)
        assert len(cases) >= 200
        random.Random(11).shuffle(cases)

        pace = threading.Event()  # never set: the canary waits 0.4 s between sentences
        with (
            ThreadPoolExecutor(max_workers=1) as canary_thread,
            ThreadPoolExecutor(max_workers=6) as pool,
        ):
            sung = canary_thread.submit(canary, stub, pace)
            outcomes = list(pool.map(lambda case: case(), cases))
            song = sung.result(timeout=300)
        for gate in gates:
            gate.put(None)

    for outcome in sorted(outcomes, key=lambda o: (o.code.value, o.details)):  # for the log
        print(f"{outcome.code.name:20} {outcome.name[:40]:40} {outcome.details[:110]}")
    failures = []
    for outcome in outcomes:
        try:
            check(outcome)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n".join(failures)
    codes = {o.code for o in outcomes}
    assert {
        grpc.StatusCode.OK,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    } <= codes
    # The canary's audio is the same as in a quiet server (noise 0: deterministic).
    got, want = np.frombuffer(song, "<i2"), np.frombuffer(clean, "<i2")
    assert got.shape == want.shape
    assert np.abs(got.astype(np.int32) - want).max() <= 1
    # And the server is idle again: nothing leaked.
    assert hostile_server.server.admission.active == 0
