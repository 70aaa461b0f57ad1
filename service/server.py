"""Server wiring: gRPC server, health, reflection, the inference pool, start-up and drain."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from .call.opening import SessionOpener
from .call.tokens import ServerTokens
from .capacity.admission import Admission
from .capacity.scheduler import Scheduler
from .engines import runtime
from .engines.cache import PhraseCache
from .engines.registry import LoadThreads, VoiceRegistry
from .families import families
from .grpc import reflection
from .grpc.api import SERVICE_NAME, TextToSpeechServicer, add_to_server
from .grpc.calls import CallObserver
from .grpc.health import BoundedHealthServicer
from .grpc.security import TokenAuth, server_credentials
from .http.openai_api import SpeechHTTP
from .jobs import Workers
from .ops import logs
from .ops.listen import listening_socket
from .ops.metrics import Metrics
from .settings.config import ServerConfig
from .settings.options import Invalid
from .tls import TlsFiles, UnusableFiles

_LOG = logging.getLogger(__name__)
T = TypeVar("T")
_HEALTH_SERVICES = ("", SERVICE_NAME)
STATUS_GRACE = 5.0
"""Seconds the streams ended at the close of the drain have for their status (behind the audio
already queued for them) to reach a client still reading."""
LOAD_WAIT_SECONDS = 30.0
"""How long the drain waits at least for the voice load in progress, whatever the grace (a
second SIGTERM's is 0): a voice loads in a few seconds, and a process that exits while a load
runs in onnxruntime aborts ("terminate called", exit 134). Past it, the load is taken to be a
read that never returns (a hung network mount), left to end with the process."""
BACKGROUND_NICE = 19
"""The CPU priority (Linux nice) of the thread that loads voices once the server is SERVING,
and rescans: the lowest, so that a replica loading the rest of its voices speaks to its first
callers as a warm one does (docs/reliability.md#a-replica-that-has-just-started)."""
MAX_CONCURRENT_STREAMS = 100
"""gRPC's limit of streams open at once per connection (SETTINGS_MAX_CONCURRENT_STREAMS)."""
PING_INTERVAL_MS = 5_000
"""The shortest interval at which a client or balancer may ping a connection with no data on it
(gRPC's default: 5 min, and a GOAWAY too_many_pings after two pings sooner). Envoy pings its
upstreams every 30 s (deploy/envoy) and client keepalives of 10 to 60 s are common: under the
default, a voice agent's stream waiting quietly for its user is cut after 90 s. Half the
shortest of those, so that a late timer never counts against a client; a ping flood, more
often than this, is still refused."""


class VoxliteServer:
    """A running voxlite server: the gRPC server plus what it serves with."""

    def __init__(self, config: ServerConfig, *, workers: Workers | None = None) -> None:
        """`workers`: what runs the model work (a benchmark's baseline); by default the
        shared earliest-deadline scheduler."""
        self.config = config
        logs.quiet_client_gone()  # a client gone mid-write is no server error
        if config.ort.cpu_arena:
            runtime.register_shared_arena()
        self.registry = VoiceRegistry(
            families(config),
            voices_dir=config.voices_dir,
            default_voice=config.default_voice,
            language_voices=dict(config.language_voices),
        )
        self.metrics = Metrics()
        """Counters and histograms (served over HTTP with --metrics-port)."""
        self.metrics.track_voices(
            lambda: (len(self.registry.voices()), len(self.registry.failures))
        )
        self.scheduler: Workers = workers or _scheduler(config, self.metrics)
        self.cache = _phrase_cache(config, self.metrics)
        self.admission = _admission(config, self.scheduler, self.metrics)
        self.health = BoundedHealthServicer()
        self.metrics_port = 0
        self.tokens = _tokens(config)
        """The bearer tokens both edges check (None: no token asked for)."""
        self.grpc = _grpc_server(config, self.metrics, self.tokens)
        self.opener = SessionOpener(
            self.registry,
            self.scheduler,
            self.admission,
            max_text_chars=config.max_text_chars,
            cache=self.cache,
            shared_cache=config.shared_phrase_cache,
        )
        """Where every call's session is opened, by either edge."""
        self.servicer = TextToSpeechServicer(
            self.registry,
            self.admission,
            self.opener,
            idle_timeout=config.idle_timeout_seconds or None,
            config_wait=config.config_timeout_seconds,
            tenants=bool(config.auth_tokens),
        )
        add_to_server(self.servicer, self.grpc)
        self.tls: TlsFiles | None = None
        """--tls-cert and the rest, followed as they change; read at start."""
        self.http: SpeechHTTP | None = None
        """The OpenAI-compatible HTTP API (--http-port), on this loop, through the opener."""
        if config.http_port is not None:
            self.http = SpeechHTTP(
                config, self.opener, self.registry, self.admission, tokens=self.tokens
            )
        self.http_port = 0
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.grpc)
        self.reflection: reflection.DocumentedReflectionServicer | None = None
        if config.reflection:
            health_name = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
            self.reflection = reflection.enable(self.grpc, [SERVICE_NAME, health_name])
        self.port = 0
        self.ready = asyncio.Event()
        self._reload_lock = asyncio.Lock()
        self._reload_wanted = False
        self.serving = False
        """What gRPC health reports for "" is SERVING (read by /readyz, from another thread)."""
        self._loader: asyncio.Task[None] | None = None
        self._loading: asyncio.Future[Any] | None = None
        """The thread's load in progress, if any: stop() waits for it (one voice at most)."""
        self._first = LoadThreads("voxlite-load")
        """Where the voices load before SERVING."""
        self._background = LoadThreads("voxlite-background", initializer=lower_priority)
        """Where voices load once SERVING (and rescans run): below the workers' priority."""

    async def start(self) -> int:
        """Listen (health answers NOT_SERVING at once), then load voices in the background."""
        for name in _HEALTH_SERVICES:
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        address = f"{self.config.host}:{self.config.port}"
        if self.config.tls_cert is not None and self.config.tls_key is not None:
            try:
                self.tls = TlsFiles(
                    self.config.tls_cert, self.config.tls_key, self.config.tls_client_ca
                )
            except UnusableFiles as exc:
                raise OSError(str(exc)) from None
        credentials = None if self.tls is None else server_credentials(self.tls)
        try:
            if credentials is None:
                self.port = self.grpc.add_insecure_port(address)
            else:
                self.port = self.grpc.add_secure_port(address, credentials)
        except RuntimeError:  # grpc says only that it failed to bind
            reason = _why_not_listening(self.config.host, self.config.port)
            raise OSError(reason) from None
        if self.port == 0:
            raise OSError(_why_not_listening(self.config.host, self.config.port))
        if self.config.metrics_port:
            self.metrics_port = self._serve_metrics()
        if self.http is not None:
            self.http_port = await self.http.start(self.tls)
        await self.grpc.start()
        self._loader = asyncio.ensure_future(self._load())
        return self.port

    def _serve_metrics(self) -> int:
        """Serve metrics on --metrics-port; an OSError that names the flag when it cannot."""
        host, port = self.config.host, self.config.metrics_port
        try:
            return self.metrics.serve(host, port, ready=lambda: self.serving)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise OSError(
                    f"port {port} (--metrics-port) is already in use on {host}: stop what holds "
                    "it, or choose another port with --metrics-port (or VOXLITE_METRICS_PORT)"
                ) from None
            raise OSError(
                f"cannot serve metrics on {host}:{port}: {exc.strerror} (check --host and "
                "--metrics-port)"
            ) from None

    async def _in_loader(self, load: Callable[[], T], *, background: bool = False) -> T:
        """Run a registry load on a thread (`background`: at low priority); stop() waits for it
        to finish its voice, up to the grace."""
        executor = self._background if background else self._first
        loading = asyncio.get_running_loop().run_in_executor(executor, load)
        self._loading = loading
        try:
            return await asyncio.shield(loading)
        finally:
            if loading.done() and self._loading is loading:
                self._loading = None

    async def _load(self) -> None:
        await self._in_loader(self.registry.load)
        if self.registry.stopping:
            return  # stopped before the default voice was in: never SERVING
        self.admission.open()
        for name in _HEALTH_SERVICES:
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        self.serving = True
        self.ready.set()
        _LOG.info("serving on port %d with %d voice(s)", self.port, len(self.registry.voices()))
        if self.registry.pending:
            count, before = len(self.registry.pending), len(self.registry.voices())
            async with self._reload_lock:  # a SIGHUP's rescan waits for these
                await self._in_loader(self.registry.load_rest, background=True)
            if self.registry.stopping:
                return
            loaded = len(self.registry.voices()) - before
            failed = f", {count - loaded} failed (ListVoices says why)" if loaded < count else ""
            _LOG.info(
                "%d more voice(s) loaded%s: %d in all", loaded, failed, len(self.registry.voices())
            )

    async def reload_voices(self) -> list[str]:
        """Rescan the voices folder (SIGHUP): load new and changed voices; see VoiceRegistry.
        One reload runs at a time, and those asked for while one runs make one more after it
        (a burst of signals is one rescan, and no reload overwrites a later one's voices).
        Returns what this call's rescan loaded ([] when another rescan covered it)."""
        self._reload_wanted = True
        async with self._reload_lock:
            if not self._reload_wanted:
                return []  # a rescan that started after this was asked for covered it
            self._reload_wanted = False
            loaded = await self._in_loader(self.registry.reload, background=True)
        _LOG.info("voices reloaded: %s", ", ".join(loaded) or "nothing new")
        return loaded

    async def wait_ready(self) -> None:
        """Until the default voice is loaded; re-raises a failure to load it."""
        assert self._loader is not None, "start() first"
        ready = asyncio.ensure_future(self.ready.wait())
        try:
            await asyncio.wait([ready, self._loader], return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if not self.ready.is_set():
            await asyncio.shield(self._loader)  # raises what stopped it

    async def wait_loaded(self) -> None:
        """Until every voice is loaded, those after SERVING too."""
        assert self._loader is not None, "start() first"
        await asyncio.shield(self._loader)

    async def stop(self, grace: float | None = None) -> None:
        """Drain: health NOT_SERVING, new calls refused, running streams finish within `grace`.

        The gRPC server keeps answering while streams drain, so probes see NOT_SERVING and new
        synthesis calls get UNAVAILABLE with a message (rather than a closed port). With
        --drain-delay-seconds, calls are still admitted that long after health goes
        NOT_SERVING, while balancers take the replica out."""
        grace = self.config.grace_seconds if grace is None else grace
        # Voices still loading would keep the process alive past its grace: load no more.
        self.registry.stop_loading()
        was_serving, self.serving = self.serving, False
        await self.health.enter_graceful_shutdown()
        if was_serving and self.config.drain_delay_seconds > 0:
            delay = self.config.drain_delay_seconds
            _LOG.info("not serving: still admitting calls for %.1f s", delay)
            await asyncio.sleep(delay)
        self.admission.drain()  # streams that never half-close finish what they hold
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.admission.idle.wait(), timeout=grace)
        # Streams still speaking past the grace end with a status that says why; gRPC gives
        # it time to reach clients still reading, then cancels whatever is left.
        shut = not self.admission.idle.is_set()
        if shut:
            self.admission.shut(grace)
        await self.grpc.stop(STATUS_GRACE if shut else max(0.0, deadline - loop.time()))
        if self.http is not None:
            await self.http.stop()
        if self._loader is not None and not self._loader.done():
            self._loader.cancel()
        if self._loading is not None:
            # The voice being loaded when the drain began: its thread cannot be interrupted.
            wait = max(grace, LOAD_WAIT_SECONDS)
            try:
                await asyncio.wait_for(asyncio.shield(self._loading), timeout=wait)
            except asyncio.TimeoutError:
                _LOG.warning(
                    "a voice load still running after %g s: stopping without waiting for it (%s)",
                    wait,
                    ", ".join(self.registry.loading()) or "a rescan",
                )
            except Exception:  # its failure was logged where it happened
                pass
        await asyncio.get_running_loop().run_in_executor(None, self.scheduler.shutdown)
        await asyncio.get_running_loop().run_in_executor(None, self.metrics.stop)


def lower_priority() -> None:
    """This thread, and the threads it starts (a family's loader each), at BACKGROUND_NICE.
    Linux keeps a nice value per thread; elsewhere the whole process would change, so there
    it stays as it is."""
    if sys.platform == "linux":
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)


