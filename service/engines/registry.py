"""The server's voices, from every engine family: loaded at start, rescanned on SIGHUP."""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ModelError, Unavailable, VoiceNotFound
from .engine import Family, Voice, VoiceSource, language_matches

_LOG = logging.getLogger(__name__)
T = TypeVar("T")


class LoadThreads(Executor):
    """Runs each call on a daemon thread of its own. Loads read files, and a read that never
    returns (a voice file on a hung network mount) must not keep the process alive after its
    drain, as a ThreadPoolExecutor's worker would: Python joins those at exit. Loads are few
    (at start, after SERVING, on SIGHUP), so a thread each costs nothing."""

    def __init__(self, name: str, initializer: Callable[[], None] | None = None) -> None:
        self._name = name
        self._initializer = initializer

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()

        def run() -> None:
            if self._initializer is not None:
                self._initializer()
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # handed to the caller, as an executor does
                future.set_exception(exc)

        threading.Thread(target=run, name=self._name, daemon=True).start()
        return future


@dataclass(frozen=True)
class VoiceFailure:
    """A voice file that was found but could not be loaded."""

    path: str
    reason: str


@dataclass(frozen=True)
class _Loaded:
    voice: Voice
    signature: tuple[int, ...] | None
    """The files' sizes and times as they were before the load read them."""


_STOPPED = "not loaded: the server was shutting down"
_GONE = "the file is gone: the voice keeps being served from memory until the server restarts"


def _signature(source: VoiceSource) -> tuple[int, ...] | None:
    """What tells a changed voice from an unchanged one, without reading its files."""
    try:
        stats = [path.stat() for path in source.files]
    except OSError:
        return None
    return tuple(n for s in stats for n in (s.st_size, s.st_mtime_ns))


def _check_files(source: VoiceSource) -> None:
    """Raises ModelError for a voice file that is not a regular file: a named pipe or a device
    would block the load, or never end it, when read; a folder cannot be a model."""
    for path in source.files:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue  # missing or unreadable: the family's own read says so
        if stat.S_ISDIR(mode):
            raise ModelError(path, "is a folder, not a voice file")
        if not stat.S_ISREG(mode):
            raise ModelError(
                path,
                "is not a regular file (a named pipe, device or socket): put the voice's file "
                "itself there, or a link to it",
            )


