"""A Pipecat agent that speaks through voxlite: scripted LLM replies in, a WAV file out.

With a voxlite server running (`scripts/serve`) and the extra installed
(`pip install "voxlite[pipecat]"`, or `pip install ".[pipecat]"` in a checkout):

    python examples/pipecat_agent.py -o pipecat_agent.wav [--server localhost:50051] [--language zh]

The replies stream in token by token as an LLM's would; a transport would play the audio,
this writes it to the file and prints each word as the service times it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import unicodedata
import wave

from loguru import logger
from pipecat.frames.frames import (
    EndFrame,
    Frame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    MetricsFrame,
    TTSAudioRawFrame,
    TTSTextFrame,
)
from pipecat.metrics.metrics import TTFBMetricsData
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.workers.runner import WorkerRunner
from voxlite.client.pipecat import VoxliteTTSService

RATE = 24000
REPLIES = {
    "en": [
        "Sure, I can help with that. Your next meeting is at 3:30 with the design team.",
        "Okay, I've set a timer for ten minutes. Anything else?",
    ],
    "zh": [
        "好的，我可以帮您。您的下一个会议是三点半，和设计团队一起。",
        "好的，十分钟的计时器已经设好了。还有别的事吗？",
    ],
    "ja": [
        "かしこまりました。次の会議は三時半から、デザインチームとです。",
        "十分のタイマーをセットしました。ほかにご用件はありますか？",
    ],
}
"""The scripted replies in each language the server speaks by default (--language)."""
# An LLM's token: a word with the space before it, or a character or two of Chinese or Japanese.
TOKEN = re.compile(
    r"\s*(?:[\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]{1,2}|[^\s\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]+)"
)


class WavWriter(FrameProcessor):
    """Stands where an output transport would: the audio goes to a WAV file."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.wav = wave.open(path, "wb")  # noqa: SIM115 (closed at the end of main)
        self.wav.setnchannels(1)
        self.wav.setsampwidth(2)
        self.wav.setframerate(RATE)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSAudioRawFrame):
            self.wav.writeframes(frame.audio)
        elif isinstance(frame, TTSTextFrame):
            # Chinese and Japanese words are written without spaces between them.
            wide = frame.text and unicodedata.east_asian_width(frame.text[-1]) in ("W", "F")
            print(frame.text, end="" if wide else " ", flush=True)
        elif isinstance(frame, MetricsFrame):
            for data in frame.data:
                if isinstance(data, TTFBMetricsData) and data.value > 0:
                    print(f"\n[first audio {1000 * data.value:.0f} ms after the first token]")
        await self.push_frame(frame, direction)


async def llm(worker: PipelineWorker, started: asyncio.Event, replies: list[str]) -> None:
    """Streams the replies like an LLM: a token every 30 ms, then the end of its turn."""
    await started.wait()
    for reply in replies:
        await worker.queue_frame(LLMFullResponseStartFrame())
        for token in TOKEN.findall(reply):
            await worker.queue_frame(LLMTextFrame(token))
            await asyncio.sleep(0.03)
        await worker.queue_frame(LLMFullResponseEndFrame())
    await worker.queue_frame(EndFrame())  # ends the pipeline once everything is spoken


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--server",
        default=os.environ.get("VOXLITE_SERVER", "localhost:50051"),
        help="the voxlite server, host:port (default: $VOXLITE_SERVER, else localhost:50051)",
    )
    parser.add_argument("--voice", help="a voice the server has (default: its default voice)")
    parser.add_argument(
        "--language",
        default="en",
        help="en, zh or ja: the replies' language; without --voice, the server's voice for it",
    )
    parser.add_argument("-o", "--output", default="pipecat_agent.wav")
    args = parser.parse_args()
    replies = REPLIES.get(args.language.split("-")[0].lower())
    if replies is None:
        parser.error(f"--language: the scripted replies are in {', '.join(REPLIES)}")
    logger.remove()  # Pipecat logs every frame at DEBUG
    logger.add(sys.stderr, level="WARNING")

    tts = VoxliteTTSService(args.server, voice=args.voice, language=args.language)
    writer = WavWriter(args.output)
    worker = PipelineWorker(
        Pipeline([tts, writer]),
        params=PipelineParams(audio_out_sample_rate=RATE, enable_metrics=True),
    )
    started = asyncio.Event()

    async def on_started(worker: PipelineWorker, frame: Frame) -> None:
        started.set()

    worker.add_event_handler("on_pipeline_started", on_started)
    runner = WorkerRunner()
    await runner.add_workers(worker)
    await asyncio.gather(runner.run(), llm(worker, started, replies))
    writer.wav.close()
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    asyncio.run(main())
