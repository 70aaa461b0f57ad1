"""Helpers shared by the benchmarks: percentiles, the plain-text table, JSON output, flags."""

from __future__ import annotations

import argparse
import json
import os
import platform
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Stats:
    """p50 and p95 of a set of samples (numpy's default linear interpolation), and how many."""

    n: int
    p50: float
    p95: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        if not samples:
            return cls(0, float("nan"), float("nan"))
        p50, p95 = np.percentile(np.asarray(samples, dtype=np.float64), [50, 95])
        return cls(len(samples), float(p50), float(p95))

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def ratio(baseline: float, ours: float) -> float:
    """baseline / ours: above 1 means ours is smaller (sooner, faster)."""
    return baseline / ours if ours > 0 else float("nan")


class _Parser(argparse.ArgumentParser):
    """Prints the machine line once the arguments are read, so that every benchmark's output
    names the CPU its figures come from."""

    def parse_args(self, *args: Any, **kwargs: Any) -> Any:
        parsed = super().parse_args(*args, **kwargs)
        print(machine_line(), flush=True)
        return parsed


def parser(description: str, *, quick_help: str) -> argparse.ArgumentParser:
    """A parser with the flags every benchmark has: --quick and --json FILE."""
    p = _Parser(description=description)
    p.add_argument("--quick", action="store_true", help=quick_help)
    p.add_argument(
        "--json", metavar="FILE", type=Path, help="also write the figures as JSON to FILE"
    )
    return p


# The CPU features that decide Kokoro's speed: its decoder is mostly u8 x s8 matrix products,
# which onnxruntime runs on AMX tiles several times faster than on VNNI vectors.
_INT8_FLAGS = ("amx_int8", "avx512_vnni", "avx_vnni")


def cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name, family and model numbers (a virtual machine may name only the
    vendor: "AMD EPYC" is Zen 4 as family 25, Zen 5 as 26, whose 8-bit products differ in
    speed) and its 8-bit product features, from `cpuinfo`."""
    try:
        info = cpuinfo.read_text()
    except OSError:
        return platform.processor() or platform.machine()
    fields: dict[str, str] = {}
    for line in info.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    flags = set(fields.get("flags", "").split())
    int8 = [f for f in _INT8_FLAGS if f in flags] or ["no VNNI or AMX"]
    family = ""
    if "cpu family" in fields:
        family = f"family {fields['cpu family']} model {fields.get('model', '?')}; "
    return f"{fields.get('model name', platform.machine())} ({family}{', '.join(int8)})"


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    import onnxruntime

    return {
        "cpus": os.cpu_count(),
        "cpu": cpu(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "onnxruntime": onnxruntime.__version__,
    }


def machine_line() -> str:
    """One line naming the machine, printed above a benchmark's tables: figures from another
    CPU differ (docs/benchmarks.md#machines)."""
    m = machine()
    return f"measured on: {m['cpu']}, {m['cpus']} cores, onnxruntime {m['onnxruntime']}"


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            if value != value:  # NaN
                return "-"
            return f"{value:.2f}" if abs(value) < 100 else f"{value:.1f}"
        return str(value)

    cells = [[cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in [list(header), *cells]) for i in range(len(header))]

    def line(values: Sequence[str]) -> str:
        first = values[0].ljust(widths[0])
        rest = (v.rjust(w) for v, w in zip(values[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()

    rule = "-" * len(line(list(header)))
    return "\n".join([title, rule, line(list(header)), rule, *(line(r) for r in cells), rule])


def write_json(path: Path | None, data: dict[str, Any]) -> None:
    """Write `data` (plus the machine description) to `path`, when one was given."""
    if path is None:
        return
    path.write_text(json.dumps({**data, "machine": machine()}, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {path}")


def cache_dir() -> Path | None:
    """The split-graph cache the server itself uses by default, so a run splits at most once."""
    from voxlite.service.settings.config import ServerConfig

    return ServerConfig().cache_dir
