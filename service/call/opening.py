"""A call's session opened: its settings read against a voice, the admission's answer, the
session made. Both edges (grpc/api.py, http/openai_api.py) open their calls here, so that every
call meets the same admission, limits, phrase cache and scheduler."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..audio.settings import AudioSettings
from ..capacity.admission import Admission, Caller, Slot
from ..engines.cache import CachedVoice, PhraseCache
from ..engines.engine import Voice, VoiceRequest
from ..engines.registry import VoiceRegistry
from ..errors import InvalidRequest, Unavailable, VoiceNotFound
from ..jobs import Workers
from . import markup, textlang
from .segmenter import Segmenter
from .session import Session, SessionLimits, StreamSettings


class CallConfig(Protocol):
    """A call's settings as its edge read them (a gRPC SynthesisConfig, an HTTP speech body):
    the voice it asks for, and what is read and checked once the voice is known."""

    @property
    def voice(self) -> str:
        """A voice's name; "" for the language's default."""
        ...

    @property
    def language(self) -> str:
        """A BCP-47 language range; "" with no voice either: the text's script picks."""
        ...

    @property
    def word_timestamps(self) -> bool: ...

    def voice_request(self) -> VoiceRequest:
        """The voice settings, each checked against its range; raises InvalidRequest."""
        ...

    def audio_settings(self) -> AudioSettings:
        """The output asked for, resolved and checked; raises InvalidRequest."""
        ...


@dataclass(frozen=True, eq=False)
class SessionOpener:
    """Opens the sessions of a server's calls: the voice resolved, the call admitted (by who
    calls, and what its voice costs), the session made on the scheduler's workers and known to
    the admission (a drain ends what is still open)."""

    registry: VoiceRegistry
    workers: Workers
    admission: Admission
    max_text_chars: int
    """A call's text at most, and a session's text accepted but not yet spoken."""
    cache: PhraseCache | None = None
    shared_cache: bool = False
    """With tokens, tenants share phrase-cache entries (else each has its own)."""

    def settings(
        self, config: CallConfig, caller: Caller | None = None, first: str = ""
    ) -> StreamSettings:
        """Check a call's config and resolve it against the voice; raises with what to fix.
        `first`: the text of the call's first segment, whose script picks the voice when the
        config names neither voice nor language. With tokens, each tenant has phrase-cache
        entries of its own unless they are shared."""
        voice = self._voice(config, first)
        request = config.voice_request()
        audio = config.audio_settings()
        params = voice.params(request)
        if self.cache is not None:
            scope = None if self.shared_cache or caller is None else caller.tenant
            voice = CachedVoice(voice, self.cache, scope)
        by_text = not (config.voice or config.language)
        return StreamSettings(voice, params, audio, config.word_timestamps, by_text)

    def _voice(self, config: CallConfig, first: str) -> Voice:
        """The voice the config names, else its language's, else that of the language `first`
        is written in (Han: Mandarin, kana: Japanese, Cyrillic: Russian, ...), else the
        server's default."""
        if config.voice or config.language:
            return self.registry.resolve(config.voice, config.language)
        script = textlang.text_script(first)
        language = textlang.text_language(first)
        if script is None or language is None:
            return self.registry.default
        try:
            return self.registry.resolve("", language)
        except (VoiceNotFound, Unavailable) as exc:
            raise type(exc)(
                "a call that names neither voice nor language gets the voice of the language "
                f"its text is written in, here '{language}' for its {script.name}: {exc}"
            ) from None

    async def open(
        self,
        caller: Caller,
        config: CallConfig,
        first: str = "",
        segments: list[str] | None = None,
        wait: float | None = None,
        taken: bool = False,
    ) -> tuple[Session, Slot]:
        """A session for `config` once the admission takes the call, and its slot, to give
        back with Admission.leave() when it ends. `first`: the text of its first segment.
        `segments`: a whole text's call (Synthesize, HTTP), cut as its session cuts it: such a
        call waits in the admission's queue for room (`wait`: how long at most; None: the
        server's setting), and needs none when the phrase cache holds every segment (no model
        work). `taken`: a stream taken before the drain began (Admission.enter)."""
        settings = self.settings(config, caller, first)
        if segments is not None and settings.voice.first_clause_chars:
            segments = segments_of("".join(segments), settings.voice.first_clause_chars)
        # Only streams with long jobs are budgeted: the others are weighed by the load.
        voice = settings.voice
        cost = voice.cost if voice.long_jobs else 0.0
        if segments is None:
            slot = await self.admission.admit(caller, cost, taken=taken)
        else:
            check_readable(voice, "".join(segments), self.registry, settings.by_text)
            if _replayed(settings, segments):
                slot = self.admission.enter(caller=caller, free=True)
            else:
                slot = await self.admission.queue(caller, cost, wait=wait)
        session = self._session(settings)
        slot.quiet = session.quiet_for
        return session, slot

    def _session(self, settings: StreamSettings) -> Session:
        runner = self.workers.runner(long_jobs=settings.voice.long_jobs)
        session = Session(
            settings,
            runner,
            limits=SessionLimits(max_buffered_chars=self.max_text_chars),
            load=first_window_load(self.workers, long_jobs=settings.voice.long_jobs),
            behind=lambda: behind(self.workers),
        )
        # Known to the admission for the whole call: a drain ends what is still open, this
        # one too when it begins during the drain (a stream whose voice waited for its text).
        self.admission.sessions.add(session)
        if self.admission.draining:
            session.end_when_quiet(self.admission.drain_quiet)
        session.closers.append(runner.close)
        session.closers.append(lambda: self.admission.sessions.discard(session))
        return session


