"""The shared scheduler: earliest deadline first, dropping, batching, and what it means for
streams: a new stream's first audio does not wait behind a stream that has audio in hand."""

from __future__ import annotations

import asyncio
import functools
import math
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import grpc
import numpy as np
import onnxruntime as ort
import pytest
from voxlite.service.audio.settings import Encoding, resolve_audio_settings
from voxlite.service.call.events import AudioEvent
from voxlite.service.call.opening import behind, first_window_load
from voxlite.service.call.session import Session, SessionPolicy, StreamSettings
from voxlite.service.capacity.admission import Admission, AdmissionPolicy, Caller
from voxlite.service.capacity.scheduler import Scheduler, SchedulerPolicy, StreamRunner
from voxlite.service.engines.cache import CachedVoice, PhraseCache
from voxlite.service.engines.engine import VoiceRequest
from voxlite.service.engines.piper import PiperVoice
from voxlite.service.errors import AtCapacity, Overloaded
from voxlite.service.jobs import Batch, JobDropped, Runner, Work
from voxlite.tts.v1 import tts_pb2 as pb

from .helpers import ServerThread, base_config, eventually, one_shot, wait_until

T = TypeVar("T")
POLICY = AdmissionPolicy()
LONG_JOB = SchedulerPolicy().long_job
LONG_JOB_DUE_NOW = SchedulerPolicy().long_job_due_now
START_GRACE = SchedulerPolicy().start_grace
WIDE_QUIET = SchedulerPolicy().wide_quiet
LONG_FIRST_WINDOW_LOAD = SessionPolicy().long_first_window_load
MAX_LOAD, BUSY_SLACK = POLICY.max_load, POLICY.busy_slack
QUIET = VoiceRequest(noise_scale=0.0, noise_w=0.0)


def holding(gate: threading.Event, started: list[str]) -> Callable[[str], Work[None]]:
    """Jobs by name that note it in `started` as they start and hold their worker until
    `gate` opens."""

    def hold(name: str) -> Work[None]:
        def run(wide: bool) -> None:
            started.append(name)
            gate.wait(timeout=30)

        return run

    return hold


def blocker(gate: threading.Event, started: threading.Event) -> Work[str]:
    """A job that holds the only worker until `gate` opens, so that others queue up."""

    def hold(wide: bool) -> str:
        started.set()
        gate.wait(timeout=30)
        return "held"

    return hold


async def with_worker_held(scheduler: Scheduler) -> tuple[threading.Event, asyncio.Future[Any]]:
    gate, started = threading.Event(), threading.Event()
    held = asyncio.ensure_future(scheduler.run(blocker(gate, started)))
    await asyncio.to_thread(started.wait, 30)
    return gate, held


@pytest.mark.asyncio
async def test_earliest_deadline_runs_first() -> None:
    scheduler = Scheduler(1)
    ran: list[int] = []
    try:
        gate, held = await with_worker_held(scheduler)
        now = time.monotonic()
        order = [5, 1, 4, 2, 3]

        def note(k: int) -> Work[None]:
            return lambda wide: ran.append(k)

        jobs = [scheduler.submit(note(k), deadline=now + k) for k in order]
        assert scheduler.jobs_queued == 5  # all queued while the worker is held
        gate.set()
        await held
        for job in jobs:
            await scheduler.wait(job)
    finally:
        scheduler.shutdown()
    assert ran == [1, 2, 3, 4, 5]


@pytest.mark.asyncio
async def test_only_a_job_queued_with_slack_counts_as_overdue() -> None:
    """A job due at once (a first window) or queued already past its deadline (after the small
    first window) waits by design; one queued with slack that passes its deadline still queued
    shows the workers behind: only that one makes the server refuse calls. The scheduler's
    clock is the test's, so that how late a job is does not depend on the machine's speed."""
    clock = [1000.0]
    scheduler = Scheduler(1, clock=lambda: clock[0])
    try:
        gate, held = await with_worker_held(scheduler)
        jobs = [
            scheduler.submit(lambda _: None, None),
            scheduler.submit(lambda _: None, clock[0] - 0.2),
        ]
        clock[0] += START_GRACE / 2
        by_design = scheduler.overdue()
        jobs.append(scheduler.submit(lambda _: None, clock[0] + 0.02))
        clock[0] += 0.1
        behind = scheduler.overdue()
        # The first window waits past its grace: a backlog, not just the job running.
        clock[0] += START_GRACE
        backlog = scheduler.overdue()
        gate.set()
        await held
        await asyncio.gather(*(scheduler.wait(job) for job in jobs))
    finally:
        scheduler.shutdown()
    assert by_design == 0.0
    assert behind == pytest.approx(0.08)
    assert backlog == pytest.approx(START_GRACE + 0.08)


@pytest.mark.asyncio
async def test_a_dropped_or_cancelled_job_never_runs() -> None:
    scheduler = Scheduler(1)
    ran: list[str] = []
    try:
        gate, held = await with_worker_held(scheduler)
        dropped = scheduler.submit(lambda _: ran.append("dropped"), time.monotonic())
        waiter = asyncio.ensure_future(scheduler.run(lambda _: ran.append("cancelled")))
        kept = asyncio.ensure_future(scheduler.run(lambda _: ran.append("kept")))
        await eventually(lambda: scheduler.jobs_queued == 3)  # the tasks queue theirs
        scheduler.drop(dropped)
        waiter.cancel()
        await asyncio.sleep(0)  # the cancellation reaches the waiting coroutine
        gate.set()
        await held
        await kept
        with pytest.raises(JobDropped):
            await dropped.future
        assert waiter.cancelled()
    finally:
        scheduler.shutdown()
    assert ran == ["kept"]
    assert scheduler.stats.jobs_dropped == 2


