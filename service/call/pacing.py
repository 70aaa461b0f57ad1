"""A stream's listener clock: how much audio it has in hand, and when its next job is due."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from ..jobs import Batch, Runner, Work

T = TypeVar("T")


@dataclass(frozen=True)
class PacingPolicy:
    """When a stream's jobs are due; `python -m bench.capacity` chose the figure and
    docs/benchmarks.md ("Capacity: live voices", "A job is due its own cost early") has its
    runs."""

    deadline_lead: float = 0.3
    """Seconds before a listener would run out of audio that its next job is due: room for a
    wait behind the jobs running and for the job itself (a shorter lead let calls stall at the
    ladder's top levels)."""


class Pacer:
    """Runs a stream's model jobs on the runner, each due a little before its listener would
    run out of audio, and times them for the stream's real-time factor."""

    def __init__(
        self, runner: Runner, native_rate: int, policy: PacingPolicy | None = None
    ) -> None:
        self._runner = runner
        self.policy = policy or PacingPolicy()
        self._rate = native_rate
        self._heard_by = 0.0
        """When the listener will have heard all audio produced so far (time.monotonic())."""
        self.busy_seconds = 0.0
        """Worker time this stream's jobs took (a batch's shared run is not counted)."""

    def ahead(self) -> float:
        """Seconds of audio the listener has in hand (0 when waiting already)."""
        return max(0.0, self._heard_by - time.monotonic())

    def heard(self, samples: int) -> None:
        """Account for audio produced: the listener will be busy with it that much longer."""
        self._heard_by = max(self._heard_by, time.monotonic()) + samples / self._rate

    def run(
        self, fn: Work[T] | None, batch: Batch[T] | None = None, cost: float = 0.0
    ) -> Awaitable[T]:
        """`fn` (or `batch`) on the runner. Due a little before the listener runs dry, and
        `cost` (the job's expected seconds) sooner still, so that it is done by then and a
        stream about to stall goes before a new stream's first audio; a listener with no audio
        in hand waits already: due now (None)."""
        work = fn if fn is not None else (batch.alone if batch is not None else None)

        def timed(wide: bool) -> T:
            assert work is not None
            start = time.perf_counter()
            try:
                return work(wide)
            finally:
                self.busy_seconds += time.perf_counter() - start

        in_hand = self._heard_by > time.monotonic()
        deadline = self._heard_by - self.policy.deadline_lead - cost if in_hand else None
        return self._runner.run(
            timed if work is not None else None, deadline, batch=batch, cost=cost
        )
