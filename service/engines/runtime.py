"""onnxruntime sessions as every engine family makes them: threads, optimisation, memory."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import onnxruntime as ort

_OPTIMIZATION = {
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}


@dataclass(frozen=True)
class OrtSettings:
    """onnxruntime session options (bench/ort_options.py and bench/engine.py measure them)."""

    intra_op_threads: int = 1
    """Threads inside one model run while runs share the machine (one per scheduler worker):
    on 2 cores two workers of one thread carry more audio than one of two
    (docs/benchmarks.md#the-piper-engine-alone)."""
    wide_threads: int = field(default_factory=lambda: min(2, os.cpu_count() or 1))
    """Threads of a run that has the machine to itself (the scheduler's urgent job with nothing
    else to do); equal to intra_op_threads: never wide."""
    optimization: str = "all"
    """Graph optimisation level: "basic", "extended" or "all"."""
    cpu_arena: bool = True
    """onnxruntime's memory arena: faster reruns of varying shapes for some resident memory."""

    @property
    def wide(self) -> bool:
        """Whether a run with the machine to itself gets more threads than a shared one."""
        return self.wide_threads > self.intra_op_threads

    def session_options(self, threads: int | None = None) -> ort.SessionOptions:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or self.intra_op_threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = _OPTIMIZATION[self.optimization]
        opts.enable_cpu_mem_arena = self.cpu_arena
        # No memory patterns: with them each run keeps one block per input shape for all its
        # intermediate tensors in the shared arena (docs/benchmarks.md#start-up-and-memory).
        opts.enable_mem_pattern = False
        # Idle threads must not spin: several sessions share two cores.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if self.cpu_arena:
            # One arena for every session of the process (register_shared_arena) rather than
            # one each: it holds what the runs at once need, not each session's largest run.
            opts.add_session_config_entry("session.use_env_allocators", "1")
        # Fatal only: every error a run meets is raised, and the server logs it in its own
        # format (--log-format); onnxruntime printed it to stderr as well, in colour.
        opts.log_severity_level = 4
        return opts

    def session(
        self, model: bytes, threads: int | None = None, *, disabled: Sequence[str] = ()
    ) -> ort.InferenceSession:
        """A CPU session of a serialized model; `disabled`: optimizers to leave out."""
        made = ort.InferenceSession(
            model,
            self.session_options(threads),
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(disabled),
        )
        # onnxruntime's Python session keeps the serialized model to rebuild itself on a
        # fallback to another provider, which CPU-only sessions never do: the serialized model held
        # for nothing per voice (bench/startup.py; docs/benchmarks.md#start-up-and-memory).
        made._model_bytes = None
        return made


def register_shared_arena() -> None:
    """Register the CPU arena that sessions with `session.use_env_allocators` share. It
    belongs to onnxruntime's environment, which is the process's: a server registers it as it
    starts, before loading voices (onnxruntime accepts a second registration, as when tests run
    several servers in one process)."""
    cpu = ort.OrtMemoryInfo(
        "Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT
    )
    # Its default growth (next power of two); growing by what is asked held more.
    ort.create_and_register_allocator(cpu, ort.OrtArenaCfg({}))


# CPU flags (Linux /proc/cpuinfo) of instructions that add u8 x s8 products into 32 bits: with
# them onnxruntime's 8-bit matrix products are exact; without, its AVX2 kernel adds pairs of
# products into 16 bits, which can saturate.
_EXACT_DOT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})


def exact_int8_products(cpuinfo: str | None = None) -> bool:
    """Whether onnxruntime's u8 x s8 matrix products are exact on this CPU (`cpuinfo`: the
    text of /proc/cpuinfo, read when None; False where it cannot be read or names no flags)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return not _EXACT_DOT_FLAGS.isdisjoint(value.split())
    return False
