"""Admission: which calls the server takes now, which wait a moment, which it refuses."""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import AtCapacity, Overloaded, Unavailable

if TYPE_CHECKING:
    from .session import Session

DRAIN_QUIET = 2.0
"""Seconds without input after which a draining server ends a stream that has spoken all it
holds: an LLM's tokens come tens of milliseconds apart within a reply, so a stream this quiet
is between replies, and its caller's next reply goes to another replica."""


@dataclass(frozen=True)
class AdmissionPolicy:
    """When the machine counts as at capacity; bench/capacity.py chose each figure and
    docs/benchmarks.md has its runs."""

    max_load: float = 0.93
    """New calls are refused while the workers were busier than this lately: queues only grow."""
    overdue: float = 0.0
    """...or while a queued job is this late (a stream is down to its last 300 ms of audio, or
    a first window waited past the scheduler's grace): laxer bars let everyone stutter."""
    busy_slack: float = 0.5
    """The load counts only while a queued job is due within this many seconds: workers kept
    busy by streams far ahead of their listeners are no reason to refuse a call."""
    busy_load: float = 0.8
    """Over this load, calls are let in one at a time (busy_admit_interval apart)..."""
    busy_admit_interval: float = 0.2
    """...a little faster than the server finishes calls at capacity, so a crowd of retrying
    callers cannot overshoot."""
    waiter_max_load: float = 0.8
    """A call that waited is let in only below this load: at the first dip under max_load the
    machine stays at its edge and calls stutter..."""
    waiter_slack: float = 0.1
    """...and only while no queued job is due within this many seconds (nobody short of audio)."""
    poll: float = 0.01
    """How often a waiting call looks again, in seconds."""
    heavy_share: float = 0.9
    """Calls whose voices have long jobs (Voice.long_jobs: a Kokoro stream takes about half a
    core) are taken while their costs add up to at most this share of the workers long jobs
    may hold (all but one: scheduler.LONG_JOB), so that they never crowd out the light
    streams; one more is refused at once. The first is always taken, whatever its measured
    cost, so that a busy moment at load cannot make a voice unusable."""


@dataclass(frozen=True)
class Caller:
    """Who a call is for the limits: its client's address, and its tenant (a token's digest)
    when tokens are asked for."""

    peer: str = ""
    tenant: str | None = None


