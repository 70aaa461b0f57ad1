"""onnxruntime session options on the split default voice: latency per run and 2-job throughput."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from voxlite.service.engines.engine import VoiceRequest
from voxlite.service.engines.piper import embedded_voice_files
from voxlite.service.engines.piper.calibration import FLOW_MARGIN
from voxlite.service.engines.piper.config import read_voice_info
from voxlite.service.engines.piper.model import PiperModel
from voxlite.service.engines.piper.split_cache import SplitCache
from voxlite.service.engines.piper.stages import Margins
from voxlite.service.engines.runtime import OrtSettings

from . import _common

SHORT_CLAUSE = "Sure,"
SENTENCE = "Sure, I can help with that."
FIRST_WINDOW = 8  # VocoderSchedule().first
FULL_WINDOW = 64  # VocoderSchedule().largest
DEFAULT_MARGIN = 13
"""Vocoder context a side: HiFi-GAN's receptive field in Piper's medium voices (design.md §4)."""
TIE = 0.03
"""Latency differences below this fraction are called a tie: the default is kept."""
THROUGHPUT_GIVE = 0.10
"""Throughput the server may give up for lower latency: time to first audio comes first."""


def describe(s: OrtSettings) -> str:
    arena = "on" if s.cpu_arena else "off"
    return f"threads={s.intra_op_threads} opt={s.optimization} arena={arena}"


@dataclass
class Workloads:
    """The four runs measured, as closures over a voice built with the settings under test."""

    names: tuple[str, ...]
    runs: tuple[Callable[[], object], ...]


def workloads(voice: PiperModel) -> Workloads:
    # Noise 0: fixed frame counts from run to run.
    params = voice.params(VoiceRequest(noise_scale=0.0, noise_w=0.0))
    short_ids = voice.phoneme_ids(voice.phonemize(SHORT_CLAUSE)[0])
    sentence_ids = voice.phoneme_ids(voice.phonemize(SENTENCE)[0])
    stages = voice.stages
    margins = Margins((FLOW_MARGIN,) * stages.flow_count, DEFAULT_MARGIN, stages.stride * 20)
    sentence = voice.sentence(sentence_ids, params, margins)
    latent, extra = sentence.latent(), sentence.extra
    full = FULL_WINDOW + 2 * DEFAULT_MARGIN
    if latent.shape[-1] < full:  # not with this voice and text, but keep the window's size
        latent = np.tile(latent, (1, 1, -(-full // latent.shape[-1])))
    first_window = np.ascontiguousarray(latent[:, :, : FIRST_WINDOW + DEFAULT_MARGIN])
    full_window = np.ascontiguousarray(latent[:, :, :full])
    return Workloads(
        (
            f"acoustic {SHORT_CLAUSE!r} ({len(short_ids)} ids)",
            f"acoustic sentence ({len(sentence_ids)} ids)",
            f"flow + vocoder, first window ({FIRST_WINDOW}+{DEFAULT_MARGIN} frames)",
            f"vocoder first window ({FIRST_WINDOW}+{DEFAULT_MARGIN} frames)",
            f"vocoder full window ({DEFAULT_MARGIN}+{FULL_WINDOW}+{DEFAULT_MARGIN} frames)",
        ),
        (
            lambda: voice.acoustic(short_ids, params),
            lambda: voice.acoustic(sentence_ids, params),
            lambda: voice.sentence(sentence_ids, params, margins).samples(0, FIRST_WINDOW),
            lambda: stages.vocode(first_window, extra),
            lambda: stages.vocode(full_window, extra),
        ),
    )


@dataclass
class Candidate:
    settings: OrtSettings
    voice: PiperModel
    work: Workloads
    samples: list[list[float]] = field(default_factory=list)

    def stats(self) -> list[_common.Stats]:
        return [_common.Stats.of(s) for s in self.samples]


def latency(candidates: Sequence[Candidate], reps: int, warmup: int) -> None:
    """Every workload of every candidate once per repetition, rotating the candidates' order."""
    for c in candidates:
        c.samples = [[] for _ in c.work.runs]
        for _ in range(warmup):
            for run in c.work.runs:
                run()
    for rep in range(reps):
        for k in range(len(candidates)):
            c = candidates[(rep + k) % len(candidates)]
            for i, run in enumerate(c.work.runs):
                start = time.perf_counter()
                run()
                c.samples[i].append(1000 * (time.perf_counter() - start))


