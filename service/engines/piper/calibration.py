"""A Piper voice measured once at load: the context each stage needs, its gain and its cost."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..engine import Calibration, VoiceRequest
from .model import PiperModel, PiperParams
from .schedule import VocoderSchedule
from .stages import Margins

# Spoken once per voice at load: it warms every vocoder window size too.
CALIBRATION_TEXT = (
    "Hello! Thanks for calling. I can check the weather, set a timer, or read your messages; "
    "which would you like?"
)
# The vocoder's context per window is searched in this range: HiFi-GAN's receptive field in
# Piper's medium voices is about 13 frames a side, and 8 left audible seams
# (docs/design.md#how-a-piper-voice-speaks, Exactness).
MIN_MARGIN, MAX_MARGIN = 8, 20
# A flow stage whose receptive field reaches a sentence's end gets this (its four coupling
# layers of kernel-5 convolutions reach 32 frames a side in all).
FLOW_MARGIN = 32
EXACT = 1e-5
"""Windows count as exact when they differ from one run by less than this (of full scale)."""
TARGET_PEAK = 0.8
"""The calibration text's peak after the gain: loud, with room for louder sentences."""


@dataclass(frozen=True)
class PiperCalibration(Calibration):
    """What a Piper voice is constructed with, measured on CALIBRATION_TEXT at noise 0: the
    gain (Piper normalises each sentence to full scale, which a stream cannot do before its
    first chunk) and the cost of the calibration text, timed, and:"""

    margins: Margins
    """The context each part needs a side for its windows to equal one run."""
    costs: PartCosts
    """What each part takes, for the scheduler's estimate of a step (PiperSegment.next_cost)."""


@dataclass(frozen=True)
class PartCosts:
    """Worker seconds on one thread, per unit of each part's input, timed at load."""

    acoustic_per_id: float
    """The acoustic part, per model id (its cost grows faster, but pieces are capped)."""
    flow_per_frame: float
    """The flow, per latent frame."""
    vocoder_per_frame: float
    """The vocoder's head and tail, per frame of a window, its context included."""


def part_costs(model: PiperModel, text: str, params: PiperParams, margins: Margins) -> PartCosts:
    """The parts timed on `text`'s sentences, each run once warm (windows of 32 frames)."""
    ids = frames = vocoded = 0
    acoustic = flow = vocoder = 0.0
    for phonemes in model.phonemize(text):
        sentence_ids = model.phoneme_ids(phonemes)
        model.acoustic(sentence_ids, params)  # warm: the first run of a shape costs more
        start = time.perf_counter()
        sentence = model.sentence(sentence_ids, params, margins)
        mid = time.perf_counter()
        sentence.latent()
        end = time.perf_counter()
        acoustic, flow, ids = acoustic + mid - start, flow + end - mid, ids + len(sentence_ids)
        frames += sentence.frames
        latent, extra = sentence.latent(), sentence.extra
        for lo in range(0, sentence.frames, 32):
            window = latent[..., lo : lo + 32 + 2 * margins.vocoder]
            begin = time.perf_counter()
            model.stages.vocode(window, extra)
            vocoder += time.perf_counter() - begin
            vocoded += window.shape[-1]
    return PartCosts(acoustic / max(ids, 1), flow / max(frames, 1), vocoder / max(vocoded, 1))


def calibrate(model: PiperModel, text: str = CALIBRATION_TEXT) -> PiperCalibration:
    params = model.params(VoiceRequest(noise_scale=0.0, noise_w=0.0))
    reaches = stage_reaches(model, text, params)
    stages = model.stages
    flow = tuple(FLOW_MARGIN if r is None else r for r in reaches[: stages.flow_count])
    tail = 0
    if stages.stride:
        tail = stages.stride * MAX_MARGIN if reaches[-1] is None else reaches[-1]
    margins = Margins(flow, exact_margin(model, text, params), tail)
    start = time.perf_counter()
    samples = synthesize(model, text, params, margins)
    seconds = time.perf_counter() - start
    peak = float(np.abs(samples).max()) if samples.size else 0.0
    gain = float(np.clip(TARGET_PEAK / peak, 0.25, 4.0)) if peak > 1e-4 else 1.0
    audio = samples.size / model.info.native_rate
    costs = part_costs(model, text, params, margins)
    return PiperCalibration(
        gain=gain, cost=seconds / audio if audio else 0.0, margins=margins, costs=costs
    )


