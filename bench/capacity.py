"""Capacity: how many live voices one server carries. N callers each hear reply after reply at
real-time pace; at each N: time to first audio, underruns, real-time factor and CPU use. The
same ramp with the scheduler replaced by one thread per stream, and Piper's HTTP server. A level
"12+2" adds two Mandarin callers (a Kokoro voice) to twelve English ones."""

from __future__ import annotations

import collections
import http.client
import json
import os
import random
import shlex
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from . import _common
from ._servers import (
    Child,
    free_port,
    piper_argv,
    spawn,
    voxlite_argv,
    wait_all_voices,
    wait_serving,
)
from .corpus import REPLIES, agent_reply
from .kokoro_corpus import REPLIES_ZH
from .ttfa import first_loud, wait_http

PLAYOUT = 0.1
"""Seconds a player buffers before it starts playing: audio arriving later than its turn minus
nothing is an underrun. 100 ms is a typical jitter buffer."""
RETRY_AFTER = 1.0
"""Seconds a refused caller waits before asking again."""
STALL_TOLERANCE = 0.002
"""A chunk this little late is timing noise of the measuring client, not a stall."""
SETTLE = 2.0
"""Seconds after the ramp that still count as the level's arrival burst (Level.burst): a
caller refused as the ramp ends asks again RETRY_AFTER later, and the last arrivals' replies
need about a second more to get ahead of their listeners. At 20 callers, every refusal in
seven 60 s levels came 2.0 to 3.5 s into the level."""
TTFA_LIMIT = 0.300
"""p95 time to first audio a level must stay under (design target)."""
LATE_CHUNK = 0.020
"""A chunk this much after its turn on a player that starts with the first chunk (no buffer)
is a late chunk: the listener hears a gap there."""


@dataclass
class Level:
    callers: int
    mandarin: int = 0
    """How many of the callers speak Mandarin (a Kokoro voice); the rest English (Piper)."""
    ttfa: list[float] = field(default_factory=list)
    speech: list[float] = field(default_factory=list)
    """Seconds from the text to when the caller hears speech start (PCM callers only: the
    first sample above ttfa.SPEECH_LEVEL, at the time the player reaches it)."""
    calls: int = 0
    underrun_calls: int = 0
    underrun_seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    refused: int = 0
    """Calls refused with RESOURCE_EXHAUSTED (the server at capacity): the caller retries."""
    refusals: collections.Counter[str] = field(default_factory=collections.Counter)
    """Why, by the start of the server's message (which names the reason)."""
    refused_at: list[float] = field(default_factory=list)
    """When each refusal came, in seconds after the level's start."""
    burst: float = 0.0
    """The level's first seconds: its callers arrive (all within the ramp, from an idle server)
    and their first replies get ahead of their listeners. Refusals then are the server turning
    away part of a crowd of new calls; after it, callers it is already carrying."""
    start: float = 0.0
    """time.monotonic() when the level began (refused_at counts from it)."""
    rtf: list[float] = field(default_factory=list)
    cpu: float = 0.0
    """The server's CPU use, as a share of the machine."""
    client_cpu: float = 0.0
    """The benchmark's own (the callers'), on the same machine."""
    audio_seconds: float = 0.0
    """Audio the answered calls received."""
    cpu_per_audio: float = 0.0
    """The server's CPU seconds over the whole level, start to last call, per second of audio
    received: what a voice costs, its share of the gRPC path and the encoder included."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    parts: dict[str, Level] = field(default_factory=dict)
    """A mixed level's figures by language as well ("en", "zh")."""
    late_chunks: collections.Counter[int] = field(default_factory=collections.Counter)
    """Late chunks (LATE_CHUNK) by their index in the call: 1 is the one after the first."""

    @property
    def name(self) -> str:
        english = self.callers - self.mandarin
        return f"{english}+{self.mandarin}" if self.mandarin else str(self.callers)

    def part(self, language: str) -> Level:
        """Where a call in `language` is counted besides the level itself."""
        with self.lock:
            return self.parts.setdefault(language, Level(0, start=self.start, burst=self.burst))

    def in_time(self) -> bool:
        """Every call it answered played without a gap, first audio under the limit at p95."""
        stats = _common.Stats.of(self.ttfa)
        return not self.errors and self.underrun_calls == 0 and stats.p95 < TTFA_LIMIT

    @property
    def refused_in_burst(self) -> int:
        return sum(1 for t in self.refused_at if t < self.burst)

    def ok(self) -> bool:
        """In time, and nobody turned away once the level's callers were in: the server
        carries this many live voices."""
        return self.in_time() and self.refused == self.refused_in_burst


