"""The seed article's load test, replayed: closed-loop callers sending short Mandarin sentences
with Synthesize, every text new (phrase cache off), then 60% of requests repeating one of 20
earlier texts (phrase cache on). Requests/s, time to the first speech and to the last byte, and
refusals, beside the article's figures."""

from __future__ import annotations

import itertools
import random
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import numpy as np
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from . import _common
from ._servers import free_port, spawn, voxlite_argv, wait_all_voices, wait_serving

SENTENCES = [
    "你好，欢迎使用语音合成服务。",
    "您好，请问有什么可以帮您？",
    "您的订单已经发货了。",
    "请稍等，我帮您查询一下。",
    "今天天气晴朗，适合出门。",
    "会议将在十分钟后开始。",
    "感谢您的耐心等待。",
    "您的快递预计明天送达。",
    "请输入您的手机号码。",
    "验证码已经发送到您的手机。",
    "当前排队人数较多，请耐心等候。",
    "您的账户余额不足。",
    "支付成功，感谢您的购买。",
    "请问您需要开发票吗？",
    "我们的营业时间是早上九点到晚上六点。",
    "前方路口请左转。",
    "列车即将进站，请注意安全。",
    "您预约的时间是明天下午三点。",
    "请保持手机畅通。",
    "您的问题已经记录，我们会尽快处理。",
    "欢迎光临，请问几位？",
    "本次通话可能会被录音。",
    "请按一号键查询余额。",
    "您的密码修改成功。",
    "外面正在下雨，记得带伞。",
    "祝您生活愉快，再见。",
    "您的航班将推迟半小时起飞。",
    "请在安全线外等候。",
    "我没有听清楚，请再说一遍。",
    "好的，已经为您预订成功。",
    "请问还有其他问题吗？",
    "您的包裹已放在门口。",
    "电梯正在上行，请稍候。",
    "今天的会议取消了。",
    "您的积分可以兑换礼品。",
    "温馨提示，请勿酒后驾车。",
    "您的体检报告已经出来了。",
    "这道菜有点辣，请慢用。",
    "图书馆晚上十点闭馆。",
    "新年快乐，万事如意。",
]
"""Short sentences of the kind the article timed (its own: 你好，欢迎使用语音合成服务)."""
NEW_TEMPLATES = [
    "您的订单{n}号已经发货。",
    "请第{n}号客人到窗口办理。",
    "请拨打分机{n}联系客服。",
    "您的取餐号是{n}号。",
    "本次消费共{n}元。",
]
"""Texts made new with a number, for the run whose other requests hit the phrase cache."""
REPEATS = 20
"""Earlier texts the second run repeats..."""
REPEAT_SHARE = 0.6
"""...in this share of its requests."""
ARTICLE = {"requests_per_s": 5.3, "mean_ms": 760.0, "p95_ms": 1100.0}
"""The article's figures: 2 vCPU, an in-memory cache answering 60%+ of requests."""
SPEECH = 32768 * 10 ** (-30 / 20)
"""A PCM sample louder than -30 dBFS is speech (Kokoro's leading pause stays far below)."""
PCM = pb.SynthesisConfig(audio=pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE))
CALL_TIMEOUT = 30.0
HEADER = ["run", "answered", "req/s", "speech mean ms", "p95 ms", "last byte mean ms", "p95 ms",
          "refused", "failed"]  # fmt: skip


@dataclass
class Run:
    """One run's figures, in seconds from each request's send."""

    speech: list[float] = field(default_factory=list)
    last: list[float] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    """Each answered request's text (as `last`)."""
    refused: int = 0
    failed: int = 0
    voices: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


def one_call(stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str, run: Run) -> None:
    """One request: its first speech as a listener playing from the first chunk hears it (a
    late chunk delays what follows), and its last byte."""
    start = time.perf_counter()
    heard: float | None = None
    speech: float | None = None
    voice = ""
    try:
        for r in stub.Synthesize(pb.SynthesizeRequest(text=text, config=PCM), timeout=CALL_TIMEOUT):
            kind = r.WhichOneof("response")
            if kind == "format":
                voice = r.format.voice
            if kind != "audio" or speech is not None:
                continue
            now = time.perf_counter()
            heard = now if heard is None else max(heard, now)
            samples = np.frombuffer(r.audio.audio, "<i2")
            loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > SPEECH)
            if loud.size:
                speech = heard + float(loud[0]) / samples.size * r.audio.duration_ms / 1000
            heard += r.audio.duration_ms / 1000
    except grpc.RpcError as exc:
        with run.lock:
            if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                run.refused += 1
            else:
                run.failed += 1
        return
    end = time.perf_counter()
    with run.lock:
        run.voices.add(voice)
        run.last.append(end - start)
        run.texts.append(text)
        if speech is not None:
            run.speech.append(speech - start)


def load(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, callers: int, seconds: float, texts: Iterator[str]
) -> Run:
    """`callers` closed-loop callers for `seconds`: each sends its next request as soon as the
    last one ends (answered or refused)."""
    run = Run()
    stop = time.monotonic() + seconds
    take = threading.Lock()

    def caller() -> None:
        while time.monotonic() < stop:
            with take:
                text = next(texts)
            one_call(stub, text, run)

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 2 * CALL_TIMEOUT)
    return run


