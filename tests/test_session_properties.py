"""Property tests of the session logic: random sequences of text, flush, clear and half-close,
on the real voice, checked against the ordering guarantees a voice agent relies on."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from voxlite.service.audio.settings import Encoding, resolve_audio_settings
from voxlite.service.call.events import (
    AudioEvent,
    ClearDoneEvent,
    Event,
    FlushDoneEvent,
    FormatEvent,
    SummaryEvent,
    TimestampsEvent,
)
from voxlite.service.call.session import Session, StreamSettings
from voxlite.service.capacity.scheduler import Scheduler
from voxlite.service.engines.engine import Voice, VoiceRequest

T = TypeVar("T")
# One short sentence per text operation, each with a word no other contains, so that the
# timestamps of a segment tell which operation its text came from.
WORDS = ["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India",
         "Juliet", "Kilo", "Lima", "Mike", "November"]  # fmt: skip

Op = tuple[str, int]
ops_strategy = st.lists(
    st.one_of(
        st.tuples(st.just("text"), st.just(0)),
        st.tuples(st.just("flush"), st.just(0)),
        st.tuples(st.just("clear"), st.just(0)),
        st.tuples(st.just("read"), st.integers(0, 4)),  # let the caller read a few events first
    ),
    max_size=len(WORDS),
)


async def drive(voice: Voice, ops: list[Op]) -> tuple[list[Event], list[tuple[str, Any]]]:
    """Run `ops` against a session; returns the events and the requests as sent."""
    audio = resolve_audio_settings(Encoding.PCM_S16LE)
    params = voice.params(VoiceRequest(noise_scale=0.0, noise_w=0.0))
    settings = StreamSettings(voice, params, audio, True)
    scheduler = Scheduler(1)  # the server's scheduler, with one worker
    try:
        return await _drive(Session(settings, scheduler), ops)
    finally:
        scheduler.shutdown()


async def _drive(session: Session, ops: list[Op]) -> tuple[list[Event], list[tuple[str, Any]]]:
    events: list[Event] = []
    arrived = asyncio.Condition()

    async def consume() -> None:
        async for event in session.events():
            async with arrived:
                events.append(event)
                arrived.notify_all()

    consumer = asyncio.ensure_future(consume())
    sent: list[tuple[str, Any]] = []
    words = iter(WORDS)
    next_id = 1
    for kind, n in ops:
        if kind == "text":
            word = next(words)
            session.push_text(f"{word}. ")
            sent.append(("text", word))
        elif kind in ("flush", "clear"):
            getattr(session, kind)(next_id)
            sent.append((kind, next_id))
            next_id += 1
        else:
            # Let the caller read up to n more events, or fewer if none come for a moment
            # (there may be nothing left to say).
            target = len(events) + n

            def enough(target: int = target) -> bool:
                return len(events) >= target

            async with arrived:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(arrived.wait_for(enough), 0.3)
    session.end()
    await asyncio.wait_for(consumer, 120)
    return events, sent


def check(events: list[Event], sent: list[tuple[str, Any]]) -> None:
    # Format first and summary last, exactly once each.
    assert isinstance(events[0], FormatEvent)
    assert isinstance(events[-1], SummaryEvent)
    assert sum(isinstance(e, (FormatEvent, SummaryEvent)) for e in events) == 2
    # Audio sequence numbers without gaps.
    audio = [e for e in events if isinstance(e, AudioEvent)]
    assert [a.sequence for a in audio] == list(range(len(audio)))
    # Every flush and clear acknowledged once, in the order they were sent.
    assert [e.id for e in events if isinstance(e, FlushDoneEvent)] == [
        i for k, i in sent if k == "flush"
    ]
    assert [e.id for e in events if isinstance(e, ClearDoneEvent)] == [
        i for k, i in sent if k == "clear"
    ]

    segment_word = {e.segment: e.text.rstrip(".") for e in events if isinstance(e, TimestampsEvent)}
    # Each segment's timestamps come before its audio.
    seen_stamps: set[int] = set()
    for e in events:
        if isinstance(e, TimestampsEvent):
            seen_stamps.add(e.segment)
        elif isinstance(e, AudioEvent):
            assert e.segment in seen_stamps
    # Nothing older than a clear arrives after its ClearDone, and ClearDone names the last
    # sequence number sent before it.
    last_sequence = -1
    for position, e in enumerate(events):
        if isinstance(e, AudioEvent):
            last_sequence = e.sequence
        if not isinstance(e, ClearDoneEvent):
            continue
        assert e.last_sequence == last_sequence
        cleared_at = sent.index(("clear", e.id))
        older = {w for k, w in sent[:cleared_at] if k == "text"}
        for later in events[position + 1 :]:
            if isinstance(later, TimestampsEvent):
                assert later.text.rstrip(".") not in older
            if isinstance(later, AudioEvent):
                assert segment_word[later.segment] not in older
    # A flush with no clear after it: all text sent before it (since the last clear) is spoken
    # before its FlushDone. Without any clear, everything sent is spoken.
    for k, flush_id in sent:
        if k != "flush":
            continue
        at = sent.index(("flush", flush_id))
        if any(kind == "clear" for kind, _ in sent[at:]):
            continue
        since = max([i for i, (kind, _) in enumerate(sent[:at]) if kind == "clear"], default=-1)
        expected = {w for kind, w in sent[since + 1 : at] if kind == "text"}
        done = next(
            i for i, e in enumerate(events) if isinstance(e, FlushDoneEvent) and e.id == flush_id
        )
        spoken = {e.text.rstrip(".") for e in events[:done] if isinstance(e, TimestampsEvent)}
        assert expected <= spoken
    if not any(k == "clear" for k, _ in sent):
        assert set(segment_word.values()) == {w for k, w in sent if k == "text"}
    summary = events[-1]
    assert isinstance(summary, SummaryEvent)
    assert summary.audio_ms == pytest.approx(sum(a.duration_ms for a in audio))


@pytest.mark.asyncio
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy)
async def test_session_keeps_its_ordering_guarantees(voice: Voice, ops: list[Op]) -> None:
    events, sent = await drive(voice, ops)
    check(events, sent)


@pytest.mark.asyncio
async def test_the_checker_catches_a_leak_after_clear(voice: Voice) -> None:
    """The property is not vacuous: audio of cleared text after the ClearDone fails it."""
    events, sent = await drive(voice, [("text", 0), ("read", 3), ("clear", 0), ("text", 0)])
    check(events, sent)
    done = next(i for i, e in enumerate(events) if isinstance(e, ClearDoneEvent))
    old_audio = next(e for e in events[:done] if isinstance(e, AudioEvent))
    leaked: list[Event] = []
    for e in [*events[: done + 1], old_audio, *events[done + 1 :]]:
        # Renumbered, so that only the clear's guarantee is broken.
        audio_so_far = sum(isinstance(x, AudioEvent) for x in leaked)
        leaked.append(replace(e, sequence=audio_so_far) if isinstance(e, AudioEvent) else e)
    with pytest.raises(AssertionError, match="not in"):
        check(leaked, sent)


@pytest.mark.asyncio
@pytest.mark.parametrize("end", ["aclose", "cancel"])
async def test_a_session_ended_at_its_format_still_closes(voice: Voice, end: str) -> None:
    """Bug: a call that ended while its format was being sent (the client gone, or the reader
    refusing the stream's first text at that moment) closed the events before their cleanup
    began: the session stayed in the admission's list and its runner open, one more each
    time."""
    audio = resolve_audio_settings(Encoding.PCM_S16LE)
    settings = StreamSettings(voice, voice.params(VoiceRequest()), audio, True)
    scheduler = Scheduler(1)
    try:
        session = Session(settings, scheduler)
        closed: list[str] = []
        session.closers.append(lambda: closed.append("closed"))
        events = session.events()
        assert isinstance(await events.__anext__(), FormatEvent)
        if end == "aclose":  # what contextlib.aclosing does as the handler ends
            await events.aclose()
        else:
            with pytest.raises(asyncio.CancelledError):
                await events.athrow(asyncio.CancelledError())
        assert closed == ["closed"]
    finally:
        scheduler.shutdown()
