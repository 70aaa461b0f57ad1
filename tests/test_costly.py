"""Text whose cost explodes: whatever a segment expands to, each model run stays bounded."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest
from voxlite.service.capacity.scheduler import Scheduler, SchedulerPolicy
from voxlite.service.engines.engine import VoiceRequest
from voxlite.service.engines.piper import PiperVoice
from voxlite.service.engines.piper.pieces import MAX_IDS, cut_phonemes
from voxlite.tts.v1 import tts_pb2 as pb

from .helpers import ServerThread, base_config, held_workers, idle, wait_until

LONG_JOB = SchedulerPolicy().long_job

QUIET = VoiceRequest(noise_scale=0.0, noise_w=0.0)
# Text that espeak expands many-fold: 300 characters of digits gave 2,927 model ids in one
# sentence, prices 3,091; the acoustic part's cost grows with the square of that.
COSTLY = {
    "digits": " ".join(["1234567890"] * 30)[:300],
    "prices": " ".join(["$1,234,567.89"] * 25)[:300],
    "phone numbers": " ".join(["+1 (555) 010-9999"] * 20)[:300],
    "dates": " ".join(["2024-03-05T10:30:00"] * 16)[:300],
}


def test_cut_phonemes_keeps_every_phoneme_and_cuts_at_pauses() -> None:
    def ids(phonemes: object) -> int:
        return 2 * len(phonemes) + 2  # type: ignore[arg-type]

    phonemes = list("ab cd ef, gh ij kl mn, op qr st uv wx")
    pieces = cut_phonemes(phonemes, ids, budget=24)  # 11 phonemes a piece
    assert all(ids(p) <= 24 for p in pieces)
    assert " ".join("".join(p) for p in pieces) == "".join(phonemes)
    assert ["".join(p) for p in pieces[:2]] == ["ab cd ef,", "gh ij kl"]  # a pause, else a gap
    assert cut_phonemes(list("abcdefghijklmnop"), ids, budget=24)[0] == list("abcdefghijk")
    assert cut_phonemes(list("abc"), ids, budget=30) == [list("abc")]


@pytest.mark.parametrize("kind", sorted(COSTLY))
def test_a_costly_segment_runs_in_bounded_pieces(voice: PiperVoice, kind: str) -> None:
    """Bug: one 300-character segment became one acoustic run of up to 3,091 ids (4 s on one
    thread, hundreds of MB), which no cancel could stop. Each run now takes at most MAX_IDS
    ids, one run per step; with word timings the steps before the first audio run one piece
    each, without them the first step already brings audio."""
    model = voice.model
    pieces = model.sentences(COSTLY[kind])
    sizes = [len(model.phoneme_ids(p)) for p in pieces]
    assert max(sizes) <= MAX_IDS
    assert sum(sizes) > 2 * MAX_IDS  # the text really was costly
    assert [p for piece in pieces for p in piece if p != " "] == [
        p for sentence in model.phonemize(COSTLY[kind]) for p in sentence if p != " "
    ]

    timed = voice.segment(COSTLY[kind], voice.params(QUIET), word_timestamps=True)
    silent_steps = 0
    while (window := timed.next_window(0.0)) is not None and not window.size:
        silent_steps += 1
    assert silent_steps == len(pieces) - 1  # the last piece runs with the first window
    words = timed.words
    assert words
    assert all(a.start_ms <= b.start_ms for a, b in itertools.pairwise(words))

    plain = voice.segment(COSTLY[kind], voice.params(QUIET), word_timestamps=False)
    first = plain.next_window(0.0)
    assert first is not None
    assert first.size
    assert plain.total_samples is None  # the later pieces have not run


def test_an_ordinary_sentence_is_one_run(voice: PiperVoice) -> None:
    text = "Sure, I can help you with that, and I will send the receipt to your email."
    assert voice.model.sentences(text) == voice.model.phonemize(text)


def test_a_dropped_costly_call_runs_no_further_step(server: ServerThread) -> None:
    """Bug: a costly segment ran in one job that a cancel could not stop, and an attacker's
    dropped calls went on costing the machine seconds each. Each piece is a step of its own,
    and a call dropped while its next step waits runs none. The workers are held, so the
    costly call's first step is still queued when the call goes."""
    wait_until(lambda: idle(server))
    scheduler = server.server.scheduler
    assert isinstance(scheduler, Scheduler)
    held = server.server.config.workers
    text = " ".join([COSTLY["digits"], COSTLY["prices"], COSTLY["phone numbers"]])
    config = pb.SynthesisConfig(enable_word_timestamps=True)
    with held_workers(server):
        before, dropped = scheduler.jobs_total, scheduler.stats.jobs_dropped
        with server.channel() as channel:
            call = server.stub(channel).Synthesize(
                pb.SynthesizeRequest(text=text, config=config), timeout=60
            )
            wait_until(lambda: scheduler.jobs_queued >= 1)
            call.cancel()
            # The drop happens on the server's loop once it sees the cancel; the workers stay
            # held until it has, or a worker released first could take the queued job.
            wait_until(lambda: scheduler.stats.jobs_dropped > dropped)
            wait_until(lambda: server.server.admission.active == 0)
    wait_until(lambda: idle(server))
    assert scheduler.jobs_queued == 0
    assert scheduler.jobs_total - before <= held  # the held jobs, none of the call's


def test_english_is_served_while_long_jobs_hold_their_slot_and_run_late(
    cache_dir: Path, tmp_path: Path
) -> None:
    """Bug: one Kokoro caller with costly text left a playing English call 41.8 s late and
    every English newcomer refused ("its model work runs N ms late"). Beside a light stream,
    long jobs hold at most workers - 1 workers, and their lateness is theirs: with the long
    slot held as long as the test likes and another long job queued past its deadline, an
    English call is admitted and spoken to its end. (The long jobs stand in for Kokoro runs:
    the test decides how long they take, not the machine.)"""
    srv = ServerThread(
        base_config(
            cache_dir,
            tmp_path,
            workers=2,
            phrase_cache_mb=0,
            admission_wait_seconds=0,
            queue_wait_seconds=0,
        )
    )
    scheduler = srv.server.scheduler
    assert isinstance(scheduler, Scheduler)
    release = threading.Event()
    long = LONG_JOB + 1

    def submit(deadline: float) -> Future[object]:
        job = scheduler.run(lambda _: release.wait(timeout=60), deadline, cost=long)
        return asyncio.run_coroutine_threadsafe(job, srv.loop)

    light = scheduler.runner()  # an English stream at work: one worker stays for short jobs
    try:
        asyncio.run_coroutine_threadsafe(light.run(lambda _: None), srv.loop).result(timeout=60)
        running = submit(time.monotonic() + 600)
        wait_until(lambda: scheduler.jobs_running == 1)
        behind = submit(time.monotonic() + 0.05)
        wait_until(lambda: scheduler.overdue() > 0)
        with srv.channel() as channel:
            responses = list(
                srv.stub(channel).Synthesize(
                    pb.SynthesizeRequest(text="Still served. " * 8), timeout=60
                )
            )
        assert responses[-1].WhichOneof("response") == "summary"
        assert responses[-1].summary.audio_duration_ms > 5000
        assert scheduler.overdue(long_jobs=False) == 0.0
        assert scheduler.overdue() > 0  # the long job still waits: it was never its turn
    finally:
        release.set()
        running.result(timeout=60)
        behind.result(timeout=60)
        srv.close()