def synthesize(model: PiperModel, text: str, params: PiperParams, margins: Margins) -> np.ndarray:
    """`text` window by window through the stages, as a stream with nothing in hand hears it."""
    parts = []
    for phonemes in model.phonemize(text):
        sentence = model.sentence(model.phoneme_ids(phonemes), params, margins)
        for start, end in VocoderSchedule().windows(sentence.frames):
            parts.append(sentence.samples(start, end))
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


def exact_margin(model: PiperModel, text: str, params: PiperParams) -> int:
    """The fewest context frames a side with which small vocoder windows equal one run over
    the whole sentence (within EXACT): every frame of margin is work on every window."""
    stages = model.stages
    ids = model.phoneme_ids(model.phonemize(text)[0])
    # The margins do not matter here: the flow runs over the whole sentence at once.
    sentence = model.sentence(ids, params, Margins((FLOW_MARGIN,) * stages.flow_count, 0))
    latent, extra = sentence.latent(), sentence.extra
    whole = stages.vocode(latent, extra).reshape(-1)
    frames, hop, window = latent.shape[-1], model.hop, 16
    for margin in range(MIN_MARGIN, MAX_MARGIN + 1):
        worst = 0.0
        for start in range(0, frames, window):
            end = min(frames, start + window)
            lo, hi = max(0, start - margin), min(frames, end + margin)
            part = stages.vocode(latent[..., lo:hi], extra).reshape(-1)
            got = part[(start - lo) * hop : (end - lo) * hop]
            worst = max(worst, float(np.abs(got - whole[start * hop : end * hop]).max()))
        if worst < EXACT:
            return margin
    return MAX_MARGIN


def stage_reaches(model: PiperModel, text: str, params: PiperParams) -> list[int | None]:
    """Input samples of context a side each stage needs to equal one run: how far a change to
    one input sample spreads in its output (its receptive field), measured in the middle of
    `text`'s first sentence; None where the spread reaches an end of it, and for the vocoder's
    first stage, whose margin exact_margin() finds (its receptive field is wider than what
    changes its output in practice)."""
    stages = model.stages
    tensors = model.acoustic(model.phoneme_ids(model.phonemize(text)[0]), params)
    frames = max(int(tensors[n].shape[-1]) for n in stages.chain[0].sides if tensors[n].ndim == 3)
    x = np.empty(0, dtype=np.float32)
    reaches: list[int | None] = []
    for k, stage in enumerate(stages.chain):
        feed = {n: tensors[n] for n in stage.sides}
        if k:
            feed[stage.reads] = x
            moved = [stage.reads]
        else:  # the first stage reads frames from the acoustic part
            moved = [n for n, t in feed.items() if t.ndim == 3 and t.shape[-1] == frames]
        out = stage.run(feed)
        x = out
        if k == stages.flow_count:
            reaches.append(None)
            continue
        length = feed[moved[0]].shape[-1]
        at, up = length // 2, stage.up
        changed = dict(feed)
        for name in moved:
            changed[name] = feed[name].copy()
            changed[name][..., at] += 1.0
        along = tuple(range(out.ndim - 1))
        spread = np.flatnonzero(np.any(stage.run(changed) != out, axis=along))
        if spread.size == 0 or spread[0] == 0 or spread[-1] == length * up - 1:
            reaches.append(None)
        else:
            before = max(0, at * up - int(spread[0]))
            after = max(0, int(spread[-1]) - (at * up + up - 1))
            reaches.append(max(-(-before // up), -(-after // up)))
    return reaches