def refusal_reason(details: str) -> str:
    """The reason in a refusal's message, in a word."""
    for words, reason in (
        ("ms late", "late"),  # "its model work runs 30 ms late"
        ("just taken", "pacing"),
        ("busy", "busy"),
        ("concurrent streams", "max-streams"),
        ("waiting for room", "queue"),  # others were waiting longer
        ("is due within", "slack"),  # a waiting call: some stream is short of audio
    ):
        if words in details:
            return reason
    return "other"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


ENCODINGS = {
    "ogg": pb.AudioConfig(),
    "pcm16": pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE, sample_rate_hz=16000),
}
"""What the callers ask for: Ogg Opus at 24 kHz (the default), or PCM at 16 kHz (telephony)."""


def voxlite_call(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
    text: str,
    level: Level,
    output: pb.AudioConfig = ENCODINGS["ogg"],
    language: str = "",
) -> float | None:
    """One reply; returns when its audio has finished playing at the caller, or None if it
    was refused (the caller asks again in RETRY_AFTER seconds)."""
    if level.mandarin:
        end = _call(stub, text, level.part(language or "en"), output, language)
        _merge(level, level.part(language or "en"))
        return end
    return _call(stub, text, level, output, language)


def _merge(level: Level, part: Level) -> None:
    """A mixed level's totals: the sum of its parts so far."""
    with level.lock:
        parts = list(level.parts.values())
        level.ttfa = [t for p in parts for t in p.ttfa]
        level.speech = [t for p in parts for t in p.speech]
        level.rtf = [r for p in parts for r in p.rtf]
        level.errors = [e for p in parts for e in p.errors]
        level.refused_at = [t for p in parts for t in p.refused_at]
        level.refusals = sum((p.refusals for p in parts), collections.Counter())
        for name in ("calls", "underrun_calls", "underrun_seconds", "refused", "audio_seconds"):
            setattr(level, name, sum(getattr(p, name) for p in parts))
        level.late_chunks = sum((p.late_chunks for p in parts), collections.Counter())


def _call(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
    text: str,
    level: Level,
    output: pb.AudioConfig,
    language: str,
) -> float | None:
    requests = [
        pb.StreamingSynthesizeRequest(config=pb.SynthesisConfig(audio=output, language=language)),
        pb.StreamingSynthesizeRequest(text=text),
    ]
    sent = time.monotonic()
    started = None
    # A player: it starts PLAYOUT after the first chunk, then needs each chunk when the one
    # before has played. A late chunk stalls it (an underrun) and shifts what follows.
    needed_at = 0.0
    stalled = 0.0
    audio = 0.0
    # The same chunks on a player with no buffer: each chunk's turn comes when the one before
    # has played (a late one shifts what follows, as a player resumes when it arrives).
    turn = 0.0
    late: collections.Counter[int] = collections.Counter()
    index = 0
    speech = None
    pcm = output.encoding == pb.AUDIO_ENCODING_PCM_S16LE
    try:
        for response in stub.StreamingSynthesize(iter(requests), timeout=120):
            now = time.monotonic()
            kind = response.WhichOneof("response")
            if kind == "audio":
                if started is None:
                    started = now
                    needed_at = now + PLAYOUT
                    turn = now
                if now > turn + LATE_CHUNK:
                    late[index] += 1
                    turn = now
                turn += response.audio.duration_ms / 1000
                index += 1
                if now > needed_at + STALL_TOLERANCE:
                    stalled += now - needed_at
                    needed_at = now
                loud = first_loud(response.audio) if pcm and speech is None else None
                if loud is not None:
                    speech = needed_at + loud
                needed_at += response.audio.duration_ms / 1000
                audio += response.audio.duration_ms / 1000
            elif kind == "summary":
                with level.lock:
                    level.rtf.append(response.summary.real_time_factor)
    except grpc.RpcError as exc:
        with level.lock:
            if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                level.refused += 1
                level.refused_at.append(time.monotonic() - level.start)
                level.refusals[refusal_reason(exc.details() or "")] += 1
                return None
            level.errors.append(f"{exc.code().name}: {exc.details()}")
        return time.monotonic()
    end = needed_at
    with level.lock:
        level.late_chunks.update(late)
        level.calls += 1
        level.audio_seconds += audio
        if started is not None:
            level.ttfa.append(started - sent)
        if speech is not None:
            level.speech.append(speech - sent)
        if stalled > 0:
            level.underrun_calls += 1
            level.underrun_seconds += stalled
    return end


