"""Replicas behind HAProxy, as real processes on loopback: for tests/test_balancer.py, the
flood tests and bench.balancer.

HAProxy runs deploy/haproxy/haproxy.cfg itself, with only its addresses changed (the ports of
this run, chosen free first, since HAProxy needs each replica's port in its configuration).
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_CONFIG = ROOT / "deploy" / "haproxy" / "haproxy.cfg"
START_TIMEOUT = 120.0


def haproxy_binary() -> str | None:
    return shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if Path(p).exists()), None
    )


def free_ports(count: int) -> list[int]:
    """`count` distinct free loopback ports (held open together, so none repeats)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def wait_for(condition: object, what: str, timeout: float = START_TIMEOUT) -> None:
    """Poll `condition()` until true (a positive condition, never a fixed sleep)."""
    assert callable(condition)
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout:g} s")
        time.sleep(0.02)


class Replica:
    """`voxlite-server` on a given gRPC port and metrics port; its log kept in memory."""

    def __init__(
        self,
        port: int,
        metrics_port: int,
        voices_dir: Path,
        cache_dir: Path | None,
        *args: str,
        log_level: str = "info",
    ) -> None:
        script = Path(sys.executable).with_name("voxlite-server")
        command = [str(script)] if script.exists() else [sys.executable, "-m", "voxlite.service"]
        command += [
            "--host", "127.0.0.1", "--port", str(port), "--metrics-port", str(metrics_port),
            "--voices-dir", str(voices_dir), "--log-level", log_level, "--engines", "piper",
            *(["--cache-dir", str(cache_dir)] if cache_dir else []), *args,
        ]  # fmt: skip
        self.port = port
        self.metrics_port = metrics_port
        self.address = f"127.0.0.1:{port}"
        self.proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        self.log: list[str] = []
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()

    def _read_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def ready(self) -> bool:
        """GET /readyz answers 200 (what HAProxy checks)."""
        if self.proc.poll() is not None:
            raise RuntimeError(f"replica on {self.port} exited:\n{''.join(self.log)[-3000:]}")
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.metrics_port}/readyz", timeout=5
            ) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def metric(self, name: str) -> float:
        """One unlabelled figure from /metrics (e.g. voxlite_active_streams)."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            text = response.read().decode()
        match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
        assert match, f"{name} not in {url}"
        return float(match.group(1))

    def rss_bytes(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def served(self, request_id: str) -> bool:
        """The replica logged the call's access line."""
        tag = f"request_id={request_id} "
        return any(tag in line for line in list(self.log))

    def access_lines(self) -> int:
        return sum(1 for line in list(self.log) if "voxlite.access:" in line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        self._reader.join(timeout=10)
        assert self.proc.stderr is not None
        self.proc.stderr.close()


def haproxy_config(port: int, replicas: Sequence[Replica], stats_port: int, admin_port: int) -> str:
    """deploy/haproxy/haproxy.cfg with this run's addresses: the frontend's port, one server
    line per replica (every option kept; the check port is the replica's metrics port), the
    stats page and socket on free ports. Nothing else changes."""
    text = SHIPPED_CONFIG.read_text()
    servers = [line for line in text.splitlines() if re.match(r"\s+server\s", line)]
    assert servers, "no server lines in the shipped configuration"
    template = servers[0]
    lines = []
    for n, replica in enumerate(replicas, 1):
        line = re.sub(r"(\s+server\s+)\S+\s+\S+", rf"\g<1>voxlite{n} {replica.address}", template)
        line = re.sub(r"\bport \d+", f"port {replica.metrics_port}", line)
        lines.append(line)
    text = text.replace("\n".join(servers), "\n".join(lines))
    substitutions = [
        (r"bind :8080 ", f"bind 127.0.0.1:{port} "),
        (r"bind 127\.0\.0\.1:8404", f"bind 127.0.0.1:{stats_port}"),
        (r"stats socket 127\.0\.0\.1:9999 ", f"stats socket 127.0.0.1:{admin_port} "),
    ]
    for pattern, replacement in substitutions:
        text, count = re.subn(pattern, replacement, text)
        assert count == 1, f"{pattern!r} not found once in {SHIPPED_CONFIG}"
    return text


class HAProxy:
    """HAProxy running the shipped configuration in front of `replicas`."""

    def __init__(self, replicas: Sequence[Replica], workdir: Path) -> None:
        binary = haproxy_binary()
        assert binary, "haproxy is not installed (scripts/setup test installs it)"
        self.replicas = list(replicas)
        self.port, self.stats_port, self.admin_port = free_ports(3)
        self.address = f"127.0.0.1:{self.port}"
        self.config = workdir / "haproxy.cfg"
        self.config.write_text(
            haproxy_config(self.port, replicas, self.stats_port, self.admin_port)
        )
        # -db: foreground, logs to stdout (the configuration's "log stdout").
        self.proc = subprocess.Popen(
            [binary, "-db", "-f", str(self.config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.log: list[str] = []
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()

    def _read_log(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.log.append(line)

    def command(self, text: str) -> str:
        """One runtime API command on the stats socket."""
        with socket.create_connection(("127.0.0.1", self.admin_port), timeout=5) as sock:
            sock.sendall(text.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def servers(self) -> dict[str, dict[str, str]]:
        """The backend's servers by name: status (UP, DOWN, ...), stot (calls sent), scur..."""
        if self.proc.poll() is not None:
            raise RuntimeError(f"haproxy exited:\n{''.join(self.log)[-3000:]}")
        try:
            text = self.command("show stat")
        except OSError:
            return {}
        rows = csv.DictReader(io.StringIO(text.lstrip("# ")))
        return {r["svname"]: r for r in rows if r["pxname"] == "voxlite" and r["svname"] not in
                ("FRONTEND", "BACKEND")}  # fmt: skip

    def status(self) -> dict[str, str]:
        return {name: row["status"] for name, row in self.servers().items()}

    def calls_sent(self) -> dict[str, int]:
        return {name: int(row["stot"]) for name, row in self.servers().items()}

    def wait_all_up(self, timeout: float = START_TIMEOUT) -> None:
        wait_for(
            lambda: (s := self.status()) and all(v == "UP" for v in s.values()),
            "every replica UP in HAProxy",
            timeout,
        )

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._reader.join(timeout=10)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
