"""Real HAProxy (deploy/haproxy/haproxy.cfg, ports substituted) in front of real replica
processes on loopback: calls spread per call, streams through it, a replica killed, a replica
drained."""

from __future__ import annotations

import signal
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest
from voxlite.client import (
    AudioChunk,
    ClearDone,
    Client,
    FlushDone,
    StreamSession,
    Summary,
    Unavailable,
)
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from bench._balanced import HAProxy, Replica, free_ports, wait_for

# No skip without haproxy: scripts/setup test installs it, and CI must run these.
pytestmark = pytest.mark.slow
DRAIN_DELAY = "3"
"""--drain-delay-seconds as deploy/README.md gives it for this HAProxy configuration."""
LONG = " ".join(f"This is sentence number {i} of a long answer." for i in range(24))


def start_cluster(
    count: int, cache_dir: Path, workdir: Path, *args: str
) -> tuple[list[Replica], HAProxy]:
    ports = free_ports(2 * count)
    replicas = [
        Replica(ports[2 * i], ports[2 * i + 1], workdir, cache_dir, *args) for i in range(count)
    ]
    try:
        for replica in replicas:
            wait_for(replica.ready, f"replica {replica.port} SERVING")
        proxy = HAProxy(replicas, workdir)
    except BaseException:
        for replica in replicas:
            replica.close()
        raise
    try:
        proxy.wait_all_up()
    except BaseException:
        proxy.close()
        for replica in replicas:
            replica.close()
        raise
    return replicas, proxy


@pytest.fixture
def cluster(cache_dir: Path, tmp_path: Path) -> Iterator[tuple[list[Replica], HAProxy]]:
    replicas, proxy = start_cluster(
        3, cache_dir, tmp_path, "--drain-delay-seconds", DRAIN_DELAY, "--grace-seconds", "30"
    )
    yield replicas, proxy
    proxy.close()
    for replica in replicas:
        replica.close()


def speak(client: Client, request_id: str) -> None:
    events = list(client.synthesize("Hi.", timeout=30, metadata={"x-request-id": request_id}))
    assert isinstance(events[-1], Summary)


def served_by(replicas: list[Replica], ids: list[str]) -> Counter[int]:
    """Calls per replica, once each call is in exactly one replica's access log."""
    wait_for(lambda: all(sum(r.served(i) for r in replicas) == 1 for i in ids), "access lines")
    return Counter(next(n for n, r in enumerate(replicas) if r.served(i)) for i in ids)


def holder(replicas: list[Replica]) -> int:
    """The replica running the one synthesis call open now."""
    found: list[int] = []

    def one() -> bool:
        found[:] = [n for n, r in enumerate(replicas) if r.metric("voxlite_active_streams") == 1]
        return len(found) == 1

    wait_for(one, "one replica with the open call", 30)
    return found[0]


def test_calls_spread_over_every_replica_one_connection(
    cluster: tuple[list[Replica], HAProxy],
) -> None:
    """One client, one connection to HAProxy: each call goes to the next replica."""
    replicas, proxy = cluster
    ids = [f"spread-{n}" for n in range(9)]
    with Client(proxy.address) as client:
        for request_id in ids:
            speak(client, request_id)
    assert served_by(replicas, ids) == {0: 3, 1: 3, 2: 3}
    assert sorted(proxy.calls_sent().values()) == [3, 3, 3]


def pcm(events: list[object]) -> np.ndarray:
    data = b"".join(e.audio for e in events if isinstance(e, AudioChunk))
    return np.frombuffer(data, dtype="<i2").astype(np.int32)


def streamed(address: str) -> list[object]:
    """A StreamingSynthesize with flush and clear: text, flush (all of it spoken), clear,
    more text, half-close. Noise 0: the audio is the same wherever it runs."""
    events: list[object] = []
    with (
        Client(address) as client,
        client.stream(encoding="pcm_s16le", noise_scale=0.0, noise_w=0.0, timeout=60) as session,
    ):
        session.send("Sure, I can help with that. ")
        flush_id = session.flush()
        for event in session:
            events.append(event)
            if isinstance(event, FlushDone):
                assert event.id == flush_id
                break
        clear_id = session.clear()  # after the flush: nothing unsent is left to drop
        for event in session:
            events.append(event)
            if isinstance(event, ClearDone):
                assert event.id == clear_id
                break
        session.send("Anything else?")
        session.close()
        events.extend(session)
    return events


def test_streaming_with_flush_and_clear_through_haproxy_equals_direct(
    cluster: tuple[list[Replica], HAProxy],
) -> None:
    replicas, proxy = cluster
    through = streamed(proxy.address)
    direct = streamed(replicas[0].address)
    kinds = [type(e).__name__ for e in through]
    assert kinds.count("FlushDone") == 1
    assert kinds.count("ClearDone") == 1
    assert isinstance(through[-1], Summary)
    a, b = pcm(through), pcm(direct)
    assert len(a) == len(b) > 24000
    assert np.max(np.abs(a - b)) <= 1


