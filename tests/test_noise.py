"""Log noise: what a real server writes when clients misbehave is its own lines, at its level."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from voxlite.service.ops.logs import GRPC_AIO_LOGGER

from .helpers import LONG_TEXT, Pki, ServerProcess, ServerThread, base_config, idle, wait_until

pytestmark = pytest.mark.slow

STALLED_CLIENT = textwrap.dedent(
    """
    import sys, time, grpc
    from voxlite.tts.v1 import tts_pb2 as pb, tts_pb2_grpc
    # A 64 KiB HTTP/2 window (no BDP probing) and 48 kHz PCM: the server soon has more to
    # send than the client takes.
    channel = grpc.insecure_channel(sys.argv[1], options=[("grpc.http2.bdp_probe", 0)])
    audio = pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE, sample_rate_hz=48000)
    request = pb.SynthesizeRequest(text=sys.argv[2], config=pb.SynthesisConfig(audio=audio))
    for response in tts_pb2_grpc.TextToSpeechServiceStub(channel).Synthesize(request):
        if response.WhichOneof("response") == "audio":
            print("audio", flush=True)
            time.sleep(600)  # reads nothing more, until killed
    """
)


@pytest.fixture(scope="module")
def uncached(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    """A server without the phrase cache: audio comes no faster than the model makes it, so a
    full queue of unsent audio means that a write waits on the client."""
    srv = ServerThread(base_config(cache_dir, tmp_path_factory.mktemp("voices"), phrase_cache_mb=0))
    yield srv
    srv.close()


@pytest.mark.parametrize("level", [logging.INFO, logging.DEBUG], ids=["info", "debug"])
def test_a_client_gone_with_responses_unsent_logs_nothing_above_debug(
    uncached: ServerThread, caplog: pytest.LogCaptureFixture, level: int
) -> None:
    """Bug: a client killed while the server was blocked writing to it (its window full)
    left an ERROR "ExecuteBatchError raised in core by servicer method" and a traceback in
    the log, from grpc.aio, for a call that simply ended CANCELLED."""
    caplog.set_level(logging.INFO, logger="voxlite.access")
    caplog.set_level(level, logger=GRPC_AIO_LOGGER)  # last: it sets the handler's level too

    def failed_writes() -> list[logging.LogRecord]:
        from_grpc = [r for r in caplog.records if r.name == GRPC_AIO_LOGGER]
        return [r for r in from_grpc if "ExecuteBatchError" in r.getMessage()]

    # gRPC sees the kill either inside the blocked write (the ERROR this is about) or as the
    # call's cancel first: at debug, the scenario runs until the write's failure is met.
    for _ in range(ATTEMPTS if level == logging.DEBUG else 1):
        kill_a_stalled_client(uncached, caplog)
        if failed_writes():
            break
    from_grpc = [r for r in caplog.records if r.name == GRPC_AIO_LOGGER]
    assert not [r for r in from_grpc if r.levelno > logging.DEBUG], caplog.text
    if level == logging.DEBUG:
        # What was an ERROR is still there for whoever asks for debug: the race was met.
        assert failed_writes(), caplog.text
    else:
        assert not failed_writes()


ATTEMPTS = 10
"""Kills of a stalled client at most, for the one whose write fails inside gRPC (most do)."""


def kill_a_stalled_client(server: ServerThread, caplog: pytest.LogCaptureFixture) -> None:
    """A client that stops reading a Synthesize, killed while the server's write waits on it;
    returns once the call's access-log line says CANCELLED and the server is idle."""
    wait_until(lambda: idle(server))
    client = subprocess.Popen(
        [sys.executable, "-c", STALLED_CLIENT, server.address, LONG_TEXT],
        stdout=subprocess.PIPE,
        text=True,
    )
    seen = len(caplog.records)
    try:
        assert client.stdout is not None
        assert client.stdout.readline().strip() == "audio"
        [session] = server.server.admission.sessions
        # The session's queue is full: grpc is inside a write that waits on the client.
        wait_until(lambda: session.paused)
        os.kill(client.pid, signal.SIGKILL)
        client.wait(timeout=10)

        def access_lines() -> list[str]:
            return [r.getMessage() for r in caplog.records[seen:] if r.name == "voxlite.access"]

        # The call's access-log line comes after anything grpc logs for the failed write.
        wait_until(lambda: any("Synthesize" in line for line in access_lines()))
        assert "code=CANCELLED" in access_lines()[-1]
        wait_until(lambda: idle(server))
    finally:
        client.kill()
        assert client.stdout is not None
        client.stdout.close()
        client.wait(timeout=10)


CORE_LINE = re.compile(r"^[EWID]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\]")
"""gRPC's C core writes lines of its own: severity, date, time, thread, file:line]."""


@pytest.mark.parametrize(
    ("args", "env", "core_lines"),
    [
        pytest.param((), {}, False, id="default-level"),
        pytest.param(("--log-level", "debug"), {}, False, id="debug-level"),
        # The environment wins: gRPC's own line for the handshake shows up then, which is how
        # this test knows that its plaintext client does fail a handshake the core reports.
        pytest.param((), {"GRPC_VERBOSITY": "info"}, True, id="GRPC_VERBOSITY=info"),
    ],
)
def test_a_failed_tls_handshake_writes_no_grpc_core_line(
    cache_dir: Path,
    tmp_path: Path,
    pki: Pki,
    args: tuple[str, ...],
    env: dict[str, str],
    core_lines: bool,
) -> None:
    """Bug: each failed TLS handshake (a plaintext client, a port scanner) wrote a line of
    gRPC's C core to stderr whatever --log-level said."""
    tls = ("--tls-cert", str(pki.server.cert), "--tls-key", str(pki.server.key))
    credentials = grpc.ssl_channel_credentials(pki.ca.cert.read_bytes())
    srv = ServerProcess(cache_dir, tmp_path, *tls, *args, env=env, credentials=credentials)
    try:
        with grpc.insecure_channel(srv.address) as plaintext:
            health = health_pb2_grpc.HealthStub(plaintext)
            with pytest.raises(grpc.RpcError) as refused:
                health.Check(health_pb2.HealthCheckRequest(), timeout=30)
            # UNAVAILABLE: the server closed the connection, after its handshake failed.
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        srv.close()
    handshakes = [line for line in srv.log if CORE_LINE.match(line) and "andshake" in line]
    assert bool(handshakes) == core_lines, "".join(srv.log)
    if not core_lines:
        assert not [line for line in srv.log if CORE_LINE.match(line)], "".join(srv.log)
