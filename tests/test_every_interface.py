"""--host's default, "[::]", on hosts whose IPv6 differs: each port served to IPv4 clients too.

gRPC's own port takes "[::]" as every interface whatever the host's IPv6; the HTTP and metrics
ports must do the same. The hosts' conditions are made here by the sockets Python creates: a
kernel without IPv6 (booted with ipv6.disable=1) refuses to make an IPv6 socket, and the sysctl
net.ipv6.bindv6only=1 makes new IPv6 sockets IPv6 only."""

from __future__ import annotations

import errno
import json
import math
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from voxlite.client import Client, Summary
from voxlite.service.server import _why_not_listening

from .helpers import ServerThread, base_config, http_url, park_after, wait_until


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class _NoIPv6(socket.socket):
    """Sockets of a kernel without IPv6."""

    def __init__(self, family: Any = -1, type: Any = -1, proto: Any = -1, fileno: Any = None):
        if family == socket.AF_INET6:
            raise OSError(errno.EAFNOSUPPORT, os.strerror(errno.EAFNOSUPPORT))
        super().__init__(family, type, proto, fileno)


class _IPv6Only(socket.socket):
    """Sockets of a host with net.ipv6.bindv6only=1: a new IPv6 socket takes no IPv4."""

    def __init__(self, family: Any = -1, type: Any = -1, proto: Any = -1, fileno: Any = None):
        super().__init__(family, type, proto, fileno)
        if fileno is None and self.family == socket.AF_INET6:
            self.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.fixture
def every_interface(cache_dir: Path, tmp_path: Path) -> Iterator[Any]:
    """Starts a server on --host "[::]" with every port (once the host's sockets are set)."""
    servers: list[ServerThread] = []

    def start() -> ServerThread:
        config = base_config(
            cache_dir, tmp_path, host="[::]", http_port=0, metrics_port=free_port()
        )
        servers.append(ServerThread(config))
        return servers[-1]

    yield start
    for srv in servers:
        srv.close()


def _status(url: str, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    with urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=30) as reply:
        return int(reply.status), reply.read()


def _served_on_ipv4(srv: ServerThread) -> None:
    """Each port answers a client of 127.0.0.1: gRPC, the HTTP API and the metrics port."""
    with Client(srv.address) as client:
        summary = list(client.synthesize("Every port answers."))[-1]
    assert isinstance(summary, Summary)
    assert summary.audio_duration_ms > 0
    speech = {"input": "Every port answers.", "response_format": "pcm"}
    status, audio = _status(http_url(srv, "/v1/audio/speech"), speech)
    assert status == 200
    assert len(audio) > 24000
    status, body = _status(f"http://127.0.0.1:{srv.server.metrics_port}/readyz")
    assert (status, body) == (200, b"SERVING\n")


def test_a_kernel_without_ipv6_serves_every_port_on_ipv4(
    every_interface: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug: on a kernel without IPv6 the default --host started gRPC's port (on 0.0.0.0) and
    then refused to start: "cannot serve metrics on [::]:9090: Address family not supported by
    protocol", and the same for --http-port."""
    monkeypatch.setattr(socket, "socket", _NoIPv6)
    _served_on_ipv4(every_interface())


def test_ipv6_only_sockets_still_serve_ipv4_clients(
    every_interface: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug: on a host with net.ipv6.bindv6only=1 the metrics port on "[::]" took IPv6 alone:
    an IPv4 scrape or readiness probe was refused while gRPC and HTTP answered it."""
    monkeypatch.setattr(socket, "socket", _IPv6Only)
    srv = every_interface()
    _served_on_ipv4(srv)
    if _ipv6_loopback():
        metrics = f"http://[::1]:{srv.server.metrics_port}/readyz"
        assert _status(metrics) == (200, b"SERVING\n")
        models = f"http://[::1]:{srv.server.http_port}/v1/models"
        assert _status(models)[0] == 200


def test_a_taken_port_is_named_on_a_kernel_without_ipv6(monkeypatch: pytest.MonkeyPatch) -> None:
    """gRPC says only that it could not bind; the reason given is the port's, not the missing
    IPv6 ("Address family not supported by protocol")."""
    monkeypatch.setattr(socket, "socket", _NoIPv6)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("0.0.0.0", 0))
        holder.listen()
        port = holder.getsockname()[1]
        reason = _why_not_listening("[::]", port)
    assert reason.startswith(f"port {port} is already in use on [::]"), reason


def test_an_ipv4_client_counts_as_one_address_on_both_ports(
    cache_dir: Path, tmp_path: Path
) -> None:
    """Bug: on "[::]" the HTTP port saw an IPv4 client as ::ffff:127.0.0.1 and gRPC's as
    127.0.0.1, so --max-streams-per-peer let it have its share on each port."""
    config = base_config(cache_dir, tmp_path, host="[::]", http_port=0, max_streams_per_peer=1)
    srv = ServerThread(config)
    park_after(srv, math.inf)  # the cap itself: the quiet stream keeps its slot
    try:
        with Client(srv.address) as client, client.stream() as held:
            held.send("Hello there.")
            wait_until(lambda: srv.server.admission.active == 1)
            speech = {"input": "One more.", "response_format": "pcm"}
            with pytest.raises(urllib.error.HTTPError) as refused:
                _status(http_url(srv, "/v1/audio/speech"), speech)
            assert refused.value.code == 429
            assert "this client address already has 1 streams" in refused.value.read().decode()
            held.close()
            assert isinstance(list(held)[-1], Summary)
        wait_until(lambda: srv.server.admission.active == 0)
        assert _status(http_url(srv, "/v1/audio/speech"), speech)[0] == 200
    finally:
        srv.close()
