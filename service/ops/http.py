"""The metrics port's HTTP server: /metrics for Prometheus, /readyz for balancers."""

from __future__ import annotations

import contextlib
import logging
import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from .listen import listening_socket

_LOG = logging.getLogger(__name__)
MAX_CONNECTIONS = 16
"""Scrapers and probes connect a few times a minute; 16 at once is far more than they need."""
TIMEOUT = 5.0
"""Seconds a connection may stay silent (reading a request or waiting to write)."""
DEADLINE = 10.0
"""Seconds a connection may last in all, however slowly it sends."""


class _Handler(BaseHTTPRequestHandler):
    server: MetricsHTTPServer
    timeout = TIMEOUT  # socketserver applies it to the connection's socket

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
            self._reply(200, encoder(self.server.registry), content_type)
        elif path == "/readyz":
            ready = self.server.ready()
            self._reply(200 if ready else 503, b"SERVING\n" if ready else b"NOT_SERVING\n")
        else:
            self._reply(404, b"not found: /metrics or /readyz\n")

    def do_HEAD(self) -> None:
        self.do_GET()

    def _reply(self, status: int, body: bytes, content_type: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # scrapes and probes every few seconds: not worth a line each


class MetricsHTTPServer(ThreadingHTTPServer):
    """Serves `registry` at /metrics and `ready()` at /readyz (200 or 503), bounded: at most
    `max_connections` at once (the rest closed unanswered), a connection silent for TIMEOUT
    seconds closed, one still unanswered after DEADLINE too (headers trickled a byte at a
    time), one request each. prometheus_client's own server gave every connection a thread
    with no limit: a few hundred silent connections held as many threads for ever."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 64  # the listen backlog: over the cap, connections are closed at once

    def __init__(
        self,
        address: tuple[str, int],
        registry: CollectorRegistry,
        ready: Callable[[], bool],
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.registry = registry
        self.ready = ready
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, _Handler, bind_and_activate=False)
        self.socket.close()  # made for IPv4 alone; listen.py binds --host as gRPC does
        self.socket = listening_socket(*address, backlog=self.request_queue_size)
        self.server_address = self.socket.getsockname()[:2]
        self._thread: threading.Thread | None = None

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)  # full: closed at once, no thread
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        # Shutting the socket down wakes the thread from a read that trickles on.
        cutoff = threading.Timer(DEADLINE, _shut, (request,))
        cutoff.daemon = True
        cutoff.start()
        try:
            super().process_request_thread(request, client_address)
        finally:
            cutoff.cancel()
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that leaves mid-answer is no error: HAProxy resets each check's connection
        # once it has read the status line, often before the body is written.
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            _LOG.warning("metrics port: error answering %s", client_address, exc_info=True)

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.serve_forever, name="voxlite-metrics", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def _shut(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        connection.shutdown(socket.SHUT_RDWR)
