"""The Piper voice engine on the real default voice: exactness window by window, the stages'
context, timestamps, parameters."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from voxlite.service.engines.engine import VoiceRequest, VoiceSource
from voxlite.service.engines.piper import EMBEDDED_VOICE, PiperFamily, PiperParams, PiperVoice
from voxlite.service.engines.piper import embedded_voice_files as voice_files
from voxlite.service.engines.piper.calibration import calibrate
from voxlite.service.engines.piper.config import FAMILY, read_voice_info
from voxlite.service.engines.piper.model import PiperModel
from voxlite.service.engines.piper.schedule import VocoderSchedule
from voxlite.service.engines.piper.split import split_graph
from voxlite.service.engines.piper.split_cache import SplitCache
from voxlite.service.engines.piper.stages import Margins
from voxlite.service.engines.runtime import OrtSettings
from voxlite.service.errors import InvalidRequest

from .helpers import one_shot

TEXTS = [
    "Hi.",  # shorter than one vocoder window
    "Sure, I can help with that.",
    "The quick brown fox jumps over the lazy dog. Then it runs away! Would you like to hear more?",
    "Your appointment is on March 3rd at 10:30, with Dr. Smith.",
]
SCHEDULES = [
    VocoderSchedule(),  # the server's schedule
    VocoderSchedule(first=4, growth=1.0, largest=4),
    VocoderSchedule(first=16, growth=1.5, largest=100),
    VocoderSchedule(first=1000, largest=1000),  # one window: the whole sentence
]
QUIET = VoiceRequest(noise_scale=0.0, noise_w=0.0)


def windows(
    voice: PiperVoice, text: str, params: PiperParams, *, wide: bool | None = None
) -> list[np.ndarray]:
    """`text` as one segment, window by window; `wide`: every run wide or narrow (None:
    alternating, as the scheduler may run them)."""
    segment = voice.segment(text, params, word_timestamps=False)
    out: list[np.ndarray] = []
    for turn in itertools.count():
        run_wide = turn % 2 == 0 if wide is None else wide
        window = segment.next_window(0.0, wide=run_wide)
        if window is None:
            return out
        out.append(window)
    raise AssertionError("unreachable")


def variant(
    voice: PiperVoice, *, schedule: VocoderSchedule | None = None, margins: Margins | None = None
) -> PiperVoice:
    """The same model with another schedule or other margins than calibration chose."""
    calibration = (
        voice.calibration if margins is None else replace(voice.calibration, margins=margins)
    )
    return PiperVoice(voice.model, calibration, schedule or voice.schedule)


@pytest.mark.parametrize("schedule", SCHEDULES, ids=lambda s: f"{s.first}x{s.growth}-{s.largest}")
@pytest.mark.parametrize("text", TEXTS)
def test_streamed_audio_equals_one_shot(
    voice: PiperVoice, whole_graph: ort.InferenceSession, text: str, schedule: VocoderSchedule
) -> None:
    got = windows(variant(voice, schedule=schedule), text, voice.params(QUIET), wide=False)
    streamed = np.concatenate(got)
    reference = one_shot(whole_graph, voice, text)
    assert streamed.shape == reference.shape
    assert np.abs(streamed - reference).max() < 1e-4
    if schedule.first < 100:
        assert len(got) > 1, "the vocoder must run window by window"


def test_wide_and_narrow_runs_mixed_in_one_stream_equal_one_shot(
    cache_dir: Path, whole_graph: ort.InferenceSession
) -> None:
    """The scheduler runs a stream's windows wide (two threads, the 1-D kernels) or narrow
    (one thread, the blocked 2-D kernels) by the load of the moment; either way, in any mix,
    the stream equals one-shot synthesis."""
    family = PiperFamily(OrtSettings(intra_op_threads=1, wide_threads=2), SplitCache(cache_dir))
    loaded = family.load(VoiceSource(EMBEDDED_VOICE, FAMILY, voice_files()))
    voice = variant(loaded, schedule=VocoderSchedule(first=8, growth=1.5, largest=24))
    text = TEXTS[2]
    reference = one_shot(whole_graph, voice, text)
    for first_wide in (True, False):
        segment = voice.segment(text, voice.params(QUIET), word_timestamps=False)
        got = []
        for turn in itertools.count():
            window = segment.next_window(0.0, wide=(turn % 2 == 0) == first_wide)
            if window is None:
                break
            got.append(window)
        assert len(got) > 4
        assert np.abs(np.concatenate(got) - reference).max() < 1e-4


def test_margin_below_receptive_field_is_not_exact(
    voice: PiperVoice, whole_graph: ort.InferenceSession
) -> None:
    """Shows the exactness test can fail: tiny windows without context leave seams."""
    margins = replace(voice.calibration.margins, vocoder=0)
    tiny = variant(voice, schedule=VocoderSchedule(first=4, largest=4), margins=margins)
    streamed = np.concatenate(windows(tiny, TEXTS[1], voice.params(QUIET)))
    assert np.abs(streamed - one_shot(whole_graph, voice, TEXTS[1])).max() > 1e-3


def test_each_stage_needs_only_its_own_context(
    voice: PiperVoice, whole_graph: ort.InferenceSession
) -> None:
    """The vocoder runs as its head (about ten frames of context a side, output kept from
    window to window) and its tail, whose own context is a few head samples: one head sample
    fewer than calibrated leaves seams, so the calibrated context is both needed and enough.
    The same holds for the flow's stages."""
    margins = voice.calibration.margins
    stride = voice.model.stages.stride
    assert stride == 8
    assert 0 < margins.tail < stride * margins.vocoder / 4
    text = TEXTS[2]
    reference = one_shot(whole_graph, voice, text)
    schedule = VocoderSchedule(first=4, growth=1.0, largest=4)  # a seam every 4 frames

    def worst(margins: Margins) -> float:
        got = windows(variant(voice, schedule=schedule, margins=margins), text, voice.params(QUIET))
        return float(np.abs(np.concatenate(got) - reference).max())

    assert worst(margins) < 1e-4
    assert worst(replace(margins, tail=margins.tail - 1)) > 1e-4
    # The flow's stages likewise: each needs one coupling layer's context, 8 frames a side.
    assert margins.flow == (8, 8, 8, 8)
    assert worst(replace(margins, flow=(2, 2, 2, 2))) > 1e-4


