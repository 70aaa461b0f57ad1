"""One Kokoro voice (a style table over the family's shared model) and its segments."""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ...errors import InvalidRequest
from ...jobs import Batch
from ..engine import Calibrated, Calibration, ModelSteps, VoiceInfo, VoiceRequest, WordTiming
from .decode import (
    HOP,
    LEAD_AFTER_WORD,
    LEAD_DECODED,
    LEAD_KEPT,
    PAUSE_DECODED,
    SAMPLE_RATE,
    WINDOWS,
    ChunkSchedule,
    Encoded,
    KokoroModel,
    Pauses,
    WindowedDecode,
    pauses_of,
)
from .g2p import G2P, in_words
from .tokens import CUT_SIDE_TOKENS, Piece, cut_pieces, cut_side

# Tokens in one piece: the decoder's time grows with its frames, so the budget bounds how long
# a piece's decoder run holds a worker while other streams wait, and most clauses of a reply
# still fit one piece, whose prosody a cut would break (docs/kokoro.md, "How a segment is
# spoken"; bench.kokoro).
TOKEN_BUDGET = 64
FRAME_MS = 1000.0 * HOP / SAMPLE_RATE
# For the scheduler's estimate of a step before its text went through G2P: tokens a character
# becomes (between Mandarin's and Japanese's) and frames a token lasts (docs/kokoro.md, Pieces).
TOKENS_PER_CHARACTER = 3.5
FRAMES_PER_TOKEN = 3.0
# A segment's first pieces when its listener has nothing in hand (a reply's start): the first
# FIRST_TOKENS (a clause's first words: the reply's first audio waits for them), each next one
# as long as the decoder, on one thread, makes in DECODE_SHARE of the audio in hand when it
# starts (the rest covers the wait for a worker and the estimate's error), until pieces reach
# the token budget (docs/kokoro.md#first-pieces: bench.ttfa --language zh, the judge's CER).
FIRST_TOKENS = 24
DECODE_SHARE = 0.7
# When the workers are busy (`long_first`) the first piece waits for a worker anyway, so a
# segment that fits in one piece is not cut: two pieces each decode their own pads, about a
# tenth more work for a short sentence. A longer segment keeps the short first piece: the
# scheduler serves a later piece by when its listener needs it, and a long first piece would
# push the segment's last byte back (docs/kokoro.md#first-pieces, bench.seeds).
# A later segment's first pieces grow the same way, from FIRST_TOKENS and the audio in hand
# when it starts: cut shorter, a short clause falls apart into words Whisper mishears
# ("今天天气 | 很好"), with a pause at each cut (docs/kokoro.md#first-pieces).
# At most this many first pieces get budgets of their own (a reply's growth reaches the token
# budget in three to five).
SOFT_PIECES = 8
# Worker seconds G2P takes per character, Japanese (the dearer script) given G2P_CHARS
# characters at a time (docs/kokoro.md#g2p-of-long-text): the first step of a long segment runs
# its G2P whole, and must count as the long job it is.
G2P_SECONDS_PER_CHARACTER = 0.00015
# The Spanish, French, Italian and Portuguese voices say a short word poorly on its own and
# well in its sentence ("Hola," alone is heard as "Polar", "Olá," as "pula": Whisper base,
# test_kokoro_server.py's Spanish reply): a reply's first clause shorter than this goes on with
# the next (whose segment's first piece budgets() still keeps short).
FIRST_CLAUSE_CHARS = {"es": 8, "fr": 8, "it": 8, "pt": 8}


@dataclass(frozen=True)
class KokoroParams:
    """A request's settings for a Kokoro voice: only the speed. Kokoro draws no noise (its
    export is deterministic), so noise_scale and noise_w change nothing and are not kept."""

    speed: float


