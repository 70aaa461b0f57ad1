"""The listener clock: each job is due before its listener runs out of audio, by its own cost."""

from __future__ import annotations

import time
from typing import Any

import pytest
from voxlite.service.call.pacing import Pacer, PacingPolicy
from voxlite.service.engines.engine import VoiceRequest
from voxlite.service.engines.piper import PiperVoice
from voxlite.service.jobs import Batch, Work

DEADLINE_LEAD = PacingPolicy().deadline_lead


class Deadlines:
    """A runner that runs each job at once and notes the deadline it was given."""

    def __init__(self) -> None:
        self.deadlines: list[float | None] = []

    async def run(
        self,
        fn: Work[Any] | None,
        deadline: float | None = None,
        *,
        batch: Batch[Any] | None = None,
        cost: float = 0.0,
    ) -> Any:
        self.deadlines.append(deadline)
        assert fn is not None
        return fn(False)

    def close(self) -> None:
        pass


@pytest.mark.asyncio
async def test_a_job_is_due_before_the_audio_in_hand_runs_out_by_its_cost() -> None:
    """Bug (issue 21): a long sentence after a short first clause was due DEADLINE_LEAD before
    the clause's audio ran out, whatever its own acoustic part, flow and first window took, so
    under load it started too late and the listener heard a gap."""
    runner = Deadlines()
    pacer = Pacer(runner, 22050)
    assert await pacer.run(lambda wide: 1) == 1
    pacer.heard(22050)  # a second of audio in hand
    await pacer.run(lambda wide: 2, cost=0.25)
    heard_by = time.monotonic() + pacer.ahead()
    deadline = runner.deadlines[-1]
    assert deadline is not None
    assert runner.deadlines[0] is None  # nothing in hand: due now
    assert abs((heard_by - deadline) - (DEADLINE_LEAD + 0.25)) < 0.05
    assert pacer.busy_seconds > 0


def test_a_long_sentences_first_step_is_known_to_cost_more(voice: PiperVoice) -> None:
    costs = voice.calibration.costs
    assert costs.acoustic_per_id > 0
    assert costs.flow_per_frame > 0
    assert costs.vocoder_per_frame > 0
    params = voice.params(VoiceRequest(noise_scale=0.0, noise_w=0.0))
    short = voice.segment("Got it Hugo,", params, word_timestamps=False)
    long = voice.segment(
        "I moved your payment of thirty dollars and eleven cents to Thursday at nine in the "
        "morning, and the confirmation number is on its way to your email.",
        params,
        word_timestamps=False,
    )
    assert long.next_cost(0.7) > short.next_cost(0.7) > 0
    first = long.next_cost(0.7)
    assert long.next_window(0.7) is not None
    # Once its acoustic part has run, a window costs less than the first step did.
    assert 0 < long.next_cost(0.7) < first