def test_a_flow_and_vocoder_that_cannot_be_cut_run_whole_and_exact(
    whole_graph: ort.InferenceSession,
) -> None:
    """A voice whose flow and vocoder the split could not cut into stages runs each whole on
    each window with its context: the same audio."""
    model_path, config_path = voice_files()
    whole = split_graph(model_path.read_bytes(), model_path, stages=False)
    info, config = read_voice_info(model_path, config_path)
    model = PiperModel(info, config, whole, OrtSettings())
    voice = PiperVoice(model, calibrate(model, "Sure, I can help with that."))
    assert model.stages.stride == 0
    for text in TEXTS[:3]:
        got = windows(voice, text, voice.params(QUIET))
        assert len(got) > 1 or text == TEXTS[0]
        reference = one_shot(whole_graph, voice, text)
        assert np.abs(np.concatenate(got) - reference).max() < 1e-4


def test_windows_are_produced_lazily(voice: PiperVoice) -> None:
    """Nothing runs before the first window is asked for, and each call runs one window: a
    caller can stop between any two."""
    segment = voice.segment(TEXTS[2], voice.params(QUIET), word_timestamps=False)
    before = [w.runs for w in voice.stage_work()]
    assert segment.total_samples is None  # not even the acoustic part has run
    first = segment.next_window(0.0)
    assert first is not None
    assert first.size == VocoderSchedule().first * voice.hop
    ran = [w.runs - b for w, b in zip(voice.stage_work(), before, strict=True)]
    assert ran[-1] == 1  # one run of the vocoder's last stage: one window
    # Three sentences: the later ones' acoustic part runs when their first window is due.
    assert segment.total_samples is None
    rest = []
    while (window := segment.next_window(0.0)) is not None:
        rest.append(window.size)
    assert segment.total_samples == first.size + sum(rest)


def test_a_busy_start_gets_a_longer_first_window(voice: PiperVoice) -> None:
    params = voice.params(QUIET)
    short = voice.segment(TEXTS[2], params, word_timestamps=False).next_window(0.0)
    long = voice.segment(TEXTS[2], params, word_timestamps=False, long_first=True).next_window(0.0)
    assert short is not None
    assert long is not None
    assert long.size == 2 * short.size


def test_schedule_starts_small_and_grows() -> None:
    spans = list(VocoderSchedule(first=8, growth=2.0, largest=64).windows(300))
    sizes = [b - a for a, b in spans]
    assert sizes[:4] == [8, 16, 32, 64]
    assert spans[0][0] == 0
    assert spans[-1][1] == 300
    assert all(a2 == b1 for (_, b1), (a2, _) in itertools.pairwise(spans))


