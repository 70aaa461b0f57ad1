"""Held slots: streams that send nothing, or nothing that moves, cannot hold the server."""

from __future__ import annotations

import math
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from voxlite.client import Client, Overloaded, Summary
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from .helpers import (
    Duplex,
    ServerThread,
    base_config,
    held_workers,
    kinds,
    park_after,
    wait_until,
)

TOKENS = ("tenant-a-token", "tenant-b-token")


@pytest.fixture(scope="module")
def guarded(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    srv = ServerThread(
        base_config(
            cache_dir,
            tmp_path_factory.mktemp("voices"),
            max_streams=2,
            config_timeout_seconds=2.0,
            idle_timeout_seconds=1.0,
            phrase_cache_mb=0,
        )
    )
    yield srv
    srv.close()


def silent_stream(channel: grpc.Channel) -> tuple[Any, queue.Queue[object]]:
    """A StreamingSynthesize call that sends nothing until its gate gets None."""
    gate: queue.Queue[object] = queue.Queue()
    stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
    return stub.StreamingSynthesize(iter(gate.get, None), timeout=60), gate


def active_streams(srv: ServerThread) -> float:
    value = srv.server.metrics.registry.get_sample_value("voxlite_active_streams")
    return float(value or 0.0)


def test_streams_that_send_no_config_hold_no_slot(guarded: ServerThread) -> None:
    """Bug: 32 streams that never sent a message held every slot until the 300 s idle timeout.
    A stream takes a slot only once its config arrives, and must send it soon."""
    with guarded.channel() as channel:
        silent = [silent_stream(channel) for _ in range(5)]  # more than max_streams
        wait_until(lambda: active_streams(guarded) == 5)  # all five reached the server
        assert guarded.server.admission.active == 0
        responses = list(
            guarded.stub(channel).Synthesize(pb.SynthesizeRequest(text="Still here."), timeout=60)
        )
        assert kinds(responses)[-1] == "summary"
        for call, gate in silent:
            with pytest.raises(grpc.RpcError) as info:
                list(call)
            gate.put(None)
            assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert "no config arrived within 2 s" in info.value.details()
            assert "--config-timeout-seconds" in info.value.details()


def quiet_streams(srv: ServerThread) -> int:
    """Streams whose slot could go to another call now."""
    return srv.on_loop(srv.server.admission.quiet_streams)


@pytest.fixture
def parking(cache_dir: Path, tmp_path: Path) -> Iterator[ServerThread]:
    """A server of 4 slots whose streams may give them up as soon as they are quiet."""
    srv = ServerThread(
        base_config(cache_dir, tmp_path, max_streams=4, max_streams_per_peer=0, phrase_cache_mb=0)
    )
    park_after(srv, 0.0)
    yield srv
    srv.close()


def test_streams_that_send_a_config_and_then_nothing_do_not_hold_every_slot(
    parking: ServerThread,
) -> None:
    """Bug: 36 streams from one client that sent only a config held every slot until the
    idle timeout (300 s), and every other caller got RESOURCE_EXHAUSTED. A stream with
    nothing to speak gives its slot to a new call that needs one; it takes one back, as a new
    call would, when its text comes, and is spoken as ever."""
    with parking.channel() as channel:
        stub = parking.stub(channel)
        held = []
        for _ in range(9):  # more than twice --max-streams, all on one connection
            d = Duplex(stub, timeout=60)
            d.config()
            assert d.next().WhichOneof("response") == "format"
            held.append(d)
        assert parking.server.admission.active <= 4
        assert parking.server.admission.parked >= 5
        with parking.channel() as other:
            responses = list(
                parking.stub(other).Synthesize(pb.SynthesizeRequest(text="Still here."), timeout=60)
            )
        assert kinds(responses)[-1] == "summary"
        # A parked stream speaks when its text comes.
        first = held[0]
        first.send(text="Back again.")
        first.close()
        rest = first.rest()
        assert "audio" in kinds(rest)
        assert kinds(rest)[-1] == "summary"
        for d in held[1:]:
            d.close()
            assert kinds(d.rest())[-1] == "summary"
    wait_until(lambda: parking.server.admission.idle.is_set())
    assert parking.server.admission.parked == 0


def test_only_a_stream_with_nothing_to_speak_is_quiet(parking: ServerThread) -> None:
    """A stream whose text waits for a worker is not quiet (its slot stays); one that only
    sent its config is, from its config on."""
    with parking.channel() as channel:
        stub = parking.stub(channel)
        idle_one = Duplex(stub, timeout=60)
        idle_one.config()
        assert idle_one.next().WhichOneof("response") == "format"
        speaking = Duplex(stub, timeout=60)
        speaking.config()
        assert speaking.next().WhichOneof("response") == "format"
        sessions = parking.on_loop(lambda: list(parking.server.admission.sessions))
        with held_workers(parking):
            speaking.send(text="Hello there, this waits for a worker.")
            wait_until(lambda: sum(1 for s in sessions if s.quiet_for() == 0) == 1)
            assert quiet_streams(parking) == 1
        for d in (idle_one, speaking):
            d.close()
            assert kinds(d.rest())[-1] == "summary"


def test_a_parked_stream_that_finds_no_room_is_told_why(cache_dir: Path, tmp_path: Path) -> None:
    """A quiet stream whose slot went to another call, and whose next text finds the slot
    still taken, ends with RESOURCE_EXHAUSTED saying what happened and which limit."""
    srv = ServerThread(base_config(cache_dir, tmp_path, max_streams=1, phrase_cache_mb=0))
    try:
        park_after(srv, 0.0)
        with srv.channel() as channel:
            stub = srv.stub(channel)
            quiet = Duplex(stub, timeout=60)
            quiet.config()
            assert quiet.next().WhichOneof("response") == "format"
            wait_until(lambda: quiet_streams(srv) == 1)
            newcomer = Duplex(stub, timeout=60)
            newcomer.config()
            assert newcomer.next().WhichOneof("response") == "format"
            assert srv.server.admission.parked == 1
            park_after(srv, math.inf)  # the newcomer keeps its slot, quiet or not
            quiet.send(text="Me again.")
            with pytest.raises(grpc.RpcError) as info:
                quiet.rest()
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            details = info.value.details()
            assert "gave its slot to another call" in details
            assert "limit of 1 concurrent streams speaking (--max-streams)" in details
            newcomer.send(text="I am served.")
            newcomer.close()
            assert "audio" in kinds(newcomer.rest())
    finally:
        srv.close()


def test_a_message_now_and_then_that_speaks_nothing_does_not_keep_a_stream(
    guarded: ServerThread,
) -> None:
    """Bug: one byte every 299 s held a slot for ever (any message reset the idle timer). Only
    progress counts: text that completes a segment, a flush, a clear, the half-close."""
    with guarded.channel() as channel:
        stream = Duplex(guarded.stub(channel), timeout=60)
        stream.config()
        stopped = threading.Event()

        def trickle() -> None:
            for _ in range(300):  # one letter every 0.1 s, never a sentence's end
                if stopped.wait(0.1):
                    return
                stream.send(text="a")
            stream.close()

        sender = threading.Thread(target=trickle)
        sender.start()
        try:
            with pytest.raises(grpc.RpcError) as info:
                stream.rest()
        finally:
            stopped.set()
            sender.join(timeout=60)
            stream.close()
        assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert "idle" in info.value.details()


@pytest.fixture(scope="module")
def capped(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    srv = ServerThread(
        base_config(
            cache_dir,
            tmp_path_factory.mktemp("voices"),
            max_streams_per_peer=3,
            max_streams_per_token=2,
            auth_tokens=TOKENS,
            phrase_cache_mb=0,
        )
    )
    park_after(srv, math.inf)  # the caps themselves: quiet streams keep their slots
    yield srv
    srv.close()


def test_one_token_cannot_take_more_than_its_share(capped: ServerThread) -> None:
    """--max-streams-per-token: a tenant's third stream is refused with what to do; another
    tenant is still served."""
    with Client(capped.address, token=TOKENS[0]) as a, Client(capped.address, token=TOKENS[1]) as b:
        held = [a.stream(), a.stream()]
        for session in held:
            session.send("Hello there.")
        wait_until(lambda: capped.server.admission.active == 2)
        with pytest.raises(Overloaded, match="this token already has 2 streams"):
            list(a.synthesize("One more.", timeout=30))
        assert isinstance(list(b.synthesize("Tenant b is fine.", timeout=30))[-1], Summary)
        # The same address with a third stream of tenant b hits the per-address cap.
        with b.stream() as third:
            third.send("Hello.")
            wait_until(lambda: capped.server.admission.active == 3)
            with pytest.raises(Overloaded, match="this client address already has 3 streams"):
                list(b.synthesize("And one more.", timeout=30))
            third.close()
            assert isinstance(list(third)[-1], Summary)
        for session in held:
            session.close()
            assert isinstance(list(session)[-1], Summary)
        wait_until(lambda: capped.server.admission.active == 0)
        assert isinstance(list(a.synthesize("Room again.", timeout=30))[-1], Summary)
