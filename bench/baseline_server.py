"""`python -m bench.baseline_server [voxlite-server flags]`: voxlite with its scheduler replaced
by one thread per stream, the baseline bench/capacity.py measures the shared scheduler against."""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from voxlite.service.__main__ import limit_malloc_arenas, quiet_grpc_core, serve
from voxlite.service.jobs import Batch, SchedulerStats, Work
from voxlite.service.settings.config import config_from_args

T = TypeVar("T")


class ThreadPerStream:
    """Each stream runs its own jobs on its own thread, in arrival order, with no shared pool
    and no deadlines (scheduler.Workers)."""

    def __init__(self) -> None:
        self.stats = SchedulerStats()

    def runner(self, *, long_jobs: bool = False) -> StreamRunner:
        return StreamRunner(self.stats)

    def load(self, window: float = 3.0) -> float:
        return 0.0

    def long_slots(self) -> int:
        return 1  # each stream has a thread of its own: one costly voice at a time, as before

    def light_at_work(self) -> bool:
        return False  # no stream waits for another's worker

    def overdue(self, now: float | None = None, *, long_jobs: bool = True) -> float:
        return 0.0

    def slack(self, now: float | None = None, *, long_jobs: bool = True) -> float:
        return math.inf

    def shutdown(self) -> None:
        pass

    @property
    def jobs_running(self) -> int:
        return self.stats.running

    @property
    def jobs_total(self) -> int:
        return self.stats.jobs_run

    @property
    def jobs_queued(self) -> int:
        return 0


class StreamRunner:
    """One stream's own thread (scheduler.Runner)."""

    def __init__(self, stats: SchedulerStats) -> None:
        self._stats = stats
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="voxlite-stream")

    async def run(
        self,
        fn: Work[T] | None,
        deadline: float | None = None,
        *,
        batch: Batch[T] | None = None,
        cost: float = 0.0,
    ) -> T:
        work = fn or (batch.alone if batch is not None else None)
        assert work is not None, "the baseline runs each window alone"

        def job() -> T:
            self._stats.running += 1
            try:
                return work(False)
            finally:
                self._stats.running -= 1
                self._stats.jobs_run += 1

        return await asyncio.get_running_loop().run_in_executor(self._executor, job)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def main(argv: Sequence[str] | None = None) -> int:
    limit_malloc_arenas()
    config = config_from_args(argv)
    quiet_grpc_core(config.log_level)
    from voxlite.service.ops import logs

    logs.configure(config.log_level, config.log_format)
    asyncio.run(serve(config, ThreadPerStream()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
