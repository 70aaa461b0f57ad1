"""HAProxy's cost and the replicas' scaling: voxlite through deploy/haproxy/haproxy.cfg against
the same replica called directly, in one run; then N replicas behind HAProxy against one.

    python -m bench.balancer            # 5 rounds of first audio, levels of 25 s
    python -m bench.balancer --quick    # 2 rounds, levels of 10 s
    python -m bench.balancer --json out.json

1. First audio (Synthesize, and StreamingSynthesize fed like an LLM) at the client, direct and
   through HAProxy, alternating call by call over the reply corpus: the proxy's cost in ms.
2. Live voices (bench.capacity's callers: each hears reply after reply at real-time pace) at one
   level, direct and through HAProxy: first audio, gaps, refusals, and HAProxy's own CPU.
3. Capacity of N replicas behind HAProxy (the CPU split between them, --workers each) against
   one replica with all of it, over rising levels: do voices scale with replicas here?
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
from voxlite.tts.v1 import tts_pb2_grpc

from . import _common
from ._balanced import HAProxy, Replica, free_ports, wait_for
from .capacity import Level, capacity, cpu_seconds, in_time, run_level, voxlite_call
from .corpus import REPLIES
from .ttfa import streaming, synthesize


def start_replicas(count: int, workdir: Path, *args: str) -> list[Replica]:
    ports = free_ports(2 * count)
    voices = workdir / "voices"
    voices.mkdir(exist_ok=True)
    replicas = []
    try:
        for i in range(count):
            replicas.append(
                Replica(ports[2 * i], ports[2 * i + 1], voices, _common.cache_dir(), *args,
                        log_level="warning")
            )  # fmt: skip
        for replica in replicas:
            wait_for(replica.ready, f"replica {replica.port} SERVING")
    except BaseException:
        for replica in replicas:
            replica.close()
        raise
    return replicas


def first_audio(
    stubs: dict[str, tts_pb2_grpc.TextToSpeechServiceStub], rounds: int
) -> dict[str, dict[str, list[float]]]:
    """Seconds to first audio by path ("direct", "haproxy") and call kind, alternating the
    paths call by call (and which goes first, round by round) so both meet the same machine."""
    samples: dict[str, dict[str, list[float]]] = {
        path: {"synthesize": [], "streaming": []} for path in stubs
    }
    for stub in stubs.values():  # warm-up: connections, the phrase path
        synthesize(stub, REPLIES[0])
        streaming(stub, REPLIES[0], 0.025)
    order = list(stubs)
    for round_ in range(rounds):
        for text in REPLIES:
            for path in order if round_ % 2 == 0 else reversed(order):
                samples[path]["synthesize"].append(synthesize(stubs[path], text))
                times = streaming(stubs[path], text, 0.025)
                samples[path]["streaming"].append(times.from_completing_piece)
    return samples


def live_level(
    address: str, callers: int, seconds: float, pids: Sequence[int]
) -> tuple[Level, float]:
    """One level of bench.capacity's callers at `address`; also the CPU of `pids` besides the
    first (HAProxy, other replicas) as a share of the machine."""
    with grpc.insecure_channel(address) as channel:
        stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
        voxlite_call(stub, REPLIES[0], Level(0))
        others = [cpu_seconds(p) for p in pids[1:]]
        start = time.monotonic()
        level = run_level(
            lambda _language, text, lv: voxlite_call(stub, text, lv), callers, seconds, pids[0]
        )
        wall = time.monotonic() - start
        extra = sum(cpu_seconds(p) - c for p, c in zip(pids[1:], others, strict=True))
    return level, extra / wall / (os.cpu_count() or 1)


def level_row(name: str, level: Level, extra_cpu: float) -> list[object]:
    t = _common.Stats.of([1000 * x for x in level.ttfa])
    gaps = f"{level.underrun_calls}/{level.calls}"
    cpu, extra = round(100 * level.cpu), round(100 * extra_cpu)
    return [name, level.callers, t.p50, t.p95, gaps, level.refused, len(level.errors), cpu, extra]


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="2 rounds of first audio, 10 s levels")
    p.add_argument("--rounds", type=int, help="rounds of the 10-reply corpus (default 5)")
    p.add_argument("--callers", type=int, default=12, help="callers of part 2 (default 12)")
    p.add_argument("--replicas", type=int, default=2, help="replicas of part 3 (default 2)")
    p.add_argument("--levels", help="callers per level of part 3 (default 12,16,20,24)")
    p.add_argument("--skip", default="", help="comma-separated parts to leave out: 1,2,3")
    args = p.parse_args(argv)
    rounds = args.rounds or (2 if args.quick else 5)
    seconds = 10.0 if args.quick else 25.0
    levels = [int(n) for n in (args.levels or "12,16,20,24").split(",")]
    skip = set(args.skip.split(","))
    cores = os.cpu_count() or 1
    out: dict[str, Any] = {"rounds": rounds, "level_seconds": seconds}

    with tempfile.TemporaryDirectory(prefix="voxlite-bench-") as tmp:
        workdir = Path(tmp)
        # Parts 1 and 2: one replica, called directly and through HAProxy. The phrase cache
        # is off: the rounds repeat the replies.
        (replica,) = start_replicas(1, workdir, "--phrase-cache-mb", "0", "--max-streams", "256")
        proxy = HAProxy([replica], workdir)
        try:
            proxy.wait_all_up()
            if "1" not in skip:
                with (
                    grpc.insecure_channel(replica.address) as direct,
                    grpc.insecure_channel(proxy.address) as proxied,
                ):
                    stubs = {
                        "direct": tts_pb2_grpc.TextToSpeechServiceStub(direct),
                        "haproxy": tts_pb2_grpc.TextToSpeechServiceStub(proxied),
                    }
                    samples = first_audio(stubs, rounds)
                rows: list[list[object]] = []
                for kind in ("synthesize", "streaming"):
                    d = _common.Stats.of([1000 * x for x in samples["direct"][kind]])
                    h = _common.Stats.of([1000 * x for x in samples["haproxy"][kind]])
                    rows.append([kind, d.n, d.p50, h.p50, h.p50 - d.p50, d.p95, h.p95,
                                 h.p95 - d.p95])  # fmt: skip
                    out[f"first_audio_{kind}"] = {"direct": d.as_dict(), "haproxy": h.as_dict()}
                print(_common.table(
                    "First audio at the client, ms (streaming: from the piece completing the "
                    "first clause)",
                    ["call", "n", "direct p50", "haproxy p50", "+ms", "direct p95",
                     "haproxy p95", "+ms"], rows,
                ))  # fmt: skip
            if "2" not in skip:
                pids = [replica.proc.pid, proxy.proc.pid]
                direct_level, _ = live_level(replica.address, args.callers, seconds, pids[:1])
                proxied_level, haproxy_cpu = live_level(proxy.address, args.callers, seconds, pids)
                rows = [
                    level_row("direct", direct_level, 0.0),
                    level_row("haproxy", proxied_level, haproxy_cpu),
                ]
                out["live"] = {"callers": args.callers, "rows": rows}
                print(_common.table(
                    f"Live voices, {args.callers} callers, {seconds:g} s, one replica",
                    ["path", "callers", "ttfa p50", "ttfa p95", "gaps", "refused", "errors",
                     "replica cpu %", "haproxy cpu %"], rows,
                ))  # fmt: skip
        finally:
            proxy.close()
            replica.close()

        # Part 3: one replica with every core, against N sharing them (workers split).
        if "3" not in skip:
            results: dict[str, list[Level]] = {}
            rows = []
            sides: list[tuple[str, int, list[str]]] = [("1 replica", 1, [])]
            per = max(1, cores // args.replicas)
            sides.append((f"{args.replicas} replicas", args.replicas,
                          ["--workers", str(per), "--wide-threads", str(min(2, per))]))  # fmt: skip
            for name, count, extra in sides:
                # The phrase cache off, as in bench.capacity: the callers repeat the replies.
                replicas = start_replicas(
                    count, workdir, "--phrase-cache-mb", "0", "--max-streams", "256", *extra
                )
                proxy = HAProxy(replicas, workdir)
                try:
                    proxy.wait_all_up()
                    pids = [r.proc.pid for r in replicas] + [proxy.proc.pid]
                    results[name] = []
                    for callers in levels:
                        before = [cpu_seconds(p) for p in pids]
                        start = time.monotonic()
                        level, _ = live_level(proxy.address, callers, seconds, pids[:1])
                        wall = time.monotonic() - start
                        used = [cpu_seconds(p) - b for p, b in zip(pids, before, strict=True)]

                        def share(cpu: float, wall: float = wall) -> int:
                            return round(100 * cpu / wall / cores)

                        results[name].append(level)
                        t = _common.Stats.of([1000 * x for x in level.ttfa])
                        rows.append([name, callers, t.p50, t.p95,
                                     f"{level.underrun_calls}/{level.calls}", level.refused,
                                     share(sum(used[:-1])), share(used[-1])])  # fmt: skip
                        print(f"  {name}: {callers} callers done", flush=True)
                finally:
                    proxy.close()
                    for replica in replicas:
                        replica.close()
            print(_common.table(
                f"Capacity behind HAProxy, {seconds:g} s levels, {cores} cores",
                ["side", "callers", "ttfa p50", "ttfa p95", "gaps", "refused", "replicas cpu %",
                 "haproxy cpu %"], rows,
            ))  # fmt: skip
            for name, lvls in results.items():
                print(f"{name}: capacity {capacity(lvls)} live voices (strict), "
                      f"{in_time(lvls)} in time")  # fmt: skip
            out["capacity"] = {
                "rows": rows,
                **{n: {"strict": capacity(v), "in_time": in_time(v)} for n, v in results.items()},
            }  # fmt: skip
    _common.write_json(args.json, out)


if __name__ == "__main__":
    main()
