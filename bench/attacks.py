"""Attacks on a server with default flags (every language): Kokoro callers with costly text
beside English callers, SIGTERM while the voices load, and streams that send a config and then
nothing. Each prints what the English callers (or the process) met, the goal beside it."""

from __future__ import annotations

import contextlib
import signal
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
from ._servers import Child, free_port, spawn, voxlite_argv, wait_all_voices, wait_serving
from .corpus import REPLIES
from .soak import proc_sample

COSTLY = {
    "amounts": ("¥1,234,567.89 " * 400)[:5000],
    "phone numbers and dates": ("电话13812345678，2024年3月15日，金额12345.67元 " * 150)[:5000],
    "acronyms": ("请打开USBHDMIWIFIGPS设置" * 300)[:5000],
    "plain Chinese": ("今天天气很好，我们去公园散步吧。" * 320)[:5000],
    "kanji and yen": ("価格は1234567円です" * 420)[:5000],
}
"""5,000 characters each, the most one Synthesize call may carry."""
PCM = pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE, sample_rate_hz=16000)
LATE = 0.3
"""A chunk this late after its turn to play (s) is a gap the listener hears."""


@dataclass
class English:
    """What the English side met: the playing call's lateness, the newcomers' first audio."""

    late_chunks: int = 0
    worst_late: float = 0.0
    playing_calls: int = 0
    ttfa: list[float] = field(default_factory=list)
    refused: int = 0
    errors: list[str] = field(default_factory=list)


def played(stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str, english: English) -> float:
    """One reply played in real time from its first chunk: how late its worst chunk came."""
    start = time.monotonic()
    due = None
    worst = 0.0
    config = pb.SynthesisConfig(language="en", audio=PCM)
    for r in stub.Synthesize(pb.SynthesizeRequest(text=text, config=config), timeout=300):
        if r.WhichOneof("response") != "audio":
            continue
        now = time.monotonic()
        if due is None:
            english.ttfa.append(now - start)
            due = now
        late = now - due
        worst = max(worst, late)
        english.late_chunks += late > LATE
        due = max(due, now) + r.audio.duration_ms / 1000
    if due is not None:
        time.sleep(max(0.0, due - time.monotonic()))
    return worst


def kokoro_attack(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, attackers: int, seconds: float
) -> tuple[English, int, int]:
    """`attackers` callers sending COSTLY texts as fast as they are let in (0.2 s after a
    refusal), one English call playing reply after reply, an English newcomer every second."""
    english = English()
    stop = time.monotonic() + seconds
    admitted = refused = 0
    lock = threading.Lock()

    def attack(k: int) -> None:
        nonlocal admitted, refused
        texts = list(COSTLY.values())
        turn = k
        while time.monotonic() < stop:
            config = pb.SynthesisConfig(language="zh" if turn % 5 != 4 else "ja", audio=PCM)
            request = pb.SynthesizeRequest(text=texts[turn % len(texts)], config=config)
            turn += 1
            try:
                call = stub.Synthesize(request, timeout=max(1.0, stop - time.monotonic()))
                for _ in call:
                    pass
                with lock:
                    admitted += 1
            except grpc.RpcError as exc:
                if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    with lock:
                        refused += 1
                    time.sleep(0.2)
                elif exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                    with lock:
                        admitted += 1  # taken, and spoken until the level ended
                else:
                    raise

    def playing() -> None:
        turn = 0
        while time.monotonic() < stop:
            reply = f"Reply {turn}, " + " ".join(
                REPLIES[(turn + i) % len(REPLIES)] for i in range(4)
            )
            english.worst_late = max(english.worst_late, played(stub, reply, english))
            english.playing_calls += 1
            turn += 4

    def newcomer(turn: int) -> None:
        try:
            # A first clause never said before: the phrase cache (on, as by default) would
            # answer a repeated one without the model.
            played(stub, f"Case {turn}, " + REPLIES[turn % len(REPLIES)], english)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                english.refused += 1
            else:
                english.errors.append(f"{exc.code().name}: {exc.details()}")

    threads = [threading.Thread(target=attack, args=(k,)) for k in range(attackers)]
    threads.append(threading.Thread(target=playing))
    for t in threads:
        t.start()
    newcomers = []
    turn = 0
    while time.monotonic() < stop - 1:
        t = threading.Thread(target=newcomer, args=(turn,))
        t.start()
        newcomers.append(t)
        turn += 1
        time.sleep(1.0)
    for t in threads + newcomers:
        t.join(timeout=600)
    return english, admitted, refused


def drain_while_loading(workdir: Path, grace: float) -> float:
    """Seconds from SIGTERM, sent as soon as the server is SERVING (its other voices still
    loading), to the process's exit."""
    port = free_port()
    server = spawn("drain", voxlite_argv(port, workdir / "voices", "--grace-seconds",
                   f"{grace:g}", engines="piper,kokoro"), workdir)  # fmt: skip
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            wait_serving(server, channel)
        sent = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=120)
        return time.monotonic() - sent
    finally:
        server.stop()


