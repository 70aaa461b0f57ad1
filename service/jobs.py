"""The contract between a session and what runs its model work: jobs, batches, runners."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")
Item = Any
Work = Callable[[bool], T]
"""Blocking work for a worker: called with whether it runs wide (it has the machine to
itself and may use more threads)."""


class JobDropped(Exception):
    """The job was dropped before it ran (its stream was cleared)."""


@dataclass(frozen=True)
class Batch(Generic[T]):
    """Marks a job whose work can be done together with others of the same key in one call:
    `run([item, ...], wide)` returns one result per item, in order."""

    key: Hashable
    item: Item
    run: Callable[[list[Item], bool], list[T]]
    alone: Work[T] | None = None
    """How the item runs when no other job joins it (None: as a batch of one)."""


@dataclass
class SchedulerStats:
    """What a runner has done, for tests, logs and metrics."""

    jobs_run: int = 0
    jobs_dropped: int = 0
    batches: int = 0
    batched_jobs: int = 0
    running: int = 0
    wide_runs: int = 0
    """Jobs run with the machine to themselves (Scheduler's `wide`)."""
    held_for_wide: int = 0
    """Times a worker found a job queued but waited, because a wide run had the machine."""
    held_jobs: int = 0
    """Jobs started on the worker kept for them (the next window of a stream short of audio)."""


class Runner(Protocol):
    """How a session runs its model work off the event loop: `run` returns `fn`'s result
    (`fn` takes whether it runs wide). `deadline` (time.monotonic()) is when the result is
    needed; None means now. A job marked with `batch` may run with others of its key. `cost`:
    the seconds it is expected to take (0: unknown)."""

    def run(
        self,
        fn: Work[T] | None,
        deadline: float | None = None,
        *,
        batch: Batch[T] | None = None,
        cost: float = 0.0,
    ) -> Awaitable[T]: ...

    def close(self) -> None:
        """The session is over (what the runner holds for it can go)."""
        ...


class Workers(Protocol):
    """What the server needs of its scheduler: a runner per session, and how busy it is."""

    def runner(self, *, long_jobs: bool = False) -> Runner: ...

    def load(self, window: float = ...) -> float: ...

    def long_slots(self) -> int:
        """Long jobs (a Kokoro decoder run) it runs at once now: what admission budgets them by."""
        ...

    def light_at_work(self) -> bool:
        """Whether a stream of a voice without long jobs (Piper) is at work now."""
        ...

    def overdue(self, now: float | None = None, *, long_jobs: bool = True) -> float: ...

    def slack(self, now: float | None = None, *, long_jobs: bool = True) -> float: ...

    def shutdown(self) -> None: ...

    @property
    def jobs_running(self) -> int: ...

    @property
    def jobs_total(self) -> int: ...

    @property
    def jobs_queued(self) -> int: ...
