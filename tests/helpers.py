"""Helpers the framework plugin tests share: LLM-like text pieces, polling, audio measures."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from voxlite.client import AsyncClient, AudioChunk, Encoding

# Word pieces as LLM tokenizers emit them: a word with its leading space, or one mark.
_TOKEN = re.compile(r"\s*[A-Za-z']+|\s*\d+|\s*[^\sA-Za-z'\d]|\s+")


def llm_pieces(text: str) -> list[str]:
    """`text` in the pieces an LLM would stream it in (at most 4 characters each)."""
    pieces: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        while len(token) > 4:
            pieces.append(token[:4])
            token = token[4:]
        pieces.append(token)
    assert "".join(pieces) == text
    return pieces


def words_of(text: str) -> list[str]:
    """The words of `text`, lower case, without punctuation (for comparing transcripts)."""
    return re.findall(r"[a-z0-9']+", text.lower())


async def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll `condition` until it holds; the generous deadline only turns a hang into a failure."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def pcm_seconds(pcm: bytes, rate: int) -> float:
    return len(pcm) / 2 / rate


def speech_fraction(pcm: bytes, rate: int) -> float:
    """The share of 50 ms windows louder than -40 dBFS: near 0 for silence or a click."""
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64) / 32768.0
    window = rate // 20
    count = samples.size // window
    if count == 0:
        return 0.0
    rms = np.sqrt(np.mean(samples[: count * window].reshape(count, window) ** 2, axis=1))
    return float(np.mean(rms > 0.01))


async def streamed_seconds(address: str, text: str, rate: int, **options: Any) -> float:
    """Seconds of audio the plain client gets for `text` streamed in LLM pieces, then flushed
    (noise 0: the length the plugins must match)."""
    async with AsyncClient(address) as client:
        session = client.stream(
            encoding=Encoding.PCM_S16LE,
            sample_rate_hz=rate,
            noise_scale=0.0,
            noise_w=0.0,
            timeout=60,
            **options,
        )
        async with session:
            for piece in llm_pieces(text):
                await session.send(piece)
            await session.flush()
            await session.close()
            chunks = [e async for e in session if isinstance(e, AudioChunk)]
    return sum(c.duration_ms for c in chunks) / 1000