class KokoroVoice(Calibrated):
    """A Kokoro voice: one style table [510, 1, 256] (row n - 1 for a piece of n tokens) and
    the G2P of its language, over the family's shared model. Thread-safe."""

    def __init__(
        self,
        info: VoiceInfo,
        styles: np.ndarray,
        model: KokoroModel,
        g2p: G2P,
        vocab: Mapping[str, int],
        *,
        calibration: Calibration,
        token_budget: int = TOKEN_BUDGET,
        chunks: ChunkSchedule | None = None,
        late: ChunkSchedule | None = WINDOWS,
    ) -> None:
        self.info = info
        self.pauses = pauses_of(info.language)
        """How much of each piece's closing pause is spoken, by its last mark."""
        self.calibration = calibration
        self._styles = styles
        self._model = model
        self._g2p = g2p
        self._vocab = vocab
        self.token_budget = token_budget
        self.chunks = chunks
        """Every piece decoded window by window with this schedule (a benchmark's option)."""
        self.late = late
        """Without `chunks`: the windows of a piece whose whole decode the listener cannot wait
        for (a reply's first piece, with nothing in hand); other pieces are decoded whole,
        exactly. None: every piece whole."""

    @property
    def long_jobs(self) -> bool:
        return True

    @property
    def first_clause_chars(self) -> int:
        return FIRST_CLAUSE_CHARS.get(self.info.language.split("-")[0], 0)

    def no_reading(self, text: str) -> str | None:
        return self._g2p.no_reading(text)

    def variant(
        self,
        *,
        token_budget: int | None = None,
        chunks: ChunkSchedule | None = None,
        late: ChunkSchedule | None = WINDOWS,
        calibration: Calibration | None = None,
    ) -> KokoroVoice:
        """The same voice (its model, tables, and by default gain and cost) with other settings
        for cutting and decoding its pieces."""
        return KokoroVoice(
            self.info,
            self._styles,
            self._model,
            self._g2p,
            self._vocab,
            calibration=calibration or self.calibration,
            token_budget=token_budget or self.token_budget,
            chunks=chunks,
            late=late,
        )

    @property
    def vocab(self) -> Mapping[str, int]:
        """Phoneme character -> token id."""
        return self._vocab

    @property
    def model(self) -> KokoroModel:
        """The family's shared model."""
        return self._model

    def style(self, tokens: int) -> np.ndarray:
        """The style row for a piece of `tokens` tokens, [1, 256]."""
        row: np.ndarray = self._styles[min(tokens, len(self._styles)) - 1].reshape(1, -1)
        return row

    def params(self, request: VoiceRequest) -> Hashable:
        if request.speaker:
            raise InvalidRequest(
                f"voice '{self.info.name}' has a single speaker: leave speaker empty"
            )
        return KokoroParams(speed=float(request.speaking_rate))

    def segment(
        self, text: str, params: Hashable, *, word_timestamps: bool, long_first: bool = False
    ) -> KokoroSegment:
        if not isinstance(params, KokoroParams):
            raise TypeError(f"not the params of a Kokoro voice: {params!r}")
        return KokoroSegment(
            self, text, params, word_timestamps=word_timestamps, long_first=long_first
        )

    def pieces(
        self, text: str, soft: Sequence[int] = (), *, whole_if_one: bool = False
    ) -> list[Piece]:
        """`text` through G2P, cut into pieces (`soft`: smaller budgets for the first ones,
        tokens.cut_pieces; `whole_if_one`: no soft budgets if the text fits in one piece)."""
        words = in_words(self._g2p, text)
        if whole_if_one and soft:
            whole = cut_pieces(words, self._vocab, self.token_budget)
            if len(whole) <= 1:
                return whole
        return cut_pieces(words, self._vocab, self.token_budget, soft)

    def budgets(self, ahead: float) -> tuple[int, ...]:
        """The first pieces' token budgets for a segment whose listener has `ahead` seconds
        of audio in hand (see FIRST_TOKENS), each until one reaches the token budget: none
        when the audio in hand covers a piece at the budget."""
        per_frame = self.cost * FRAME_MS / 1000
        overhead = LEAD_DECODED + PAUSE_DECODED
        in_hand, least = max(0.0, ahead), FIRST_TOKENS
        out: list[int] = []
        # Bounded: where one thread decodes slower than real time the budgets stop growing, and
        # the pieces after these go at the token budget.
        while len(out) < SOFT_PIECES:
            frames = DECODE_SHARE * in_hand / per_frame - overhead
            tokens = max(least, int(frames / FRAMES_PER_TOKEN))
            if tokens >= self.token_budget:
                return tuple(out)
            out.append(tokens)
            decode = per_frame * (FRAMES_PER_TOKEN * tokens + overhead)
            in_hand = max(0.0, in_hand - decode) + FRAMES_PER_TOKEN * tokens * FRAME_MS / 1000
            least = tokens
        return tuple(out)

    def encode(self, piece: Piece, params: KokoroParams) -> Encoded:
        """The piece through the encoder, its pads cut to what the decoder needs (with windows,
        the whole closing pause: a window's norms are decoded with its share of it)."""
        windows = self.late is not None or self.chunks is not None
        pause = None if windows else kept_pause(piece, self.pauses) + PAUSE_DECODED
        return self._model.encode(piece.ids, self.style(len(piece.ids)), params.speed, pause=pause)

    def decode(self, enc: Encoded, *, wide: bool = False) -> np.ndarray:
        return self._model.decode(enc, wide=wide)

    def windowed(
        self, enc: Encoded, schedule: ChunkSchedule, span: tuple[int, int]
    ) -> WindowedDecode:
        return WindowedDecode(self._model, enc, schedule, *span)

    def synthesize(self, text: str, params: KokoroParams | None = None) -> np.ndarray:
        """All of `text`, each piece decoded whole (before gain), as a segment emits it."""
        params = params or KokoroParams(1.0)
        parts = []
        for piece in self.pieces(text):
            enc = self.encode(piece, params)
            first, end = emitted(piece, enc, self.pauses)
            parts.append(self.decode(enc)[first * HOP : end * HOP])
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    def calibrated(self, text: str, *, cost: float | None = None) -> KokoroVoice:
        """This voice measured on `text` (see calibrate()), as a new voice."""
        return self.variant(
            chunks=self.chunks, late=self.late, calibration=calibrate(self, text, cost=cost)
        )


