"""A LiveKit Agents session that speaks through voxlite: scripted replies in, a WAV file out.

With a voxlite server running (`scripts/serve`) and the extra installed
(`pip install "voxlite[livekit]"`, or `pip install ".[livekit]"` in a checkout):

    python examples/livekit_agent.py -o livekit_agent.wav [--server localhost:50051] [--language zh]

No LiveKit server or room: the session's audio output is a WAV file instead of a room
track, and the replies stream in token by token as an LLM's would (`session.say`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import wave
from collections.abc import AsyncIterator

from livekit import rtc
from livekit.agents import Agent, AgentSession
from livekit.agents.metrics import TTSMetrics
from livekit.agents.voice import io
from voxlite.client.livekit import TTS

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


class WavOutput(io.AudioOutput):
    """Stands where the room's audio track would: the session's audio goes to a WAV file."""

    def __init__(self, path: str) -> None:
        super().__init__(
            label="wav", capabilities=io.AudioOutputCapabilities(pause=False), sample_rate=RATE
        )
        self.wav = wave.open(path, "wb")  # noqa: SIM115 (closed at the end of main)
        self.wav.setnchannels(1)
        self.wav.setsampwidth(2)
        self.wav.setframerate(RATE)
        self.seconds = 0.0

    async def capture_frame(self, frame: rtc.AudioFrame) -> None:
        await super().capture_frame(frame)
        self.wav.writeframes(frame.data.tobytes())
        self.seconds += frame.duration

    def flush(self) -> None:
        super().flush()
        # A file "plays" at once: the segment is done as soon as it is written.
        self.on_playback_finished(playback_position=self.seconds, interrupted=False)

    def clear_buffer(self) -> None:
        pass


async def tokens(reply: str) -> AsyncIterator[str]:
    """The reply as an LLM streams it: a token every 30 ms."""
    for token in TOKEN.findall(reply):
        yield token
        await asyncio.sleep(0.03)


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
    parser.add_argument("-o", "--output", default="livekit_agent.wav")
    args = parser.parse_args()
    replies = REPLIES.get(args.language.split("-")[0].lower())
    if replies is None:
        parser.error(f"--language: the scripted replies are in {', '.join(REPLIES)}")

    tts = TTS(args.server, voice=args.voice, language=args.language, sample_rate=RATE)

    def on_metrics(metrics: TTSMetrics) -> None:
        print(f"first audio {1000 * metrics.ttfb:.0f} ms after the first token")

    tts.on("metrics_collected", on_metrics)
    failures: list[str] = []  # what LiveKit gave up on, after its retries
    tts.on("error", lambda e: None if e.recoverable else failures.append(str(e.error)))
    output = WavOutput(args.output)
    session: AgentSession[None] = AgentSession(
        tts=tts, turn_handling={"interruption": {"resume_false_interruption": False}}
    )
    session.output.audio = output
    await session.start(Agent(instructions="Reads scripted replies."))
    for reply in replies:
        await session.say(tokens(reply))
    await session.aclose()
    output.wav.close()
    if failures or not output.seconds:
        sys.exit(f"livekit_agent: {failures[-1] if failures else 'no audio came'}")
    print(f"wrote {args.output} ({output.seconds:.1f} s)")


if __name__ == "__main__":
    asyncio.run(main())