@pytest.mark.asyncio
async def test_errors_reach_the_caller() -> None:
    scheduler = Scheduler(2)
    try:
        with pytest.raises(ZeroDivisionError):
            await scheduler.run(lambda _: 1 / 0)
        assert await scheduler.run(lambda _: 6 * 7) == 42
    finally:
        scheduler.shutdown()


class Width:
    """Records whether each job was told it runs wide."""

    def job(
        self, name: str, log: list[tuple[str, bool]], gate: threading.Event | None = None
    ) -> Work[str]:
        def run(wide: bool) -> str:
            log.append((name, wide))
            if gate is not None:
                gate.wait(timeout=30)
            return name

        return run


@pytest.mark.asyncio
async def test_a_long_job_runs_wide_only_while_no_other_stream_is_at_work() -> None:
    """A Kokoro run of a second or two holding every worker would stall the Piper streams
    beside it: it runs wide only when no other stream queued a job within WIDE_QUIET (the
    clock is the test's), while a short urgent job still may."""
    width = Width()
    now = [1000.0]
    # No worker kept for a stream's next job (SchedulerPolicy.hold): one kept keeps the
    # others narrow.
    scheduler = Scheduler(2, wide=True, clock=lambda: now[0], policy=SchedulerPolicy(hold=0))
    log: list[tuple[str, bool]] = []
    kokoro, piper = scheduler.runner(long_jobs=True), scheduler.runner()
    long = LONG_JOB + 1
    try:
        await kokoro.run(width.job("alone", log), cost=long)
        await piper.run(width.job("piper", log))
        await kokoro.run(width.job("beside piper", log), cost=long)
        await kokoro.run(width.job("short beside piper", log))
        now[0] += WIDE_QUIET + 0.1
        await kokoro.run(width.job("piper quiet", log), cost=long)
        await piper.run(width.job("piper again", log))
        piper.close()  # its stream ended: it is no reason to stay narrow
        await kokoro.run(width.job("piper gone", log), cost=long)
    finally:
        scheduler.shutdown()
    assert log == [
        ("alone", True),
        ("piper", True),
        ("beside piper", False),
        ("short beside piper", True),
        ("piper quiet", True),
        ("piper again", True),
        ("piper gone", True),
    ]