def calibrate(
    voice: KokoroVoice, text: str, *, cost: float | None = None, target_peak: float = 0.8
) -> Calibration:
    """`gain` such that `text` peaks at `target_peak`, and `cost` from timing it on one thread
    (this thread's CPU time: other processes on the machine do not inflate it), or the given
    cost (the family's voices share one model: one measure serves all)."""
    params = KokoroParams(1.0)
    started = time.thread_time()
    parts = [
        voice.decode(voice.encode(piece, params), wide=cost is not None)
        for piece in voice.pieces(text)
    ]
    spent = time.thread_time() - started
    audio = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    peak = float(np.abs(audio).max()) if audio.size else 0.0
    gain = float(np.clip(target_peak / peak, 0.25, 4.0)) if peak > 1e-4 else 1.0
    measured = spent / max(audio.size / SAMPLE_RATE, 1e-3)
    return Calibration(gain, cost if cost is not None else measured)


class KokoroSegment(ModelSteps):
    """One text segment: G2P and cutting on the first window, then one piece per window (its
    encoder run and one decoder run on all its frames), or, for a piece the listener cannot wait for
    (or with the voice's chunk schedule), one decoder window per call. Nothing runs outside
    next_window(); dropping the segment between two calls leaves nothing running."""

    def __init__(
        self,
        voice: KokoroVoice,
        text: str,
        params: KokoroParams,
        *,
        word_timestamps: bool,
        long_first: bool = False,
    ) -> None:
        self._voice = voice
        self._long_first = long_first
        """The workers are busy: a segment that fits in one piece is one piece (see
        FIRST_TOKENS), and with windows a first window twice as long, which the first audio
        waits for anyway, leaves the next one time to be made on one thread."""
        self._text = text
        self._params = params
        self._word_timestamps = word_timestamps and voice.info.word_timestamps
        self._pieces: list[Piece] | None = None
        self._encoded: list[Encoded | None] = []
        self._next = 0
        """Index of the next piece to start."""
        self._windowed: WindowedDecode | None = None
        self._words: list[WordTiming] = []
        self._timed_frames = 0
        """Frames the segment emits before the next piece to be encoded (its words' clock)."""
        self.model_runs = 0
        """Decoder runs made so far (tests count them)."""
        self.joins: list[int] = []
        """Sample offsets in the segment where two windows of one piece meet (a piece decoded
        whole has none): where bench/kokoro_chunks.py looks for seams."""
        self._emitted = 0

    def next_cost(self, ahead: float) -> float:
        """Worker seconds the next step is likely to take: the decoder's frames it will run
        (the voice's cost per audio second, per 25 ms frame: its piece's encoder run counted in).
        Before G2P, the frames are guessed from the text's length, and the step also pays for
        the G2P of the whole segment."""
        voice = self._voice
        per_frame = voice.cost * FRAME_MS / 1000
        windowed = self._windowed
        if windowed is not None and not windowed.done:
            return per_frame * windowed.next_frames(int(ahead / per_frame))
        start = 0.0
        if self._pieces is None:
            start = G2P_SECONDS_PER_CHARACTER * len(self._text)
        return start + self._decode_cost(ahead, per_frame)

    def _decode_cost(self, ahead: float, per_frame: float) -> float:
        """next_cost() of the model's part of the step."""
        voice = self._voice
        if self._pieces is None:
            tokens = int(TOKENS_PER_CHARACTER * len(self._text))
            if not (self._long_first and tokens <= voice.token_budget):
                first = next(iter(voice.budgets(ahead)), voice.token_budget)
                # A clause too short to be cut goes whole (tokens.cut_pieces).
                if tokens >= 2 * cut_side(first):
                    tokens = max(first, CUT_SIDE_TOKENS)
                tokens = min(tokens, voice.token_budget)
            frames = int(FRAMES_PER_TOKEN * tokens)
        elif self._next >= len(self._pieces):
            return 0.0
        else:
            enc = self._encoded[self._next]
            piece = self._pieces[self._next]
            frames = enc.frames if enc is not None else int(FRAMES_PER_TOKEN * len(piece.ids))
        schedule = self._schedule(ahead, first_piece=self._next == 0, wide=False)
        if schedule is not None and frames > 2 * schedule.first:
            frames = schedule.first + 2 * schedule.context
        return per_frame * frames

    def _schedule(self, ahead: float, *, first_piece: bool, wide: bool) -> ChunkSchedule | None:
        """The windows a piece goes in (None: whole). Windows (the voice's `late` schedule) only
        for a segment's first piece when the listener has nothing in hand (a reply's start, or
        a listener already waiting) and the job has the machine to itself (`wide`): each
        window decodes its context and its share of the pause again, which a busy machine
        cannot spare, and a later piece is due early enough to be decoded whole (a stream in
        windows would cost more, fall behind and go in windows again: docs/kokoro.md#streaming).
        The next_cost estimate takes `wide` False: a piece whole, the dearer way."""
        voice = self._voice
        if voice.chunks is not None:
            return voice.chunks
        if not (first_piece and wide and ahead <= 0.0) or voice.late is None:
            return None
        if self._long_first:
            return replace(voice.late, first=min(voice.late.largest, 2 * voice.late.first))
        return voice.late

    @property
    def total_samples(self) -> int | None:
        encoded = [e for e in self._encoded if e is not None]
        if self._pieces is None or len(encoded) < len(self._pieces):
            return None
        pauses = self._voice.pauses
        spans = [
            emitted(piece, enc, pauses) for piece, enc in zip(self._pieces, encoded, strict=True)
        ]
        return HOP * sum(end - first for first, end in spans)

    @property
    def finished(self) -> bool:
        return (
            self._pieces is not None
            and self._next >= len(self._pieces)
            and (self._windowed is None or self._windowed.done)
        )

    @property
    def pieces(self) -> Sequence[Piece]:
        """The pieces the text was cut into (empty before the first window)."""
        return self._pieces or ()

    def _start(self, ahead: float) -> None:
        voice = self._voice
        self._pieces = voice.pieces(self._text, voice.budgets(ahead), whole_if_one=self._long_first)
        self._encoded = [None] * len(self._pieces)

    def _encoded_piece(self, k: int) -> Encoded:
        """Piece k encoded (the pieces are, in order), and with word timestamps its words
        timed: each piece's words are known with its first window, not all of them before
        the segment's first audio, which would wait for every piece's encoder run."""
        assert self._pieces is not None
        enc = self._encoded[k]
        if enc is None:
            enc = self._encoded[k] = self._voice.encode(self._pieces[k], self._params)
            if self._word_timestamps:
                words, self._timed_frames = _piece_words(
                    self._pieces[k], enc, self._voice.pauses, self._timed_frames
                )
                self._words.extend(words)
        return enc

    def next_window(self, ahead: float, *, wide: bool = False) -> np.ndarray | None:
        if self._pieces is None:
            self._start(ahead)
        assert self._pieces is not None
        voice = self._voice
        if self._windowed is None or self._windowed.done:
            if self._next >= len(self._pieces):
                return None
            piece, enc = self._pieces[self._next], self._encoded_piece(self._next)
            self._next += 1
            first, end = emitted(piece, enc, self._voice.pauses)
            schedule = self._schedule(ahead, first_piece=self._next == 1, wide=wide)
            if schedule is None or end - first <= 2 * schedule.first:
                self.model_runs += 1
                return self._emit(voice.decode(enc, wide=wide)[first * HOP : end * HOP])
            self._windowed = voice.windowed(enc, schedule, (first, end))
        elif self._emitted:
            self.joins.append(self._emitted)
        self.model_runs += 1
        per_frame = voice.cost * FRAME_MS / 1000
        return self._emit(self._windowed.next_window(int(ahead / per_frame), wide=wide))

    def _emit(self, window: np.ndarray) -> np.ndarray:
        self._emitted += window.size
        return window

    def batch(self, ahead: float) -> Batch[np.ndarray] | None:
        return None


