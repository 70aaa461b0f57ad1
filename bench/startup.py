"""Start-up and memory: time from launch to SERVING (split cache cold and warm, warm-up
included) and resident memory with the default voice, idle and after serving calls."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import grpc
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from . import _common
from ._servers import free_port, spawn, voxlite_argv, wait_serving
from .corpus import REPLIES

SERVING_TARGET = 2.0
RSS_TARGET_MB = 300.0


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(x for x in status.splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def one_start(workdir: Path, cache: Path, calls: int) -> tuple[float, float, float]:
    """(seconds to SERVING, MB resident when SERVING, MB resident after `calls` calls)."""
    port = free_port()
    argv = voxlite_argv(port, workdir / "voices", "--cache-dir", str(cache))
    started = time.monotonic()
    child = spawn("voxlite-server", argv, workdir)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            wait_serving(child, channel)
            serving = time.monotonic() - started
            idle = rss_mb(child.proc.pid)
            stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
            for i in range(calls):
                list(
                    stub.Synthesize(
                        pb.SynthesizeRequest(text=REPLIES[i % len(REPLIES)]), timeout=60
                    )
                )
            busy = rss_mb(child.proc.pid)
    finally:
        child.stop()
    return serving, idle, busy


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="2 warm starts instead of 5")
    args = p.parse_args(argv)
    starts = 2 if args.quick else 5
    with tempfile.TemporaryDirectory(prefix="voxlite-startup-") as tmp:
        workdir = Path(tmp)
        (workdir / "voices").mkdir()
        cache = workdir / "split-cache"
        cold = one_start(workdir, cache, 0)  # splits the graph and fills the cache
        warm = [one_start(workdir, cache, 20) for _ in range(starts)]
    serving = _common.Stats.of([w[0] for w in warm])
    idle = _common.Stats.of([w[1] for w in warm])
    busy = _common.Stats.of([w[2] for w in warm])
    rows: list[list[object]] = [
        ["start to SERVING, split cache cold (s)", 1, cold[0], cold[0], "-"],
        ["start to SERVING, split cache warm (s)", serving.n, serving.p50, serving.p95,
         f"< {SERVING_TARGET:g}"],
        ["resident memory when SERVING (MB)", idle.n, idle.p50, idle.p95, f"< {RSS_TARGET_MB:g}"],
        ["resident memory after 20 calls (MB)", busy.n, busy.p50, busy.p95, f"< {RSS_TARGET_MB:g}"],
    ]  # fmt: skip
    print(
        _common.table("start-up and memory, default voice", ["", "n", "p50", "p95", "target"], rows)
    )
    _common.write_json(
        args.json,
        {
            "benchmark": "startup",
            "cold_serving_s": cold[0],
            "serving_s": serving.as_dict(),
            "rss_idle_mb": idle.as_dict(),
            "rss_after_calls_mb": busy.as_dict(),
        },
    )


if __name__ == "__main__":
    main()
