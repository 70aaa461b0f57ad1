"""Every stream's model work on one pool of workers, earliest deadline first."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import enum
import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..jobs import Batch, JobDropped, SchedulerStats, Work

T = TypeVar("T")


@dataclass(frozen=True)
class SchedulerPolicy:
    """The scheduler's tuned figures; `python -m bench.capacity` chose them and
    docs/benchmarks.md ("Capacity: live voices") has its runs."""

    load_window: float = 3.0
    """Seconds over which load() averages the workers' busy time: the span admission's load
    bars were tuned against ("How admission was tuned" under that heading)."""
    long_job: float = 0.25
    """Expected seconds over which a job counts as long (a Kokoro decoder run): long jobs hold every
    worker while no light stream is at work, and all but one beside one (long_slots), so that
    a light stream's next window never waits behind one."""
    long_job_due_now: float = 0.5
    """The same for a job due at once (its listener has no audio in hand: a Kokoro reply's
    first piece) while a light stream is at work (long_slots). A first piece of
    `voice.FIRST_TOKENS` is estimated either side of long_job, by the cost its voice measured
    at load; counted long, it would wait beside English streams for another reply's piece to
    free the one long slot. A job estimated over this (mostly a whole first sentence) still
    waits for one. Chosen with `bench.capacity --levels 12+2`; with Kokoro streams alone
    long_job holds (`bench.seeds`, `--levels 0+4`: docs/kokoro.md, "First pieces")."""
    wide_quiet: float = 3.0
    """A long job runs wide only if no other stream queued a job for this many seconds: a
    Kokoro decoder run holding every worker stalls the Piper streams beside it (the 12+2 level of
    `bench.capacity --levels 12+2`)."""
    start_grace: float = 0.1
    """A job due at once (a stream's first audio) counts as late in overdue() once it has
    waited this long: a new call waits behind a backlog, not just behind the job running."""
    hold: float = 0.03
    """Seconds a worker keeps itself for the next job of a stream whose listener is short of
    audio (after a job with no slack: a reply's first window, or a small window after it): the
    next window is due as the last ends, and a worker freed then was taken by another stream's
    job while the event loop handed the window over and asked for the next. The hop takes a few
    milliseconds (docs/design.md, "The next window on the same worker"); longer, and the
    stream has nothing to ask. Measured on time.monotonic whatever the scheduler's clock: it
    bounds a worker's idle wait in real time. 0: no worker is kept."""


