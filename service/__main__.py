"""`voxlite-server`: run the server until SIGTERM or SIGINT, then drain and exit 0."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import resource
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .errors import VoxliteError
from .ops import logs
from .settings.config import ServerConfig, config_from_args, start_warnings

if TYPE_CHECKING:
    from .jobs import Workers

_LOG = logging.getLogger("voxlite")


async def serve(config: ServerConfig, workers: Workers | None = None) -> int:
    """Run a server until SIGTERM or SIGINT, then drain; `workers`: see VoxliteServer.

    Returns the exit status: 0 after the drain, or 128 + the signal's number when a second
    SIGTERM or SIGINT cut it short (130 after a second Ctrl-C)."""
    from .grpc.security import describe_auth
    from .server import create_server

    server, port = await create_server(config, workers=workers)
    stop, again = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    signals: list[signal.Signals] = []

    def on_signal(sig: signal.Signals) -> None:
        signals.append(sig)
        (again if stop.is_set() else stop).set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig)
    # SIGHUP: rescan the voices folder (new or changed voice files), as daemons reload config.
    reloads: set[asyncio.Task[list[str]]] = set()

    def reload() -> None:
        if server.ready.is_set():
            task = asyncio.ensure_future(server.reload_voices())
            reloads.add(task)
            task.add_done_callback(reloads.discard)

    loop.add_signal_handler(signal.SIGHUP, reload)
    _LOG.info("listening on %s:%d; loading voices", config.host, port)
    _LOG.info("%s", describe_auth(config))
    if server.http_port:
        scheme = "https" if config.tls_cert else "http"
        # Every interface: the address to type in a browser on this machine.
        host = "localhost" if config.host in ("[::]", "::", "0.0.0.0") else config.host
        _LOG.info("HTTP API and the page on %s://%s:%d/", scheme, host, server.http_port)
    if server.metrics_port:
        _LOG.info("metrics on http://%s:%d/metrics", config.host, server.metrics_port)
    ready = asyncio.ensure_future(server.wait_ready())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait([ready, stopping], return_when=asyncio.FIRST_COMPLETED)
    if ready.done() and ready.exception() is not None:
        stopping.cancel()
        await server.stop(0)
        raise ready.exception()  # type: ignore[misc]
    await stopping
    _LOG.info(
        "draining: up to %.0f s for running streams (SIGTERM or Ctrl-C again: stop now)",
        config.grace_seconds,
    )
    drain = asyncio.ensure_future(server.stop())
    asked_again = asyncio.ensure_future(again.wait())
    await asyncio.wait([drain, asked_again], return_when=asyncio.FIRST_COMPLETED)
    if not drain.done():
        # As uvicorn and gunicorn do: the operator asked twice, so the calls still running
        # end now (each with its status) rather than at the end of the grace.
        second = signals[1]
        _LOG.warning("%s again: stopping now, ending the calls still running", second.name)
        drain.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await drain
        await server.stop(0)
        return 128 + second
    asked_again.cancel()
    _LOG.info("stopped")
    return 0


MALLOC_ARENAS = 2
"""glibc heaps for the whole process. By default glibc opens up to 8 per core, one for each
thread that allocates while the others hold theirs, and each keeps what was freed in it, so
resident memory under load landed at random plateaus; bench/soak.py chose 2
(docs/benchmarks.md#start-up-and-memory). The environment's MALLOC_ARENA_MAX, when set, wins."""


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's heaps (mallopt M_ARENA_MAX) unless MALLOC_ARENA_MAX is set; False where the
    C library has no mallopt (not glibc) or refuses."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    m_arena_max = -8  # from glibc's malloc.h
    return bool(mallopt(m_arena_max, arenas))


DESCRIPTORS = 1 << 20
"""Open files to ask for when the hard limit is unlimited (Linux refuses more than
fs.nr_open, whose default this is)."""


def raise_descriptor_limit() -> None:
    """Raise the soft limit on open files to the hard one, as Go's runtime does: a soft limit
    of 1024 (systemd's and many shells' default) is a thousand idle connections to either port,
    after which neither can accept a caller."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = DESCRIPTORS if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):  # refused: keep what we were given
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def quiet_grpc_core(log_level: str) -> None:
    """gRPC's C core writes lines of its own to stderr (a failed bind, each failed TLS
    handshake) whatever --log-level says; voxlite reports those failures itself. The core
    reads GRPC_VERBOSITY once, when grpc is imported, so this runs before that; a
    GRPC_VERBOSITY in the environment wins."""
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR" if log_level == "debug" else "NONE")


def main(argv: Sequence[str] | None = None) -> int:
    limit_malloc_arenas()
    raise_descriptor_limit()
    config = config_from_args(argv)
    quiet_grpc_core(config.log_level)
    logs.configure(config.log_level, config.log_format)
    for warning in start_warnings(config, os.environ):
        _LOG.warning("%s", warning)
    try:
        return asyncio.run(serve(config))
    except VoxliteError as exc:
        _LOG.error("%s", exc)
        return 1
    except OSError as exc:
        _LOG.error("cannot start: %s", exc)
        return 1


if __name__ == "__main__":
    sys.exit(main())