@pytest.mark.asyncio
async def test_an_urgent_job_alone_runs_wide_and_holds_every_worker() -> None:
    """A stream's first audio on an idle server gets every thread; while it runs, the other
    worker starts nothing (threads in use never exceed the cores). A job with slack, or one
    that finds other work, runs on one worker's thread."""
    width = Width()
    scheduler = Scheduler(2, wide=True)
    log: list[tuple[str, bool]] = []
    try:
        await scheduler.run(width.job("slack", log), deadline=time.monotonic() + 5)
        gate = threading.Event()
        first = asyncio.ensure_future(scheduler.run(width.job("first", log, gate)))
        await asyncio.to_thread(wait_until, lambda: len(log) == 2)
        held_before = scheduler.stats.held_for_wide
        second = scheduler.submit(width.job("second", log), None)
        # The idle worker was woken for "second" and went back to waiting.
        await asyncio.to_thread(wait_until, lambda: scheduler.stats.held_for_wide > held_before)
        started_while_wide = len(log)
        gate.set()
        await first
        await scheduler.wait(second)
        assert started_while_wide == 2, "the other worker ran a job beside a wide one"
        # Two jobs at once: both narrow, side by side.
        gate2 = threading.Event()
        held = scheduler.submit(width.job("held", log, gate2), time.monotonic() + 5)
        await asyncio.to_thread(wait_until, lambda: len(log) == 4)
        beside = scheduler.submit(width.job("beside", log), None)
        await scheduler.wait(beside)  # ran while "held" still holds the other worker
        gate2.set()
        await scheduler.wait(held)
        assert scheduler.stats.wide_runs == 2
    finally:
        scheduler.shutdown()
    assert log == [
        ("slack", False),
        ("first", True),
        ("second", True),  # alone again once the first ended
        ("held", False),
        ("beside", False),
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize("hold", [0.0, 60.0])
async def test_the_worker_of_a_stream_short_of_audio_is_kept_for_its_next_window(
    hold: float,
) -> None:
    """Issue 28: the window after a reply's first was late one call in fifty at 4 callers: the
    first window's audio lasts 93 ms, and the worker it freed was taken by another stream's
    first job (acoustic part and all) while the event loop handed the window over. The worker
    that ran a job due at once is kept for that stream's next job (SchedulerPolicy.hold),
    which then goes before the other stream's, though due later; with no hold the other goes
    first."""
    width = Width()
    scheduler = Scheduler(1, policy=SchedulerPolicy(hold=hold))
    a, b = scheduler.runner(), scheduler.runner()
    log: list[tuple[str, bool]] = []
    gate = threading.Event()
    try:
        first = asyncio.ensure_future(a.run(width.job("a first", log, gate)))
        await asyncio.to_thread(wait_until, lambda: len(log) == 1)
        other = asyncio.ensure_future(b.run(width.job("b first", log)))
        await eventually(lambda: scheduler.jobs_queued == 1)
        gate.set()
        await first
        # A little audio in hand now: due in a while, later than b's first.
        await a.run(width.job("a next", log), deadline=time.monotonic() + 5)
        await other
    finally:
        scheduler.shutdown()
    names = [name for name, _ in log]
    if hold:
        assert names == ["a first", "a next", "b first"]
        assert scheduler.stats.held_jobs == 1
    else:
        assert names == ["a first", "b first", "a next"]
        assert scheduler.stats.held_jobs == 0


@pytest.mark.asyncio
@pytest.mark.parametrize("ends", ["closes", "never asks"])
async def test_a_kept_worker_is_let_go_when_its_stream_closes_or_does_not_ask(ends: str) -> None:
    """A stream that ends after a job due at once frees its worker when it closes; one that
    asks nothing more (it waits for text) frees it when its hold runs out; a job with slack keeps
    no worker."""
    scheduler = Scheduler(1, policy=SchedulerPolicy(hold=60.0 if ends == "closes" else 0.05))
    a, b = scheduler.runner(), scheduler.runner()
    ran: list[str] = []
    gate = threading.Event()

    def job(name: str, wait: bool = False) -> Work[None]:
        def run(wide: bool) -> None:
            ran.append(name)
            if wait:
                gate.wait(timeout=30)

        return run

    try:
        first = asyncio.ensure_future(a.run(job("a", wait=True)))
        await asyncio.to_thread(wait_until, lambda: ran == ["a"])
        other = asyncio.ensure_future(b.run(job("b")))
        await eventually(lambda: scheduler.jobs_queued == 1)
        gate.set()
        await first
        if ends == "closes":
            a.close()
        await asyncio.wait_for(other, timeout=30)
        assert scheduler.stats.held_jobs == 0
        await b.run(job("b with slack"), deadline=time.monotonic() + 5)
        await a.run(job("a again"))  # no worker was kept for b
    finally:
        scheduler.shutdown()
    assert ran == ["a", "b", "b with slack", "a again"]


@pytest.mark.asyncio
async def test_batchable_jobs_of_one_shape_run_as_one_batch() -> None:
    calls: list[list[int]] = []

    def double(items: list[int], wide: bool) -> list[int]:
        calls.append(items)
        return [2 * i for i in items]

    scheduler = Scheduler(1, batch_size=4)
    try:
        gate, held = await with_worker_held(scheduler)
        now = time.monotonic()
        jobs = [scheduler.submit(None, now + i, batch=Batch("w64", i, double)) for i in range(3)]
        other = scheduler.submit(None, now, batch=Batch("w8", 10, double))
        assert scheduler.jobs_queued == 4
        gate.set()
        await held
        results = [await scheduler.wait(j) for j in [*jobs, other]]
    finally:
        scheduler.shutdown()
    assert results == [0, 2, 4, 20]
    assert sorted(calls, key=len) == [[10], [0, 1, 2]]


@pytest.mark.asyncio
async def test_a_new_stream_goes_before_streams_with_audio_in_hand(voice: PiperVoice) -> None:
    """Three streams have seconds of audio in hand and a window queued each; a new stream's
    first job must start next, not after theirs (first come, first served would run up to
    three of their windows first). One worker: the order in which jobs start shows it."""
    audio = resolve_audio_settings(Encoding.PCM_S16LE)
    settings = StreamSettings(voice, voice.params(QUIET), audio)
    log: list[str] = []

    scheduler = Scheduler(1)

    class Logged:
        """The scheduler, logging when this stream's jobs queue and start (Runner)."""

        def __init__(self, name: str) -> None:
            self.name = name

        async def run(
            self,
            fn: Work[T] | None,
            deadline: float | None = None,
            *,
            batch: Any = None,
            cost: float = 0.0,
        ) -> T:
            assert fn is not None

            def job(wide: bool) -> T:
                log.append(self.name)
                return fn(wide)

            log.append(f"{self.name} queued")
            return await scheduler.run(job, deadline)

        def close(self) -> None:
            pass

    def logged(name: str) -> Runner:
        return Logged(name)

    async def consume(session: Session, ahead: asyncio.Event) -> None:
        heard = 0.0
        async for event in session.events():
            if isinstance(event, AudioEvent):
                heard += event.duration_ms
                if heard > 3000:
                    ahead.set()

    try:
        long_text = " ".join(["This reply goes on and on, sentence after sentence."] * 8)
        tasks, ahead = [], []
        for name in "ACD":
            session, event = Session(settings, logged(name)), asyncio.Event()
            tasks.append(asyncio.ensure_future(consume(session, event)))
            ahead.append(event)
            session.push_text(long_text)
            session.end()
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ahead)), 60)
        b = Session(settings, logged("B"))
        tasks.append(asyncio.ensure_future(consume(b, asyncio.Event())))
        b.push_text("Hello!")
        b.end()
        await asyncio.wait_for(asyncio.gather(*tasks), 180)
    finally:
        scheduler.shutdown()
    queued = log.index("B queued")
    first = log.index("B", queued)
    started_between = [e for e in log[queued + 1 : first] if not e.endswith("queued")]
    waiting_then = {e for e in log[:queued] if e.endswith("queued")} - {"B queued"}
    assert started_between == [], log[queued : first + 1]
    assert waiting_then, "the other streams had no work left: nothing was tested"


@pytest.mark.asyncio
@pytest.mark.parametrize("cached", [False, True], ids=["plain", "phrase cache"])
async def test_the_end_of_a_segment_takes_no_worker(voice: PiperVoice, cached: bool) -> None:
    """Every job a reply queues makes audio: the call that finds a segment done runs on the
    event loop. Queued for a worker, it would wait behind the other streams' jobs (a Kokoro
    piece holds a worker for up to a second) before the next segment's first job could queue,
    and the listener would hear a gap after the first clause (bench.capacity --levels 0+4)."""
    spoken = CachedVoice(voice, PhraseCache(8 << 20)) if cached else voice
    audio = resolve_audio_settings(Encoding.PCM_S16LE)
    settings = StreamSettings(spoken, spoken.params(QUIET), audio)
    results: list[bool] = []
    scheduler = Scheduler(1)

    class Counted(StreamRunner):
        """The stream's runner, noting whether each of its jobs made audio."""

        async def run(self, *args: Any, **kwargs: Any) -> Any:
            result = await super().run(*args, **kwargs)
            results.append(result is not None)
            return result

    try:
        session = Session(settings, Counted(scheduler, stream=1))
        session.push_text("Good morning. The order shipped today. It arrives on Friday.")
        session.end()
        heard = [e async for e in session.events() if isinstance(e, AudioEvent)]
    finally:
        scheduler.shutdown()
    assert heard
    assert len(results) >= 3, results  # a window of each of the three sentences at least
    assert all(results), results