def throughput(run: Callable[[], object], jobs: int, seconds: float) -> float:
    """Runs per second, in total, of `jobs` Python threads calling `run` for `seconds`."""
    for _ in range(3):
        run()
    counts = [0] * jobs
    barrier = threading.Barrier(jobs + 1)
    deadline = 0.0

    def worker(index: int) -> None:
        barrier.wait()
        while time.perf_counter() < deadline:
            run()
            counts[index] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(jobs)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    deadline = start + seconds
    barrier.wait()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - start)


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(
        __doc__ or "",
        quick_help="only one option changed at a time from the default, fewer runs, 1.5 s "
        "throughput runs",
    )
    args = p.parse_args(argv)
    reps, warmup, seconds = (12, 3, 1.5) if args.quick else (40, 5, 3.0)

    model, config_path = embedded_voice_files()
    info, config = read_voice_info(model, config_path)
    split = SplitCache(_common.cache_dir()).load(model)
    default = OrtSettings()
    if args.quick:
        settings = [
            default,
            OrtSettings(intra_op_threads=1 if default.intra_op_threads != 1 else 2),
            OrtSettings(optimization="basic"),
            OrtSettings(optimization="extended"),
            OrtSettings(cpu_arena=False),
        ]
    else:
        settings = [
            OrtSettings(intra_op_threads=t, optimization=o, cpu_arena=a)
            for t, o, a in itertools.product((1, 2), ("all", "extended", "basic"), (True, False))
        ]
    candidates = []
    for s in settings:
        voice = PiperModel(info, config, split, s)
        candidates.append(Candidate(s, voice, workloads(voice)))
    latency(candidates, reps, warmup)

    names = candidates[0].work.names
    base = next(c for c in candidates if c.settings == default)
    base_sum = sum(st.p50 for st in base.stats())
    rows: list[list[object]] = []
    for c in candidates:
        st = c.stats()
        total = sum(x.p50 for x in st)
        rows.append(
            [
                describe(c.settings),
                st[0].n,
                *(f"{x.p50:.1f} / {x.p95:.1f}" for x in st),
                total,
                _common.ratio(base_sum, total),
            ]
        )
    header = [
        "settings",
        "n",
        *(f"w{i + 1} p50/p95 ms" for i in range(len(names))),
        "sum p50",
        "default/this",
    ]
    print(
        _common.table(
            "latency of one run, ms (sum p50 = the four p50s added; default/this > 1: faster "
            "than the default)",
            header,
            rows,
        )
    )
    for i, name in enumerate(names):
        print(f"  w{i + 1} = {name}")
    print()

    # Throughput: the server runs one job per core at once on one shared session per model.
    window_audio = FULL_WINDOW * base.voice.hop / info.native_rate
    thr: dict[tuple[int, int], float] = {}
    for intra in (1, 2):
        voice = PiperModel(info, config, split, OrtSettings(intra_op_threads=intra))
        full_window = workloads(voice).runs[-1]
        for jobs in (1, 2):
            thr[(jobs, intra)] = throughput(full_window, jobs, seconds)
    thr_rows: list[list[object]] = [
        [
            f"{jobs} job(s) at once, threads={intra}",
            rate,
            rate * window_audio,
            _common.ratio(rate, thr[(jobs, 1)]),
        ]
        for (jobs, intra), rate in sorted(thr.items())
    ]
    print(
        _common.table(
            f"throughput: Python threads each running full vocoder windows for {seconds:g} s on "
            "one shared session",
            ["case", "windows/s", "audio s/s", "vs threads=1"],
            thr_rows,
        )
    )
    print()

    # The recommendation, from the numbers above. On 2 cores the server either runs two jobs
    # with one thread each or one job with two threads: take the lower latency unless it costs
    # more than THROUGHPUT_GIVE of the throughput.
    one, two = thr[(2, 1)], thr[(1, 2)]
    latency_by_threads = {
        t: min(
            sum(x.p50 for x in c.stats()) for c in candidates if c.settings.intra_op_threads == t
        )
        for t in (1, 2)
        if any(c.settings.intra_op_threads == t for c in candidates)
    }
    faster = min(latency_by_threads, key=latency_by_threads.__getitem__)
    kept = thr[(3 - faster, faster)] >= max(one, two) * (1 - THROUGHPUT_GIVE)
    threads = faster if kept else 3 - faster
    same_threads = [c for c in candidates if c.settings.intra_op_threads == threads]
    sums = {id(c): sum(x.p50 for x in c.stats()) for c in same_threads}
    best = min(same_threads, key=lambda c: sums[id(c)])
    reference = next(
        (
            c
            for c in same_threads
            if c.settings.optimization == default.optimization
            and c.settings.cpu_arena == default.cpu_arena
        ),
        best,
    )
    pick = best if sums[id(best)] < sums[id(reference)] * (1 - TIE) else reference
    print(
        f"recommendation: intra_op_threads={threads} with {2 // threads} job(s) at once "
        f"(2 jobs x 1 thread: {one:.0f} windows/s, 1 job x 2 threads: {two:.0f}; one run's "
        f"latency sum {latency_by_threads.get(1, 0):.0f} ms with 1 thread, "
        f"{latency_by_threads.get(2, 0):.0f} ms with 2), "
        f"optimization={pick.settings.optimization}, "
        f"cpu_arena={'on' if pick.settings.cpu_arena else 'off'} (sum p50 {sums[id(pick)]:.1f} "
        f"ms; fastest {describe(best.settings)} {sums[id(best)]:.1f} ms; "
        f"differences under {TIE:.0%} count as ties)"
    )

    _common.write_json(
        args.json,
        {
            "benchmark": "ort_options",
            "workloads": list(names),
            "latency_ms": [
                {
                    "intra_op_threads": c.settings.intra_op_threads,
                    "optimization": c.settings.optimization,
                    "cpu_arena": c.settings.cpu_arena,
                    "workloads": [st.as_dict() for st in c.stats()],
                    "sum_p50": sum(st.p50 for st in c.stats()),
                }
                for c in candidates
            ],
            "throughput_windows_per_s": [
                {"jobs": jobs, "intra_op_threads": intra, "windows_per_s": rate}
                for (jobs, intra), rate in sorted(thr.items())
            ],
            "recommendation": {
                "intra_op_threads": threads,
                "optimization": pick.settings.optimization,
                "cpu_arena": pick.settings.cpu_arena,
            },
        },
    )


if __name__ == "__main__":
    main()