def all_new() -> Iterator[str]:
    """The sentences in turn (the phrase cache is off: none is answered from it)."""
    return itertools.cycle(SENTENCES)


def with_repeats(seed: int = 27) -> Iterator[str]:
    """REPEAT_SHARE of the requests one of the first REPEATS sentences (said before the run
    starts), the others a text never sent before."""
    rng = random.Random(seed)
    for n in itertools.count(1):
        if rng.random() < REPEAT_SHARE:
            yield rng.choice(SENTENCES[:REPEATS])
        else:
            yield NEW_TEMPLATES[n % len(NEW_TEMPLATES)].format(n=n)


def serve_and_load(
    workdir: Path, name: str, cache: bool, callers: int, seconds: float
) -> tuple[Run, float]:
    """A fresh server (every voice loaded) and one run on it; returns the run and its length."""
    port = free_port()
    extra = [] if cache else ["--phrase-cache-mb", "0"]
    argv = voxlite_argv(port, workdir / "voices", *extra, engines="piper,kokoro")
    server = spawn(f"voxlite-{name}", argv, workdir)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            wait_serving(server, channel)
            wait_all_voices(channel)
            stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
            # The earlier texts (and a first call, so that no run times a cold start).
            for text in SENTENCES[:REPEATS] if cache else SENTENCES[:1]:
                list(stub.Synthesize(pb.SynthesizeRequest(text=text), timeout=120))
            texts = with_repeats() if cache else all_new()
            start = time.monotonic()
            run = load(stub, callers, seconds, texts)
            return run, time.monotonic() - start
    finally:
        server.stop()


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="20 s runs instead of 60")
    p.add_argument("--callers", type=int, default=4, help="closed-loop callers (default 4)")
    p.add_argument("--seconds", type=float, help="length of each run (default 60, quick 20)")
    args = p.parse_args(argv)
    seconds = args.seconds or (20.0 if args.quick else 60.0)

    runs: dict[str, tuple[Run, float]] = {}
    with tempfile.TemporaryDirectory(prefix="voxlite-seeds-") as tmp:
        workdir = Path(tmp)
        (workdir / "voices").mkdir()
        runs["every text new"] = serve_and_load(workdir, "new", False, args.callers, seconds)
        runs[f"{REPEAT_SHARE:.0%} repeats, cache on"] = serve_and_load(
            workdir, "repeats", True, args.callers, seconds
        )

    def ms(values: list[float]) -> tuple[float, float]:
        if not values:
            return float("nan"), float("nan")
        return 1000 * float(np.mean(values)), 1000 * float(np.percentile(values, 95))

    rows: list[list[object]] = []
    figures: dict[str, object] = {}
    for name, (run, took) in runs.items():
        speech, last = ms(run.speech), ms(run.last)
        rate = len(run.last) / took
        rows.append([name, len(run.last), rate, *speech, *last, run.refused, run.failed])
        figures[name] = {
            "answered": len(run.last),
            "requests_per_s": rate,
            "first_speech_ms": {"mean": speech[0], "p95": speech[1]},
            "last_byte_ms": {"mean": last[0], "p95": last[1]},
            "refused": run.refused,
            "failed": run.failed,
            "voices": sorted(run.voices),
        }
    a = ARTICLE
    rows.append(["the article (2 vCPU, 60%+ hits)", "-", a["requests_per_s"], "-", "-",
                 a["mean_ms"], a["p95_ms"], "-", "-"])  # fmt: skip
    print(
        _common.table(
            f"seeds: {args.callers} closed-loop callers, Synthesize, short Mandarin sentences "
            f"(no language named), {seconds:g} s a run",
            HEADER,
            rows,
        )
    )
    # The repeats run's two kinds of request apart: with closed-loop callers, requests/s times
    # the mean time in the server is the number of callers, so the mean and p95 follow from how
    # long a new text keeps a caller waiting.
    run, _ = runs[f"{REPEAT_SHARE:.0%} repeats, cache on"]
    kinds: dict[str, object] = {}
    kind_rows: list[list[object]] = []
    for kind, repeated in (("repeated texts (phrase cache)", True), ("new texts", False)):
        times = [t for t, x in zip(run.last, run.texts, strict=True)
                 if (x in SENTENCES[:REPEATS]) == repeated]  # fmt: skip
        mean, p95 = ms(times)
        kind_rows.append([kind, len(times), mean, p95])
        kinds[kind] = {"answered": len(times), "last_byte_ms": {"mean": mean, "p95": p95}}
    print(
        _common.table(
            f"the {REPEAT_SHARE:.0%} repeats run by kind of text",
            ["texts", "answered", "last byte mean ms", "p95 ms"],
            kind_rows,
        )
    )
    figures["repeats by kind"] = kinds
    voices = sorted({v for run, _ in runs.values() for v in run.voices})
    print(f"voices that answered: {', '.join(voices) or 'none'}")
    _common.write_json(
        args.json,
        {
            "benchmark": "seeds",
            "callers": args.callers,
            "seconds": seconds,
            "article": ARTICLE,
            "runs": figures,
        },
    )


if __name__ == "__main__":
    main()
