"""Scale-out: round robin over server processes, a replica lost, connections aged out."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from voxlite.client import Client, Summary, Unavailable

from .helpers import LONG_TEXT, ServerProcess, ServerThread, base_config, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def replicas(cache_dir: Path, tmp_path: Path) -> Iterator[list[ServerProcess]]:
    servers: list[ServerProcess] = []
    try:
        for _ in range(3):
            servers.append(ServerProcess(cache_dir, tmp_path))
        yield servers
    finally:
        for server in servers:
            server.close()


def served_by(servers: list[ServerProcess], request_id: str) -> list[int]:
    """Which servers logged the call (each logs one access line per call, with its id)."""
    tag = f"request_id={request_id} "
    return [i for i, s in enumerate(servers) if any(tag in line for line in s.log)]


def speak(client: Client, request_id: str) -> None:
    events = list(client.synthesize("Hi.", timeout=30, metadata={"x-request-id": request_id}))
    assert isinstance(events[-1], Summary)


def where(servers: list[ServerProcess], ids: list[str]) -> Counter[int]:
    """Calls per server, once every call is in exactly one server's log."""
    wait_until(lambda: all(len(served_by(servers, i)) == 1 for i in ids))
    return Counter(served_by(servers, i)[0] for i in ids)


def test_round_robin_spreads_calls_and_skips_a_killed_server(
    replicas: list[ServerProcess],
) -> None:
    with Client([s.address for s in replicas]) as client:
        before: list[str] = []
        for n in range(30):  # calls go to the servers connected so far, in turn
            before.append(f"before-{n}")
            speak(client, before[-1])
            if n >= 5 and len(where(replicas, before)) == 3:
                break
        assert set(where(replicas, before)) == {0, 1, 2}

        victim = replicas[1]
        victim.proc.kill()  # SIGKILL: no drain, its connections just drop
        victim.proc.wait(timeout=30)
        after: list[str] = []
        failures = 0
        for n in range(12):
            request_id = f"after-{n}"
            try:
                speak(client, request_id)
            except Unavailable:
                # Only the first call may race the client noticing the dropped connection.
                failures += 1
                assert (failures, n) == (1, 0), "calls keep going to the killed server"
                request_id += "-retry"
                speak(client, request_id)
            after.append(request_id)
        spread = where(replicas, after)
        assert set(spread) == {0, 2}, spread
        assert sum(spread.values()) == 12


def test_connections_are_closed_at_their_max_age(
    cache_dir: Path, tmp_path: Path, server: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    """Clients reconnect (and so re-resolve onto new replicas) after --max-connection-age;
    a call running at that moment finishes on the old connection."""
    caplog.set_level(logging.INFO, logger="voxlite.access")
    aged = ServerThread(base_config(cache_dir, tmp_path, max_connection_age_seconds=1.0))
    try:
        peers: dict[str, list[str]] = {aged.address: [], server.address: []}

        def access() -> list[logging.LogRecord]:
            return [r for r in caplog.records if r.name == "voxlite.access"]

        def call(client: Client, address: str) -> None:
            count = len(access())
            client.voices(timeout=10)
            wait_until(lambda: len(access()) > count)  # the server's line for this call
            peers[address].append(access()[-1].__dict__["fields"]["peer"])

        with Client(aged.address) as aged_client, Client(server.address) as default_client:
            long_call = aged_client.synthesize(LONG_TEXT[:400], timeout=60)
            assert next(long_call) is not None  # running: it holds the first connection
            start = time.monotonic()
            # Until the aged connection is replaced (about 1 s), with a generous deadline.
            while len(set(peers[aged.address])) < 2 and time.monotonic() - start < 60:
                call(aged_client, aged.address)
                call(default_client, server.address)
                time.sleep(0.1)  # spaces the calls out over the connection's age
            changed_after = time.monotonic() - start
            events = list(long_call)
        assert len(set(peers[aged.address])) == 2, peers  # a second connection
        assert changed_after > 0.8  # not before its age (1 s, less gRPC's 10 % jitter)
        assert len(set(peers[server.address])) == 1  # the default age is 5 minutes
        assert isinstance(events[-1], Summary)  # the running call finished on the old one
        assert events[-1].audio_duration_ms > 15000
    finally:
        aged.close()
