"""The quality judge of bench.kokoro_chunks: what DNSMOS is given."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("misaki", reason="Kokoro is not installed (VOXLITE_LANGUAGES=en)")

from voxlite.service.engines.kokoro.decode import SAMPLE_RATE

from bench.kokoro_chunks import EDGE_KEPT, EDGE_SILENCE, edges_alike


def test_a_decoding_is_scored_with_the_same_edge_silence_whatever_it_was_sent_with() -> None:
    """DNSMOS repeats a clip shorter than its 9 s window end to end, so a sentence sent with
    little silence around it scored lower than the same speech with its whole pads: each
    decoding's edges are made alike before it is scored."""
    rng = np.random.default_rng(7)
    speech = (0.3 * rng.standard_normal(SAMPLE_RATE // 2)).astype(np.float32)

    def silence(seconds: float) -> np.ndarray:
        return np.zeros(int(seconds * SAMPLE_RATE), dtype=np.float32)

    tight = edges_alike(np.concatenate([silence(0.05), speech, silence(0.1)]))
    padded = edges_alike(np.concatenate([silence(0.5), speech, silence(0.9)]))
    np.testing.assert_array_equal(tight, padded)
    frame = SAMPLE_RATE // 100
    lead = int(EDGE_SILENCE * SAMPLE_RATE) + EDGE_KEPT * frame
    assert not padded[:lead].any()
    np.testing.assert_array_equal(padded[lead : lead + speech.size], speech)
    assert padded.size == speech.size + 2 * lead
    # Quiet speech at the edges (40 dB under the loudest, not silence) is kept.
    soft = np.concatenate([0.02 * speech[: frame * 10], speech])
    assert edges_alike(soft).size == soft.size + 2 * int(EDGE_SILENCE * SAMPLE_RATE)
