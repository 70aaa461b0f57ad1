"""A Piper graph loaded for streaming: espeak-ng phonemes, model ids, the acoustic part and the
staged flow and vocoder (what a voice, its calibration and its segments all run)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import InvalidRequest, ModelError
from .. import espeak, romance
from ..engine import VoiceInfo, VoiceRequest, model_rate
from ..runtime import OrtSettings
from ..written import spoken_stars
from .english import english
from .pieces import cut_phonemes
from .split import SplitGraph
from .stages import Margins, Sentence, load_stages
from .words import phoneme_words

_CONTROL_TO_SPACE = {c: " " for c in [*range(0x20), *range(0x7F, 0xA0)] if chr(c) not in "\t\n\r"}
# An ellipsis or a dash between words ("Hmm... I see", "Sure—let me check", "Well -- it
# depends"): espeak-ng drops it, with its pause, and runs the words together ("Hmm... I see"
# was said "hummeye see"). A comma keeps the pause. Two dots after a word are an ellipsis
# too ("Hi.. how are you"), and espeak-ng 1.52 said a stray "dot" before the text for them.
_PAUSE = re.compile(
    r"(?<=\w)\s*(?:\.{3,}|(?<=[^\W\d_])\.\.|\N{HORIZONTAL ELLIPSIS}+|\N{EM DASH}+|\s--)\s*(?=\w)"
)
# The same two dots ending the text: a full stop.
_TWO_DOTS_AT_END = re.compile(r"(?<=[^\W\d_])\.\.(?=\s*$)")


def _without_stars(text: str) -> str:
    """A rating's stars left out (a figure before them stays), in a language with no words for
    them here: espeak-ng would name each sign."""
    return spoken_stars(text, lambda figure, _, counted: "" if counted else figure)


def _written_out(espeak_voice: str) -> Callable[[str], str]:
    """What rewrites a voice's text before espeak-ng reads it: espeak misreads money, clock
    times, dates, units and the like in English, Spanish, French, Italian and Portuguese; in any
    other language, a rating's stars."""
    if espeak_voice.startswith("en"):
        return english
    language = espeak_voice.split("-")[0]
    if language not in romance.LANGUAGES:
        return _without_stars
    # Much of Latin America (espeak-ng's es-419) writes a decimal point and $ for pesos, which
    # Spain's rules would read as a thousands point and dollars: its amounts go as written.
    return functools.partial(
        romance.spoken, language=language, amounts_too=espeak_voice != "es-419"
    )


HEARD_RATES = (
    (0.25, 0.305), (0.33, 0.393), (0.4, 0.468), (0.5, 0.570), (0.6, 0.663), (0.7, 0.767),
    (0.8, 0.875), (0.9, 0.960), (1.0, 1.0), (1.1, 1.041), (1.25, 1.146), (1.4, 1.293),
    (1.6, 1.476), (1.8, 1.588), (2.0, 1.635), (2.5, 1.797), (3.0, 1.952), (4.0, 2.093),
)  # fmt: skip
"""A Piper voice's rate heard at each model rate (its length scale divided by it): the VITS
graph rounds each sound's frames up, so the rate heard falls behind the length scale's.
Requests go through it (engine.model_rate); python -m bench.rates measured it, on the default
voice's ten replies, noise off (docs/benchmarks.md#speaking-rate-as-heard)."""


@dataclass(frozen=True)
class PiperParams:
    """A request's settings resolved against the voice's defaults (a phrase-cache key)."""

    length_scale: float
    noise_scale: float
    noise_w: float
    speaker_id: int | None = None


def check_fits(info: VoiceInfo, config: Any, split: SplitGraph) -> None:
    """ModelError where the config is another voice's (renamed, or copied beside this model):
    phoneme ids past the model's table fail every request in onnxruntime's words, and a model
    with one speaker would ignore the speaker each request names."""
    where, model = info.files[-1], info.files[0].name
    fix = "this config is another voice's: use the .onnx.json that came with the model"
    highest = max((i for ids in config.phoneme_id_map.values() for i in ids), default=0)
    if split.phoneme_ids and highest >= split.phoneme_ids:
        raise ModelError(
            where,
            f"phoneme_id_map has ids up to {highest}, but {model} knows ids 0 to "
            f"{split.phoneme_ids - 1}: {fix}",
        )
    if not split.speakers:  # a speaker id, but a table of unknown size: nothing to check
        return
    speaker_ids = [config.num_speakers - 1, *config.speaker_id_map.values()]
    if (config.num_speakers > 1) != (split.speakers > 1) or max(speaker_ids) >= split.speakers:
        raise ModelError(
            where,
            f"num_speakers is {config.num_speakers} (speaker ids up to {max(speaker_ids)}), but "
            f"{model} has {split.speakers} speaker(s): {fix}",
        )