def emitted(piece: Piece, enc: Encoded, pauses: Pauses) -> tuple[int, int]:
    """The frames [first, end) of a piece that a segment emits: its leading pad but the
    LEAD_KEPT frames into its first word (LEAD_AFTER_WORD where it goes on from a cut between
    words), and its closing pause but what Kokoro gives at its last mark inside a text
    (`pauses`), left out."""
    kept = kept_pause(piece, pauses)
    lead = LEAD_AFTER_WORD if piece.after_word else LEAD_KEPT
    return max(0, enc.lead - lead), enc.frames - max(0, enc.closing_pause - kept)


def kept_pause(piece: Piece, pauses: Pauses) -> int:
    """Frames of its closing pause a piece emits, by what ends it: a sentence's mark, another
    mark, or a word."""
    last = piece.words[-1] if piece.words else None
    if last is None or not last.is_break:
        return pauses.word
    return pauses.sentence if last.phonemes.rstrip()[-1:] in _SENTENCE_ENDS else pauses.clause


# The marks that end a sentence in Kokoro's phonemes (G2P writes 。！？ as these).
_SENTENCE_ENDS = frozenset(".!?…")


def _piece_words(
    piece: Piece, enc: Encoded, pauses: Pauses, before: int
) -> tuple[list[WordTiming], int]:
    """A piece's words, started and ended from the encoder's per-token frames (the leading
    pad's frames before the first token), the segment having emitted `before` frames ahead of
    it; and the frames emitted once it is. A word that says the rest of the one before (its
    name ""), adds its time to it; at a piece's start, where that word went out with the piece
    before, it is left out."""
    timings: list[WordTiming] = []
    first, end = emitted(piece, enc, pauses)
    offset = before - first
    # ends[i]: the frame where token i (0: the leading pad) ends.
    ends = np.cumsum(enc.durations).astype(np.int64)
    for word, (lo, hi) in zip(piece.words, piece.spans, strict=True):
        name = word.name
        if name is None or hi <= lo:
            continue
        # ids[i] is the model's token i + 1: it starts where token i ends.
        # A word's last frames may be in the closing pause cut after it.
        start_frame = offset + min(int(ends[lo]), end)
        end_frame = offset + min(int(ends[hi]), end)
        if name:
            timings.append(WordTiming(name, start_frame * FRAME_MS, end_frame * FRAME_MS))
        elif timings:  # the rest of the word before ("12/25": 十二月 二十五日)
            last = timings[-1]
            timings[-1] = WordTiming(last.word, last.start_ms, end_frame * FRAME_MS)
    return timings, offset + end