class JobState(enum.Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    DROPPED = "dropped"


@dataclass(order=True)
class Job:
    deadline: float
    order: int
    fn: Work[Any] | None = field(compare=False)
    batch: Batch[Any] | None = field(compare=False)
    future: asyncio.Future[Any] = field(compare=False)
    loop: asyncio.AbstractEventLoop = field(compare=False)
    submitted: float = field(compare=False)
    cost: float = field(default=0.0, compare=False)
    """Seconds the job is expected to take (0: unknown, short)."""
    long: bool = field(default=False, compare=False)
    """It holds one of the slots for long jobs (long_slots)."""
    stream: int = field(default=0, compare=False)
    """Which stream's job it is (its StreamRunner; 0: none said)."""
    slack: bool = field(default=False, compare=False)
    """It was queued before its deadline: if it is still queued after it, the workers are
    behind. A job due at once (a stream's first audio, or one whose listener was left with
    little audio by design: after the small first window) says nothing about the load."""
    state: JobState = field(default=JobState.QUEUED, compare=False)


class Scheduler:
    """Runs blocking jobs on `workers` threads, the job with the nearest deadline first.

    A stream's deadline for its next job is when its listener would run out of audio: a stream
    with seconds of audio already delivered waits while a new stream's first window goes at
    once. Deadlines are `time.monotonic()` values (the event loop's clock on Linux).

    With `batch_size` > 1, queued jobs marked with the same `Batch.key` run as one call.

    With `wide`, a job due at once (no slack: a stream's first audio) that finds no other job
    running or queued runs wide (its work is told so, and may use more threads) and has the
    machine to itself: the other workers start nothing until it ends. Busy, the workers run
    one job each, which carries the most streams; idle, the first audio comes sooner.
    """

    def __init__(
        self,
        workers: int,
        *,
        batch_size: int = 1,
        on_wait: Callable[[float], None] | None = None,
        wide: bool = False,
        clock: Callable[[], float] = time.monotonic,
        policy: SchedulerPolicy | None = None,
    ) -> None:
        self.workers = workers
        self.policy = policy or SchedulerPolicy()
        self._holds: dict[int, tuple[int, float]] = {}
        """Stream -> (the worker kept for its next job (policy.hold), until when:
        time.monotonic())."""
        self._clock = clock
        """Where deadlines, waits and the load are read: time.monotonic, or a test's clock."""
        self.batch_size = batch_size
        self.stats = SchedulerStats()
        self._on_wait = on_wait
        self._wide = wide
        self._wide_running = False
        self._wide_long = False
        """The job running wide is a long one (short jobs may start beside it)."""
        self._long_running = 0
        """Long jobs (SchedulerPolicy.long_job) running now."""
        self._heap: list[Job] = []
        self._streams = itertools.count(1)
        self._submitted: dict[int, float] = {}
        """When each open stream last queued a job (for SchedulerPolicy.wide_quiet)."""
        self._heavy: set[int] = set()
        """The open streams whose voices have long jobs (the others are light: Piper)."""
        # (end, seconds, workers held) of the jobs finished lately, and the running ones: load().
        self._recent: collections.deque[tuple[float, float, int]] = collections.deque()
        self._running: dict[int, tuple[float, int]] = {}  # worker: (start, workers held)
        self._lock = threading.Condition()
        self._order = itertools.count()
        self._closed = False
        self._threads = [
            threading.Thread(target=self._work, name=f"voxlite-infer-{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    # -- submitting ---------------------------------------------------------------------------

    def submit(
        self,
        fn: Work[T] | None,
        deadline: float | None,
        *,
        batch: Batch[T] | None = None,
        cost: float = 0.0,
        stream: int = 0,
        long: bool | None = None,
    ) -> Job:
        """Queue a job; await `job.future` for its result. Called on the event loop.

        `deadline` is when its listener runs out of audio (minus a lead); None when they have
        none in hand (a stream's first audio): due now. Without `fn`, `batch` says how it
        runs. `long`: whether it takes a slot for long jobs (None: if `cost` is over
        the policy's long_job)."""
        if fn is None and batch is None:
            raise ValueError("a job needs its work: fn, or a batch")
        loop = asyncio.get_running_loop()
        now = self._clock()
        due = now if deadline is None else deadline
        job = Job(
            due,
            next(self._order),
            fn,
            batch,
            loop.create_future(),
            loop,
            now,
            cost=cost,
            long=cost > self.policy.long_job if long is None else long,
            stream=stream,
            slack=due > now,
        )
        with self._lock:
            if self._closed:
                raise RuntimeError("the scheduler is shut down")
            if stream:
                self._submitted[stream] = now
            heapq.heappush(self._heap, job)
            self._lock.notify()
        return job

    async def run(
        self,
        fn: Work[T] | None,
        deadline: float | None = None,
        *,
        batch: Batch[T] | None = None,
        cost: float = 0.0,
        stream: int = 0,
        long: bool | None = None,
    ) -> T:
        """Run `fn` by `deadline` (see submit; None: as soon as possible) and return its
        result. Cancelling the caller drops the job if it has not started."""
        job = self.submit(fn, deadline, batch=batch, cost=cost, stream=stream, long=long)
        result: T = await self.wait(job)
        return result

    def close(self) -> None:
        """A session is over: nothing of the shared scheduler is its own."""

    @property
    def jobs_running(self) -> int:
        """Jobs running right now (tests check it drops to zero after cancels)."""
        return self.stats.running

    @property
    def jobs_total(self) -> int:
        return self.stats.jobs_run

    async def wait(self, job: Job) -> Any:
        try:
            return await asyncio.shield(job.future)
        except asyncio.CancelledError:
            self.drop(job)
            raise

    def drop(self, job: Job) -> None:
        """Drop a queued job: it never runs, and its future raises JobDropped. A job already
        running finishes (one step: a vocoder window) and its result is ignored."""
        with self._lock:
            if job.state is not JobState.QUEUED:
                return
            job.state = JobState.DROPPED
            self.stats.jobs_dropped += 1
        # Lazy deletion: the heap entry is skipped when it comes up.
        if not job.future.done():
            job.future.set_exception(JobDropped())
            job.future.exception()  # retrieved: no "never retrieved" warning if nobody waits

    def runner(self, *, long_jobs: bool = False) -> StreamRunner:
        """What a session runs its jobs with: this scheduler, shared with every other stream,
        its jobs marked as the stream's. `long_jobs`: its voice's jobs may run long (Kokoro);
        only then does a job expected to take over the policy's long_job (long_job_due_now for a
        job due at once beside a light stream) take a long slot. A Piper window estimated long
        on a busy machine still runs on any worker."""
        stream = next(self._streams)
        if long_jobs:
            with self._lock:
                self._heavy.add(stream)
        return StreamRunner(self, stream, long_jobs)

    def forget(self, stream: int) -> None:
        """A stream is over (StreamRunner.close)."""
        with self._lock:
            self._submitted.pop(stream, None)
            self._heavy.discard(stream)
            self._holds.pop(stream, None)
            self._lock.notify_all()  # a long job held back for it may start now

    def long_slots(self) -> int:
        """Long jobs (SchedulerPolicy.long_job) that may run at once: every worker while no
        light stream queued a job within the policy's wide_quiet (a Mandarin load uses the
        whole machine), else all but one, so that a Piper stream's next window never waits
        behind a Kokoro decoder run."""
        with self._lock:
            return self._long_slots()

    def _long_slots(self) -> int:
        """long_slots() with the lock held."""
        return max(1, self.workers - 1) if self._light_at_work() else self.workers

    def light_at_work(self) -> bool:
        """Whether a light stream (its voice has no long jobs: Piper) queued a job within the
        policy's wide_quiet: long jobs then leave it a worker (long_slots)."""
        with self._lock:
            return self._light_at_work()

    def _light_at_work(self) -> bool:
        """light_at_work() with the lock held."""
        since = self._clock() - self.policy.wide_quiet
        return any(t >= since for s, t in self._submitted.items() if s not in self._heavy)

    def _others_quiet(self, stream: int) -> bool:
        """No stream but `stream` queued a job within the policy's wide_quiet (lock held)."""
        since = self._clock() - self.policy.wide_quiet
        return all(t < since for s, t in self._submitted.items() if s != stream)

    def load(self, window: float | None = None) -> float:
        """Share of the workers' time spent on jobs over the last `window` seconds (None: the
        policy's load_window), 0 to 1."""
        window = self.policy.load_window if window is None else window
        now = self._clock()
        since = now - window
        with self._lock:
            while self._recent and self._recent[0][0] < since:
                self._recent.popleft()
            busy = sum(min(seconds, end - since) * weight for end, seconds, weight in self._recent)
            busy += sum(
                (now - max(start, since)) * weight for start, weight in self._running.values()
            )
        return min(1.0, busy / (window * self.workers))

    @property
    def jobs_queued(self) -> int:
        with self._lock:
            return sum(j.state is JobState.QUEUED for j in self._heap)

    def overdue(self, now: float | None = None, *, long_jobs: bool = True) -> float:
        """How far past its deadline the most urgent queued job that had slack is, in
        seconds (0 if none): how close its listener is to a gap. Without `long_jobs`, only
        the short jobs count: long ones wait for slots of their own, and a stream of a costly
        voice that falls behind says nothing of the room a light stream would find."""
        now = self._clock() if now is None else now
        with self._lock:
            deadlines = [
                j.deadline if j.slack else j.submitted + self.policy.start_grace
                for j in self._heap
                if j.state is JobState.QUEUED and (long_jobs or not j.long)
            ]
        return max(0.0, now - min(deadlines)) if deadlines else 0.0

    def slack(self, now: float | None = None, *, long_jobs: bool = True) -> float:
        """Seconds until the most urgent queued job is due (0 if one is due already; infinity
        if nothing is queued): how far ahead of their listeners the streams are. Without
        `long_jobs`, of the short jobs only (see overdue)."""
        now = self._clock() if now is None else now
        with self._lock:
            due = min(
                (
                    j.deadline
                    for j in self._heap
                    if j.state is JobState.QUEUED and (long_jobs or not j.long)
                ),
                default=math.inf,
            )
        return max(0.0, due - now)

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            pending = [j for j in self._heap if j.state is JobState.QUEUED]
            for job in pending:
                job.state = JobState.DROPPED
            self._heap.clear()
            self._lock.notify_all()
        for job in pending:
            job.loop.call_soon_threadsafe(_settle, job.future, None, JobDropped())
        for thread in self._threads:
            thread.join(timeout=30)

    # -- the workers --------------------------------------------------------------------------

    def _held_for(self, worker: int) -> tuple[int, float] | None:
        """(stream, until) that `worker` is kept for (policy.hold), dropping an expired hold (lock
        held)."""
        for stream, (held_by, until) in self._holds.items():
            if held_by == worker:
                if time.monotonic() < until:
                    return stream, until
                del self._holds[stream]
                return None
        return None

    def _next_for(self, worker: int) -> Job | None:
        """The job `worker` takes now (lock held): the next job of the stream it is kept for,
        nothing while that stream has yet to ask, else _next()."""
        held = self._held_for(worker)
        if held is None:
            return self._next()
        mine = [j for j in self._heap if j.state is JobState.QUEUED and j.stream == held[0]]
        if not mine:
            return None
        job = min(mine)
        self._heap.remove(job)
        heapq.heapify(self._heap)
        return job

    def _next(self) -> Job | None:
        """The queued job due first that may start now (lock held): a long one only while
        fewer than long_slots() long ones run, so that beside light streams one worker is
        always left to the short jobs (a Piper window must not wait behind a Kokoro decoder run)."""
        while self._heap and self._heap[0].state is not JobState.QUEUED:
            heapq.heappop(self._heap)
        if not self._heap or (self._wide_running and not self._wide_long):
            return None
        # A long job running wide still leaves the short jobs a worker: a Kokoro decoder run of
        # seconds must not hold back a Piper stream's next window (the threads then exceed
        # the cores for that while, which slows both a little and stops neither).
        long_cap = 0 if self._wide_running else self._long_slots()
        if self._long_running < long_cap or not self._heap[0].long:
            return heapq.heappop(self._heap)
        short = [j for j in self._heap if j.state is JobState.QUEUED and not j.long]
        if not short:
            return None
        job = min(short)
        self._heap.remove(job)
        heapq.heapify(self._heap)
        return job

    def _take(self, me: int) -> tuple[list[Job], bool] | None:
        """The next job for worker `me` (and any batchable companions), and whether it runs
        wide; None when shut down."""
        with self._lock:
            while (first := self._next_for(me)) is None:
                if self._closed:
                    return None
                if self._heap and self._wide_running:
                    self.stats.held_for_wide += 1
                held = self._held_for(me)
                self._lock.wait(None if held is None else held[1] - time.monotonic())
            jobs = [first]
            if first.batch is not None and self.batch_size > 1:
                jobs += self._companions(first.batch.key)
            for job in jobs:
                job.state = JobState.RUNNING
                held = self._holds.pop(job.stream, None)
                if held is not None:
                    self.stats.held_jobs += held[0] == me
                    self._lock.notify_all()  # the worker kept for it is free again
            self._long_running += first.long
            wide = (
                self._wide
                and not first.slack
                and (not first.long or self._others_quiet(first.stream))
                and not self._running
                and not self._holds  # a stream short of audio is about to ask
                and not any(j.state is JobState.QUEUED for j in self._heap)
            )
            if wide:
                self._wide_running = True
                self._wide_long = first.long
            self.stats.running += 1
            self.stats.wide_runs += wide
            return jobs, wide

    def _companions(self, key: Hashable) -> list[Job]:
        """Queued jobs with the same batch key, nearest deadline first (lock held)."""
        same = sorted(
            j for j in self._heap if j.state is JobState.QUEUED and j.batch and j.batch.key == key
        )
        taken = same[: self.batch_size - 1]
        if taken:
            ids = {id(j) for j in taken}
            self._heap = [j for j in self._heap if id(j) not in ids]
            heapq.heapify(self._heap)
        return taken

    def _work(self) -> None:
        me = threading.get_ident()
        while (taken := self._take(me)) is not None:
            jobs, wide = taken
            started = self._clock()
            with self._lock:
                # A wide run holds every worker.
                weight = self.workers if wide else 1
                self._running[me] = (started, weight)
            if self._on_wait is not None:
                for job in jobs:
                    self._on_wait(started - job.submitted)
            results: Sequence[Any]
            error: BaseException | None = None
            try:
                results = self._run(jobs, wide)
            except BaseException as exc:  # handed to the awaiting coroutine
                error, results = exc, [None] * len(jobs)
            with self._lock:
                ended = self._clock()
                self._recent.append((ended, ended - started, weight))
                del self._running[me]
                self.stats.jobs_run += len(jobs)
                self.stats.running -= 1
                for job in jobs:
                    job.state = JobState.DONE
                if jobs[0].long:
                    self._long_running -= 1
                    self._lock.notify_all()  # a long job held back may start now
                if wide:
                    self._wide_running = self._wide_long = False
                    self._lock.notify_all()
                self._keep_for_next(me, jobs[0])
            for job, result in zip(jobs, results, strict=True):
                with contextlib.suppress(RuntimeError):  # its event loop is already closed
                    job.loop.call_soon_threadsafe(_settle, job.future, result, error)

    def _keep_for_next(self, me: int, job: Job) -> None:
        """Keep worker `me` for the next job of `job`'s stream while its listener is short of
        audio (policy.hold; lock held): a short job due at once, of a stream still open."""
        if (
            self.policy.hold > 0
            and not job.slack
            and not job.long
            and job.stream in self._submitted
        ):
            self._holds[job.stream] = (me, time.monotonic() + self.policy.hold)

    def _run(self, jobs: list[Job], wide: bool) -> Sequence[Any]:
        if len(jobs) == 1:
            job = jobs[0]
            alone = job.fn or (job.batch.alone if job.batch else None)
            if alone is not None:
                return [alone(wide)]
        batch = jobs[0].batch
        assert batch is not None
        results = batch.run([j.batch.item for j in jobs if j.batch is not None], wide)
        if len(jobs) > 1:
            self.stats.batches += 1
            self.stats.batched_jobs += len(jobs)
        return results


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # cancelled by its caller meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class StreamRunner:
    """One stream's handle on the shared Scheduler (jobs.Runner): its jobs say whose they are,
    so that a long job runs wide only while no other stream is at work."""

    def __init__(self, scheduler: Scheduler, stream: int, long_jobs: bool = False) -> None:
        self._scheduler = scheduler
        self._stream = stream
        self._long_jobs = long_jobs

    async def run(
        self,
        fn: Work[T] | None,
        deadline: float | None = None,
        *,
        batch: Batch[T] | None = None,
        cost: float = 0.0,
    ) -> T:
        scheduler = self._scheduler
        due_now = deadline is None and self._long_jobs and scheduler.light_at_work()
        bar = scheduler.policy.long_job_due_now if due_now else scheduler.policy.long_job
        long = self._long_jobs and cost > bar
        return await self._scheduler.run(
            fn, deadline, batch=batch, cost=cost, stream=self._stream, long=long
        )

    def close(self) -> None:
        self._scheduler.forget(self._stream)