class PiperModel:
    """A Piper graph loaded for streaming. Thread-safe: espeak-ng runs under the process's one
    espeak lock (it keeps global state), the sessions run concurrently."""

    def __init__(
        self,
        info: VoiceInfo,
        config: dict[str, Any],
        split: SplitGraph,
        ort_settings: OrtSettings,
    ) -> None:
        from piper import PiperVoice
        from piper.config import PiperConfig

        self.info = info
        try:
            self._config = PiperConfig.from_dict(config)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError(info.files[-1], f"not a Piper voice config ({exc!r})") from exc
        check_fits(info, self._config, split)
        # Only phonemize() and phonemes_to_ids() are used: they never touch the session.
        self._phonemizer = PiperVoice(session=None, config=self._config)
        self._written_out = _written_out(self._config.espeak_voice)
        self.hop = self._config.hop_length
        """Samples per latent frame."""
        self.id_map = self._config.phoneme_id_map
        try:
            self._acoustic = ort_settings.session(split.acoustic)
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelError(info.files[0], f"onnxruntime cannot load the graph ({exc})") from exc
        self.stages = load_stages(split, self.hop, ort_settings, info.files[0])
        self._acoustic_inputs = {i.name for i in self._acoustic.get_inputs()}
        self._acoustic_outputs = [o.name for o in self._acoustic.get_outputs()]
        self.durations = split.durations
        """The acoustic output with each phoneme id's frames (the graph's Ceil)."""

    def params(self, request: VoiceRequest) -> PiperParams:
        """Resolve a request's settings against this voice's defaults."""
        cfg = self._config
        return PiperParams(
            length_scale=cfg.length_scale / model_rate(request.speaking_rate, HEARD_RATES),
            noise_scale=cfg.noise_scale if request.noise_scale is None else request.noise_scale,
            noise_w=cfg.noise_w_scale if request.noise_w is None else request.noise_w,
            speaker_id=self._speaker_id(request.speaker),
        )

    def _speaker_id(self, speaker: str) -> int | None:
        """The model's speaker id for a speaker name or number; None on single-speaker voices."""
        cfg = self._config
        if cfg.num_speakers <= 1:
            if speaker:
                raise InvalidRequest(
                    f"voice '{self.info.name}' has a single speaker: leave speaker empty"
                )
            return None
        if not speaker:
            return cfg.default_speaker_id
        if speaker in cfg.speaker_id_map:
            return cfg.speaker_id_map[speaker]
        if speaker.isdigit() and int(speaker) < cfg.num_speakers:
            return int(speaker)
        raise InvalidRequest(
            f"voice '{self.info.name}' has no speaker '{speaker}': use a name from ListVoices "
            f"or a number from 0 to {cfg.num_speakers - 1}"
        )

    def phonemize(self, text: str) -> list[list[str]]:
        """Phonemes of each sentence espeak finds in `text` (empty sentences dropped)."""
        # espeak-ng takes a C string: a NUL would end the text there (Python refuses it), and
        # other control characters carry nothing to speak.
        text = text.translate(_CONTROL_TO_SPACE)
        text = _TWO_DOTS_AT_END.sub(".", _PAUSE.sub(", ", self._written_out(text)))
        text = espeak.bounded(text)
        with espeak.LOCK:
            return [s for s in self._phonemizer.phonemize(text) if s]

    def sentences(self, text: str) -> list[list[str]]:
        """`text` as the acoustic part will run it: espeak's sentences, each cut further into
        pieces of at most MAX_IDS model ids (cut_phonemes), so that no run's cost (which grows
        with the square of its length) or memory grows with what the text expands to."""
        return [piece for s in self.phonemize(text) for piece in cut_phonemes(s, self._ids)]

    def _ids(self, phonemes: Sequence[str]) -> int:
        return len(self.phoneme_ids(phonemes))

    def phoneme_ids(self, phonemes: Sequence[str]) -> list[int]:
        """Model input ids, exactly as Piper makes them."""
        return self._phonemizer.phonemes_to_ids(list(phonemes))

    def count_phoneme_words(self, word: str) -> tuple[int, int]:
        """How many espeak words, and spoken phonemes, one text word becomes on its own."""
        groups = [g for s in self.phonemize(word) for g in phoneme_words(s)]
        return len(groups), sum(len(g) for g in groups)

    def acoustic(self, ids: Sequence[int], params: PiperParams) -> dict[str, np.ndarray]:
        """The acoustic part on one sentence's ids: durations, and the flow's inputs (with the
        graph inputs later parts read, such as the speaker id)."""
        feed: dict[str, np.ndarray] = {
            "input": np.asarray([ids], dtype=np.int64),
            "input_lengths": np.asarray([len(ids)], dtype=np.int64),
            "scales": np.asarray(
                [params.noise_scale, params.length_scale, params.noise_w], dtype=np.float32
            ),
        }
        if params.speaker_id is not None:
            feed["sid"] = np.asarray([params.speaker_id], dtype=np.int64)
        feed = {k: v for k, v in feed.items() if k in self._acoustic_inputs}
        outputs = self._acoustic.run(self._acoustic_outputs, feed)
        return {**feed, **dict(zip(self._acoustic_outputs, outputs, strict=True))}

    def sentence(self, ids: Sequence[int], params: PiperParams, margins: Margins) -> Sentence:
        """One sentence after the acoustic part, ready to run window by window."""
        return Sentence(self.stages, self.acoustic(ids, params), margins)
