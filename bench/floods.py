"""HTTP/2 floods (CONTINUATION, rapid reset) at a replica, directly and through HAProxy: what
reaches the replica, its memory, its access log, and legitimate calls made meanwhile.

    python -m bench.floods            # both attacks, direct and through HAProxy
    python -m bench.floods --quick    # shorter attacks

Every attack goes to loopback only and stops by itself (bench/_h2attack.py).
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from . import _common
from ._balanced import HAProxy, Replica, free_ports, haproxy_binary, wait_for
from ._h2attack import AttackResult, continuation_flood, rapid_reset


class Legitimate:
    """A caller making short Synthesize calls one after another while an attack runs."""

    def __init__(self, address: str) -> None:
        self._channel = grpc.insecure_channel(address)
        self._stub = tts_pb2_grpc.TextToSpeechServiceStub(self._channel)
        self.outcomes: Counter[str] = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                responses = list(
                    self._stub.Synthesize(pb.SynthesizeRequest(text="Hi."), timeout=10)
                )
                ok = responses[-1].WhichOneof("response") == "summary"
                self.outcomes["OK" if ok else "INCOMPLETE"] += 1
            except grpc.RpcError as exc:
                self.outcomes[exc.code().name] += 1

    def __enter__(self) -> Legitimate:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self._channel.close()

    @property
    def failed_share(self) -> float:
        total = sum(self.outcomes.values())
        return (total - self.outcomes["OK"]) / total if total else float("nan")


def measure(
    replica: Replica, target: str, attack: Callable[[str, int], AttackResult]
) -> dict[str, Any]:
    """Run `attack` at `target` (host:port) with a legitimate caller beside it."""
    host, _, port = target.rpartition(":")
    rss_before = replica.rss_bytes()
    lines_before = replica.access_lines()
    peak = rss_before
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, replica.rss_bytes())
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    with Legitimate(target) as legit:
        result = attack(host, int(port))
    done.set()
    sampler.join()
    # The replica must still answer afterwards.
    wait_for(replica.ready, "replica ready after the attack", 30)
    return {
        "frames_sent": result.frames,
        "mb_sent": round(result.bytes_sent / 1e6, 1),
        "seconds": round(result.seconds, 1),
        "connections": result.connections,
        "closed_by_peer": result.closed_by_peer,
        "rss_growth_mb": round((peak - rss_before) / 1e6, 1),
        "access_log_lines": replica.access_lines() - lines_before,
        "legit_calls": dict(legit.outcomes),
        "legit_failed_share": round(legit.failed_share, 3),
    }


def main() -> None:
    args = _common.parser(__doc__ or "", quick_help="2 s attacks instead of 10 s").parse_args()
    seconds = 2.0 if args.quick else 10.0
    attacks: dict[str, Callable[[str, int], AttackResult]] = {
        "continuation": lambda h, p: continuation_flood(h, p, seconds=seconds),
        "rapid reset": lambda h, p: rapid_reset(h, p, seconds=seconds),
    }
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        port, metrics_port = free_ports(2)
        replica = Replica(port, metrics_port, work, _common.cache_dir())
        proxy = None
        try:
            wait_for(replica.ready, "replica SERVING")
            targets = {"direct": replica.address}
            if haproxy_binary():
                proxy = HAProxy([replica], work)
                proxy.wait_all_up()
                targets["haproxy"] = proxy.address
            rows = []
            for name, attack in attacks.items():
                for via, target in targets.items():
                    figures = measure(replica, target, attack)
                    results[f"{name} {via}"] = figures
                    rows.append([f"{name}, {via}", figures["mb_sent"], figures["rss_growth_mb"],
                                 figures["access_log_lines"], figures["legit_failed_share"],
                                 sum(figures["legit_calls"].values())])  # fmt: skip
        finally:
            if proxy is not None:
                proxy.close()
            replica.close()
    print(_common.table(
        f"HTTP/2 floods, {seconds:g} s each, with a legitimate caller beside",
        ["attack", "MB sent", "replica RSS growth MB", "access lines", "legit failed",
         "legit calls"], rows,
    ))  # fmt: skip
    _common.write_json(args.json, {"seconds": seconds, "results": results})


if __name__ == "__main__":
    main()
