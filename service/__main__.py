"""`voxlite-server`: run the server until SIGTERM or SIGINT, then drain and exit 0."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Sequence

from . import logs
from .config import ServerConfig, config_from_args
from .errors import VoxliteError
from .server import create_server

_LOG = logging.getLogger("voxlite")


async def serve(config: ServerConfig) -> None:
    server, port = await create_server(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    # SIGHUP: rescan the voices folder (new or changed voice files), as daemons reload config.
    reloads: set[asyncio.Task[list[str]]] = set()

    def reload() -> None:
        if server.ready.is_set():
            task = asyncio.ensure_future(server.reload_voices())
            reloads.add(task)
            task.add_done_callback(reloads.discard)

    loop.add_signal_handler(signal.SIGHUP, reload)
    _LOG.info("listening on %s:%d; loading voices", config.host, port)
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
    _LOG.info("draining: up to %.0f s for running streams", config.grace_seconds)
    await server.stop()
    _LOG.info("stopped")


def main(argv: Sequence[str] | None = None) -> int:
    config = config_from_args(argv)
    logs.configure(config.log_level, config.log_format)
    try:
        asyncio.run(serve(config))
    except VoxliteError as exc:
        _LOG.error("%s", exc)
        return 1
    except OSError as exc:
        _LOG.error("cannot start: %s", exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