def test_a_server_at_capacity_refuses_new_calls_and_recovers(
    cache_dir: Path, tmp_path: Path
) -> None:
    """Past its capacity the server refuses new calls at once (RESOURCE_EXHAUSTED) instead of
    letting every caller stutter; once the load passes, it admits calls again."""
    srv = ServerThread(
        base_config(cache_dir, tmp_path, workers=1, phrase_cache_mb=0, queue_wait_seconds=0)
    )
    try:
        scheduler = srv.server.scheduler
        assert isinstance(scheduler, Scheduler)
        release = threading.Event()

        async def occupy() -> None:
            # Model work that keeps the only worker busy for the whole load window.
            await scheduler.run(lambda _: release.wait(timeout=30))

        busy = asyncio.run_coroutine_threadsafe(occupy(), srv.loop)
        with srv.channel() as channel:
            stub = srv.stub(channel)
            wait_until(lambda: scheduler.load() > MAX_LOAD)
            # Busy, with every waiting stream far ahead of its listener: still admitted.
            far = asyncio.run_coroutine_threadsafe(
                scheduler.run(lambda _: None, time.monotonic() + 60), srv.loop
            )
            wait_until(lambda: 30 < scheduler.slack() < math.inf)
            admitted = stub.Synthesize(pb.SynthesizeRequest(text="Hello."), timeout=30)
            wait_until(lambda: srv.server.admission.active == 1)
            # Busy, with a stream soon due: refused.
            soon = asyncio.run_coroutine_threadsafe(
                scheduler.run(lambda _: None, time.monotonic() + BUSY_SLACK / 2), srv.loop
            )
            wait_until(lambda: scheduler.slack() < BUSY_SLACK)
            with pytest.raises(grpc.RpcError) as refused:
                list(stub.Synthesize(pb.SynthesizeRequest(text="Hello."), timeout=10))
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "at capacity" in refused.value.details()
            assert "retry" in refused.value.details()
            release.set()
            busy.result(timeout=30)
            far.result(timeout=30)
            soon.result(timeout=30)
            assert list(admitted)[-1].WhichOneof("response") == "summary"
            wait_until(lambda: scheduler.load() <= MAX_LOAD, timeout=10)
            responses = list(stub.Synthesize(pb.SynthesizeRequest(text="Hello."), timeout=30))
            assert responses[-1].WhichOneof("response") == "summary"
    finally:
        srv.close()


@pytest.mark.parametrize("wait", [30.0, 0.0])
def test_a_call_at_capacity_waits_its_turn_or_is_refused_at_once(
    cache_dir: Path, tmp_path: Path, wait: float
) -> None:
    """With an admission wait, a call that finds the machine at capacity waits for room and
    then plays; without one, it is refused at once."""
    config = base_config(
        cache_dir,
        tmp_path,
        workers=1,
        phrase_cache_mb=0,
        admission_wait_seconds=wait,
        queue_wait_seconds=0,  # Synthesize keeps the short wait here: the queue has its tests
    )
    srv = ServerThread(config)
    try:
        scheduler = srv.server.scheduler
        assert isinstance(scheduler, Scheduler)
        release = threading.Event()
        busy = asyncio.run_coroutine_threadsafe(
            scheduler.run(lambda _: release.wait(timeout=60)), srv.loop
        )
        with srv.channel() as channel:
            stub = srv.stub(channel)
            wait_until(lambda: scheduler.load() > MAX_LOAD)
            soon = asyncio.run_coroutine_threadsafe(
                scheduler.run(lambda _: None, time.monotonic() + BUSY_SLACK / 2), srv.loop
            )
            wait_until(lambda: scheduler.slack() < BUSY_SLACK)
            outcome: list[object] = []

            def call() -> None:
                try:
                    outcome.append(list(stub.Synthesize(pb.SynthesizeRequest(text="Hi."))))
                except grpc.RpcError as exc:
                    outcome.append(exc)

            caller = threading.Thread(target=call)
            caller.start()
            if wait:
                wait_until(lambda: srv.server.admission.waiting)
                assert outcome == []
                assert srv.server.admission.active == 0
                release.set()
                caller.join(timeout=60)
                responses = outcome[0]
                assert isinstance(responses, list), responses
                assert responses[-1].WhichOneof("response") == "summary"
            else:
                caller.join(timeout=60)  # the worker is still occupied
                refused = outcome[0]
                assert isinstance(refused, grpc.RpcError), refused
                assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert not srv.server.admission.waiting
                release.set()
            busy.result(timeout=30)
            soon.result(timeout=30)
    finally:
        release.set()
        srv.close()


