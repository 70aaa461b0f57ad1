"""Costly text: callers at real-time pace while an attacker sends text that espeak expands
many-fold (digits, prices, phone numbers) and drops each call after 0.2 s. First audio and
gaps of the paced callers with and without the attacker, in one run, and the server's memory."""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from . import _common
from ._servers import free_port, spawn, voxlite_argv, wait_serving
from .corpus import REPLIES
from .soak import proc_sample

COSTLY = [
    " ".join(["1234567890"] * 30)[:300],
    " ".join(["$1,234,567.89"] * 25)[:300],
    " ".join(["+1 (555) 010-9999"] * 20)[:300],
    " ".join(["2024-03-05T10:30:00"] * 16)[:300],
]
"""300 characters each (one segment), 2,900 to 3,100 model ids in one espeak sentence."""
PCM = pb.SynthesisConfig(audio=pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE))
DROP_AFTER = 0.2
"""Seconds before the attacker drops each call: its work should stop, not run on."""


@dataclass
class Side:
    ttfa: list[float] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)
    """Per call, the longest time a listener playing in real time waited for audio (s)."""
    refused: int = 0


def paced_call(stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str, side: Side) -> None:
    """One reply, played as it arrives: how long until the first audio, and the longest wait
    for audio once playing started (0 when the audio was always in time)."""
    start = time.monotonic()
    played_until = None
    gap = 0.0
    try:
        for r in stub.Synthesize(pb.SynthesizeRequest(text=text, config=PCM), timeout=120):
            if r.WhichOneof("response") == "audio":
                now = time.monotonic()
                if played_until is None:
                    side.ttfa.append(now - start)
                    played_until = now
                gap = max(gap, now - played_until)
                played_until = max(played_until, now) + r.audio.duration_ms / 1000
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
            side.refused += 1
            time.sleep(1.0)
            return
        raise
    side.gaps.append(gap)
    if played_until is not None:  # wait while the reply plays, as a listener would
        time.sleep(max(0.0, played_until - time.monotonic()))


def attacker(stub: tts_pb2_grpc.TextToSpeechServiceStub, stop: float, period: float) -> int:
    """Two costly calls every `period` seconds, each dropped after DROP_AFTER; how many sent."""
    sent = 0
    while time.monotonic() < stop:
        calls = [
            stub.Synthesize(pb.SynthesizeRequest(text=COSTLY[(sent + i) % len(COSTLY)]))
            for i in range(2)
        ]
        sent += 2
        time.sleep(DROP_AFTER)
        for call in calls:
            call.cancel()
        time.sleep(max(0.0, period - DROP_AFTER))
    return sent


def level(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, callers: int, seconds: float, attack: bool
) -> tuple[Side, int]:
    side = Side()
    stop = time.monotonic() + seconds

    def caller(k: int) -> None:
        turn = k
        while time.monotonic() < stop:
            paced_call(stub, REPLIES[turn % len(REPLIES)] + f" Case {turn}.", side)
            turn += callers

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(callers)]
    for t in threads:
        t.start()
    sent = attacker(stub, stop, 7.0) if attack else 0
    for t in threads:
        t.join(timeout=180)
    return side, sent


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="20 s levels instead of 40")
    p.add_argument("--callers", type=int, default=4, help="paced callers (default 4)")
    p.add_argument("--seconds", type=float, help="length of each level (default 40, quick 20)")
    args = p.parse_args(argv)
    seconds = args.seconds or (20.0 if args.quick else 40.0)

    with tempfile.TemporaryDirectory(prefix="voxlite-costly-") as tmp:
        workdir = Path(tmp)
        (workdir / "voices").mkdir()
        port = free_port()
        server = spawn(
            "voxlite", voxlite_argv(port, workdir / "voices", "--phrase-cache-mb", "0"), workdir
        )
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                wait_serving(server, channel)
                stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
                start = time.monotonic()
                idle = proc_sample(server.proc.pid, start).rss_mb
                # One costly text alone: how long the whole call takes, and memory after it.
                one = time.monotonic()
                list(stub.Synthesize(pb.SynthesizeRequest(text=COSTLY[0], config=PCM)))
                alone = time.monotonic() - one
                after_one = proc_sample(server.proc.pid, start).rss_mb
                quiet, _ = level(stub, args.callers, seconds, attack=False)
                attacked, sent = level(stub, args.callers, seconds, attack=True)
                end = proc_sample(server.proc.pid, start).rss_mb
        finally:
            server.stop()

    rows: list[list[object]] = []
    for name, side in (("no attacker", quiet), (f"attacker ({sent} calls)", attacked)):
        t = _common.Stats.of([1000 * x for x in side.ttfa])
        worst = max(side.gaps, default=0.0)
        stutters = sum(g > 0.1 for g in side.gaps)
        rows.append([name, t.n, t.p50, t.p95, f"{stutters}/{len(side.gaps)}", 1000 * worst,
                     side.refused])  # fmt: skip
    print(
        _common.table(
            f"costly text: {args.callers} callers at real-time pace, {seconds:g} s a level "
            "(a gap: the listener waited over 100 ms for audio)",
            [
                "level",
                "calls",
                "first audio p50 ms",
                "p95 ms",
                "calls with a gap",
                "longest wait ms",
                "refused",
            ],
            rows,
        )
    )
    print(f"one costly call alone: {alone:.2f} s; server RSS idle {idle:.0f} MB, after it "
          f"{after_one:.0f} MB, after both levels {end:.0f} MB")  # fmt: skip
    _common.write_json(
        args.json,
        {
            "benchmark": "costly",
            "callers": args.callers,
            "seconds": seconds,
            "one_costly_call_seconds": alone,
            "rss_mb": {"idle": idle, "after_one": after_one, "end": end},
            "levels": {
                name: {
                    "ttfa_ms": _common.Stats.of([1000 * x for x in s.ttfa]).as_dict(),
                    "gaps_s": s.gaps,
                    "refused": s.refused,
                }
                for name, s in (("quiet", quiet), ("attacked", attacked))
            },
        },
    )


if __name__ == "__main__":
    main()
