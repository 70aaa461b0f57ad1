"""Prometheus metrics of one server, on their own registry, served on their own HTTP port."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)

from .http import MetricsHTTPServer


class CallSummary(Protocol):
    """What the metrics read of a call's summary (call.events.SummaryEvent)."""

    @property
    def audio_ms(self) -> float: ...

    @property
    def real_time_factor(self) -> float: ...


SYNTHESIS_METHODS = frozenset(
    {"TextToSpeechService/Synthesize", "TextToSpeechService/StreamingSynthesize"}
)
"""Methods counted in `voxlite_active_streams` (as `method` labels: service/method)."""

_TTFA_BUCKETS = (0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0)
_RTF_BUCKETS = (0.02, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0)
_QUEUE_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0)
_WAIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class Metrics:
    """The server's counters, gauges and histograms.

    Each server has its own registry (several servers may share a process, as in the tests).
    Without a port the figures are still kept in memory, unserved: callers never check."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        # What prometheus_client registers globally by default: CPU, memory, open files, GC.
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)
        GCCollector(registry=r)
        self._calls = Counter(
            "voxlite_calls", "Finished calls by method and status code.", ["method", "code"],
            registry=r,
        )  # fmt: skip
        self._active = Gauge("voxlite_active_streams", "Synthesis calls in progress.", registry=r)
        self._ttfa = Histogram(
            "voxlite_time_to_first_audio_seconds",
            "From a call's first text to its first audio chunk, per call that sent audio, cut "
            "ones included.",
            buckets=_TTFA_BUCKETS,
            registry=r,
        )
        self._rtf = Histogram(
            "voxlite_real_time_factor",
            "Synthesis time / audio time, per call (the Summary's; under 1 is faster than "
            "real time).",
            buckets=_RTF_BUCKETS,
            registry=r,
        )
        self._queue_wait = Histogram(
            "voxlite_scheduler_queue_wait_seconds",
            "How long a model run waited for a worker.",
            buckets=_WAIT_BUCKETS,
            registry=r,
        )
        self._queued = Gauge(
            "voxlite_queued_calls",
            "Synthesize calls waiting in line for room (--max-queued-calls at most).",
            registry=r,
        )
        self._queue_waits = Histogram(
            "voxlite_call_queue_wait_seconds",
            "How long a Synthesize call waited in line for room, by outcome (admitted, or "
            "refused when its wait ran out).",
            ["outcome"],
            buckets=_QUEUE_BUCKETS,
            registry=r,
        )
        self._cache_hits = Counter(
            "voxlite_phrase_cache_hits", "Phrases served from the cache.", registry=r
        )
        self._cache_misses = Counter(
            "voxlite_phrase_cache_misses", "Phrases looked up and not found.", registry=r
        )
        self._cache_bytes = Gauge(
            "voxlite_phrase_cache_bytes", "Audio held by the phrase cache.", registry=r
        )
        self._voices_loaded = Gauge("voxlite_voices_loaded", "Voices ready.", registry=r)
        self._voices_failed = Gauge(
            "voxlite_voices_failed", "Voice files that failed to load.", registry=r
        )
        self._http: MetricsHTTPServer | None = None

    # -- what the rest of the server calls ---------------------------------------------------

    def call_started(self, method: str) -> None:
        if method in SYNTHESIS_METHODS:
            self._active.inc()

    def call_finished(
        self,
        method: str,
        code: str,
        summary: CallSummary | None,
        first_audio_ms: float | None = None,
    ) -> None:
        """`code` is the status code's name ("OK", "NOT_FOUND"); `summary` the call's last
        SummaryEvent, if it got that far; `first_audio_ms` its time to first audio, if it sent
        any (a call cut before its summary has one too)."""
        self._calls.labels(method=method, code=code).inc()
        if method in SYNTHESIS_METHODS:
            self._active.dec()
        if first_audio_ms is not None:
            self._ttfa.observe(first_audio_ms / 1000.0)
        if summary is not None and summary.audio_ms > 0:
            self._rtf.observe(summary.real_time_factor)

    def queue_wait(self, seconds: float) -> None:
        self._queue_wait.observe(seconds)

    def queued(self, seconds: float, admitted: bool) -> None:
        """A call left the line after `seconds`: admitted, or refused."""
        self._queue_waits.labels(outcome="admitted" if admitted else "refused").observe(seconds)

    def track_queue(self, depth: Callable[[], int]) -> None:
        """Read the number of calls in line from `depth` at each scrape."""
        self._queued.set_function(depth)

    def cache_hit(self) -> None:
        self._cache_hits.inc()

    def cache_miss(self) -> None:
        self._cache_misses.inc()

    def track_cache(self, size: Callable[[], int]) -> None:
        """Read the phrase cache's size in bytes from `size` at each scrape."""
        self._cache_bytes.set_function(size)

    def track_voices(self, counts: Callable[[], tuple[int, int]]) -> None:
        """Read (loaded, failed) voice counts from `counts` at each scrape, so loads and
        SIGHUP reloads need not report."""
        self._voices_loaded.set_function(lambda: counts()[0])
        self._voices_failed.set_function(lambda: counts()[1])

    # -- the HTTP endpoint -------------------------------------------------------------------

    def serve(self, host: str, port: int, ready: Callable[[], bool] = lambda: True) -> int:
        """Serve /metrics, and /readyz from `ready()`, on host:port (host as --host: "[::]" is
        every interface); returns the port. Raises OSError when it cannot listen."""
        server = MetricsHTTPServer((host, port), self.registry, ready)
        server.start()
        self._http = server
        return int(server.server_address[1])

    def stop(self) -> None:
        """Stop serving (blocks up to the HTTP server's half-second poll)."""
        if self._http is not None:
            server, self._http = self._http, None
            server.stop()