@pytest.mark.asyncio
async def test_calls_waiting_for_admission_get_in_in_arrival_order() -> None:
    """Waiting calls are let in first come, first served, once the workers are under 80% busy
    and no stream is short of audio; one still waiting when its time is up is refused with a
    message that says what to do. The load and slack are the test's own figures."""
    load, slack = [1.0], [0.0]
    looks = [0]

    def seen_slack(heavy: bool) -> float:
        looks[0] += 1
        return slack[0]

    admission = Admission(10, load=lambda: load[0], slack=seen_slack, wait=60.0)
    admission.open()

    async def looked_again(times: int = 3) -> None:
        """Until the call first in line has looked at the machine `times` more times."""
        start = looks[0]
        await eventually(lambda: looks[0] >= start + times)

    order: list[str] = []

    async def arrive(name: str) -> None:
        await admission.admit()
        order.append(name)

    first = asyncio.ensure_future(arrive("first"))
    await eventually(lambda: admission.waiting)
    second = asyncio.ensure_future(arrive("second"))
    await eventually(lambda: admission.waiting_calls == 2)
    await looked_again()
    assert admission.active == 0
    load[0] = 0.5  # idle enough, but a stream's audio is due now: still waiting
    await looked_again()
    assert admission.active == 0
    slack[0] = math.inf
    await asyncio.gather(first, second)
    load[0] = 1.0
    slack[0] = 0.0
    admission.wait = 0.05
    with pytest.raises(AtCapacity) as refused:
        await admission.admit()
    assert order == ["first", "second"]
    assert admission.active == 2
    assert admission.waiting_calls == 0
    assert "at capacity" in str(refused.value)
    assert "retry" in str(refused.value)


@pytest.mark.asyncio
async def test_one_callers_calls_back_to_back_are_never_refused() -> None:
    """Calls one after another keep the only worker busy, but with nothing waiting there is
    nobody to protect: a batch client is served, not told the server is at capacity. The
    load is the test's figure, fully busy: real calls bring it near the bar only sometimes."""
    admission = Admission(10, load=lambda: 1.0, slack=lambda heavy: math.inf, wait=0.0)
    admission.open()

    for _ in range(12):
        admission.leave(await admission.admit())  # raises AtCapacity if refused


def test_streams_with_long_jobs_share_a_budget_and_the_first_is_always_taken() -> None:
    """Streams whose voices have long jobs (Kokoro) are taken while their costs fit in 0.9 of
    the workers their jobs may hold; light streams (cost 0) are not counted. However dear a
    voice measured at load, one stream of it is taken on an otherwise quiet server."""
    admission = Admission(10, long_slots=lambda: 2)  # long jobs may hold 2 workers: a budget of 1.8
    admission.open()
    costly = [admission.enter(cost=0.5) for _ in range(3)]
    with pytest.raises(AtCapacity, match=r"voices of this cost .*50% of a core, and 3 already"):
        admission.enter(cost=0.5)
    admission.enter()  # a Piper stream is weighed by the load, not this budget
    admission.leave(costly.pop())
    costly.append(admission.enter(cost=0.5))
    for slot in costly:
        admission.leave(slot)
    dear = admission.enter(cost=5.0)
    with pytest.raises(AtCapacity, match="1 already speak"):
        admission.enter(cost=0.1)
    admission.leave(dear)
    admission.enter(cost=0.1)
    assert admission.active == 2


def test_a_busy_server_with_nothing_queued_admits_a_call(cache_dir: Path, tmp_path: Path) -> None:
    """The same through a real server: its only worker busy for the whole load window (held by
    a job that waits for the test), nothing queued: the call is let in, not refused."""
    srv = ServerThread(
        base_config(
            cache_dir,
            tmp_path,
            workers=1,
            phrase_cache_mb=0,
            admission_wait_seconds=0,
            queue_wait_seconds=0,
        )
    )
    try:
        scheduler = srv.server.scheduler
        assert isinstance(scheduler, Scheduler)
        release = threading.Event()
        busy = asyncio.run_coroutine_threadsafe(
            scheduler.run(lambda _: release.wait(timeout=60)), srv.loop
        )
        with srv.channel() as channel:
            stub = srv.stub(channel)
            wait_until(lambda: scheduler.load() > MAX_LOAD)
            assert scheduler.jobs_queued == 0
            call = stub.Synthesize(pb.SynthesizeRequest(text="Just one more."), timeout=60)
            wait_until(lambda: srv.server.admission.active == 1)  # admitted while busy
            release.set()
            assert list(call)[-1].WhichOneof("response") == "summary"
            busy.result(timeout=30)
    finally:
        release.set()
        srv.close()


@pytest.mark.parametrize("batch", [1, 4], ids=["alone", "batched"])
@pytest.mark.asyncio
async def test_a_streams_windows_equal_one_shot_and_run_alone_through_the_stages(
    voice: PiperVoice, whole_graph: ort.InferenceSession, batch: int
) -> None:
    """Three streams on the server's scheduler, PCM at the voice's own rate: each one's audio
    equals one-shot synthesis whether its windows run alone or batched with the others'. Run
    alone (the default), a window goes through the stages, so the vocoder's tail recomputes
    only its own context (tail_margin a side), not the whole vocoder's around every window."""
    text = "The quick brown fox jumps over the lazy dog and then runs away into the dark woods."
    audio = resolve_audio_settings(Encoding.PCM_S16LE, voice.info.native_rate)
    settings = StreamSettings(voice, voice.params(QUIET), audio)

    scheduler = Scheduler(1, batch_size=batch)

    async def stream() -> np.ndarray:
        session = Session(settings, scheduler)
        session.push_text(text)
        session.end()
        pcm = [e.data async for e in session.events() if isinstance(e, AudioEvent)]
        return np.frombuffer(b"".join(pcm), dtype="<i2").astype(np.float32) / 32767

    before = voice.stage_work()[-1]  # the vocoder's tail
    try:
        streams = await asyncio.wait_for(asyncio.gather(*(stream() for _ in range(3))), 120)
    finally:
        scheduler.shutdown()
    after = voice.stage_work()[-1]
    runs, samples = after.runs - before.runs, after.samples - before.samples

    reference = np.clip(voice.gain * one_shot(whole_graph, voice, text), -1.0, 1.0)
    for pcm in streams:
        assert pcm.shape == reference.shape
        # Half a step of 16-bit rounding, and the streamed model's own tolerance.
        assert np.abs(pcm - reference).max() < 0.5 / 32767 + 1e-4 * voice.gain
    assert runs > 3, "the streams must run window by window"
    stride, tail_margin = voice.model.stages.stride, voice.calibration.margins.tail
    delivered = 3 * reference.size // voice.hop * stride
    if batch == 1:
        assert samples - delivered <= runs * 2 * tail_margin
    else:
        assert scheduler.stats.batches > 0, "no windows were batched: nothing was tested"