def _scheduler(config: ServerConfig, metrics: Metrics) -> Scheduler:
    """The shared earliest-deadline scheduler of the model work."""
    return Scheduler(
        config.worker_count,
        batch_size=config.batch_vocoder,
        on_wait=metrics.queue_wait,
        wide=config.ort.wide,
    )


def _phrase_cache(config: ServerConfig, metrics: Metrics) -> PhraseCache | None:
    """The phrase cache (--phrase-cache-mb), counted by the metrics; None when it is off."""
    if not config.phrase_cache_mb:
        return None
    cache = PhraseCache(
        config.phrase_cache_mb * 1024 * 1024,
        on_hit=metrics.cache_hit,
        on_miss=metrics.cache_miss,
    )
    metrics.track_cache(lambda: cache.stats.bytes)
    return cache


def _admission(config: ServerConfig, scheduler: Workers, metrics: Metrics) -> Admission:
    """What admits calls, asking `scheduler` how far behind it is; its queue is tracked."""
    admission = Admission(
        config.max_streams,
        overdue=lambda heavy: scheduler.overdue(long_jobs=heavy),
        load=scheduler.load,
        slack=lambda heavy: scheduler.slack(long_jobs=heavy),
        wait=config.admission_wait_seconds,
        per_peer=config.max_streams_per_peer,
        per_tenant=config.max_streams_per_token,
        long_slots=scheduler.long_slots,
        queue_wait=config.queue_wait_seconds,
        max_queued=config.max_queued_calls,
        on_queued=metrics.queued,
    )
    metrics.track_queue(lambda: admission.queued)
    return admission


