"""The phrase cache and vocoder batching, through a real server: repeated phrases skip the
model and sound the same; batched windows sound the same as unbatched ones."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from voxlite.service.capacity.scheduler import Scheduler
from voxlite.service.engines.cache import CachedPhrase, PhraseCache
from voxlite.service.engines.piper import PiperParams
from voxlite.tts.v1 import tts_pb2 as pb

from .helpers import QUIET, ServerThread, base_config

PCM = pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE)
GREETING = "Thanks for calling! How can I help you today?"


def audio_and_chunks(responses: list[Any]) -> tuple[bytes, int]:
    chunks = [r.audio.audio for r in responses if r.WhichOneof("response") == "audio"]
    return b"".join(chunks), len(chunks)


@pytest.fixture(scope="module")
def cached_server(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerThread]:
    srv = ServerThread(base_config(cache_dir, tmp_path_factory.mktemp("voices"), phrase_cache_mb=8))
    yield srv
    srv.close()


def test_a_repeated_phrase_is_served_from_the_cache(cached_server: ServerThread) -> None:
    cache = cached_server.server.cache
    assert cache is not None
    request = pb.SynthesizeRequest(
        text=GREETING, config=pb.SynthesisConfig(audio=PCM, enable_word_timestamps=True, **QUIET)
    )
    with cached_server.channel() as channel:
        stub = cached_server.stub(channel)
        hits, jobs = cache.stats.hits, cached_server.server.scheduler.jobs_total
        first = list(stub.Synthesize(request, timeout=30))
        assert cache.stats.hits == hits
        model_jobs = cached_server.server.scheduler.jobs_total - jobs
        assert model_jobs > 0
        second = list(stub.Synthesize(request, timeout=30))
    # Both segments ("Thanks for calling!", "How can I help you today?") hit, and no model ran.
    assert cache.stats.hits == hits + 2
    assert cached_server.server.scheduler.jobs_total - jobs == model_jobs
    (a, chunks_a), (b, chunks_b) = audio_and_chunks(first), audio_and_chunks(second)
    assert a == b
    assert chunks_a > 2
    assert chunks_b > 2  # still streamed in pieces, not in one lump
    stamps = [r.timestamps for r in second if r.WhichOneof("response") == "timestamps"]
    assert [w.word for s in stamps for w in s.words] == [
        "Thanks",
        "for",
        "calling",
        "How",
        "can",
        "I",
        "help",
        "you",
        "today",
    ]
    assert cache.stats.bytes > 0


def test_cache_key_keeps_settings_apart(cached_server: ServerThread) -> None:
    """The same text at another rate or noise is another entry, not a wrong hit."""
    cache = cached_server.server.cache
    assert cache is not None
    with cached_server.channel() as channel:
        stub = cached_server.stub(channel)
        fast = pb.SynthesizeRequest(
            text="One moment, please.",
            config=pb.SynthesisConfig(audio=PCM, speaking_rate=1.5, **QUIET),
        )
        slow = pb.SynthesizeRequest(
            text="One moment, please.",
            config=pb.SynthesisConfig(audio=PCM, speaking_rate=0.8, **QUIET),
        )
        a, _ = audio_and_chunks(list(stub.Synthesize(fast, timeout=30)))
        hits = cache.stats.hits
        b, _ = audio_and_chunks(list(stub.Synthesize(slow, timeout=30)))
        assert cache.stats.hits == hits
        assert len(b) > len(a) * 1.5


def test_cache_is_bounded_in_bytes_and_evicts_the_least_recently_used() -> None:
    params = PiperParams(1.0, 0.0, 0.0)
    cache = PhraseCache(max_bytes=4000 * 4 * 4)  # room for four 4000-sample phrases
    for i in range(6):
        cache.put(
            cache.key("v", f"phrase {i}", params), CachedPhrase((np.zeros(4000, np.float32),), None)
        )
        if i == 1:
            assert cache.get(cache.key("v", "phrase 0", params), need_words=False) is not None
    assert cache.stats.bytes <= cache.max_bytes
    kept = [
        i for i in range(6) if cache.get(cache.key("v", f"phrase {i}", params), need_words=False)
    ]
    # 0 was used after 1 was added, so 1 went first, then 0.
    assert kept == [2, 3, 4, 5]
    # Whitespace is normalised; case is not (it changes the speech).
    assert cache.key("v", "  Hello\n there ", params) == cache.key("v", "Hello there", params)
    assert cache.key("v", "US", params) != cache.key("v", "us", params)
    # One phrase larger than a quarter of the cache is not kept at all.
    cache.put(cache.key("v", "long", params), CachedPhrase((np.zeros(5000, np.float32),), None))
    assert cache.get(cache.key("v", "long", params), need_words=False) is None


@pytest.mark.slow
def test_batched_vocoder_windows_sound_the_same(
    cache_dir: Path, tmp_path: Path, server: ServerThread
) -> None:
    """--batch-vocoder: concurrent streams' windows run as batches, with identical audio."""
    srv = ServerThread(
        base_config(cache_dir, tmp_path, batch_vocoder=4, workers=1, phrase_cache_mb=0)
    )
    texts = [
        f"Caller number {n} is asking about the weather in a different city today."
        for n in range(4)
    ]
    config = pb.SynthesisConfig(audio=PCM, **QUIET)
    try:
        results: dict[int, bytes] = {}
        with srv.channel() as channel:
            stub = srv.stub(channel)

            def call(n: int) -> None:
                responses = list(
                    stub.Synthesize(pb.SynthesizeRequest(text=texts[n], config=config), timeout=60)
                )
                results[n] = audio_and_chunks(responses)[0]

            threads = [threading.Thread(target=call, args=(n,)) for n in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
        assert isinstance(srv.server.scheduler, Scheduler)
        assert srv.server.scheduler.stats.batches > 0
        with server.channel() as channel:  # the shared server: no batching
            stub = server.stub(channel)
            for n, text in enumerate(texts):
                alone = audio_and_chunks(
                    list(
                        stub.Synthesize(pb.SynthesizeRequest(text=text, config=config), timeout=60)
                    )
                )[0]
                # Windows run wide (two threads) or narrow (one) by the load of the moment:
                # their kernels round differently, by far less than one 16-bit step.
                got, want = np.frombuffer(results[n], "<i2"), np.frombuffer(alone, "<i2")
                assert got.shape == want.shape
                assert np.abs(got.astype(np.int32) - want).max() <= 1
    finally:
        srv.close()


@pytest.fixture(scope="module")
def uncached_server(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerThread]:
    srv = ServerThread(base_config(cache_dir, tmp_path_factory.mktemp("voices"), phrase_cache_mb=0))
    yield srv
    srv.close()


def answer_shape(responses: list[Any]) -> list[tuple[str, tuple[Any, ...]]]:
    """Every event with its fields, timing figures and audio bytes aside. Where one segment's
    audio is cut into chunks follows how far ahead of its listener synthesis runs (a timing),
    so each run of a segment's chunks counts as one: its segment, first sample and samples."""
    shape: list[tuple[str, tuple[Any, ...]]] = []
    sequences, rate = [], 0

    def samples(ms: float) -> int:
        return round(ms * rate / 1000)

    for r in responses:
        kind = r.WhichOneof("response")
        if kind == "format":
            rate = r.format.sample_rate_hz
            shape.append((kind, (r.format.SerializeToString(deterministic=True),)))
        elif kind == "audio":
            a = r.audio
            sequences.append(a.sequence)
            if shape and shape[-1][0] == "audio" and shape[-1][1][0] == a.segment:
                segment, start, length = shape[-1][1]
                assert samples(a.start_ms) == start + length
                shape[-1] = (kind, (segment, start, length + samples(a.duration_ms)))
            else:
                shape.append((kind, (a.segment, samples(a.start_ms), samples(a.duration_ms))))
        elif kind == "timestamps":
            t = r.timestamps
            words = tuple((w.word, w.start_ms, w.end_ms) for w in t.words)
            shape.append((kind, (t.segment, t.text, words)))
        elif kind == "summary":
            shape.append((kind, (samples(r.summary.audio_duration_ms), r.summary.segments)))
        else:
            shape.append((kind, ()))
    assert sequences == list(range(len(sequences)))
    return shape


@pytest.mark.parametrize("cold_stamps", [True, False], ids=["cold-stamps", "cold-plain"])
@pytest.mark.parametrize("warm_stamps", [True, False], ids=["warm-stamps", "warm-plain"])
def test_a_cache_hit_answers_field_by_field_as_a_fresh_synthesis(
    cached_server: ServerThread, uncached_server: ServerThread, cold_stamps: bool, warm_stamps: bool
) -> None:
    """Bug: a phrase first spoken with enable_word_timestamps, then asked for without, came back
    from the cache with `timestamps` messages nobody asked for. A hit must answer as a fresh
    synthesis of the same request would: the same events in the same order with the same
    fields (timing figures and audio bytes aside)."""
    cache = cached_server.server.cache
    assert cache is not None
    # A text of its own per case, so that the first call really is a miss.
    party = {True: "two", False: "four"}[cold_stamps]
    hour = {True: "seven", False: "eight"}[warm_stamps]
    text = f"Your table for {party} is booked at {hour}. See you at {hour}, party of {party}!"

    def request(stamps: bool) -> pb.SynthesizeRequest:
        config = pb.SynthesisConfig(audio=PCM, enable_word_timestamps=stamps, **QUIET)
        return pb.SynthesizeRequest(text=text, config=config)

    with uncached_server.channel() as channel:
        fresh = answer_shape(list(uncached_server.stub(channel).Synthesize(request(warm_stamps))))
    with cached_server.channel() as channel:
        stub = cached_server.stub(channel)
        list(stub.Synthesize(request(cold_stamps), timeout=30))  # fills the cache
        hits = cache.stats.hits
        warm = answer_shape(list(stub.Synthesize(request(warm_stamps), timeout=30)))
    # An entry without words cannot answer a call that asks for them: that one is a miss.
    assert cache.stats.hits - hits == (0 if warm_stamps and not cold_stamps else 2)
    assert [kind for kind, _ in warm] == [kind for kind, _ in fresh]
    assert warm == fresh
    assert any(kind == "timestamps" for kind, _ in warm) == warm_stamps


TENANTS = ("tenant-one-token", "tenant-two-token")


@pytest.mark.parametrize("shared", [False, True], ids=["per-token", "shared"])
def test_tenants_do_not_hear_each_others_hits(
    cache_dir: Path, tmp_path: Path, shared: bool
) -> None:
    """Bug: a cache hit shows (real_time_factor 0.0, first audio in about a millisecond), and
    with two tokens one tenant recovered the other's 2-digit code in 100 probes. With tokens
    each tenant has entries of its own: what one said is a miss for the other, a hit for
    itself. --shared-phrase-cache shares them."""
    from voxlite.client import Client, Summary

    srv = ServerThread(
        base_config(cache_dir, tmp_path, auth_tokens=TENANTS, shared_phrase_cache=shared, workers=1)
    )
    try:
        cache = srv.server.cache
        assert cache is not None
        text = "Your code is 42."
        with (
            Client(srv.address, token=TENANTS[0]) as one,
            Client(srv.address, token=TENANTS[1]) as two,
        ):

            def summary(client: Client) -> Summary:
                last = list(client.synthesize(text, timeout=30))[-1]
                assert isinstance(last, Summary)
                return last

            first = summary(one)
            assert first.real_time_factor > 0
            hits = cache.stats.hits
            assert summary(one).real_time_factor == 0.0  # the tenant's own phrase: a hit
            assert cache.stats.hits == hits + 1
            other = summary(two)
            assert (cache.stats.hits == hits + 2) is shared
            assert (other.real_time_factor == 0.0) is shared
    finally:
        srv.close()
