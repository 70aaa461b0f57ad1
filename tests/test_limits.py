"""Resources anyone can use, bounded (issue 16.6): health Watch streams, reflection, the metrics
port's connections; and the readiness endpoint balancers check, with the drain delay."""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from voxlite.service.__main__ import DESCRIPTORS
from voxlite.service.grpc import reflection
from voxlite.service.grpc.health import MAX_WATCHES
from voxlite.service.ops import http
from voxlite.service.server import PING_INTERVAL_MS
from voxlite.tts.v1 import tts_pb2 as pb

from bench._servers import free_port

from .helpers import Duplex, ServerProcess, ServerThread, base_config, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def limited(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    srv = ServerThread(
        base_config(cache_dir, tmp_path_factory.mktemp("voices"), metrics_port=free_port())
    )
    yield srv
    srv.close()


def test_health_watch_streams_are_capped_and_given_back(limited: ServerThread) -> None:
    """Regression (issue 16.6): Watch streams were unlimited."""
    health = limited.server.health
    with grpc.insecure_channel(limited.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        request = health_pb2.HealthCheckRequest(service="")
        watches = [stub.Watch(request, timeout=60) for _ in range(MAX_WATCHES)]
        for watch in watches:
            assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        wait_until(lambda: health.watches == MAX_WATCHES)
        with pytest.raises(grpc.RpcError) as refused:
            next(stub.Watch(request, timeout=10))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "use Check" in refused.value.details()
        assert stub.Check(request, timeout=10).status == health_pb2.HealthCheckResponse.SERVING
        for watch in watches:
            watch.cancel()
        wait_until(lambda: health.watches == 0)
        again = stub.Watch(request, timeout=10)
        assert next(again).status == health_pb2.HealthCheckResponse.SERVING
        again.cancel()
        too_long = health_pb2.HealthCheckRequest(service="x" * 1000)
        with pytest.raises(grpc.RpcError) as invalid:
            stub.Check(too_long, timeout=10)
        assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    wait_until(lambda: health.watches == 0)


def test_reflection_streams_and_requests_are_bounded(limited: ServerThread) -> None:
    """Regression (issue 16.6): one reflection stream answered without end, 16 kB a request."""
    servicer = limited.server.reflection
    assert servicer is not None
    ask = reflection_pb2.ServerReflectionRequest(
        file_containing_symbol="voxlite.tts.v1.TextToSpeechService"
    )
    with grpc.insecure_channel(limited.address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        answers = stub.ServerReflectionInfo(iter([ask] * (reflection.MAX_REQUESTS + 5)), timeout=60)
        received: list[reflection_pb2.ServerReflectionResponse] = []
        with pytest.raises(grpc.RpcError) as cut:
            received.extend(answers)
        assert len(received) == reflection.MAX_REQUESTS
        assert all(a.HasField("file_descriptor_response") for a in received)
        assert cut.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "open another" in cut.value.details()

        gate = threading.Event()

        def held() -> Iterator[reflection_pb2.ServerReflectionRequest]:
            yield ask
            gate.wait(timeout=60)

        open_streams = [
            stub.ServerReflectionInfo(held(), timeout=60) for _ in range(reflection.MAX_STREAMS)
        ]
        for stream in open_streams:
            assert next(stream).HasField("file_descriptor_response")
        with pytest.raises(grpc.RpcError) as refused:
            next(stub.ServerReflectionInfo(iter([ask]), timeout=10))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        gate.set()
        for stream in open_streams:
            assert list(stream) == []
        wait_until(lambda: servicer.streams == 0)
        # Given back: a new stream is answered.
        assert next(stub.ServerReflectionInfo(iter([ask]), timeout=10)).HasField(
            "file_descriptor_response"
        )


def test_metrics_port_bounds_connections_and_closes_silent_ones(limited: ServerThread) -> None:
    """Regression (issue 16.6): 300 silent connections held 300 threads for as long as they
    stayed open. Now at most http.MAX_CONNECTIONS threads serve, the rest are closed at once,
    and a silent connection is closed after http.TIMEOUT seconds."""
    port = limited.server.metrics_port
    before = threading.active_count()
    silent = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(50)]
    try:
        wait_until(lambda: threading.active_count() >= before + http.MAX_CONNECTIONS)
        assert threading.active_count() <= before + 2 * http.MAX_CONNECTIONS  # and their timers
        # The server closes each silent connection: every socket reads end of file.
        for sock in silent:
            assert sock.recv(1) == b""
        wait_until(lambda: threading.active_count() <= before)
    finally:
        for sock in silent:
            sock.close()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        assert b"voxlite_calls_total" in response.read()


def readyz(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_readyz_follows_health_and_the_drain_delay_admits_calls(
    cache_dir: Path, tmp_path: Path
) -> None:
    srv = ServerThread(
        base_config(cache_dir, tmp_path, metrics_port=free_port(), drain_delay_seconds=3.0)
    )
    # A stream left open holds the drain (the server waits up to its grace for running calls),
    # so that a call after the drain began meets a draining server, not one already stopped.
    done = threading.Event()

    def held_open() -> Iterator[pb.StreamingSynthesizeRequest]:
        yield pb.StreamingSynthesizeRequest(config=pb.SynthesisConfig())
        yield pb.StreamingSynthesizeRequest(text="Hello there.")
        yield pb.StreamingSynthesizeRequest(flush=pb.Flush(id=1))
        done.wait(timeout=60)

    try:
        assert readyz(srv.server.metrics_port) == 200
        with srv.channel() as channel:
            stream = srv.stub(channel).StreamingSynthesize(held_open(), timeout=60)
            assert any(r.WhichOneof("response") == "audio" for r in stream)  # admitted, speaking
            draining = asyncio.run_coroutine_threadsafe(srv.server.stop(10), srv.loop)
            wait_until(lambda: srv.health(channel) == health_pb2.HealthCheckResponse.NOT_SERVING)
            assert readyz(srv.server.metrics_port) == 503
            # Still admitted: the balancer has yet to notice.
            if not srv.server.admission.draining:
                responses = list(srv.stub(channel).Synthesize(pb.SynthesizeRequest(text="Hi.")))
                assert responses[-1].WhichOneof("response") == "summary"
            wait_until(lambda: srv.server.admission.draining)
            with pytest.raises(grpc.RpcError) as refused:
                list(srv.stub(channel).Synthesize(pb.SynthesizeRequest(text="Hi."), timeout=10))
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            done.set()
            list(stream)  # the held stream ends once its text is spoken
        draining.result(timeout=30)
    finally:
        srv.close()


def test_a_quiet_stream_outlives_keepalive_pings(limited: ServerThread) -> None:
    """Bug: Envoy pings its upstreams every 30 s (deploy/envoy/envoy.yaml), and gRPC's default
    policy took pings on a connection with no data as abuse (GOAWAY too_many_pings):
    a voice agent's stream waiting quietly for its user died with UNAVAILABLE. A client pinging
    at the interval the server permits keeps its stream past four pings, and it still speaks.
    The wait is the pings' own: gRPC's policy is counted in time, with no clock to drive."""
    options = [
        ("grpc.keepalive_time_ms", PING_INTERVAL_MS + 500),
        ("grpc.keepalive_timeout_ms", 20_000),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.keepalive_permit_without_calls", 1),
    ]
    with grpc.insecure_channel(limited.address, options=options) as channel:
        stream = Duplex(limited.stub(channel), timeout=120)
        stream.config()
        stream.until("format")
        # Four pings and a little: gRPC's default refused the fourth (two strikes allowed).
        time.sleep(4.5 * (PING_INTERVAL_MS + 500) / 1000)
        stream.send(text="Still there?")
        stream.send(flush=pb.Flush(id=1))
        assert stream.until("audio").audio.audio
        stream.until("flush_done")
        stream.close()
        stream.rest()


READ_TIMEOUT = 2.0
"""--read-timeout-seconds of `hurried`: short, so that the tests wait little for the closes, and
long beside the milliseconds a request takes to reach its handler on a loaded machine."""


@pytest.fixture(scope="module")
def hurried(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    srv = ServerThread(
        base_config(
            cache_dir,
            tmp_path_factory.mktemp("voices"),
            http_port=0,
            read_timeout_seconds=READ_TIMEOUT,
        )
    )
    yield srv
    srv.close()


def connect(port: int, sent: bytes = b"") -> socket.socket:
    """A connection to 127.0.0.1:`port` that has sent `sent`; reads give up after 30 s."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(sent)
    return sock


def read_to_the_end(sock: socket.socket) -> bytes:
    """All `sock` receives until the server closes it (raises TimeoutError if it never does)."""
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while data := sock.recv(65536):
            received += data
    return received


HALF_A_HEAD = b"POST /v1/audio/speech HTTP/1.1\r\nHost: voxlite\r\n"


def test_http_connections_with_no_whole_request_are_closed_after_the_read_timeout(
    hurried: ServerThread,
) -> None:
    """Bug: the HTTP API waited for a request's head for ever. 1,100 connections that sent
    half a head used up a soft limit of 1024 open files, and then neither port accepted a
    caller (gRPC's "connection attempt timed out"). Now a connection that sends no whole
    request within --read-timeout-seconds is closed: silent, half a head, or kept alive
    after its answer."""
    port = hurried.server.http_port
    silent = [connect(port) for _ in range(4)]
    halves = [connect(port, HALF_A_HEAD) for _ in range(4)]
    kept = connect(port, b"GET /v1/models HTTP/1.1\r\nHost: voxlite\r\n\r\n")
    try:
        for sock in silent + halves:
            assert read_to_the_end(sock) == b""
        answer = read_to_the_end(kept)
        assert answer.startswith(b"HTTP/1.1 200 ")
        assert b"tts-1" in answer
    finally:
        for sock in [*silent, *halves, kept]:
            sock.close()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/audio/speech",
        json.dumps({"input": "Still served."}).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200
        assert response.read()


def test_a_body_slower_than_the_read_timeout_is_a_408_in_the_error_shape(
    hurried: ServerThread,
) -> None:
    """A head that promises a body and sends part of it held its connection for ever."""
    head = HALF_A_HEAD + b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    with connect(hurried.server.http_port, head + b'{"input": "Hel') as sock:
        answer = read_to_the_end(sock)
    status, _, rest = answer.partition(b"\r\n")
    assert status.startswith(b"HTTP/1.1 408 "), answer
    error = json.loads(rest.partition(b"\r\n\r\n")[2])["error"]
    assert error["code"] == "timeout"
    assert "did not arrive within 2 s (--read-timeout-seconds)" in error["message"]


def test_grpc_connections_must_finish_their_handshake_within_the_read_timeout(
    hurried: ServerThread,
) -> None:
    """gRPC's default kept a connection that sent nothing, or half of HTTP/2's preface, for
    120 s: a thousand such held a thousand files."""
    port = int(hurried.address.rsplit(":", 1)[1])
    socks = [connect(port), connect(port, b"PRI * HTTP/2.0\r\n")]
    try:
        for sock in socks:
            read_to_the_end(sock)  # returns once the server has closed it
    finally:
        for sock in socks:
            sock.close()
    with hurried.channel() as channel:
        assert hurried.health(channel) == health_pb2.HealthCheckResponse.SERVING


def test_the_server_raises_its_soft_limit_on_open_files(cache_dir: Path, tmp_path: Path) -> None:
    """A soft limit of 1024 open files (systemd's default, and many shells') is a thousand
    idle connections; the server takes the hard limit, as Go's runtime does."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    expected = DESCRIPTORS if hard == resource.RLIM_INFINITY else hard
    assert expected > 256
    server = ServerProcess(cache_dir, tmp_path, launcher=(sys.executable, "-c", LOW_LIMIT))
    try:
        limits = Path(f"/proc/{server.proc.pid}/limits").read_text().splitlines()
        [line] = [line for line in limits if line.startswith("Max open files")]
        assert int(line.split()[3]) == expected  # the soft limit's column
    finally:
        server.close()


LOW_LIMIT = """
import os, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
os.execv(sys.argv[1], sys.argv[1:])
"""
"""Runs the command after it with a soft limit of 256 open files."""