class VoiceRegistry:
    """Finds, loads and hands out the voices of every family. One per server."""

    def __init__(
        self,
        families: Sequence[Family],
        *,
        voices_dir: Path | None,
        default_voice: str,
        language_voices: Mapping[str, str] | None = None,
    ) -> None:
        self.voices_dir = voices_dir
        self.default_name = default_voice
        given = dict(language_voices or {})
        # A pair given for a range ("zh") replaces the families' suggestions inside it ("zh-CN").
        suggested = {
            lang: v
            for f in families
            for lang, v in f.default_voices.items()
            if not any(language_matches(lang, wanted) for wanted in given)
        }
        self.language_voices = suggested | given
        self._given = given
        """The pairs the operator gave (--language-voices): each must name a voice found."""
        """A language range's default voice ("zh": "zf_xiaoxiao"), before the rule of
        resolve()."""
        self._families = {family.name: family for family in families}
        self._voices: dict[str, Voice] = {}
        self._signatures: dict[str, tuple[int, ...] | None] = {}
        self.failures: list[VoiceFailure] = []
        self.pending: set[str] = set()
        """Voices found and not loaded yet (load_rest() loads them)."""
        self._first: frozenset[str] = frozenset()
        """The voices load() is loading now, before the server serves."""
        self._pending_languages: dict[str, str] = {}
        """Each pending voice's language, where its family knew it before loading."""
        self._stopping = threading.Event()
        """The server is shutting down: no voice starts loading any more."""

    def _scan(self) -> dict[str, VoiceSource]:
        found: dict[str, VoiceSource] = {}
        for family in self._families.values():
            for source in family.sources(self.voices_dir):
                if source.name in found and found[source.name].family != source.family:
                    _LOG.warning(
                        "voice %s of family %s is also a %s voice: the %s one is served",
                        source.name, source.family, found[source.name].family,
                        found[source.name].family,
                    )  # fmt: skip
                    continue
                found[source.name] = source
        return found

    def load(self) -> None:
        """Load the voices a request gets when it names none: the default (whose failure
        raises), then each language's. The others wait for load_rest(), so that the server
        serves seconds sooner (each Kokoro voice takes about a second to calibrate)."""
        sources = self._scan()
        if self.default_name not in sources:
            raise self._not_found(
                f"default voice '{self.default_name}'", self.default_name, sources
            )
        for language, name in self._given.items():
            if name not in sources:
                # Else the range would get a voice picked by name, while health says SERVING.
                raise self._not_found(f"voice '{name}' for {language}", name, sources)
        first = [self.default_name]
        first += sorted({v for v in self.language_voices.values() if v in sources} - {*first})
        self.pending = {n for n in sources if n not in first}
        self._pending_languages = {n: sources[n].language for n in self.pending}
        self._first = frozenset(first)
        try:
            _, self.failures = self._load(first, sources, required=self.default_name)
        finally:
            self._first = frozenset()

    def _not_found(self, what: str, name: str, sources: Mapping[str, VoiceSource]) -> VoiceNotFound:
        return VoiceNotFound(
            f"{what} not found: put {name}.onnx and {name}.onnx.json in {self.voices_dir} or "
            f"choose one of {', '.join(sorted(sources))}"
        )

    def load_rest(self) -> None:
        """Load the voices load() left out, by name; one that fails is reported in `failures`."""
        sources = self._scan()
        names = sorted(n for n in self.pending if n in sources)
        try:
            _, failures = self._load(names, sources, required=None)
        finally:
            self.pending = set()
        self.failures = self.failures + failures

    def stop_loading(self) -> None:
        """Load no more voices (the server drains): a load in progress finishes the voice
        it is on, from any thread, and the rest are left out."""
        self._stopping.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def loading(self) -> list[str]:
        """The voices load() and load_rest() have yet to load, by name."""
        pending, voices = self.pending | self._first, self._voices
        return sorted(n for n in pending if n not in voices)

    def reload(self) -> list[str]:
        """Rescan the voices folder and load voices that are new or whose files changed; returns
        their names. A voice whose changed file no longer loads keeps serving the model it has,
        and so does one whose file disappeared; both are reported in `failures`, naming the file.
        """
        sources = self._scan()
        changed = [n for n in sorted(sources) if self._signatures.get(n) != _signature(sources[n])]
        loaded, failures = self._load(changed, sources, required=None)
        gone = [
            VoiceFailure(str(self._voices[n].info.files[0]), _GONE)
            for n in sorted(self._voices)
            if n not in sources
        ]
        self.failures = failures + gone
        return loaded

    def _load(
        self, names: list[str], sources: dict[str, VoiceSource], required: str | None
    ) -> tuple[list[str], list[VoiceFailure]]:
        """Load `names`: the names loaded and the failures. Only `required`'s failure raises.

        Each family loads its voices on a thread of its own, in order: the families' models
        are independent, and onnxruntime and the model runs release the GIL, so the Piper
        default and Kokoro's language defaults load side by side on two cores, sooner than
        one family after the other (`python -m bench.startup`;
        docs/benchmarks.md#start-up-and-memory)."""
        voices = dict(self._voices)
        by_family: dict[str, list[str]] = {}
        for name in names:
            by_family.setdefault(sources[name].family, []).append(name)

        def load_family(family_names: list[str]) -> list[_Loaded | VoiceFailure]:
            results: list[_Loaded | VoiceFailure] = []
            for name in family_names:
                if self._stopping.is_set():
                    results.append(VoiceFailure(str(sources[name].files[0]), _STOPPED))
                    continue
                results.append(self._load_one(sources[name], name == required, name in voices))
            return results

        if len(by_family) > 1:
            threads = LoadThreads("voxlite-load")
            futures = [threads.submit(load_family, ns) for ns in by_family.values()]
            # Both threads run to their end before a required voice's failure re-raises.
            wait(futures)
            done = [future.result() for future in futures]
        else:
            done = [load_family(ns) for ns in by_family.values()]
        order = [n for ns in by_family.values() for n in ns]
        outcome = dict(zip(order, [r for results in done for r in results], strict=True))
        loaded: list[str] = []
        failures: list[VoiceFailure] = []
        for name in names:
            result = outcome[name]
            if isinstance(result, VoiceFailure):
                failures.append(result)
                continue
            voices[name] = result.voice
            loaded.append(name)
            self._signatures[name] = result.signature
        # One assignment: readers on other threads see the old set or the new one, never half.
        self._voices = voices
        return loaded, failures

    def _load_one(self, source: VoiceSource, required: bool, kept: bool) -> _Loaded | VoiceFailure:
        """One voice, or why it did not load; a `required` voice's failure raises."""
        signature = _signature(source)  # before reading: a file changed meanwhile reloads
        try:
            _check_files(source)
            voice = self._families[source.family].load(source)
        except Exception as exc:
            # One broken voice file must not stop the others; the default one must load.
            if required:
                raise
            failure = (
                VoiceFailure(exc.path, exc.reason)
                if isinstance(exc, ModelError)
                else VoiceFailure(str(source.files[0]), f"cannot load it: {exc}")
            )
            also = " (the voice keeps its loaded model)" if kept else ""
            _LOG.error(
                "voice %s not loaded%s: %s: %s", source.name, also, failure.path, failure.reason
            )
            return failure
        _LOG.info(
            "voice %s loaded (%s, %d Hz, gain %.2f)",
            source.name, source.family, voice.info.native_rate, voice.gain,
        )  # fmt: skip
        return _Loaded(voice, signature)

    @property
    def default(self) -> Voice:
        return self._voices[self.default_name]

    def voices(self) -> list[Voice]:
        """Loaded voices, default first."""
        return sorted(
            self._voices.values(), key=lambda v: (v.info.name != self.default_name, v.info.name)
        )

    def resolve(self, name: str, language: str = "") -> Voice:
        """The voice a request asks for: by name (which must speak `language` when both are
        given), else the default voice for `language` (language_voices, else the server's
        default if it speaks it, else the first voice by name that does), else the default."""
        if name:
            voice = self.get(name)
            if not language_matches(voice.info.language, language):
                raise VoiceNotFound(
                    f"voice '{voice.info.name}' speaks {voice.info.language}, not {language}: "
                    "name a voice of that language, or leave voice empty"
                )
            return voice
        if not language:
            return self.default
        found = self.for_language(language)
        if found is None and self._may_speak_later(language):
            raise Unavailable(
                f"no voice loaded yet speaks language '{language[:35]}', and "
                f"{len(self.pending)} voice(s) are still loading: retry in a moment"
            )
        if found is None:
            spoken = sorted({v.info.language for v in self._voices.values()})
            shown = language if len(language) <= 35 else language[:35] + "..."
            raise VoiceNotFound(
                f"no voice speaks language '{shown}': this server has {', '.join(spoken)}"
            )
        return found

    def for_language(self, language: str) -> Voice | None:
        """The default voice of a language range, or None if no voice speaks it."""
        voices = self._voices
        # The configured defaults whose voice speaks the range asked for.
        candidates = [
            (wanted, chosen)
            for wanted, name in self.language_voices.items()
            if (chosen := voices.get(name)) is not None
            and language_matches(chosen.info.language, language)
        ]
        for wanted, chosen in candidates:
            if language_matches(language, wanted):
                return chosen
        default = voices.get(self.default_name)
        if default is not None and language_matches(default.info.language, language):
            return default
        # A range wider than a language's default: "zh" gets zh-CN's, not the first by name.
        for wanted, chosen in candidates:
            if language_matches(wanted, language):
                return chosen
        speaking = sorted(
            (v for v in voices.values() if language_matches(v.info.language, language)),
            key=lambda v: v.info.name,
        )
        return speaking[0] if speaking else None

    def _may_speak_later(self, language: str) -> bool:
        """Whether a voice still loading may speak `language` (its family could not tell, or
        it does): then a request for it is told to retry, not that no voice speaks it."""
        languages = self._pending_languages
        return any(
            not languages.get(n) or language_matches(languages[n], language) for n in self.pending
        )

    def may_speak(self, language: str) -> bool:
        """Whether a voice loaded, or still loading, may speak `language`."""
        return self.for_language(language) is not None or self._may_speak_later(language)

    def speaks_for(self, voice: Voice) -> bool:
        """Whether `voice` is what a request of its own language and no voice gets."""
        return self.for_language(voice.info.language) is voice

    def get(self, name: str) -> Voice:
        """The named voice; the default for an empty name."""
        voice = self._voices.get(name or self.default_name)
        if voice is None and name in self.pending:
            raise Unavailable(f"voice '{name}' is still loading: retry in a moment")
        if voice is None:
            failed = [f for f in self.failures if Path(f.path).name.startswith(name + ".")]
            why = f" (its file failed to load: {failed[0].reason})" if failed else ""
            shown = name if len(name) <= 80 else name[:80] + "..."
            raise VoiceNotFound(
                f"voice '{shown}' not found{why}: choose one of {', '.join(sorted(self._voices))}"
            )
        return voice