def piper_call(port: int, text: str, level: Level) -> float:
    """One request to Piper's HTTP server: the whole WAV, then played."""
    sent = time.monotonic()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        conn.request(
            "POST",
            "/synthesize",
            body=json.dumps({"text": text}),
            headers={"Content-Type": "application/json"},
        )
        response = conn.getresponse()
        body = response.read()
        conn.close()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}")
    except (OSError, RuntimeError) as exc:
        with level.lock:
            level.errors.append(str(exc))
        return time.monotonic()
    arrived = time.monotonic()
    seconds = (len(body) - 44) / 2 / 22050
    with level.lock:
        level.calls += 1
        level.audio_seconds += seconds
        level.ttfa.append(arrived - sent)
    return arrived + seconds


Call = Callable[[str, str, Level], float | None]
"""One reply (language, text) for one caller: when its audio has played, or None if it was
refused."""


def ramp_seconds(seconds: float) -> float:
    """Over how long a level's callers arrive (each at a random moment of it)."""
    return min(2.0, seconds / 4)


def run_level(call: Call, callers: int, seconds: float, pid: int, mandarin: int = 0) -> Level:
    start, cpu_at_start = time.monotonic(), cpu_seconds(pid)
    ramp = ramp_seconds(seconds)
    level = Level(callers + mandarin, mandarin, start=start, burst=ramp + SETTLE)
    stop = start + seconds

    def caller(seed: int) -> None:
        rng = random.Random(seed)
        zh = seed >= callers
        time.sleep(rng.random() * ramp)  # callers do not all start at once
        while time.monotonic() < stop:
            if zh:
                played = call("zh", rng.choice(REPLIES_ZH), level)
            else:
                played = call("", agent_reply(rng), level)
            if played is None:
                played = time.monotonic() + RETRY_AFTER
            time.sleep(max(0.0, played - time.monotonic()))

    threads = [
        threading.Thread(target=caller, args=(i,), daemon=True) for i in range(callers + mandarin)
    ]
    for t in threads:
        t.start()
    # CPU while every caller is in: after the ramp, until the level's end (the last calls
    # that play out after it would dilute it).
    time.sleep(ramp)
    cpu_start, client_start, wall_start = cpu_seconds(pid), time.process_time(), time.monotonic()
    time.sleep(max(0.0, stop - time.monotonic()))
    wall = time.monotonic() - wall_start
    level.cpu = (cpu_seconds(pid) - cpu_start) / wall / (os.cpu_count() or 1)
    level.client_cpu = (time.process_time() - client_start) / wall / (os.cpu_count() or 1)
    for t in threads:
        t.join(timeout=seconds + 180)
    if level.audio_seconds:
        level.cpu_per_audio = (cpu_seconds(pid) - cpu_at_start) / level.audio_seconds
    return level


def ramp(
    name: str, call: Call, pid: int, levels: Sequence[tuple[int, int]], seconds: float
) -> list[Level]:
    results = []
    failed = 0
    for english, mandarin in levels:
        level = run_level(call, english, seconds, pid, mandarin)
        results.append(level)
        t = _common.Stats.of([1000 * x for x in level.ttfa])
        for language, part in sorted(level.parts.items()):
            pt = _common.Stats.of([1000 * x for x in part.ttfa])
            ps = _common.Stats.of([1000 * x for x in part.speech]) if part.speech else None
            heard = f"speech p50 {ps.p50:6.1f} ms p95 {ps.p95:6.1f} ms " if ps else ""
            print(f"  {name}: {level.name:>5} callers, {language}: ttfa p50 {pt.p50:6.1f} ms "
                  f"p95 {pt.p95:6.1f} ms {heard}underrun calls {part.underrun_calls}/{part.calls} "
                  f"refused {part.refused} ({part.refused_in_burst} in the burst)",
                  flush=True)  # fmt: skip
        print(f"  {name}: {level.name:>5} callers  ttfa p50 {t.p50:6.1f} ms p95 {t.p95:6.1f} ms  "
              f"underrun calls {level.underrun_calls}/{level.calls} "
              f"({level.underrun_seconds:.2f} s)  refused {level.refused} "
              f"({level.refused_in_burst} in the burst) "
              f"at {' '.join(f'{t:.1f}' for t in sorted(level.refused_at)[:12])} s "
              f"{dict(level.refusals) or ''}  "
              f"errors {len(level.errors)}  "
              f"cpu {100 * level.cpu:3.0f}% (callers {100 * level.client_cpu:.0f}%)  "
              f"{1000 * level.cpu_per_audio:.1f} ms cpu per audio s  "
              f"late chunks {sum(level.late_chunks.values())} "
              f"{dict(sorted(level.late_chunks.items())) or ''}",
              flush=True)  # fmt: skip
        failed = 0 if level.in_time() else failed + 1
        if failed >= 2:  # well past its capacity: the rest would only be slower
            break
    return results


