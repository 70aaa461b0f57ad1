"""Soak: many concurrent streams against one voxlite-server for a set time or a set number of
calls, watching for errors and for memory, file descriptors or threads that keep growing."""

from __future__ import annotations

import functools
import random
import re
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from . import _common
from ._servers import free_port, spawn, voxlite_argv, wait_all_voices, wait_serving
from .corpus import REPLIES
from .kokoro_corpus import REPLIES_BY_LANGUAGE
from .ttfa import token_pieces

EXPECTED = {"OK", "CANCELLED", "INVALID_ARGUMENT", "NOT_FOUND", "RESOURCE_EXHAUSTED"}
"""Outcomes the soak's own callers ask for (cancels, bad requests) or cause (its callers do not
wait for audio to play, so they can load the server past capacity, which it answers with
RESOURCE_EXHAUSTED); anything else is a failure."""
BACKOFF = (0.5, 1.5)
"""Seconds a refused caller waits before its next call, as a client with retry backoff would."""
_REPLIES = {"en": REPLIES, **REPLIES_BY_LANGUAGE}
_CJK_END = re.compile("[\u3002\uff01\uff1f]")  # Mandarin's and Japanese's . ! ?
_SENTENCE_END = {"en": re.compile(r"[.!?](?=\s|$)"), "zh": _CJK_END, "ja": _CJK_END}
_CASE = {"en": ", case ", "zh": "\uff0c编号", "ja": "、番号"}
"""What goes before a reply's case number, in each language (a comma, "number")."""
_STOPPING = {
    "en": "Okay, stopping there.",
    "zh": "好的\uff0c我先说到这里。",
    "ja": "はい、ここまでにします。",
}
"""A short reply after a barge-in: "Okay, stopping there." in each language."""
ENCODINGS = [pb.AUDIO_ENCODING_OGG_OPUS, pb.AUDIO_ENCODING_PCM_S16LE, pb.AUDIO_ENCODING_MULAW]
GROWTH_MB = 25.0
"""Resident memory less the phrase cache's audio may vary this much (allocator noise) between
the start and the end of the measured part without counting as growth."""


@dataclass
class Sample:
    t: float
    rss_mb: float
    fds: int
    threads: int
    cache_mb: float = 0.0
    """The phrase cache's audio (its metric): it fills towards its bound (32 MiB by default)
    through a soak, as fast as the host makes new phrases, which is no leak."""
    calls: int = 0
    """Calls answered before this sample."""

    @property
    def judged_mb(self) -> float:
        return self.rss_mb - self.cache_mb


@dataclass
class Tally:
    outcomes: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    audio_s: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def calls(self) -> int:
        with self.lock:
            return sum(self.outcomes.values())

    def add(self, kind: str, outcome: str, audio_s: float = 0.0, detail: str = "") -> None:
        with self.lock:
            self.outcomes[f"{kind}: {outcome}"] += 1
            self.audio_s += audio_s
            if outcome not in EXPECTED:
                self.unexpected.append(f"{kind}: {outcome} {detail}")


