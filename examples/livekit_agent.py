"""A LiveKit Agents session that speaks through voxlite: scripted replies in, a WAV file out.

With a voxlite server running (`scripts/serve`) and the extra installed
(`pip install "voxlite[livekit]"`, or `pip install ".[livekit]"` in a checkout):

    python examples/livekit_agent.py -o livekit_agent.wav [--server localhost:50051]

No LiveKit server or room: the session's audio output is a WAV file instead of a room
track, and the replies stream in token by token as an LLM's would (`session.say`).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import wave
from collections.abc import AsyncIterator

from livekit import rtc
from livekit.agents import Agent, AgentSession
from livekit.agents.metrics import TTSMetrics
from livekit.agents.voice import io
from voxlite.client.livekit import TTS

RATE = 24000
REPLIES = [
    "Sure, I can help with that. Your next meeting is at 3:30 with the design team.",
    "Okay, I've set a timer for ten minutes. Anything else?",
]


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
    for token in re.findall(r"\s*\S+", reply):
        yield token
        await asyncio.sleep(0.03)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="localhost:50051")
    parser.add_argument("--voice", help="a voice the server has (default: its default voice)")
    parser.add_argument("-o", "--output", default="livekit_agent.wav")
    args = parser.parse_args()

    tts = TTS(args.server, voice=args.voice, sample_rate=RATE)

    def on_metrics(metrics: TTSMetrics) -> None:
        print(f"first audio {1000 * metrics.ttfb:.0f} ms after the first token")

    tts.on("metrics_collected", on_metrics)
    output = WavOutput(args.output)
    session: AgentSession[None] = AgentSession(
        tts=tts, turn_handling={"interruption": {"resume_false_interruption": False}}
    )
    session.output.audio = output
    await session.start(Agent(instructions="Reads scripted replies."))
    for reply in REPLIES:
        await session.say(tokens(reply))
    await session.aclose()
    output.wav.close()
    print(f"wrote {args.output} ({output.seconds:.1f} s)")


if __name__ == "__main__":
    asyncio.run(main())