def first_window_load(workers: Workers, *, long_jobs: bool) -> Callable[[], float]:
    """The load that sizes a new reply's first window (Session's `load`). A voice with long
    jobs (Kokoro) reads none while a light stream (Piper) is at work: there the light streams'
    short windows make most of the load, and a Kokoro reply's first piece cut short brings
    its first audio sooner with no more English gaps (`bench.capacity --levels 12+2`). With
    Kokoro streams alone the load counts: a whole first piece spares the work of two, and
    the queue is theirs (`bench.seeds`)."""
    if not long_jobs:
        return workers.load
    return lambda: 0.0 if workers.light_at_work() else workers.load()


def behind(workers: Workers) -> bool:
    """Whether a short job is due and still waits for a worker: a new reply's first window
    would wait too (Session's `behind`). Short jobs only: a Kokoro piece held back for a
    long-job slot leaves a worker free for a first window."""
    return workers.slack(long_jobs=False) <= 0.0


def check_readable(voice: Voice, text: str, registry: VoiceRegistry, by_text: bool = False) -> None:
    """Refuse text in a script the voice cannot read (Piper reads a Han character out as
    "Chinese letter", Arabic as "Arabic letter"; Kokoro drops Hangul and says nothing), saying
    which voice of `registry` reads it, or that none does; and text with a character the
    voice has no reading for (a rare Han character to a Mandarin voice). `by_text`: the
    text's start picked the voice (StreamSettings.by_text)."""
    found = textlang.unreadable(text, voice.info.language)
    if found is not None:
        ch, script = found
        readers = [r for r in script.readers if registry.may_speak(r)]
        if readers and by_text:
            fix = (
                ": its voice was picked by the script of the text's first sentence; set "
                f"language to '{readers[0]}' (or voice to a voice of it) to speak the whole "
                "text in it, or send each language in a call of its own"
            )
        elif readers:
            fix = (
                f": set language to '{readers[0]}' or voice to a voice of it, or leave both "
                "voice and language empty to get the voice of the language the text is written in"
            )
        else:
            spoken = ", ".join(sorted({v.info.language for v in registry.voices()}))
            fix = (
                ", and no voice of this server speaks it: send text in a language it has "
                f"({spoken})"
            )
        raise InvalidRequest(
            f"the text has {script.name} ('{ch}'), which voice '{voice.info.name}' "
            f"({voice.info.language}) cannot speak{fix}"
        )
    unread = voice.no_reading(text)
    if unread is not None:
        raise InvalidRequest(
            f"the text has '{unread}' (U+{ord(unread):04X}), which voice "
            f"'{voice.info.name}' has no reading for: write it another way or leave it out"
        )


def segments_of(text: str, first_clause_chars: int = 0) -> list[str]:
    """`text` cut as a session of a voice with `first_clause_chars` (Voice.first_clause_chars)
    cuts it, less the blank segments it skips (a whole text's first segment picks its voice
    when the call names none)."""
    segmenter = Segmenter(first_clause_chars=first_clause_chars)
    return [s for s in [*segmenter.push(text), *segmenter.flush()] if s.strip()]


def opening_text(text: str, segments: list[str]) -> str:
    """The start of a whole `text`, cut into `segments` (segments_of), that picks its voice when
    the call names none: up to the end of its first segment with words (one of only emoji or
    marks tells no language), and on while that leaves the language open (textlang.settled)."""
    end = 0
    for segment in segments:
        start = text.find(segment, end)
        if start < 0:  # not cut from this text: its own script decides
            return textlang.settled(segment, segment)
        end = start + len(segment)
        if textlang.has_words(markup.spoken(segment)):
            return textlang.settled(text, text[:end])
    return ""


def _replayed(settings: StreamSettings, segments: list[str]) -> bool:
    """Whether the phrase cache holds every segment: the call needs no model work."""
    voice = settings.voice
    return (
        bool(segments)
        and isinstance(voice, CachedVoice)
        and all(
            voice.cached(
                markup.spoken(s).strip(), settings.params, word_timestamps=settings.word_timestamps
            )
            for s in segments
        )
    )