def test_killed_replica_in_flight_call_unavailable_new_calls_elsewhere(
    cluster: tuple[list[Replica], HAProxy],
) -> None:
    replicas, proxy = cluster
    with Client(proxy.address) as client:
        call = client.synthesize(LONG, timeout=60)
        assert next(call) is not None
        victim = holder(replicas)
        replicas[victim].proc.kill()  # SIGKILL: no drain, its connections just drop
        replicas[victim].proc.wait(timeout=30)
        # HAProxy ends the call's stream without a status (an empty DATA frame with
        # END_STREAM); the client library reports it as UNAVAILABLE, and does not retry.
        with pytest.raises(Unavailable) as cut:
            list(call)
        assert cut.value.code == grpc.StatusCode.UNAVAILABLE
        assert "cut off" in cut.value.details
        # New calls at once, no retry by the caller: HAProxy sends a call that meets the dead
        # replica's refused connection to another one, and marks the dead one down.
        ids = [f"after-{n}" for n in range(8)]
        for request_id in ids:
            speak(client, request_id)
    spread = served_by(replicas, ids)
    assert victim not in spread
    assert set(spread) == set(range(3)) - {victim}
    wait_for(lambda: proxy.status()[f"voxlite{victim + 1}"].startswith("DOWN"), "marked down")


def test_raw_grpc_call_cut_by_a_killed_replica_is_unknown_stream_removed(
    cluster: tuple[list[Replica], HAProxy],
) -> None:
    """What callers without the client library see through HAProxy 2.6 (deploy/README.md)."""
    replicas, proxy = cluster
    with grpc.insecure_channel(proxy.address) as channel:
        stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
        call = stub.Synthesize(pb.SynthesizeRequest(text=LONG), timeout=60)
        next(call)
        victim = holder(replicas)
        replicas[victim].proc.kill()
        with pytest.raises(grpc.RpcError) as cut:
            list(call)
    assert cut.value.code() == grpc.StatusCode.UNKNOWN
    assert cut.value.details().startswith("Stream removed")


def test_sigterm_drain_behind_haproxy_no_caller_sees_an_error(
    cluster: tuple[list[Replica], HAProxy],
) -> None:
    replicas, proxy = cluster
    errors: list[BaseException] = []
    ids: list[str] = []
    stop = threading.Event()

    def caller() -> None:
        with Client(proxy.address) as client:
            while not stop.is_set():
                ids.append(f"drain-{len(ids)}")
                try:
                    speak(client, ids[-1])
                except Exception as exc:
                    errors.append(exc)

    events: list[object] = []
    failure: list[BaseException] = []

    def listen(session: StreamSession) -> None:
        """Read the stream as a player would, event by event as they come."""
        try:
            events.extend(session)
        except Exception as exc:
            failure.append(exc)

    with Client(proxy.address) as client, client.stream(timeout=90) as session:
        # Held open, as an agent holds its stream between replies: the draining replica ends
        # it once it has spoken all and gone quiet, and the caller sees a normal end.
        session.send(LONG)
        listener = threading.Thread(target=listen, args=(session,), daemon=True)
        listener.start()
        wait_for(lambda: len(events) > 1, "the stream's first audio", 60)
        victim = holder(replicas)
        background = threading.Thread(target=caller, daemon=True)
        background.start()
        try:
            wait_for(lambda: len(ids) >= 3, "calls before the drain", 60)
            assert listener.is_alive()  # the stream still plays
            replicas[victim].proc.send_signal(signal.SIGTERM)
            name = f"voxlite{victim + 1}"
            wait_for(lambda: proxy.status()[name].startswith("DOWN"), "drained replica down")
            # HAProxy took it out while it still listens and admits calls (the drain delay).
            assert replicas[victim].proc.poll() is None
            sent_when_down = proxy.calls_sent()[name]
            seen = len(ids)
            wait_for(lambda: len(ids) >= seen + 6, "calls after the replica was taken out", 60)
            listener.join(timeout=60)  # the stream speaks what it holds, then its summary
        finally:
            stop.set()
            background.join(timeout=60)
    assert failure == []
    assert isinstance(events[-1], Summary)
    assert events[-1].audio_duration_ms > 10000
    assert errors == []
    assert proxy.calls_sent()[f"voxlite{victim + 1}"] == sent_when_down
    late = ids[seen:]
    assert victim not in served_by(replicas, late)
    assert replicas[victim].proc.wait(timeout=60) == 0


def test_killed_replica_in_flight_stream_is_unavailable_too(
    cluster: tuple[list[Replica], HAProxy],
) -> None:
    """Bug: a stream the caller had not half-closed, cut by its replica's death, was reset by
    HAProxy with RST_STREAM(CANCEL), and the client raised Cancelled, which callers do not
    retry: it is the same failure as the call above."""
    replicas, proxy = cluster
    with Client(proxy.address) as client:
        session = client.stream(timeout=60)
        session.send(LONG)
        session.flush()
        events = iter(session)
        assert any(isinstance(event, AudioChunk) for event in events)
        victim = holder(replicas)
        replicas[victim].proc.kill()
        replicas[victim].proc.wait(timeout=30)
        with pytest.raises(Unavailable) as cut:
            list(events)
        assert cut.value.code == grpc.StatusCode.UNAVAILABLE
        assert "cut off" in cut.value.details