class Admission:
    """How many synthesis calls run now; refuses calls over the limits (all calls, one client
    address, one tenant), when the machine is at capacity (after waiting up to `wait` seconds
    for it to have room), while starting and while draining."""

    def __init__(
        self,
        max_streams: int,
        overdue: Callable[[], float] = lambda: 0.0,
        load: Callable[[], float] = lambda: 0.0,
        slack: Callable[[], float] = lambda: math.inf,
        wait: float = 0.0,
        policy: AdmissionPolicy | None = None,
        *,
        per_peer: int = 0,
        per_tenant: int = 0,
        workers: int = 1,
    ) -> None:
        self.max_streams = max_streams
        self.workers = workers
        self.drain_quiet = DRAIN_QUIET
        """Seconds without input after which a drain ends a stream with nothing left to say."""
        self._heavy = 0.0
        """What the calls with long jobs admitted cost, together..."""
        self._heavy_calls = 0
        """...and how many they are."""
        self.per_peer = per_peer
        self.per_tenant = per_tenant
        self._by_peer: Counter[str] = Counter()
        self._by_tenant: Counter[str] = Counter()
        self.wait = wait
        self.policy = policy or AdmissionPolicy()
        self._line = asyncio.Lock()
        self._overdue = overdue
        self._load = load
        self._slack = slack
        self._admitted_at = -math.inf
        self.active = 0
        self.waiting_calls = 0
        """Calls waiting for room, in line or first in it."""
        self._open = False
        self._draining = False
        self.sessions: set[Session] = set()
        """The calls' sessions, for the drain to end what is still open."""
        self.idle = asyncio.Event()
        self.idle.set()

    # -- lifecycle ----------------------------------------------------------------------------

    def open(self) -> None:
        """The voices are loaded: calls are taken from now on."""
        self._open = True

    def drain(self) -> None:
        """Shutting down: new calls are refused; a running stream ends once it is quiet (has
        spoken what it holds, and no text came for `drain_quiet` seconds), or when its client
        half-closes: a reply still arriving is spoken to its end."""
        self._draining = True
        for session in list(self.sessions):
            session.end_when_quiet(self.drain_quiet)

    def shut(self, grace: float) -> None:
        """The drain's grace is over: end the streams still speaking, each with a status that
        says why and how much of it was spoken (once what is queued for it is written)."""
        for session in list(self.sessions):
            session.fail(
                Unavailable(
                    f"the server is shutting down and ended this stream after its {grace:g} s "
                    f"grace, {session.spoken_seconds:.1f} s of audio in: retry the rest on "
                    "another replica"
                )
            )

    def check_open(self) -> None:
        """Refuse a call now if the server is starting or draining (before its settings are
        read: the voices may not be loaded yet)."""
        if self._draining:
            raise Unavailable("the server is shutting down: retry on another replica")
        if not self._open:
            raise Unavailable("the server is starting (loading voices): retry in a moment")

    @property
    def draining(self) -> bool:
        return self._draining

    # -- calls --------------------------------------------------------------------------------

    async def admit(self, caller: Caller = Caller(), cost: float = 0.0) -> None:
        """enter(), but a call that finds the machine at capacity waits, in arrival order, up
        to `wait` seconds for room before it is refused: a moment's crowd of new calls is
        taken a little later instead of turned away."""
        policy = self.policy
        give_up = time.monotonic() + self.wait
        if not self._line.locked():
            try:
                return self.enter(caller=caller, cost=cost)
            except AtCapacity:
                if self.wait <= 0:
                    raise
        self.waiting_calls += 1
        try:
            await asyncio.wait_for(self._line.acquire(), max(0.0, give_up - time.monotonic()))
        except TimeoutError:
            self.waiting_calls -= 1
            raise AtCapacity(
                f"the server is at capacity (calls are waiting for room; this one waited "
                f"{self.wait * 1000:.0f} ms): retry in a moment or on another replica"
            ) from None
        except BaseException:
            self.waiting_calls -= 1
            raise
        try:
            while True:
                try:
                    return self.enter(policy.waiter_max_load, policy.waiter_slack, caller, cost)
                except AtCapacity:
                    if time.monotonic() + policy.poll > give_up:
                        raise
                await asyncio.sleep(policy.poll)
        finally:
            self.waiting_calls -= 1
            self._line.release()

    @property
    def waiting(self) -> bool:
        """Some call is waiting for room."""
        return self._line.locked()

    def enter(
        self,
        max_load: float | None = None,
        min_slack: float = 0.0,
        caller: Caller = Caller(),
        cost: float = 0.0,
    ) -> None:
        """Count a call in, or refuse it now. `cost`: its voice's worker seconds per second
        of audio."""
        policy = self.policy
        max_load = policy.max_load if max_load is None else max_load
        self.check_open()
        if self.active >= self.max_streams:
            raise Overloaded(
                f"the server is at its limit of {self.max_streams} concurrent streams: retry "
                "later or on another replica"
            )
        if self.per_peer and self._by_peer[caller.peer] >= self.per_peer:
            raise Overloaded(
                f"this client address already has {self.per_peer} streams, the most one may "
                "have here (--max-streams-per-peer): end one first"
            )
        tenant = caller.tenant
        if self.per_tenant and tenant is not None and self._by_tenant[tenant] >= self.per_tenant:
            raise Overloaded(
                f"this token already has {self.per_tenant} streams, the most one may have "
                "here (--max-streams-per-token): end one first"
            )
        heavy = cost > 0
        budget = policy.heavy_share * max(1, self.workers - 1)
        if heavy and self._heavy_calls and self._heavy + cost > budget:
            raise AtCapacity(
                "the server is at capacity for voices of this cost (each takes about "
                f"{cost:.0%} of a core, and {self._heavy_calls} already speak): retry in "
                "a moment or on another replica"
            )
        # The streams already here come first: one more would make them all stutter.
        if (late := self._overdue()) > policy.overdue:
            raise AtCapacity(
                f"the server is at capacity (its model work runs {late * 1000:.0f} ms late): "
                "retry in a moment or on another replica"
            )
        slack = self._slack()
        if slack < min_slack:
            raise AtCapacity(
                f"the server is at capacity (a stream's audio is due within {slack * 1000:.0f} "
                "ms): retry in a moment or on another replica"
            )
        # Busy workers are a danger only to streams with little audio in hand. With nothing
        # waiting they are one caller's calls back to back; with every waiting job due in a
        # while they are streams synthesizing ahead of their listeners.
        load = self._load() if slack < policy.busy_slack else 0.0
        if load > max_load:
            raise AtCapacity(
                f"the server is at capacity (its model workers are {load:.0%} busy): retry in "
                "a moment or on another replica"
            )
        # Near capacity, calls are let in one at a time: the load is an average over seconds,
        # and a crowd of retrying callers let in together would overshoot it.
        now = time.monotonic()
        if load > policy.busy_load and now - self._admitted_at < policy.busy_admit_interval:
            raise AtCapacity(
                f"the server is near capacity (its model workers are {load:.0%} busy) and has "
                "just taken another call: retry in a moment or on another replica"
            )
        self._admitted_at = now
        self.active += 1
        if heavy:
            self._heavy += cost
            self._heavy_calls += 1
        self._by_peer[caller.peer] += 1
        if tenant is not None:
            self._by_tenant[tenant] += 1
        self.idle.clear()

    def leave(self, caller: Caller = Caller(), cost: float = 0.0) -> None:
        self.active -= 1
        if cost > 0:
            self._heavy_calls -= 1
            self._heavy = max(0.0, self._heavy - cost) if self._heavy_calls else 0.0
        self._by_peer[caller.peer] -= 1
        if not self._by_peer[caller.peer]:
            del self._by_peer[caller.peer]
        if caller.tenant is not None:
            self._by_tenant[caller.tenant] -= 1
            if not self._by_tenant[caller.tenant]:
                del self._by_tenant[caller.tenant]
        if self.active == 0:
            self.idle.set()
