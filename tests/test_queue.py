"""A Synthesize call that can wait, waits: a bounded first-come-first-served queue at capacity,
and a text all in the phrase cache needs no room (issue 27, item 4)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import grpc
import pytest
from voxlite.service.capacity.admission import Admission, AdmissionPolicy, Slot
from voxlite.service.capacity.scheduler import Scheduler
from voxlite.service.errors import AtCapacity, Overloaded
from voxlite.service.settings.config import config_from_args
from voxlite.tts.v1 import tts_pb2 as pb

from .helpers import ServerThread, base_config, config_error, eventually, kinds, wait_until

KOKORO_COST = 0.5
"""A stream of a voice with long jobs: on two workers the budget (0.9) takes one at a time."""
POLICY = AdmissionPolicy()


def test_the_queue_settings(capsys: pytest.CaptureFixture[str]) -> None:
    default = config_from_args([], {})
    assert (default.queue_wait_seconds, default.max_queued_calls) == (3.0, 32)
    env = {"VOXLITE_QUEUE_WAIT_SECONDS": "8", "VOXLITE_MAX_QUEUED_CALLS": "5"}
    chosen = config_from_args([], env)
    assert (chosen.queue_wait_seconds, chosen.max_queued_calls) == (8.0, 5)
    assert config_from_args(["--queue-wait-seconds", "0"], {}).queue_wait_seconds == 0
    assert "from 0 to 60" in config_error(capsys, "--queue-wait-seconds", "61")
    assert "between 1 and 10000" in config_error(capsys, "--max-queued-calls", "-1")


# -- the queue itself ----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_calls_at_capacity_are_admitted_first_come_first_served() -> None:
    admission = Admission(10, long_slots=lambda: 1, queue_wait=60.0, max_queued=8)
    admission.open()
    held = admission.enter(cost=KOKORO_COST)
    admitted: list[tuple[str, Slot]] = []

    async def call(name: str) -> None:
        admitted.append((name, await admission.queue(cost=KOKORO_COST)))

    tasks = []
    for n, name in enumerate(("first", "second", "third"), start=1):
        tasks.append(asyncio.ensure_future(call(name)))
        await eventually(lambda n=n: admission.queued == n, "the call in line")  # type: ignore[misc]
    assert admission.active == 1
    # A light call has a line of its own: the machine has room for it, so it never waits.
    admission.leave(await admission.queue())
    admission.leave(held)
    for n in range(1, 4):
        await eventually(lambda n=n: len(admitted) == n, "the next call in")  # type: ignore[misc]
        assert admission.active == 1  # one at a time: the budget takes no more
        admission.leave(admitted[-1][1])
    await asyncio.gather(*tasks)
    assert [name for name, _ in admitted] == ["first", "second", "third"]
    assert admission.queued == 0


@pytest.mark.asyncio
async def test_a_full_queue_or_a_wait_that_ran_out_is_refused_saying_how_long_the_queue_is() -> (
    None
):
    waits: list[bool] = []
    admission = Admission(
        10,
        long_slots=lambda: 1,
        queue_wait=60.0,
        max_queued=2,
        on_queued=lambda seconds, admitted: waits.append(admitted),
    )
    admission.open()
    held = admission.enter(cost=KOKORO_COST)
    waiting = asyncio.ensure_future(admission.queue(cost=KOKORO_COST))
    await eventually(lambda: admission.queued == 1, "the first call in line")
    # Its own wait (the call's deadline) runs out: refused, with the queue's length.
    with pytest.raises(AtCapacity, match=r"waited 0\.05 s in the queue, behind 1 other calls"):
        await admission.queue(cost=KOKORO_COST, wait=0.05)
    assert waits == [False]
    second = asyncio.ensure_future(admission.queue(cost=KOKORO_COST))
    await eventually(lambda: admission.queued == 2, "the second call in line")
    with pytest.raises(AtCapacity, match=r"queue is full \(2 calls wait.*--max-queued-calls"):
        await admission.queue(cost=KOKORO_COST)
    admission.leave(held)
    admission.leave(await waiting)
    admission.leave(await second)
    assert waits == [False, True, True]
    assert admission.active == 0


@pytest.mark.asyncio
async def test_a_call_with_a_deadline_waits_up_to_it_one_without_the_servers_wait() -> None:
    """Issue 27: four callers of new Mandarin text, each with a 30 s deadline, were refused
    after the server's 3 s queue wait though they would have waited. A call that sets a
    deadline waits up to it (at most AdmissionPolicy.longest_queue_wait); one that sets none
    waits --queue-wait-seconds."""
    admission = Admission(10, long_slots=lambda: 1, queue_wait=0.001, max_queued=8)
    admission.open()
    held = admission.enter(cost=KOKORO_COST)
    patient = asyncio.ensure_future(admission.queue(cost=KOKORO_COST, wait=60.0))
    await eventually(lambda: admission.queued == 1, "the call with a deadline in line")
    with pytest.raises(AtCapacity, match="in the queue"):
        await admission.queue(cost=KOKORO_COST)  # no deadline: the server's wait, run out
    assert admission.queued == 1
    assert not patient.done()
    admission.leave(held)
    admission.leave(await patient)
    assert admission.active == 0


@pytest.mark.asyncio
async def test_with_no_queue_a_call_gets_the_short_admission_wait_like_a_stream() -> None:
    admission = Admission(10, long_slots=lambda: 1, wait=0.0, queue_wait=0.0, max_queued=8)
    admission.open()
    admission.enter(cost=KOKORO_COST)
    with pytest.raises(AtCapacity, match="voices of this cost"):
        await admission.queue(cost=KOKORO_COST)
    assert admission.queued == 0


def test_a_call_needing_no_model_work_passes_the_capacity_but_not_the_stream_limit() -> None:
    admission = Admission(2, long_slots=lambda: 1, load=lambda: 1.0, slack=lambda heavy: 0.0)
    admission.open()
    with pytest.raises(AtCapacity):
        admission.enter()
    admission.enter(free=True)
    admission.enter(free=True)
    with pytest.raises(Overloaded, match="--max-streams"):
        admission.enter(free=True)


# -- through a real server ------------------------------------------------------------------------


class Capacity:
    """A server's only worker held and a job due soon queued behind it: at capacity until
    `release()` (as tests/test_scheduler.py does it)."""

    def __init__(self, srv: ServerThread) -> None:
        scheduler = srv.server.scheduler
        assert isinstance(scheduler, Scheduler)
        self._gate = threading.Event()
        self._jobs: list[Future[Any]] = []
        gate = self._gate
        self._jobs.append(
            asyncio.run_coroutine_threadsafe(
                scheduler.run(lambda _: gate.wait(timeout=60)), srv.loop
            )
        )
        wait_until(lambda: scheduler.load() > POLICY.max_load)
        soon = time.monotonic() + POLICY.busy_slack / 2
        self._jobs.append(
            asyncio.run_coroutine_threadsafe(scheduler.run(lambda _: None, soon), srv.loop)
        )
        wait_until(lambda: scheduler.slack() < POLICY.busy_slack)

    def release(self) -> None:
        self._gate.set()
        for job in self._jobs:
            job.result(timeout=30)


@pytest.fixture
def busy_server(cache_dir: Path, tmp_path: Path) -> Iterator[ServerThread]:
    config = base_config(
        cache_dir,
        tmp_path,
        workers=1,
        admission_wait_seconds=0,
        queue_wait_seconds=30,
        max_queued_calls=1,
    )
    srv = ServerThread(config)
    yield srv
    srv.close()


def sample(srv: ServerThread, name: str, **labels: str) -> float | None:
    return srv.server.metrics.registry.get_sample_value(name, labels)


def test_a_synthesize_call_at_capacity_waits_in_line_and_is_spoken(
    busy_server: ServerThread,
) -> None:
    """Bug: a Synthesize call that found the machine busy was refused after the short
    admission wait. It waits in line; a second is refused as the line is full; a stream keeps
    the admission rule (refused at once here)."""
    srv = busy_server
    admission = srv.server.admission
    outcome: list[Any] = []
    with srv.channel() as channel:
        stub = srv.stub(channel)
        capacity = Capacity(srv)
        try:

            def call() -> None:
                try:
                    request = pb.SynthesizeRequest(text="Thank you for waiting.")
                    outcome.append(list(stub.Synthesize(request, timeout=120)))
                except grpc.RpcError as exc:
                    outcome.append(exc)

            caller = threading.Thread(target=call)
            caller.start()
            wait_until(lambda: admission.queued == 1)
            assert sample(srv, "voxlite_queued_calls") == 1
            with pytest.raises(grpc.RpcError) as full:
                list(stub.Synthesize(pb.SynthesizeRequest(text="Me too."), timeout=60))
            assert full.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "queue is full (1 calls wait" in (full.value.details() or "")
            stream = [pb.StreamingSynthesizeRequest(config=pb.SynthesisConfig())]
            stream.append(pb.StreamingSynthesizeRequest(text="A stream."))
            with pytest.raises(grpc.RpcError) as refused:
                list(stub.StreamingSynthesize(iter(stream), timeout=60))
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "queue" not in (refused.value.details() or "")
            assert outcome == []
            assert admission.active == 0
        finally:
            capacity.release()
        caller.join(timeout=120)
    responses = outcome[0]
    assert isinstance(responses, list), responses
    assert kinds(responses)[-1] == "summary"
    assert sample(srv, "voxlite_call_queue_wait_seconds_count", outcome="admitted") == 1
    assert sample(srv, "voxlite_queued_calls") == 0


def test_a_text_all_in_the_phrase_cache_is_spoken_while_the_machine_is_at_capacity(
    cache_dir: Path, tmp_path: Path
) -> None:
    """Bug: a Synthesize call whose text was all phrase-cache hits (no model work) was refused
    like a miss: 294 refusals in 30 s with 60% repeats. Its segments are looked up before
    admission, and it is spoken with the only worker still held; a new text is not."""
    config = base_config(
        cache_dir, tmp_path, workers=1, admission_wait_seconds=0, queue_wait_seconds=0
    )
    srv = ServerThread(config)
    text = "Welcome back. How can I help?"
    try:
        with srv.channel() as channel:
            stub = srv.stub(channel)
            first = list(stub.Synthesize(pb.SynthesizeRequest(text=text), timeout=60))
            capacity = Capacity(srv)
            try:
                again = list(stub.Synthesize(pb.SynthesizeRequest(text=text), timeout=60))
                with pytest.raises(grpc.RpcError) as refused:
                    list(stub.Synthesize(pb.SynthesizeRequest(text="Something new."), timeout=60))
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            finally:
                capacity.release()
        assert kinds(again)[-1] == "summary"
        assert again[-1].summary.segments == first[-1].summary.segments == 2
        assert again[-1].summary.audio_duration_ms == first[-1].summary.audio_duration_ms
    finally:
        srv.close()