def test_speaking_rate_changes_length(voice: PiperVoice) -> None:
    def length(rate: float) -> int:
        params = voice.params(replace(QUIET, speaking_rate=rate))
        return sum(w.size for w in windows(voice, TEXTS[1], params))

    assert length(2.0) < length(1.0) * 0.7 < length(0.5) * 0.7


@pytest.mark.parametrize("rate", [0.5, 1.5, 2.0])
def test_speaking_rate_is_heard_in_proportion(voice: PiperVoice, rate: float) -> None:
    """Bug: 2.0 spoke 1.6 times as fast and 0.5 at 0.57: the graph rounds each sound's frames
    up, so its length scale alone is not the rate heard (model.HEARD_RATES maps it)."""

    def samples(asked: float) -> int:
        params = voice.params(replace(QUIET, speaking_rate=asked))
        return sum(w.size for text in TEXTS[2:] for w in windows(voice, text, params))

    assert samples(1.0) / samples(rate) == pytest.approx(rate, rel=0.1)


def test_noise_zero_is_deterministic_and_default_noise_is_not(voice: PiperVoice) -> None:
    def run(params: PiperParams) -> np.ndarray:
        return np.concatenate(windows(voice, TEXTS[1], params))

    quiet = voice.params(QUIET)
    assert np.array_equal(run(quiet), run(quiet))
    noisy = voice.params(VoiceRequest())
    a, b = run(noisy), run(noisy)
    assert a.shape != b.shape or not np.array_equal(a, b)


def test_phoneme_ids_are_pipers(voice: PiperVoice) -> None:
    from piper.phoneme_ids import phonemes_to_ids

    model = voice.model
    for phonemes in model.phonemize(TEXTS[2]):
        assert model.phoneme_ids(phonemes) == phonemes_to_ids(phonemes, model.id_map)


def test_single_speaker_voice_refuses_a_speaker(voice: PiperVoice) -> None:
    with pytest.raises(InvalidRequest, match="single speaker"):
        voice.params(VoiceRequest(speaker="alice"))


def test_calibration_is_measured_once_and_frozen(voice: PiperVoice) -> None:
    calibration = voice.calibration
    assert 0.25 <= voice.gain <= 4.0
    assert voice.gain != 1.0, "calibration should have measured the raw model's peak"
    assert 0 < voice.cost < 1, "one thread synthesizes a Piper voice faster than real time"
    assert calibration.margins.vocoder >= 8
    with pytest.raises(AttributeError):
        calibration.gain = 1.0  # type: ignore[misc]


# -- word timestamps -------------------------------------------------------------------------


def test_word_timestamps_cover_the_words_in_order(voice: PiperVoice) -> None:
    text = "Sure, I can help with that — it's 72 degrees today."
    segment = voice.segment(text, voice.params(QUIET), word_timestamps=True)
    while segment.next_window(0.0) is not None:
        pass
    words = segment.words
    assert [w.word for w in words] == [
        "Sure",
        "I",
        "can",
        "help",
        "with",
        "that",
        "it's",
        "72",
        "degrees",
        "today",
    ]
    assert segment.total_samples is not None
    duration_ms = 1000.0 * segment.total_samples / voice.info.native_rate
    for a, b in itertools.pairwise(words):
        assert a.start_ms <= a.end_ms <= b.start_ms + 1e-6
    assert words[0].start_ms >= 0
    assert words[-1].end_ms <= duration_ms + 1e-6
    # The comma after "Sure" is a pause: a gap between the first two words.
    assert words[1].start_ms - words[0].end_ms > 50
    # "72" is spoken as two words ("seventy two"): it must last longer than "I".
    assert (words[7].end_ms - words[7].start_ms) > (words[1].end_ms - words[1].start_ms)


def test_punctuation_only_tokens_carry_no_word(voice: PiperVoice) -> None:
    segment = voice.segment("Well ... okay - fine !", voice.params(QUIET), word_timestamps=True)
    segment.prepare()
    assert [w.word for w in segment.words] == ["Well", "okay", "fine"]


def test_no_words_unless_asked_for(voice: PiperVoice) -> None:
    segment = voice.segment(TEXTS[1], voice.params(QUIET), word_timestamps=False)
    assert segment.next_window(0.0) is not None
    assert list(segment.words) == []
