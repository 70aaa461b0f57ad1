"""Server wiring: gRPC server, health, reflection, the inference pool, start-up and drain."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from . import reflection
from .api import SERVICE_NAME, Admission, TextToSpeechServicer, add_to_server
from .config import ServerConfig
from .graph import SplitCache
from .registry import VoiceRegistry

_LOG = logging.getLogger(__name__)
T = TypeVar("T")
_HEALTH_SERVICES = ("", SERVICE_NAME)


class InferencePool:
    """A fixed pool of threads for all blocking work of all streams (one per core)."""

    def __init__(self, workers: int) -> None:
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="voxlite-infer")
        self._lock = threading.Lock()
        self.jobs_running = 0
        """Jobs executing right now (tests check it drops to zero after cancels)."""
        self.jobs_total = 0

    async def run(self, fn: Callable[[], T]) -> T:
        """Run `fn` on a worker. Cancelling the caller drops a job still queued; a job already
        running finishes its one short step (a vocoder window) and its result is dropped."""

        def job() -> T:
            with self._lock:
                self.jobs_running += 1
                self.jobs_total += 1
            try:
                return fn()
            finally:
                with self._lock:
                    self.jobs_running -= 1

        return await asyncio.get_running_loop().run_in_executor(self._executor, job)

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)


class VoxliteServer:
    """A running voxlite server: the gRPC server plus what it serves with."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.registry = VoiceRegistry(
            voices_dir=config.voices_dir,
            default_voice=config.default_voice,
            cache=SplitCache(config.cache_dir),
            ort_settings=config.ort,
        )
        workers = config.workers or max(1, (os.cpu_count() or 1) // config.ort.intra_op_threads)
        self.pool = InferencePool(workers)
        self.admission = Admission(config.max_streams)
        self.health = health.aio.HealthServicer()
        self.grpc = grpc.aio.server(
            options=[
                # A request is at most --max-text-chars of text: anything near 1 MiB is abuse,
                # refused by gRPC itself with RESOURCE_EXHAUSTED before it is even parsed.
                ("grpc.max_receive_message_length", 1024 * 1024),
                ("grpc.so_reuseport", 0),
            ]
        )
        self.servicer = TextToSpeechServicer(
            self.registry,
            self.pool.run,
            self.admission,
            max_text_chars=config.max_text_chars,
            idle_timeout=config.idle_timeout_seconds or None,
        )
        add_to_server(self.servicer, self.grpc)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.grpc)
        if config.reflection:
            health_name = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
            reflection.enable(self.grpc, [SERVICE_NAME, health_name])
        self.port = 0
        self.ready = asyncio.Event()
        self._loader: asyncio.Task[None] | None = None

    async def start(self) -> int:
        """Listen (health answers NOT_SERVING at once), then load voices in the background."""
        for name in _HEALTH_SERVICES:
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        self.port = self.grpc.add_insecure_port(f"{self.config.host}:{self.config.port}")
        if self.port == 0:
            raise OSError(f"cannot listen on {self.config.host}:{self.config.port}")
        await self.grpc.start()
        self._loader = asyncio.ensure_future(self._load())
        return self.port

    async def _load(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.registry.load)
        self.admission.ready = True
        for name in _HEALTH_SERVICES:
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        self.ready.set()
        _LOG.info("serving on port %d with %d voice(s)", self.port, len(self.registry.voices()))

    async def reload_voices(self) -> list[str]:
        """Rescan the voices folder (SIGHUP): load new and changed voices; see VoiceRegistry."""
        loaded = await asyncio.get_running_loop().run_in_executor(None, self.registry.reload)
        _LOG.info("voices reloaded: %s", ", ".join(loaded) or "nothing new")
        return loaded

    async def wait_ready(self) -> None:
        """Until the default voice is loaded; re-raises a failure to load it."""
        assert self._loader is not None, "start() first"
        await asyncio.shield(self._loader)

    async def stop(self, grace: float | None = None) -> None:
        """Drain: health NOT_SERVING, new calls refused, running streams finish within `grace`.

        The gRPC server keeps answering while streams drain, so probes see NOT_SERVING and new
        synthesis calls get UNAVAILABLE with a message (rather than a closed port)."""
        grace = self.config.grace_seconds if grace is None else grace
        self.admission.draining = True
        await self.health.enter_graceful_shutdown()
        for session in list(self.admission.sessions):
            session.end()  # streams that never half-close finish what they hold
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.admission.idle.wait(), timeout=grace)
        # Whatever still runs past the grace period is cancelled here.
        await self.grpc.stop(max(0.0, deadline - loop.time()))
        if self._loader is not None and not self._loader.done():
            self._loader.cancel()
        await asyncio.get_running_loop().run_in_executor(None, self.pool.shutdown)


async def create_server(config: ServerConfig) -> tuple[VoxliteServer, int]:
    """Build and start a server; it listens at once and serves once its voices are loaded."""
    server = VoxliteServer(config)
    port = await server.start()
    return server, port