@pytest.mark.parametrize("load", [0.0, 0.9], ids=["idle", "busy"])
@pytest.mark.asyncio
async def test_a_reply_that_starts_on_busy_workers_gets_a_longer_first_window(
    voice: PiperVoice, load: float
) -> None:
    """Busy, a new reply's first audio waits behind other streams' jobs anyway, and so does its
    second window: the first window is twice the voice's, so that the listener has twice the
    audio in hand while the second comes. Idle, it stays small (first audio sooner)."""
    audio = resolve_audio_settings(Encoding.PCM_S16LE, voice.info.native_rate)
    settings = StreamSettings(voice, voice.params(QUIET), audio)

    scheduler = Scheduler(1)
    try:
        session = Session(settings, scheduler, load=lambda: load)
        session.push_text("A reply long enough for several windows of audio, at the least.")
        session.end()
        frames = 0  # no audio: fails below
        async for event in session.events():
            if isinstance(event, AudioEvent):
                frames = len(event.data) // 2 // voice.hop
                break
    finally:
        scheduler.shutdown()
    assert frames == voice.schedule.first * (2 if load > LONG_FIRST_WINDOW_LOAD else 1)


@pytest.mark.parametrize("crowd", [False, True], ids=["free", "crowd"])
@pytest.mark.asyncio
async def test_a_reply_that_starts_behind_another_streams_due_job_gets_a_longer_first_window(
    voice: PiperVoice, crowd: bool
) -> None:
    """Calls that arrive together find the workers idle over the last seconds (load 0), yet
    each new reply's first audio waits behind the others' first windows: while a short job is
    due and still waits for a worker, the first window is twice the voice's. Here the one worker
    is held by a job that waits on an event, and another stream's first window is queued."""
    audio = resolve_audio_settings(Encoding.PCM_S16LE, voice.info.native_rate)
    settings = StreamSettings(voice, voice.params(QUIET), audio)

    scheduler = Scheduler(1)
    release = threading.Event()
    try:
        jobs = []
        if crowd:
            jobs.append(scheduler.submit(lambda wide: release.wait(60), None, stream=1))
            jobs.append(scheduler.submit(lambda wide: None, None, stream=2))
            await eventually(lambda: scheduler.jobs_running == 1, "the held job to start")
        assert behind(scheduler) == crowd
        session = Session(
            settings, scheduler, load=lambda: 0.0, behind=functools.partial(behind, scheduler)
        )
        session.push_text("A reply long enough for several windows of audio, at the least.")
        session.end()
        events = session.events()
        await anext(events)  # the format; the session starts its work once it is taken
        audio_event = asyncio.ensure_future(_first_audio(events))
        if crowd:
            # The session's first window queues behind the held worker before it is freed.
            await eventually(lambda: scheduler.jobs_queued == 2, "the session's first window")
            release.set()
        frames = len((await asyncio.wait_for(audio_event, 60)).data) // 2 // voice.hop
        for job in jobs:
            await scheduler.wait(job)
        await events.aclose()
    finally:
        release.set()
        scheduler.shutdown()
    assert frames == voice.schedule.first * (2 if crowd else 1)


async def _first_audio(events: Any) -> AudioEvent:
    async for event in events:
        if isinstance(event, AudioEvent):
            return event
    raise AssertionError("the session sent no audio")


def test_a_full_limit_takes_the_slot_of_the_stream_quiet_longest() -> None:
    """A new call that finds --max-streams (or its peer's, or its token's cap, or the budget
    of costly voices) full takes the slot of the stream that has had nothing to speak for
    longest, if for at least park_after; a stream speaking (quiet 0) never loses its slot.
    The quiet times are the test's own figures."""
    admission = Admission(3, per_peer=2, long_slots=lambda: 2)
    admission.open()
    a, b = Caller("10.0.0.1"), Caller("10.0.0.2")
    first, second, third = (
        admission.enter(caller=a),
        admission.enter(caller=a),
        admission.enter(caller=b),
    )
    quiet = {id(first): 5.0, id(second): 1.0, id(third): 9.0}
    for slot in (first, second, third):
        slot.quiet = functools.partial(quiet.__getitem__, id(slot))
    # Over --max-streams: the quietest (third, 9 s) goes.
    fourth = admission.enter(caller=Caller("10.0.0.3"))
    assert not third.held
    assert first.held
    assert second.held
    assert admission.parked == 1
    assert admission.active == 3
    # Peer a's cap: only a's own quiet stream may go; second (1 s) is too fresh.
    quiet[id(first)] = 0.0
    with pytest.raises(Overloaded, match="this client address already has 2 streams speaking"):
        admission.enter(caller=a)
    quiet[id(second)] = 3.0
    admission.enter(caller=a)
    assert not second.held
    fourth.quiet = lambda: 0.0
    # The parked stream comes back only when a slot is free (here, one that is quiet).
    with pytest.raises(Overloaded, match="limit of 3 concurrent streams speaking"):
        admission.enter(slot=third)
    admission.leave(fourth)
    assert admission.enter(slot=third) is third
    assert third.held
    assert admission.parked == 1
    admission.leave(second)  # a parked stream's call ends
    assert admission.parked == 0


