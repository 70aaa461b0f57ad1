"""Voxlite and baseline servers as subprocesses for the benchmarks: start, wait, stop."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from voxlite.tts.v1 import tts_pb2, tts_pb2_grpc

START_TIMEOUT = 120.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Child:
    """A server subprocess with its output in a log file."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            tail = self.log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{tail}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


ROOT = Path(__file__).resolve().parents[1]
"""The checkout that holds bench/: not installed, it is found from the working directory."""


def spawn(name: str, argv: list[str], workdir: Path) -> Child:
    """`argv` in `workdir`, its output to a log there. A `python -m bench.x` server runs in
    `workdir` too, so the checkout goes on its PYTHONPATH."""
    log = workdir / f"{name}.log"
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=workdir, env=env)
    return Child(name, proc, log)


def voxlite_argv(
    port: int, voices_dir: Path, *extra: str, module: str = "", engines: str = "piper"
) -> list[str]:
    """voxlite-server's command line, or `python -m module`'s with the same flags; with the
    Piper voices only unless `engines` says otherwise (Kokoro's load after SERVING would run
    beside what a benchmark measures)."""
    script = Path(sys.executable).with_name("voxlite-server")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "voxlite.service"]
    if module:
        command = [sys.executable, "-m", module]
    return [
        *command,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--voices-dir",
        str(voices_dir),
        "--log-level",
        "warning",
        "--engines",
        engines,
        *extra,
    ]


def piper_argv(port: int) -> list[str]:
    """Piper's own HTTP server (piper-tts) on the embedded default voice: the baseline."""
    from voxlite.service.engines.piper import embedded_voice_files

    model, _ = embedded_voice_files()
    return [sys.executable, "-m", "piper.http_server", "-m", str(model), "--host", "127.0.0.1",
            "--port", str(port)]  # fmt: skip


def wait_serving(child: Child, channel: grpc.Channel) -> None:
    """Until grpc health reports SERVING: a Watch stream answers on each change, no sleeping."""
    stub = health_pb2_grpc.HealthStub(channel)
    request = health_pb2.HealthCheckRequest(service="")
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        child.check_alive()
        try:
            # Short deadlines only so that a server that died is noticed.
            for update in stub.Watch(request, timeout=1.0, wait_for_ready=True):
                if update.status == health_pb2.HealthCheckResponse.SERVING:
                    return
        except grpc.RpcError as exc:
            if exc.code() not in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE):
                raise
    raise TimeoutError(f"{child.name} not SERVING after {START_TIMEOUT:g} s (log: {child.log})")


def wait_all_voices(channel: grpc.Channel) -> None:
    """Until the voices loaded after SERVING are in too (their loading would run beside what a
    benchmark measures): ListVoices names those still loading."""
    stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
    deadline = time.monotonic() + START_TIMEOUT
    while stub.ListVoices(tts_pb2.ListVoicesRequest(), timeout=10).loading:
        if time.monotonic() > deadline:
            raise TimeoutError(f"voices still loading after {START_TIMEOUT:g} s")
        time.sleep(0.5)
