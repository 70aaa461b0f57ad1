"""Start-up and memory: time from launch to SERVING (split cache cold and warm, warm-up
included), to every voice loaded, and resident memory, idle and after serving calls;
English only (`--engines piper`) and with every language (the default, Piper and Kokoro)."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from . import _common
from ._servers import START_TIMEOUT, free_port, spawn, voxlite_argv, wait_serving
from .corpus import REPLIES
from .kokoro_corpus import REPLIES_JA, REPLIES_ZH

# The goals: English only, SERVING under 2 s in 300 MB; with the Kokoro languages, SERVING
# (every language's default voice loaded) under 5 s and 800 MB.
TARGETS = {"piper": (2.0, 300.0), "piper,kokoro": (5.0, 800.0)}
CALLS = 20


@dataclass(frozen=True)
class Start:
    serving_s: float
    """Launch to health SERVING (the default voice loaded and warmed up)."""
    loaded_s: float
    """Launch to every default voice loaded (ListVoices names none as loading)."""
    serving_mb: float
    loaded_mb: float
    after_calls_mb: float


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(x for x in status.splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def calls_for(engines: str) -> list[tuple[str, str]]:
    """(language, text) of the calls made after the load: each language the server speaks."""
    if engines == "piper":
        return [("", REPLIES[i % len(REPLIES)]) for i in range(CALLS)]
    languages = [("", REPLIES), ("zh", REPLIES_ZH), ("ja", REPLIES_JA)]
    calls = []
    for i in range(CALLS):
        language, replies = languages[i % len(languages)]
        calls.append((language, replies[i // len(languages) % len(replies)]))
    return calls


def one_start(workdir: Path, cache: Path, engines: str, calls: int) -> Start:
    port = free_port()
    argv = voxlite_argv(port, workdir / "voices", "--cache-dir", str(cache), engines=engines)
    started = time.monotonic()
    child = spawn("voxlite-server", argv, workdir)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            wait_serving(child, channel)
            serving = time.monotonic() - started
            serving_mb = rss_mb(child.proc.pid)
            stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
            while stub.ListVoices(pb.ListVoicesRequest(), timeout=10).loading:
                if time.monotonic() - started > START_TIMEOUT:
                    raise TimeoutError(f"voices still loading after {START_TIMEOUT:g} s")
                time.sleep(0.05)  # the figure's resolution
            loaded = time.monotonic() - started
            loaded_mb = rss_mb(child.proc.pid)
            for language, text in calls_for(engines)[:calls]:
                config = pb.SynthesisConfig(language=language)
                list(stub.Synthesize(pb.SynthesizeRequest(text=text, config=config), timeout=60))
            after = rss_mb(child.proc.pid)
    finally:
        child.stop()
    return Start(serving, loaded, serving_mb, loaded_mb, after)


def measure(engines: str, starts: int) -> tuple[Start, list[Start]]:
    with tempfile.TemporaryDirectory(prefix="voxlite-startup-") as tmp:
        workdir = Path(tmp)
        (workdir / "voices").mkdir()
        cache = workdir / "split-cache"
        cold = one_start(workdir, cache, engines, 0)  # splits the graphs and fills the cache
        warm = [one_start(workdir, cache, engines, CALLS) for _ in range(starts)]
    return cold, warm


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="2 warm starts instead of 5")
    p.add_argument(
        "--engines",
        choices=sorted(TARGETS),
        action="append",
        help="measure only these (default: both, English only and every language)",
    )
    args = p.parse_args(argv)
    starts = 2 if args.quick else 5
    figures: dict[str, object] = {"benchmark": "startup"}
    for engines in args.engines or list(TARGETS):
        cold, warm = measure(engines, starts)
        seconds, megabytes = TARGETS[engines]

        def stats(field: str, warm: list[Start] = warm) -> _common.Stats:
            return _common.Stats.of([getattr(w, field) for w in warm])

        def row(field: str) -> list[object]:
            figure = stats(field)
            return [figure.n, figure.p50, figure.p95]

        rows: list[list[object]] = [
            ["start to SERVING, split cache cold (s)", 1, cold.serving_s, cold.serving_s, "-"],
            ["start to every voice loaded, cache cold (s)", 1, cold.loaded_s, cold.loaded_s, "-"],
            ["start to SERVING, split cache warm (s)", *row("serving_s"), f"< {seconds:g}"],
            ["start to every voice loaded, cache warm (s)", *row("loaded_s"), "-"],
            ["resident memory when SERVING (MB)", *row("serving_mb"), "-"],
            ["resident memory, every voice loaded (MB)", *row("loaded_mb"),
             f"< {megabytes:g}"],
            [f"resident memory after {CALLS} calls (MB)", *row("after_calls_mb"),
             f"< {megabytes:g}"],
        ]  # fmt: skip
        title = f"start-up and memory, --engines {engines}"
        print(_common.table(title, ["", "n", "p50", "p95", "target"], rows))
        figures[engines] = {
            "cold": cold.__dict__,
            **{f: stats(f).as_dict() for f in Start.__dataclass_fields__},
        }
    _common.write_json(args.json, figures)


if __name__ == "__main__":
    main()