def test_quiet_costly_streams_give_their_budget_to_a_new_one() -> None:
    """The budget of streams with long jobs counts those speaking: a quiet Kokoro stream's
    share goes to a new one, one speaking keeps it."""
    admission = Admission(10, long_slots=lambda: 2)  # a budget of 1.8
    admission.open()
    costly = [admission.enter(cost=0.9) for _ in range(2)]
    costly[0].quiet = lambda: 0.0
    costly[1].quiet = lambda: 0.0
    with pytest.raises(AtCapacity, match="voices of this cost"):
        admission.enter(cost=0.9)
    costly[1].quiet = lambda: 60.0
    admission.enter(cost=0.9)
    assert not costly[1].held
    assert costly[0].held


def test_open_streams_are_bounded_with_the_quiet_ones() -> None:
    """Parked streams cost memory: at open_streams times --max-streams open, the next call is
    refused with the count and what to do."""
    admission = Admission(2, policy=AdmissionPolicy(open_streams=2, park_after=0.0))
    admission.open()
    for _ in range(4):
        slot = admission.enter()
        slot.quiet = lambda: 1.0
    assert admission.parked == 2
    with pytest.raises(Overloaded, match="has 4 streams open, the most it keeps"):
        admission.enter()


@pytest.mark.asyncio
async def test_long_jobs_take_every_worker_while_no_light_stream_is_at_work() -> None:
    """Issue 27: a Mandarin-only load ran one Kokoro decode at a time on 2 workers, the other
    idle. With no light stream at work within WIDE_QUIET (the clock is the test's), long jobs
    take every worker; beside one, one worker stays for its short jobs."""
    now = [1000.0]
    scheduler = Scheduler(2, clock=lambda: now[0])
    first, second = scheduler.runner(long_jobs=True), scheduler.runner(long_jobs=True)
    piper = scheduler.runner()
    long = LONG_JOB + 1
    gate = threading.Event()
    started: list[str] = []
    hold = holding(gate, started)

    try:
        assert scheduler.long_slots() == 2
        both = [
            asyncio.ensure_future(first.run(hold("first"), cost=long)),
            asyncio.ensure_future(second.run(hold("second"), cost=long)),
        ]
        await asyncio.to_thread(wait_until, lambda: len(started) == 2)  # both run at once
        gate.set()
        await asyncio.gather(*both)
        await piper.run(lambda wide: None)
        assert scheduler.long_slots() == 1
        gate.clear()
        one = asyncio.ensure_future(first.run(hold("beside piper"), cost=long))
        await asyncio.to_thread(wait_until, lambda: len(started) == 3)
        held_back = asyncio.ensure_future(second.run(hold("held back"), cost=long))
        await piper.run(lambda wide: None)  # the short job has its worker
        assert not held_back.done()
        assert started[-1] == "beside piper"
        now[0] += WIDE_QUIET + 0.1  # the light stream fell quiet: its worker is free again
        assert scheduler.long_slots() == 2
        piper.close()  # wakes the workers (a stream's end or any job's end does)
        await asyncio.to_thread(wait_until, lambda: len(started) == 4)
        gate.set()
        await asyncio.gather(one, held_back)
    finally:
        gate.set()
        scheduler.shutdown()
    assert started == ["first", "second", "beside piper", "held back"]


@pytest.mark.asyncio
async def test_a_kokoro_reply_s_first_piece_starts_beside_another_reply_s_long_job() -> None:
    """Issue 27: beside English callers one worker is left to short jobs, and a Mandarin
    reply's first piece, estimated just over LONG_JOB on a slower CPU, waited for the other
    Mandarin call's piece to end (Mandarin first audio p95 over a second in the 12+2 crowd).
    A job due at once (its listener has nothing in hand) counts as long only over
    LONG_JOB_DUE_NOW beside a light stream; a dearer one (another reply's whole first
    sentence) still waits, and a Piper window goes before it."""
    now = [1000.0]
    scheduler = Scheduler(2, clock=lambda: now[0])
    playing, starting = scheduler.runner(long_jobs=True), scheduler.runner(long_jobs=True)
    third, piper = scheduler.runner(long_jobs=True), scheduler.runner()
    first_piece = (LONG_JOB + LONG_JOB_DUE_NOW) / 2
    long_gate, first_gate = threading.Event(), threading.Event()
    started: list[str] = []

    try:
        await piper.run(lambda wide: None)
        assert scheduler.long_slots() == 1
        later = asyncio.ensure_future(
            playing.run(holding(long_gate, started)("later piece"), now[0] + 5.0, cost=LONG_JOB + 1)
        )
        await asyncio.to_thread(wait_until, lambda: len(started) == 1)
        first = asyncio.ensure_future(
            starting.run(holding(first_gate, started)("first piece"), cost=first_piece)
        )
        await asyncio.to_thread(wait_until, lambda: len(started) == 2)
        assert not later.done()  # it started beside the long job, not after it
        first_gate.set()
        await first
        first_gate.clear()
        whole = asyncio.ensure_future(
            third.run(holding(first_gate, started)("whole"), cost=LONG_JOB_DUE_NOW + 0.1)
        )
        await piper.run(lambda wide: started.append("piper"))  # queued after it, runs first
        assert not whole.done()
        long_gate.set()
        first_gate.set()
        await asyncio.gather(later, whole)
        # With Kokoro streams alone (the light stream fell quiet) LONG_JOB holds: such a
        # first piece waiting is no short job that a new reply's first piece waits behind.
        now[0] += WIDE_QUIET + 0.1
        long_gate.clear()
        both = [
            asyncio.ensure_future(runner.run(holding(long_gate, started)(name), cost=LONG_JOB + 1))
            for runner, name in ((playing, "alone"), (third, "alone too"))
        ]
        await asyncio.to_thread(wait_until, lambda: len(started) == 6)
        alone = asyncio.ensure_future(starting.run(lambda wide: None, cost=first_piece))
        await asyncio.to_thread(wait_until, lambda: scheduler.jobs_queued == 1)
        assert scheduler.slack(long_jobs=False) == math.inf
        long_gate.set()
        await asyncio.gather(*both, alone)
    finally:
        long_gate.set()
        first_gate.set()
        scheduler.shutdown()
    assert started[:4] == ["later piece", "first piece", "piper", "whole"]