def _tokens(config: ServerConfig) -> ServerTokens | None:
    """The tokens of the config, following its --auth-tokens-file; OSError when the file no
    longer holds any (changed since the config read it)."""
    if not config.auth_tokens:
        return None
    try:
        return ServerTokens(config.auth_tokens, config.auth_tokens_file)
    except Invalid as exc:
        raise OSError(f"--auth-tokens-file: {exc}") from None


def _grpc_server(
    config: ServerConfig, metrics: Metrics, tokens: ServerTokens | None
) -> grpc.aio.Server:
    """The gRPC server, with its interceptors and transport limits; no service added yet."""
    # The observer first: it also counts and logs the calls TokenAuth refuses.
    interceptors: list[grpc.aio.ServerInterceptor] = [CallObserver(metrics)]
    if tokens is not None:
        interceptors.append(TokenAuth(tokens, protect_reflection=config.reflection_auth))
    age_ms = round(config.max_connection_age_seconds * 1000)
    return grpc.aio.server(
        interceptors=interceptors,
        options=[
            # A request is at most --max-text-chars of text: anything near 1 MiB is abuse,
            # refused by gRPC itself with RESOURCE_EXHAUSTED before it is even parsed.
            ("grpc.max_receive_message_length", 1024 * 1024),
            ("grpc.so_reuseport", 0),
            # Streams open at once on one connection (gRPC's default is unlimited). A rapid
            # reset flood (streams opened and reset in bursts) then cannot crowd out the
            # legitimate calls (bench/floods.py, tests/test_h2_floods.py;
            # docs/reliability.md#http2-floods). Clients and HAProxy queue, or open another
            # connection, past it.
            ("grpc.max_concurrent_streams", MAX_CONCURRENT_STREAMS),
            # GOAWAY to connections this old, so clients reconnect (re-resolving) and spread
            # onto replicas added since. Only new calls move: those running finish on the
            # old connection however long they last (gRPC's default grace, unlimited). A
            # voice agent's stream lasts the whole conversation; cutting it after a grace
            # period cut it mid-sentence (bench/soak.py).
            *([("grpc.max_connection_age_ms", age_ms)] if age_ms else []),
            # A connection that has not finished its TLS and HTTP/2 handshake this soon is
            # closed (gRPC's default: 120 s): silent connections cannot pile up to the
            # process's limit on open files (docs/reliability.md#slow-and-silent-connections).
            ("grpc.server_handshake_timeout_ms", round(config.read_timeout_seconds * 1000)),
            # Keepalive pings on quiet streams and idle connections (PING_INTERVAL_MS).
            ("grpc.http2.min_ping_interval_without_data_ms", PING_INTERVAL_MS),
            ("grpc.keepalive_permit_without_calls", 1),
        ],
    )


def _why_not_listening(host: str, port: int) -> str:
    """What to tell the user when gRPC cannot listen: it gives no reason, the OS does."""
    address = f"{host}:{port}"
    try:
        listening_socket(host, port).close()
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return (
                f"port {port} is already in use on {host} (another voxlite-server?): stop "
                "that server, or choose another port with --port (or VOXLITE_PORT)"
            )
        return f"cannot listen on {address}: {exc.strerror} (check --host and --port)"
    return f"cannot listen on {address} (GRPC_VERBOSITY=debug shows gRPC's reason)"


async def create_server(
    config: ServerConfig, *, workers: Workers | None = None
) -> tuple[VoxliteServer, int]:
    """Build and start a server; it listens at once and serves once its voices are loaded."""
    server = VoxliteServer(config, workers=workers)
    port = await server.start()
    return server, port
