"""Time to first audio through the framework plugins, the plain client and Pipecat's own Piper."""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from loguru import logger
from pipecat.frames.frames import (
    EndFrame,
    Frame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TTSAudioRawFrame,
    TTSStoppedFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.tts_service import TTSService
from pipecat.workers.runner import WorkerRunner
from voxlite.client import AsyncClient, AsyncStreamSession, AudioChunk, Encoding, FlushDone
from voxlite.client.livekit import TTS as LiveKitTTS
from voxlite.client.pipecat import VoxliteTTSService

from . import _common
from ._servers import Child, free_port, spawn, voxlite_argv, wait_serving
from .corpus import REPLIES
from .ttfa import token_pieces

RATE = 24000
TURN_TIMEOUT = 120.0
Turn = Callable[[Sequence[str]], Awaitable[float]]


async def paced(pieces: Sequence[str], interval: float, send: Callable[[str], Any]) -> float:
    """Hands `pieces` to `send` one every `interval` seconds, as an LLM streams its reply;
    returns when the first went out."""
    start = time.perf_counter()
    for i, piece in enumerate(pieces):
        delay = start + i * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        result = send(piece)
        if asyncio.iscoroutine(result):
            await result
    return start


# -- the plain client ------------------------------------------------------------------------


class PlainSession:
    """The voxlite client as the Pipecat service uses it: one call, a flush per reply."""

    def __init__(self, client: AsyncClient, interval: float) -> None:
        self._interval = interval
        self._session: AsyncStreamSession = client.stream(
            encoding=Encoding.PCM_S16LE, sample_rate_hz=RATE
        )
        self._first: float | None = None
        self._done: dict[int, asyncio.Event] = {}
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for event in self._session:
            if isinstance(event, AudioChunk) and self._first is None:
                self._first = time.perf_counter()
            elif isinstance(event, FlushDone):
                self._done.setdefault(event.id, asyncio.Event()).set()

    async def turn(self, pieces: Sequence[str]) -> float:
        self._first = None
        start = await paced(pieces, self._interval, self._session.send)
        flush = await self._session.flush()
        await self._done.setdefault(flush, asyncio.Event()).wait()
        assert self._first is not None, "no audio"
        return self._first - start

    async def close(self) -> None:
        await self._session.cancel()
        # A cancelled grpc.aio call ends its reader with asyncio's CancelledError.
        await asyncio.gather(self._reader, return_exceptions=True)


async def plain_call(client: AsyncClient, pieces: Sequence[str], interval: float) -> float:
    """The voxlite client as the LiveKit plugin uses it: one call per reply, half-closed."""
    first: float | None = None
    async with client.stream(encoding=Encoding.PCM_S16LE, sample_rate_hz=RATE) as session:

        async def send() -> float:
            start = await paced(pieces, interval, session.send)
            await session.close()
            return start

        sender = asyncio.ensure_future(send())
        async for event in session:
            if isinstance(event, AudioChunk) and first is None:
                first = time.perf_counter()
        start = await sender
    assert first is not None, "no audio"
    return first - start


# -- LiveKit ---------------------------------------------------------------------------------


async def livekit_turn(voice: LiveKitTTS, pieces: Sequence[str], interval: float) -> float:
    """A reply through `TTS.stream()` as LiveKit's tts_node drives it."""
    stream = voice.stream()
    first: float | None = None

    async def read() -> None:
        nonlocal first
        async for _ in stream:
            if first is None:
                first = time.perf_counter()

    reader = asyncio.ensure_future(read())
    start = await paced(pieces, interval, stream.push_text)
    stream.end_input()
    await reader
    await stream.aclose()
    assert first is not None, "no audio"
    return first - start


# -- Pipecat ---------------------------------------------------------------------------------


class _Sink(FrameProcessor):
    """The pipeline's end: when each audio context's first audio and its end arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.first: dict[str, float] = {}
        self.ended: set[str] = set()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSAudioRawFrame) and frame.context_id:
            self.first.setdefault(frame.context_id, time.perf_counter())
        elif isinstance(frame, TTSStoppedFrame) and frame.context_id:
            self.ended.add(frame.context_id)
        await self.push_frame(frame, direction)


@dataclass
class PipecatAgent:
    """A TTS service in a running Pipecat pipeline, fed turns like an LLM's."""

    tts: TTSService
    interval: float
    sink: _Sink = field(default_factory=_Sink)

    async def start(self) -> None:
        self.worker = PipelineWorker(
            Pipeline([self.tts, self.sink]),
            params=PipelineParams(audio_out_sample_rate=RATE),
            cancel_on_idle_timeout=False,
        )
        started = asyncio.Event()

        async def on_started(worker: PipelineWorker, frame: Frame) -> None:
            started.set()

        self.worker.add_event_handler("on_pipeline_started", on_started)
        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(self.worker)
        self._run = asyncio.ensure_future(runner.run())
        await asyncio.wait_for(started.wait(), 60)

    async def turn(self, pieces: Sequence[str]) -> float:
        before = set(self.sink.first)
        await self.worker.queue_frame(LLMFullResponseStartFrame())
        start = await paced(
            pieces, self.interval, lambda p: self.worker.queue_frame(LLMTextFrame(p))
        )
        await self.worker.queue_frame(LLMFullResponseEndFrame())
        while not (new := set(self.sink.first) - before) or not new <= self.sink.ended:
            if self._run.done():
                raise RuntimeError(f"the pipeline of {self.tts} ended")
            await asyncio.sleep(0.005)
        return min(self.sink.first[c] for c in new) - start

    async def close(self) -> None:
        await self.worker.queue_frame(EndFrame())
        await asyncio.wait_for(self._run, 60)


def piper_service() -> TTSService:
    """Pipecat's own in-process Piper on the same voice files as the server's default."""
    from pipecat.services.piper.tts import PiperTTSService
    from voxlite.service.engines.piper import embedded_voice_files

    model, _ = embedded_voice_files()
    return PiperTTSService(
        settings=PiperTTSService.Settings(voice=model.stem), download_dir=model.parent
    )


# -- the run ---------------------------------------------------------------------------------

SIDES = {
    "client_session": "voxlite client, one call per session, a flush per reply",
    "pipecat": "voxlite.client.pipecat VoxliteTTSService in a pipeline",
    "client_call": "voxlite client, one call per reply",
    "livekit": "voxlite.client.livekit TTS.stream()",
    "piper": "Pipecat PiperTTSService (in-process piper-tts, sentence by sentence)",
}


async def measure(
    address: str, texts: Sequence[str], rounds: int, warmup: int, interval: float
) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in SIDES}
    lk = LiveKitTTS(address, sample_rate=RATE)
    async with AsyncClient(address) as client, lk:
        session = PlainSession(client, interval)
        voxlite = PipecatAgent(VoxliteTTSService(address), interval)
        piper = PipecatAgent(piper_service(), interval)
        await voxlite.start()
        await piper.start()
        turns: dict[str, Turn] = {
            "client_session": session.turn,
            "pipecat": voxlite.turn,
            "client_call": lambda p: plain_call(client, p, interval),
            "livekit": lambda p: livekit_turn(lk, p, interval),
            "piper": piper.turn,
        }

        async def timed(name: str, text: str) -> float:
            try:
                return await asyncio.wait_for(turns[name](token_pieces(text)), TURN_TIMEOUT)
            except TimeoutError:
                raise RuntimeError(f"{SIDES[name]}: no end of reply in {TURN_TIMEOUT} s") from None

        try:
            for text in texts[:warmup]:
                for name in turns:
                    await timed(name, text)
            names = list(turns)
            for r in range(rounds):
                # Each side speaks the whole corpus in turn, the order rotating each round.
                for k in range(len(names)):
                    name = names[(r + k) % len(names)]
                    print(f"round {r + 1}/{rounds}: {SIDES[name]}", file=sys.stderr)
                    for text in texts:
                        samples[name].append(await timed(name, text))
        finally:
            await session.close()
            await voxlite.close()
            await piper.close()
    return samples


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="one round of the corpus, short warm-up")
    p.add_argument("--rounds", type=int, help="rounds of the 10-reply corpus (default 3, quick 1)")
    p.add_argument(
        "--piece-interval-ms",
        type=float,
        default=25.0,
        help="one ~4-character piece of the reply every this many ms (default 25)",
    )
    args = p.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 3)
    warmup = 2 if args.quick else 4
    interval = args.piece_interval_ms / 1000
    logger.remove()  # Pipecat logs every frame at DEBUG on stderr
    logger.add(sys.stderr, level="WARNING")

    with tempfile.TemporaryDirectory(prefix="voxlite-bench-") as tmp:
        workdir = Path(tmp)
        voices = workdir / "voices"
        voices.mkdir()
        port = free_port()
        # The phrase cache is off: the rounds repeat the replies, which it would replay.
        child: Child = spawn(
            "voxlite-server", voxlite_argv(port, voices, "--phrase-cache-mb", "0"), workdir
        )
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                wait_serving(child, channel)
            samples = asyncio.run(measure(f"127.0.0.1:{port}", REPLIES, rounds, warmup, interval))
        finally:
            child.stop()
    report(args.json, samples, rounds, interval)