@pytest.mark.asyncio
async def test_a_kokoro_reply_reads_the_load_only_while_no_light_stream_is_at_work() -> None:
    """Issue 27: beside 12 English callers, the English windows kept the load over the bar, so
    every Mandarin reply's first piece was a whole sentence and its first audio came late.
    A voice with long jobs reads no load while a light stream is at work; alone it reads the
    scheduler's load, as a Piper voice always does (the clock is the test's)."""
    now = [1000.0]
    scheduler = Scheduler(2, clock=lambda: now[0])
    kokoro, other = scheduler.runner(long_jobs=True), scheduler.runner(long_jobs=True)
    piper = scheduler.runner()
    for_kokoro = first_window_load(scheduler, long_jobs=True)
    for_piper = first_window_load(scheduler, long_jobs=False)
    gate = threading.Event()
    started: list[str] = []
    hold = holding(gate, started)

    try:
        beside = [
            asyncio.ensure_future(piper.run(hold("piper"))),
            asyncio.ensure_future(kokoro.run(hold("kokoro"), cost=LONG_JOB + 1)),
        ]
        await asyncio.to_thread(wait_until, lambda: len(started) == 2)
        now[0] += 2.0  # both workers busy for the last 2 of 3 s
        assert scheduler.light_at_work()
        assert for_piper() == scheduler.load() > 0.5
        assert for_kokoro() == 0.0
        gate.set()
        await asyncio.gather(*beside)
        gate.clear()
        now[0] += WIDE_QUIET + 0.1  # the light stream fell quiet: Kokoro alone
        assert not scheduler.light_at_work()
        alone = [
            asyncio.ensure_future(kokoro.run(hold("kokoro"), cost=LONG_JOB + 1)),
            asyncio.ensure_future(other.run(hold("other"), cost=LONG_JOB + 1)),
        ]
        await asyncio.to_thread(wait_until, lambda: len(started) == 4)
        now[0] += 2.0
        assert for_kokoro() == for_piper() == scheduler.load() > 0.5
        gate.set()
        await asyncio.gather(*alone)
    finally:
        gate.set()
        scheduler.shutdown()


@pytest.mark.asyncio
async def test_a_long_job_running_wide_leaves_short_jobs_a_worker() -> None:
    """Bug: a Kokoro run started wide on a quiet server held both workers for seconds, and an
    English call arriving then waited for its whole run. A short job starts beside a wide long
    one; another long job still waits for it."""
    width = Width()
    scheduler = Scheduler(2, wide=True)
    log: list[tuple[str, bool]] = []
    kokoro, piper = scheduler.runner(long_jobs=True), scheduler.runner()
    other = scheduler.runner(long_jobs=True)
    long = LONG_JOB + 1
    try:
        gate = threading.Event()
        running = asyncio.ensure_future(kokoro.run(width.job("kokoro", log, gate), cost=long))
        await asyncio.to_thread(wait_until, lambda: len(log) == 1)
        queued_long = asyncio.ensure_future(other.run(width.job("long", log), cost=long))
        await piper.run(width.job("piper", log))  # runs while the wide job still holds
        assert not queued_long.done()
        gate.set()
        await asyncio.gather(running, queued_long)
    finally:
        scheduler.shutdown()
    assert log[:2] == [("kokoro", True), ("piper", False)]
    assert log[2][0] == "long"


def test_a_costly_stream_that_falls_behind_does_not_refuse_light_calls() -> None:
    """Bug: one Kokoro stream with a text dearer than real time made every English newcomer
    RESOURCE_EXHAUSTED ("its model work runs 35281 ms late"): its own long jobs were late. A
    light call is weighed by the short jobs; a call of a costly voice by all of them. The
    lateness is the test's own figure."""
    late = {False: 0.0, True: 35.0}
    admission = Admission(10, overdue=late.__getitem__, long_slots=lambda: 1)
    admission.open()
    admission.enter()  # an English newcomer: the short jobs are on time
    with pytest.raises(AtCapacity, match="runs 35000 ms late"):
        admission.enter(cost=0.5)
    late[False] = 0.5
    with pytest.raises(AtCapacity, match="runs 500 ms late"):
        admission.enter()


@pytest.mark.asyncio
async def test_the_short_jobs_lateness_leaves_the_long_ones_out() -> None:
    """overdue() and slack() of the short jobs alone (long_jobs=False) ignore a long job
    behind its deadline: what a light call is weighed by. The clock is the test's."""
    clock = [1000.0]
    scheduler = Scheduler(1, clock=lambda: clock[0])
    try:
        gate, held = await with_worker_held(scheduler)
        long = scheduler.submit(lambda _: None, clock[0] + 0.01, cost=LONG_JOB + 1)
        short = scheduler.submit(lambda _: None, clock[0] + 0.5)
        clock[0] += 0.21
        everything, light = scheduler.overdue(), scheduler.overdue(long_jobs=False)
        light_slack = scheduler.slack(long_jobs=False)
        gate.set()
        await held
        await asyncio.gather(scheduler.wait(long), scheduler.wait(short))
    finally:
        scheduler.shutdown()
    assert everything == pytest.approx(0.2)
    assert light == 0.0
    assert light_slack == pytest.approx(0.29)
