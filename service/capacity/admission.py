"""Admission: which calls the server takes now, which wait a moment, which it refuses."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import AtCapacity, Overloaded, Unavailable

if TYPE_CHECKING:
    from ..call.session import Session

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
    park_after: float = 2.0
    """Seconds a stream must have had nothing to speak before a new call that finds a limit
    full (--max-streams, per peer, per token, the budget of costly voices) may take its slot:
    an LLM's tokens come tens of milliseconds apart within a reply, so a stream this quiet is
    between replies (or never sent text). The quiet stream takes a slot again, as a new call
    would, when its next text arrives."""
    open_streams: int = 4
    """Streams open at once, with a slot or quiet without one, at most this many times
    --max-streams: a quiet stream costs memory, not model work, but not without bound."""
    heavy_share: float = 0.9
    """Calls whose voices have long jobs (Voice.long_jobs: a Kokoro stream takes about half a
    core) are taken while their costs add up to at most this share of the workers long jobs
    may hold now (the scheduler's long_slots: all of them while no light stream speaks), so
    that they never crowd out the light streams; one more waits or is refused. The first is
    always taken, whatever its measured cost, so that a busy moment at load cannot make a
    voice unusable."""
    longest_queue_wait: float = 60.0
    """A Synthesize call with a deadline waits in the queue up to it, at most this long: its
    caller has said how long it will wait for the reply (queue_wait is for calls that set no
    deadline); max_queued bounds the memory the line holds."""


@dataclass(frozen=True)
class Caller:
    """Who a call is for the limits: its client's address, and its tenant (a token's digest)
    when tokens are asked for."""

    peer: str = ""
    tenant: str | None = None


@dataclass(eq=False)
class Slot:
    """A call's place among the streams the limits count. A quiet stream's slot may go to a
    new call (it is parked: `held` false) until the stream has text again."""

    caller: Caller = field(default_factory=Caller)
    cost: float = 0.0
    """Its voice's worker seconds per second of audio, when its jobs run long (else 0)."""
    held: bool = True
    quiet: Callable[[], float] = lambda: 0.0
    """Seconds its stream has had nothing to speak (0 while it speaks): set once the call
    has a session."""