def config_only(stub: tts_pb2_grpc.TextToSpeechServiceStub, streams: int) -> tuple[float, int]:
    """`streams` StreamingSynthesize calls on one connection that send only a config; then a
    caller on another connection retries a Synthesize call until it is served. Seconds until
    it was, and how many times it was refused before."""
    gates: list[threading.Event] = []
    calls = []
    for _ in range(streams):
        gate = threading.Event()

        def requests(gate: threading.Event = gate) -> object:
            yield pb.StreamingSynthesizeRequest(config=pb.SynthesisConfig())
            gate.wait(timeout=300)

        calls.append(stub.StreamingSynthesize(requests(), timeout=300))
        gates.append(gate)
    for call in calls:  # each has its slot (its format came), or was refused, before
        with contextlib.suppress(grpc.RpcError):
            next(iter(call))
    start = time.monotonic()
    refused = 0
    try:
        while True:
            try:
                list(stub.Synthesize(pb.SynthesizeRequest(text="Hello there."), timeout=30))
                return time.monotonic() - start, refused
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                refused += 1
                if time.monotonic() - start > 60:
                    return float("inf"), refused
                time.sleep(0.2)
    finally:
        for gate in gates:
            gate.set()
        for call in calls:
            call.cancel()


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="20 s of Kokoro attack instead of 60")
    p.add_argument("--attackers", type=int, default=4, help="Kokoro attackers (default 4)")
    p.add_argument("--seconds", type=float, help="length of the attack (default 60, quick 20)")
    args = p.parse_args(argv)
    seconds = args.seconds or (20.0 if args.quick else 60.0)
    with tempfile.TemporaryDirectory(prefix="voxlite-attacks-") as tmp:
        workdir = Path(tmp)
        (workdir / "voices").mkdir()
        port = free_port()
        server: Child = spawn(
            "voxlite", voxlite_argv(port, workdir / "voices", engines="piper,kokoro"), workdir
        )
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                wait_serving(server, channel)
                stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
                wait_all_voices(channel)
                begin = time.monotonic()
                rss_before = proc_sample(server.proc.pid, begin).rss_mb
                quiet, _, _ = kokoro_attack(stub, 0, min(seconds, 20.0))
                attacked, admitted, refused = kokoro_attack(stub, args.attackers, seconds)
                rss_after = proc_sample(server.proc.pid, begin).rss_mb
            with grpc.insecure_channel(f"127.0.0.1:{port}") as held:
                waited, refusals = config_only(tts_pb2_grpc.TextToSpeechServiceStub(held), 36)
        finally:
            server.stop()
        drain = drain_while_loading(workdir, grace=2.0)

    rows: list[list[object]] = []
    for name, side in (("no attacker", quiet), (f"{args.attackers} Kokoro attackers", attacked)):
        t = _common.Stats.of([1000 * x for x in side.ttfa])
        rows.append([name, side.playing_calls, 1000 * side.worst_late, side.late_chunks, t.n,
                     t.p50, t.p95, side.refused, len(side.errors)])  # fmt: skip
    print(
        _common.table(
            f"Kokoro callers with 5,000-character costly texts beside English, {seconds:g} s "
            "(goal: playing call never over 300 ms late; newcomers admitted, p95 < 300 ms)",
            [
                "level",
                "playing calls",
                "worst lateness ms",
                "chunks > 300 ms late",
                "English calls",
                "first audio p50 ms",
                "p95 ms",
                "English refused",
                "errors",
            ],
            rows,
        )
    )
    print(f"attackers: {admitted} calls taken, {refused} refused; server RSS "
          f"{rss_before:.0f} -> {rss_after:.0f} MB (goal: under +300 MB)")  # fmt: skip
    print(f"36 config-only streams on one connection: another caller served after "
          f"{waited:.1f} s, {refusals} refusals before (goal: within 5 s)")  # fmt: skip
    print(f"SIGTERM at SERVING, voices still loading, --grace-seconds 2: exit after {drain:.1f} s "
          "(goal: within 3 s)")  # fmt: skip
    _common.write_json(
        args.json,
        {
            "benchmark": "attacks",
            "seconds": seconds,
            "levels": {
                name: {
                    "worst_late_ms": 1000 * s.worst_late,
                    "late_chunks": s.late_chunks,
                    "ttfa_ms": _common.Stats.of([1000 * x for x in s.ttfa]).as_dict(),
                    "refused": s.refused,
                    "errors": s.errors,
                }
                for name, s in (("quiet", quiet), ("attacked", attacked))
            },
            "attackers": {"admitted": admitted, "refused": refused},
            "rss_mb": {"before": rss_before, "after": rss_after},
            "config_only": {"served_after_s": waited, "refusals": refusals},
            "drain_while_loading_s": drain,
        },
    )


if __name__ == "__main__":
    main()