def paired(ours: list[float], base: list[float]) -> _common.Stats:
    """Per-reply differences (same text, same round), in ms."""
    return _common.Stats.of([1000 * (a - b) for a, b in zip(ours, base, strict=True)])


def report(
    path: Path | None, samples: dict[str, list[float]], rounds: int, interval: float
) -> None:
    stats = {name: _common.Stats.of([1000 * v for v in samples[name]]) for name in SIDES}
    overhead = {
        "pipecat": paired(samples["pipecat"], samples["client_session"]),
        "livekit": paired(samples["livekit"], samples["client_call"]),
    }
    rows: list[list[object]] = []
    for name, label in SIDES.items():
        st = stats[name]
        rows.append([label, st.n, st.p50, st.p95])
        if name in overhead:
            o = overhead[name]
            rows.append(["  plugin overhead (paired, to the line above)", o.n, o.p50, o.p95])
    piper, ours = stats["piper"], stats["pipecat"]
    rows.append(
        [
            "ratio Piper / voxlite in Pipecat",
            "",
            _common.ratio(piper.p50, ours.p50),
            _common.ratio(piper.p95, ours.p95),
        ]
    )
    print(
        _common.table(
            f"time to first audio from the reply's first piece: {len(REPLIES)} replies x {rounds} "
            f"round(s), a piece every {1000 * interval:g} ms, PCM {RATE} Hz",
            ["side", "n", "p50 ms", "p95 ms"],
            rows,
        )
    )
    print(
        "goal: plugin overhead under 5 ms at p50 "
        f"(Pipecat {overhead['pipecat'].p50:.1f} ms, LiveKit {overhead['livekit'].p50:.1f} ms); "
        f"Piper / voxlite in Pipecat {_common.ratio(piper.p50, ours.p50):.1f}x at p50"
    )
    _common.write_json(
        path,
        {
            "benchmark": "plugins",
            "rounds": rounds,
            "replies": len(REPLIES),
            "piece_interval_ms": 1000 * interval,
            "first_audio_ms": {SIDES[n]: st.as_dict() for n, st in stats.items()},
            "plugin_overhead_ms": {n: o.as_dict() for n, o in overhead.items()},
        },
    )


if __name__ == "__main__":
    main()