def proc_sample(pid: int, start: float, metrics: str = "", calls: int = 0) -> Sample:
    """The server's memory, descriptors and threads now; with `metrics` (its metrics URL) the
    phrase cache's bytes too; `calls`, the calls answered so far."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    rss_kb = int(fields["VmRSS"].split()[0])
    threads = int(fields["Threads"])
    fds = len(list(Path(f"/proc/{pid}/fd").iterdir()))
    cache = 0.0
    if metrics:
        with urllib.request.urlopen(metrics, timeout=10) as page:
            found = re.search(rb"^voxlite_phrase_cache_bytes (\S+)$", page.read(), re.M)
        cache = float(found.group(1)) / 2**20 if found else 0.0
    return Sample(time.monotonic() - start, rss_kb / 1024, fds, threads, cache, calls)


def reply(rng: random.Random, language: str) -> str:
    """An agent's reply in `language`, most of them new (the phrase cache would serve repeats):
    a case number added to each sentence."""
    text = rng.choice(_REPLIES[language])
    if rng.random() < 0.7:
        case = _CASE[language]
        text = _SENTENCE_END[language].sub(
            lambda m: f"{case}{rng.randrange(10**6)}{m.group()}", text
        )
    return text


def caller(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
    seed: int,
    stop: threading.Event,
    tally: Tally,
    languages: Sequence[str] = ("en",),
) -> None:
    """One simulated caller: mostly LLM-style streams, some barge-ins, hang-ups and mistakes,
    each call in one of `languages`."""
    rng = random.Random(seed)
    while not stop.is_set():
        language = rng.choice(languages)
        tag = f" {language}" if len(languages) > 1 else ""  # each language's calls apart
        text = reply(rng, language)
        speaks = pb.SynthesisConfig(language=language)
        roll = rng.random()
        if roll < 0.55:
            kind = f"stream{tag}"
            requests = [pb.StreamingSynthesizeRequest(config=speaks)]
            requests += [pb.StreamingSynthesizeRequest(text=p) for p in token_pieces(text)]
            if rng.random() < 0.3:  # barge in, then a short new reply
                requests.append(pb.StreamingSynthesizeRequest(clear=pb.Clear(id=1)))
                requests.append(pb.StreamingSynthesizeRequest(text=_STOPPING[language]))
            calls: Callable[[], Iterator[Any]] = functools.partial(
                stub.StreamingSynthesize, iter(requests), timeout=60
            )
        elif roll < 0.85:
            kind = f"synthesize{tag}"
            config = pb.SynthesisConfig(
                language=language, audio=pb.AudioConfig(encoding=rng.choice(ENCODINGS))
            )
            request = pb.SynthesizeRequest(text=text, config=config)
            calls = functools.partial(stub.Synthesize, request, timeout=60)
        elif roll < 0.95:
            kind = f"hang-up{tag}"
            request = pb.SynthesizeRequest(text=text, config=speaks)
            responses = stub.Synthesize(request, timeout=60)
            try:
                next(responses)
                next(responses)
                responses.cancel()
                tally.add(kind, "CANCELLED")
            except grpc.RpcError as exc:
                tally.add(kind, exc.code().name, detail=exc.details() or "")
                if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    time.sleep(rng.uniform(*BACKOFF))
            continue
        else:
            kind = "mistake"
            request = pb.SynthesizeRequest(text=text, config=pb.SynthesisConfig(voice="nobody"))
            calls = functools.partial(stub.Synthesize, request, timeout=60)
        audio = 0.0
        try:
            for response in calls():
                if response.WhichOneof("response") == "summary":
                    audio = response.summary.audio_duration_ms / 1000
            tally.add(kind, "OK", audio)
        except grpc.RpcError as exc:
            tally.add(kind, exc.code().name, detail=exc.details() or "")
            if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                time.sleep(rng.uniform(*BACKOFF))  # the server is full: ask again later


def growth(
    samples: list[Sample], warmup: float, warmup_calls: int = 0
) -> tuple[float, float, float]:
    """(RSS less the phrase cache at the start of the measured part, at its end, largest) in
    MB: medians of the first and last fifth, so that one noisy sample decides nothing. The
    measured part starts `warmup` seconds in, or with `warmup_calls` the samples after that
    many calls were answered."""
    if warmup_calls:
        measured = [s.judged_mb for s in samples if s.calls >= warmup_calls]
    else:
        measured = [s.judged_mb for s in samples if s.t >= warmup]
    if len(measured) < 5:
        measured = [s.judged_mb for s in samples]
    fifth = max(1, len(measured) // 5)
    return float(np.median(measured[:fifth])), float(np.median(measured[-fifth:])), max(measured)


def main(argv: Sequence[str] | None = None) -> int:
    p = _common.parser(__doc__ or "", quick_help="30 s with 4 callers")
    p.add_argument("--seconds", type=float, help="how long to run (default 300; quick 30)")
    p.add_argument(
        "--calls",
        type=int,
        help="run until this many calls are answered instead of for a time, so that a slower "
        "or busier host does the same work (memory is judged after --warmup-calls)",
    )
    p.add_argument("--warmup-calls", type=int, help="calls before memory is judged (with --calls)")
    p.add_argument("--callers", type=int, help="concurrent callers (default 12; quick 4)")
    p.add_argument(
        "--warmup", type=float, help="seconds before memory is judged (default: a fifth)"
    )
    p.add_argument("--check", action="store_true", help="exit 1 on an unexpected error or growth")
    p.add_argument(
        "--languages",
        default="en",
        help="languages the callers speak, each call one at random (default en: English "
        "alone, the Piper voice; en,zh,ja loads Kokoro too)",
    )
    args = p.parse_args(argv)
    languages = [x.strip() for x in args.languages.split(",") if x.strip()]
    if not languages or any(x not in _STOPPING for x in languages):
        p.error(f"--languages: a comma-separated list of {', '.join(_STOPPING)}")
    seconds = args.seconds or (30.0 if args.quick else 300.0)
    callers = args.callers or (4 if args.quick else 12)
    warmup = args.warmup if args.warmup is not None else seconds / 5
    warmup_calls = args.warmup_calls or (args.calls // 2 if args.calls else 0)

    with tempfile.TemporaryDirectory(prefix="voxlite-soak-") as tmp:
        workdir = Path(tmp)
        (workdir / "voices").mkdir()
        port, metrics_port = free_port(), free_port()
        argv = voxlite_argv(
            port,
            workdir / "voices",
            *("--max-streams", "64", "--metrics-port", str(metrics_port)),
            engines="piper" if languages == ["en"] else "piper,kokoro",
        )
        server = spawn("voxlite-server", argv, workdir)
        metrics = f"http://127.0.0.1:{metrics_port}/metrics"
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                wait_serving(server, channel)
                wait_all_voices(channel)
                stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
                tally = Tally()
                start = time.monotonic()
                samples = [proc_sample(server.proc.pid, start, metrics)]
                stop = threading.Event()
                threads = [
                    threading.Thread(
                        target=caller, args=(stub, i, stop, tally, languages), daemon=True
                    )
                    for i in range(callers)
                ]
                for t in threads:
                    t.start()
                while not stop.is_set():
                    time.sleep(1.0)
                    server.check_alive()
                    samples.append(proc_sample(server.proc.pid, start, metrics, tally.calls))
                    if samples[-1].calls >= args.calls if args.calls else samples[-1].t >= seconds:
                        stop.set()
                for t in threads:
                    t.join(timeout=90)
                elapsed = time.monotonic() - start
                # The last calls' descriptors and threads go within moments: wait for that
                # (a generous deadline, not a fixed pause), then take the closing sample.
                settled = time.monotonic() + 30
                while time.monotonic() < settled:
                    last = proc_sample(server.proc.pid, start)
                    if last.fds <= samples[0].fds + 2 and last.threads <= samples[0].threads + 2:
                        break
                    time.sleep(0.2)
                samples.append(proc_sample(server.proc.pid, start, metrics, tally.calls))
        finally:
            server.stop()

    rss_start, rss_end, rss_max = growth(samples, warmup, warmup_calls)
    # File descriptors and threads are exact counts: compare the idle server before and after.
    fds_grew = samples[-1].fds - samples[0].fds
    threads_grew = samples[-1].threads - samples[0].threads
    problems = list(tally.unexpected)
    if rss_end - rss_start > GROWTH_MB:
        problems.append(
            f"resident memory less the phrase cache grew from {rss_start:.0f} MB to "
            f"{rss_end:.0f} MB after warm-up"
        )
    if fds_grew > 2:
        problems.append(f"{fds_grew} more open file descriptors than before the soak")
    if threads_grew > 2:
        problems.append(f"{threads_grew} more threads than before the soak")

    rows: list[list[object]] = [[name, count] for name, count in sorted(tally.outcomes.items())]
    print(_common.table(f"soak: {callers} callers for {elapsed:.0f} s", ["calls", "n"], rows))
    rate = tally.audio_s / elapsed
    print(f"audio produced: {tally.audio_s:.0f} s ({rate:.1f} s of audio per second)")
    warmed = f"{warmup_calls} calls" if warmup_calls else f"{warmup:g} s"
    print(
        f"resident memory less the phrase cache: {samples[0].judged_mb:.0f} MB idle, "
        f"{rss_start:.0f} MB after a warm-up of {warmed}, {rss_end:.0f} MB at the end, "
        f"{rss_max:.0f} MB at most; the phrase cache held {samples[-1].cache_mb:.1f} MB "
        f"at the end"
    )
    print(
        f"open file descriptors: {samples[0].fds} before, {samples[-1].fds} after, "
        f"{max(s.fds for s in samples)} at most; threads: {samples[0].threads} before, "
        f"{samples[-1].threads} after, {max(s.threads for s in samples)} at most"
    )
    timeline = "  ".join(
        f"{s.t:.0f}s/{s.calls}:{s.rss_mb:.0f}/{s.cache_mb:.0f}"
        for s in samples[:: max(1, len(samples) // 12)]
    )
    print(
        "resident memory / the phrase cache's audio over time "
        f"(seconds/calls answered: MB/MB): {timeline}"
    )
    shown = "; ".join(sorted(set(problems))[:10]) + (
        f" ({len(problems)} in all)" if problems else ""
    )
    print("problems: " + (shown if problems else "none"))
    _common.write_json(
        args.json,
        {
            "benchmark": "soak",
            "seconds": elapsed,
            "callers": callers,
            "outcomes": dict(tally.outcomes),
            "audio_seconds": tally.audio_s,
            "samples": [vars(s) for s in samples],
            "problems": problems,
        },
    )
    return 1 if (args.check and problems) else 0


if __name__ == "__main__":
    sys.exit(main())