def voxlite_ramp(
    name: str,
    extra: list[str],
    levels: Sequence[tuple[int, int]],
    seconds: float,
    workdir: Path,
    module: str = "",
    audio: pb.AudioConfig = ENCODINGS["ogg"],
    new_connections: bool = True,
    fresh: bool = False,
) -> list[Level]:
    """`fresh`: every language, and the first level starts as the server reports SERVING, with
    no call before it and the rest of the Kokoro voices still loading, as a replica a balancer
    has just added meets its first callers."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    # Kokoro only when a level has Mandarin callers (it costs memory and start-up time).
    engines = "piper,kokoro" if fresh or any(m for _, m in levels) else "piper"
    argv = voxlite_argv(
        port, workdir / "voices", "--max-streams", "256", *extra, module=module, engines=engines
    )
    child = spawn(name.replace(" ", "-"), argv, workdir)
    try:
        with grpc.insecure_channel(address) as channel:
            wait_serving(child, channel)
            stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
            if not fresh:
                voxlite_call(stub, REPLIES[0], Level(0), audio)  # warm up
            if engines != "piper" and not fresh:
                wait_all_voices(channel)
                voxlite_call(stub, REPLIES_ZH[0], Level(0), audio, "zh")

            def call(language: str, text: str, level: Level) -> float | None:
                if not new_connections:
                    return voxlite_call(stub, text, level, audio, language)
                # As a telephony bridge or a serverless agent calls: a connection of its own.
                with grpc.insecure_channel(address) as own:
                    own_stub = tts_pb2_grpc.TextToSpeechServiceStub(own)
                    return voxlite_call(own_stub, text, level, audio, language)

            return ramp(name, call, child.proc.pid, levels, seconds)
    finally:
        child.stop()


def piper_ramp(levels: Sequence[tuple[int, int]], seconds: float, workdir: Path) -> list[Level]:
    port = free_port()
    argv = piper_argv(port)
    child: Child = spawn("piper-http", argv, workdir)
    try:
        wait_http(child, port)
        piper_call(port, REPLIES[0], Level(0))
        return ramp(
            "piper http",
            lambda _language, text, level: piper_call(port, text, level),
            child.proc.pid,
            levels,
            seconds,
        )
    finally:
        child.stop()


def capacity(levels: list[Level]) -> int:
    """The largest number of callers with no underrun, p95 first audio under the limit and
    nobody refused after the arrival burst."""
    return max((lv.callers for lv in levels if lv.ok()), default=0)


def in_time(levels: list[Level]) -> int:
    """The largest number of callers at which every answered call played in time (callers
    over capacity refused: the server protecting the calls it took)."""
    return max((lv.callers for lv in levels if lv.in_time()), default=0)


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="levels 1, 4, 8 and 16, 10 s each")
    p.add_argument(
        "--levels",
        help="comma-separated caller counts (default 1,4,8,12,16,20,24,28); N+M: N English "
        "callers and M Mandarin ones, e.g. 0+2,12+2",
    )
    p.add_argument("--seconds", type=float, help="seconds per level (default 25; quick 10)")
    p.add_argument(
        "--skip", default="", help="comma-separated: threads, piper, batch (sides to leave out)"
    )
    p.add_argument(
        "--encoding",
        choices=sorted(ENCODINGS),
        default="ogg",
        help="what the callers ask for: ogg (Opus, 24 kHz; default) or pcm16 (PCM, 16 kHz)",
    )
    p.add_argument(
        "--server-args",
        default="",
        help="extra voxlite-server flags for the scheduler side, e.g. '--workers 2'",
    )
    p.add_argument(
        "--one-connection",
        action="store_true",
        help="every call on one shared connection (default: each call on a new one)",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="the first level starts as the server reports SERVING, every language on, the "
        "other Kokoro voices still loading, no call before (a replica just added)",
    )
    args = p.parse_args(argv)
    levels = [
        (int(english), int(mandarin or 0))
        for english, _, mandarin in (
            x.partition("+")
            for x in (args.levels or ("1,4,8,16" if args.quick else "1,4,8,12,16,20,24,28")).split(
                ","
            )
        )
    ]
    seconds = args.seconds or (10.0 if args.quick else 25.0)
    skip = set(filter(None, args.skip.split(",")))

    results: dict[str, list[Level]] = {}
    with tempfile.TemporaryDirectory(prefix="voxlite-capacity-") as tmp:
        workdir = Path(tmp)
        (workdir / "voices").mkdir()
        # The phrase cache is off: every reply is synthesized, as it would be for varied speech.
        sides = [
            ("", "voxlite, deadline scheduler", shlex.split(args.server_args), ""),
            ("batch", "voxlite, deadline + batching (4)", ["--batch-vocoder", "4"], ""),
            ("threads", "voxlite, one thread per stream", [], "bench.baseline_server"),
        ]
        for side, name, extra, module in sides:
            if side not in skip:
                label = "voxlite " + (side or "deadline")
                results[name] = voxlite_ramp(
                    label,
                    ["--phrase-cache-mb", "0", *extra],
                    levels,
                    seconds,
                    workdir,
                    module,
                    ENCODINGS[args.encoding],
                    new_connections=not args.one_connection,
                    fresh=args.fresh,
                )
        if "piper" not in skip:
            results["piper http_server"] = piper_ramp(levels, seconds, workdir)

    rows: list[list[object]] = []
    for name, lvls in results.items():
        for lv in lvls:
            t = _common.Stats.of([1000 * x for x in lv.ttfa])
            rtf = _common.Stats.of(lv.rtf)
            late = sum(lv.late_chunks.values())
            firsts = lv.late_chunks[1]
            rows.append([name, lv.name, t.p50, t.p95, f"{lv.underrun_calls}/{lv.calls}",
                         f"{late} ({firsts})",
                         f"{lv.refused} ({lv.refused_in_burst})", lv.calls / seconds, rtf.p50,
                         100 * lv.cpu, 100 * lv.client_cpu, 1000 * lv.cpu_per_audio,
                         len(lv.errors)])  # fmt: skip
    print()
    print(_common.table(
        f"capacity: callers hearing reply after reply in real time, {seconds:g} s per level "
        f"({PLAYOUT * 1000:.0f} ms playout buffer)",
        ["server", "callers", "ttfa p50 ms", "ttfa p95 ms", "underrun calls",
         "late chunks (chunk 1)", "refused (in the burst)", "calls/s", "rtf p50",
         "server cpu %", "callers cpu %", "cpu ms/audio s", "errors"],
        rows,
    ))  # fmt: skip
    for name, lvls in results.items():
        limit = TTFA_LIMIT * 1000
        voices = capacity(lvls)
        print(f"{name}: {voices} live voice{'' if voices == 1 else 's'} with no underrun, "
              f"p95 first audio under {limit:.0f} ms and nobody refused after the arrival "
              f"burst (the first {ramp_seconds(seconds) + SETTLE:g} s); answered calls all in "
              f"time up to {in_time(lvls)} callers")  # fmt: skip
    _common.write_json(
        args.json,
        {
            "benchmark": "capacity",
            "seconds_per_level": seconds,
            "results": {
                name: [
                    {"callers": lv.callers, "mandarin": lv.mandarin,
                     "ttfa_ms": _common.Stats.of([1000 * x for x in lv.ttfa]).as_dict(),
                     "underrun_calls": lv.underrun_calls, "calls": lv.calls,
                     "underrun_seconds": lv.underrun_seconds, "refused": lv.refused,
                     "late_chunks_by_index": dict(sorted(lv.late_chunks.items())),
                     "refused_in_burst": lv.refused_in_burst,
                     "refused_at": [round(t, 2) for t in sorted(lv.refused_at)],
                     "refusals": dict(lv.refusals),
                     "calls_per_second": lv.calls / seconds,
                     "rtf": _common.Stats.of(lv.rtf).as_dict(), "cpu": lv.cpu,
                     "client_cpu": lv.client_cpu, "audio_seconds": lv.audio_seconds,
                     "cpu_ms_per_audio_second": 1000 * lv.cpu_per_audio,
                     "errors": lv.errors[:5]}
                    for lv in lvls
                ]
                for name, lvls in results.items()
            },
            "capacity": {name: capacity(lvls) for name, lvls in results.items()},
            "in_time": {name: in_time(lvls) for name, lvls in results.items()},
        },
    )  # fmt: skip


if __name__ == "__main__":
    main()