class Admission:
    """How many synthesis calls run now; refuses calls over the limits (all calls, one client
    address, one tenant), when the machine is at capacity (after waiting up to `wait` seconds
    for it to have room), while starting and while draining."""

    def __init__(
        self,
        max_streams: int,
        overdue: Callable[[bool], float] = lambda heavy: 0.0,
        load: Callable[[], float] = lambda: 0.0,
        slack: Callable[[bool], float] = lambda heavy: math.inf,
        wait: float = 0.0,
        policy: AdmissionPolicy | None = None,
        *,
        per_peer: int = 0,
        per_tenant: int = 0,
        long_slots: Callable[[], int] = lambda: 1,
        queue_wait: float = 0.0,
        max_queued: int = 0,
        on_queued: Callable[[float, bool], None] = lambda seconds, admitted: None,
    ) -> None:
        self.max_streams = max_streams
        self._long_slots = long_slots
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
        self._held: set[Slot] = set()
        """The slots calls hold now."""
        self._parked: set[Slot] = set()
        """Quiet streams' slots given to other calls: open, counted by no limit."""
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
        self.queue_wait = queue_wait
        """Seconds a call that can wait (queue()) may wait for room, at most."""
        self.max_queued = max_queued
        self.queued = 0
        """Calls in queue(), waiting their turn or first in it."""
        # One line for voices with long jobs, one for the others: an English call that the
        # machine has room for never waits behind a Kokoro call waiting for a long-job slot.
        self._queues = {True: asyncio.Lock(), False: asyncio.Lock()}
        self._on_queued = on_queued
        """Told how long each queued call waited, and whether it was admitted (metrics)."""
        self._open = False
        self.sessions: set[Session] = set()
        """The calls' sessions, for the drain to end what is still open."""
        self.idle = asyncio.Event()
        """Set while no call is open: with a slot, parked, or waiting for its voice."""
        self.idle.set()
        self.drained = asyncio.Event()
        """Set once the drain begins: streams waiting for their first sentence to pick their
        voice, which hold no slot yet, watch it."""
        self.unvoiced = 0
        """Streams taken that wait for their first sentence to pick their voice."""

    # -- lifecycle ----------------------------------------------------------------------------

    def open(self) -> None:
        """The voices are loaded: calls are taken from now on."""
        self._open = True

    def drain(self) -> None:
        """Shutting down: new calls are refused; a running stream ends once it is quiet (has
        spoken what it holds, and no text came for `drain_quiet` seconds), or when its client
        half-closes: a reply still arriving is spoken to its end."""
        self.drained.set()
        for session in list(self.sessions):
            session.end_when_quiet(self.drain_quiet)

    def shut(self, grace: float) -> None:
        """The drain's grace is over: end the streams still speaking, each with a status that
        says why and how much of it was spoken (once what is queued for it is written)."""
        # No grace: the operator asked the server twice to stop (its drain was cut short).
        when = f"after its {grace:g} s grace" if grace > 0 else "at once, its drain cut short"
        for session in list(self.sessions):
            session.fail(
                Unavailable(
                    f"the server is shutting down and ended this stream {when}, "
                    f"{session.spoken_seconds:.1f} s of audio in: retry the rest on another "
                    "replica"
                )
            )

    def check_open(self) -> None:
        """Refuse a call now if the server is starting or draining (before its settings are
        read: the voices may not be loaded yet)."""
        if self.drained.is_set():
            raise Unavailable("the server is shutting down: retry on another replica")
        if not self._open:
            raise Unavailable("the server is starting (loading voices): retry in a moment")

    @property
    def draining(self) -> bool:
        return self.drained.is_set()

    # -- calls --------------------------------------------------------------------------------

    async def admit(
        self,
        caller: Caller = Caller(),
        cost: float = 0.0,
        *,
        slot: Slot | None = None,
        taken: bool = False,
    ) -> Slot:
        """enter(), but a call that finds the machine at capacity waits, in arrival order, up
        to `wait` seconds for room before it is refused: a moment's crowd of new calls is
        taken a little later instead of turned away. `slot`: a parked stream's, taken again.
        `taken`: as enter()'s."""
        policy = self.policy
        give_up = time.monotonic() + self.wait
        if not self._line.locked():
            try:
                return self.enter(caller=caller, cost=cost, slot=slot, taken=taken)
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
                    return self.enter(
                        policy.waiter_max_load,
                        policy.waiter_slack,
                        caller,
                        cost,
                        slot=slot,
                        taken=taken,
                    )
                except AtCapacity:
                    if time.monotonic() + policy.poll > give_up:
                        raise
                await asyncio.sleep(policy.poll)
        finally:
            self.waiting_calls -= 1
            self._line.release()

    async def queue(
        self, caller: Caller = Caller(), cost: float = 0.0, *, wait: float | None = None
    ) -> Slot:
        """enter(), for a call that can wait (a Synthesize caller waits for its reply anyway):
        one that finds the machine at capacity waits its turn, first come first served, up to
        `wait` seconds (what its deadline leaves; at most policy.longest_queue_wait) or, with
        no deadline, queue_wait, among at most max_queued calls.
        Only capacity is waited for: a stream limit refuses at once, as it does every call."""
        if self.queue_wait <= 0 or self.max_queued <= 0:
            return await self.admit(caller, cost)  # no queue: the short wait of every call
        policy = self.policy
        wait = self.queue_wait if wait is None else max(0.0, min(wait, policy.longest_queue_wait))
        line = self._queues[cost > 0]
        if not line.locked():
            try:
                return self.enter(caller=caller, cost=cost)
            except AtCapacity:
                if wait <= 0:
                    raise
        if self.queued >= self.max_queued:
            raise AtCapacity(
                f"the server is at capacity and its queue is full ({self.queued} calls wait, "
                "the most it holds: --max-queued-calls): retry in a moment or on another replica"
            )
        ahead = self.queued
        started = time.monotonic()
        give_up = started + wait
        self.queued += 1
        admitted = False
        try:
            try:
                await asyncio.wait_for(line.acquire(), max(0.0, give_up - time.monotonic()))
            except TimeoutError:
                raise self._expired(wait, ahead) from None
            try:
                while True:
                    try:
                        slot = self.enter(policy.waiter_max_load, policy.waiter_slack, caller, cost)
                    except AtCapacity:
                        if time.monotonic() + policy.poll > give_up:
                            raise self._expired(wait, ahead) from None
                    else:
                        admitted = True
                        return slot
                    await asyncio.sleep(policy.poll)
            finally:
                line.release()
        finally:
            self.queued -= 1
            self._on_queued(time.monotonic() - started, admitted)

    def _expired(self, wait: float, ahead: int) -> AtCapacity:
        return AtCapacity(
            f"the server is at capacity: this call waited {wait:.3g} s in the queue, behind "
            f"{ahead} other calls, and {self.queued - 1} others wait now (the wait is at most "
            f"--queue-wait-seconds, {self.queue_wait:g} s, or the call's deadline): retry in a "
            "moment or on another replica"
        )

    @property
    def waiting(self) -> bool:
        """Some call is waiting for room."""
        return self._line.locked()

    @property
    def parked(self) -> int:
        """Streams open without a slot: quiet ones whose slot went to another call."""
        return len(self._parked)

    def quiet_streams(self) -> int:
        """Streams holding a slot that a new call could take now (quiet for park_after)."""
        park = self.policy.park_after
        return sum(1 for slot in self._held if 0 < slot.quiet() >= park)

    def enter(
        self,
        max_load: float | None = None,
        min_slack: float = 0.0,
        caller: Caller = Caller(),
        cost: float = 0.0,
        *,
        slot: Slot | None = None,
        free: bool = False,
        taken: bool = False,
    ) -> Slot:
        """Count a call in, or refuse it now. `cost`: its voice's worker seconds per second
        of audio. `slot`: a parked stream's, taken again (its caller and cost count). `free`:
        the call needs no model work (its text is all in the phrase cache): only the stream
        limits count, not the machine's capacity. `taken`: a stream the server took before
        its drain began, which now has its voice: the drain speaks its text, as it does a
        running stream's."""
        policy = self.policy
        if not taken:
            self.check_open()
        if slot is not None:
            caller, cost = slot.caller, slot.cost
        else:
            self._check_open_streams()
        victims = self._stream_limits(caller)
        if not free:
            if cost > 0:
                self._costly_budget(cost, victims)
            self._check_capacity(
                cost > 0, policy.max_load if max_load is None else max_load, min_slack
            )
        return self._take(slot or Slot(caller, cost), victims)

    def _check_open_streams(self) -> None:
        """Refuse a new call while the streams open, with a slot or parked, are the most the
        server keeps."""
        opened = len(self._held) + len(self._parked)
        if opened >= self.policy.open_streams * self.max_streams:
            raise Overloaded(
                f"the server has {opened} streams open, the most it keeps "
                f"({self.policy.open_streams} times --max-streams), {len(self._parked)} of "
                "them quiet: end streams that have nothing to say, or retry on another replica"
            )

    def _stream_limits(self, caller: Caller) -> list[Slot]:
        """The slots to park so that `caller` fits every stream limit (per token, per peer,
        all calls), or Overloaded. A full limit takes the slot of a stream quiet for a while,
        if there is one; chosen here, parked only once every check has passed."""
        victims: list[Slot] = []
        tenant = caller.tenant
        if self.per_tenant and tenant is not None:
            same = lambda s: s.caller.tenant == tenant  # noqa: E731
            if self._count(same, victims) >= self.per_tenant and not self._victim(same, victims):
                raise Overloaded(
                    f"this token already has {self.per_tenant} streams speaking, the most one "
                    "may have here (--max-streams-per-token): end one first"
                )
        if self.per_peer:
            near = lambda s: s.caller.peer == caller.peer  # noqa: E731
            if self._count(near, victims) >= self.per_peer and not self._victim(near, victims):
                raise Overloaded(
                    f"this client address already has {self.per_peer} streams speaking, the "
                    "most one may have here (--max-streams-per-peer): end one first"
                )
        anyone = lambda s: True  # noqa: E731
        if self._count(anyone, victims) >= self.max_streams and not self._victim(anyone, victims):
            raise Overloaded(
                f"the server is at its limit of {self.max_streams} concurrent streams "
                "speaking (--max-streams): retry later or on another replica"
            )
        return victims

    def _costly_budget(self, cost: float, victims: list[Slot]) -> None:
        """Fit a call whose voice has long jobs into the costly voices' budget (heavy_share of
        the long slots), adding quiet costly streams to `victims` as needed, or AtCapacity."""
        budget = self.policy.heavy_share * self._long_slots()
        costly = lambda s: s.cost > 0  # noqa: E731
        while self._count(costly, victims):
            if self._heavy - sum(v.cost for v in victims) + cost <= budget:
                return
            if not self._victim(costly, victims):
                raise AtCapacity(
                    "the server is at capacity for voices of this cost (each takes about "
                    f"{cost:.0%} of a core, and {self._heavy_calls} already speak): retry in "
                    "a moment or on another replica"
                )

    def _check_capacity(self, heavy: bool, max_load: float, min_slack: float) -> None:
        """Refuse a call that needs model work while the machine is at capacity; else note
        when the call was taken."""
        policy = self.policy
        # The streams already here come first: one more would make them all stutter. A light
        # call is weighed by the short jobs alone (the long ones have slots of their own): a
        # costly stream that falls behind is refused its like, never the cheap callers.
        if (late := self._overdue(heavy)) > policy.overdue:
            raise AtCapacity(
                f"the server is at capacity (its model work runs {late * 1000:.0f} ms late): "
                "retry in a moment or on another replica"
            )
        slack = self._slack(heavy)
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

    def _take(self, slot: Slot, victims: list[Slot]) -> Slot:
        """Hold `slot` (new, or a parked stream's again), parking `victims` for it."""
        for victim in victims:
            self._release(victim)
            victim.held = False
            self._parked.add(victim)
        self._parked.discard(slot)
        slot.held = True
        self._hold(slot)
        return slot

    def _count(self, match: Callable[[Slot], bool], victims: list[Slot]) -> int:
        """Slots held that `match`, less those already chosen to be parked."""
        return sum(1 for s in self._held if match(s)) - sum(1 for v in victims if match(v))

    def _victim(self, match: Callable[[Slot], bool], victims: list[Slot]) -> bool:
        """Choose the held slot that `match` whose stream has been quiet longest, if for at
        least `park_after` seconds; False if there is none."""
        quiet = [(s.quiet(), s) for s in self._held if match(s) and s not in victims]
        if not quiet:
            return False
        seconds, slot = max(quiet, key=lambda pair: pair[0])
        if seconds <= 0 or seconds < self.policy.park_after:
            return False  # 0: it speaks
        victims.append(slot)
        return True

    def _hold(self, slot: Slot) -> None:
        self._held.add(slot)
        self.active += 1
        if slot.cost > 0:
            self._heavy += slot.cost
            self._heavy_calls += 1
        self._by_peer[slot.caller.peer] += 1
        if slot.caller.tenant is not None:
            self._by_tenant[slot.caller.tenant] += 1
        self.idle.clear()

    def _release(self, slot: Slot) -> None:
        self._held.discard(slot)
        self.active -= 1
        if slot.cost > 0:
            self._heavy_calls -= 1
            self._heavy = max(0.0, self._heavy - slot.cost) if self._heavy_calls else 0.0
        peer, tenant = slot.caller.peer, slot.caller.tenant
        self._by_peer[peer] -= 1
        if not self._by_peer[peer]:
            del self._by_peer[peer]
        if tenant is not None:
            self._by_tenant[tenant] -= 1
            if not self._by_tenant[tenant]:
                del self._by_tenant[tenant]

    def leave(self, slot: Slot) -> None:
        """The call is over: its slot (or its place among the parked) is free."""
        if slot.held:
            self._release(slot)
            slot.held = False
        self._parked.discard(slot)
        self._check_idle()

    @contextlib.contextmanager
    def unvoiced_stream(self) -> Iterator[None]:
        """A stream taken that waits for its first sentence to pick its voice, until it holds
        its slot or ends: an open call, which the drain waits for as for the others."""
        self.unvoiced += 1
        self.idle.clear()
        try:
            yield
        finally:
            self.unvoiced -= 1
            self._check_idle()

    def _check_idle(self) -> None:
        if self.active == 0 and not self._parked and not self.unvoiced:
            self.idle.set()
