"""What the tests share: real servers (in a thread or a process), calls driven step by step,
polling with a generous deadline, the texts they speak and text in an LLM's pieces."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import io
import ipaddress
import json
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import grpc
import numpy as np
import onnxruntime as ort
import pytest
import soundfile
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc
from voxlite.client import AsyncClient, AudioChunk, Encoding
from voxlite.service.call.session import Session
from voxlite.service.capacity.scheduler import Scheduler
from voxlite.service.engines.engine import Voice
from voxlite.service.engines.piper import PiperVoice, embedded_voice_files
from voxlite.service.server import VoxliteServer, create_server
from voxlite.service.settings.config import ServerConfig, config_from_args
from voxlite.tts.v1 import tts_pb2, tts_pb2_grpc

T = TypeVar("T")
pb = tts_pb2
CLI = [sys.executable, "-m", "voxlite.client.cli"]
SERVER = str(Path(sys.executable).parent / "voxlite-server")
LONG_TEXT = " ".join(
    f"This is sentence number {i} of a long answer that keeps going for a while." for i in range(12)
)
QUIET: dict[str, Any] = {"noise_scale": 0.0, "noise_w": 0.0}


def kinds(responses: list[Any]) -> list[str]:
    return [r.WhichOneof("response") for r in responses]


def audio_bytes(responses: list[Any]) -> bytes:
    return b"".join(r.audio.audio for r in responses if r.WhichOneof("response") == "audio")


def decode_ogg(data: bytes) -> tuple[np.ndarray, int]:
    samples, rate = soundfile.read(io.BytesIO(data), dtype="float32")
    return samples, rate


def idle(srv: ServerThread) -> bool:
    """No call admitted and no model job running."""
    return srv.server.admission.active == 0 and srv.server.scheduler.jobs_running == 0


def wait_until(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll a server-side condition (not a readiness sleep: it checks state until true)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


class Duplex:
    """A StreamingSynthesize call whose requests are sent one by one from the test."""

    _END = object()

    def __init__(self, stub: tts_pb2_grpc.TextToSpeechServiceStub, **kwargs: Any) -> None:
        self._requests: queue.Queue[Any] = queue.Queue()
        self.call = stub.StreamingSynthesize(iter(self._requests.get, self._END), **kwargs)
        self.received: list[Any] = []

    def send(self, **fields: Any) -> None:
        self._requests.put(pb.StreamingSynthesizeRequest(**fields))

    def config(self, **fields: Any) -> None:
        self.send(config=pb.SynthesisConfig(**fields))

    def close(self) -> None:
        self._requests.put(self._END)

    def next(self) -> Any:
        response = next(self.call)
        self.received.append(response)
        return response

    def until(self, kind: str) -> Any:
        """Read responses until one of `kind` arrives; returns it."""
        while True:
            response = self.next()
            if response.WhichOneof("response") == kind:
                return response

    def rest(self) -> list[Any]:
        out = list(self.call)
        self.received += out
        return out


def speak(voice: Voice, text: str, params: Hashable) -> np.ndarray:
    """`text` as one segment through a voice's engine interface, window by window (native
    rate, before gain)."""
    segment = voice.segment(text, params, word_timestamps=False)
    parts = []
    while (window := segment.next_window(0.0)) is not None:
        parts.append(window)
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


def one_shot(session: ort.InferenceSession, voice: PiperVoice, text: str) -> np.ndarray:
    """`text` through the unsplit graph, sentence by sentence (noise 0, native rate)."""
    parts = []
    for phonemes in voice.model.phonemize(text):
        ids = voice.model.phoneme_ids(phonemes)
        out = session.run(
            None,
            {
                "input": np.array([ids], dtype=np.int64),
                "input_lengths": np.array([len(ids)], dtype=np.int64),
                "scales": np.array([0.0, 1.0, 0.0], dtype=np.float32),
            },
        )[0]
        parts.append(out.reshape(-1))
    return np.concatenate(parts)


async def eventually(
    condition: Callable[[], bool], what: str = "the condition", timeout: float = 60.0
) -> None:
    """Poll `condition` on the running event loop until it holds: a wait with a generous
    deadline, never a verdict on how fast it came."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.001)


class ServerThread:
    """A real voxlite server running on its own event loop in a background thread."""

    def __init__(self, config: ServerConfig, *, hold_rest: bool = False) -> None:
        """Serving, with every voice loaded; `hold_rest`: only those loaded before SERVING,
        the others held back until release_rest()."""
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.server: VoxliteServer
        self.server, self.port = self.call(self._start(config, hold_rest))
        self.call(self.server.wait_ready())
        if not hold_rest:
            # Tests name folder voices from the start: wait for those loaded after SERVING too.
            self.call(self.server.wait_loaded())
        self.address = f"127.0.0.1:{self.port}"

    @staticmethod
    async def _start(config: ServerConfig, hold_rest: bool) -> tuple[VoxliteServer, int]:
        server, port = await create_server(config)
        if hold_rest:
            # Taken before the loading task first runs: the voices after SERVING wait for the
            # reload lock (as a SIGHUP's rescan does) until release_rest().
            await server._reload_lock.acquire()
        return server, port

    def release_rest(self) -> None:
        """Let the voices held back by `hold_rest` load, and wait until they have."""
        self.loop.call_soon_threadsafe(self.server._reload_lock.release)
        self.call(self.server.wait_loaded())

    def call(self, coro: Any) -> Any:
        """Run a coroutine on the server's loop and wait for its result."""
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout=60)

    def on_loop(self, fn: Callable[[], T]) -> T:
        async def wrapper() -> T:
            return fn()

        result: T = self.call(wrapper())
        return result

    def channel(self) -> grpc.Channel:
        return grpc.insecure_channel(self.address)

    def stub(self, channel: grpc.Channel) -> tts_pb2_grpc.TextToSpeechServiceStub:
        return tts_pb2_grpc.TextToSpeechServiceStub(channel)

    def health(self, channel: grpc.Channel, service: str = "") -> int:
        stub = health_pb2_grpc.HealthStub(channel)
        status: int = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status
        return status

    def close(self, grace: float = 0) -> None:
        if self.loop.is_running():
            self.call(self.server.stop(grace))
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        self.loop.close()


@contextlib.contextmanager
def held_workers(srv: ServerThread) -> Iterator[None]:
    """Every worker of `srv`'s scheduler busy until the block ends, with jobs that have slack
    (due in ten minutes: none runs wide), so that the server's next job queues."""
    scheduler = srv.server.scheduler
    assert isinstance(scheduler, Scheduler)
    release = threading.Event()
    held = [
        asyncio.run_coroutine_threadsafe(
            scheduler.run(lambda _: release.wait(timeout=60), time.monotonic() + 600), srv.loop
        )
        for _ in range(srv.server.config.workers)
    ]
    try:
        wait_until(lambda: scheduler.jobs_running == len(held))
        yield
    finally:
        release.set()
        for job in held:
            job.result(timeout=30)


def park_after(srv: ServerThread, seconds: float) -> None:
    """Set how long a stream must be quiet before its slot may go to another call
    (AdmissionPolicy.park_after): inf for tests of the limits themselves, so that a busy
    machine's pause between two steps never frees a slot; 0 to park at once."""
    admission = srv.server.admission
    policy = replace(admission.policy, park_after=seconds)
    srv.on_loop(lambda: setattr(admission, "policy", policy))


def add_voice(folder: Path, name: str, language: str) -> None:
    """A copy of the embedded voice under `name`, saying it speaks `language`."""
    model, config = embedded_voice_files()
    (folder / f"{name}.onnx").symlink_to(model)
    settings = json.loads(config.read_text())
    settings["language"]["code"] = language
    (folder / f"{name}.onnx.json").write_text(json.dumps(settings))


def base_config(cache_dir: Path, tmp_path: Path, **changes: Any) -> ServerConfig:
    """A test server's settings: loopback, any free port, Piper voices only (tests of Kokoro
    ask for it: its voices take seconds to load)."""
    config = ServerConfig(
        host="127.0.0.1",
        port=0,
        voices_dir=tmp_path,
        cache_dir=cache_dir,
        workers=2,
        engines=("piper",),
    )
    return replace(config, **changes)


class ServerProcess:
    """`voxlite-server` in a subprocess, on a free port; ready once health says SERVING.

    `env`: variables added to the test's environment; `credentials`: the channel's, for a
    server that speaks TLS; `launcher`: a command that execs the server's command line after
    it (a fork's preexec_fn is unsafe in a process with gRPC's threads)."""

    def __init__(
        self,
        cache_dir: Path,
        voices_dir: Path,
        *args: str,
        env: dict[str, str] | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        launcher: Sequence[str] = (),
    ) -> None:
        # Piper voices only, unless `args` name --engines (the later flag wins).
        command = [
            *launcher, SERVER, "--host", "127.0.0.1", "--port", "0",
            "--voices-dir", str(voices_dir), "--cache-dir", str(cache_dir), "--engines", "piper",
            *args,
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            command,
            stderr=subprocess.PIPE,
            text=True,
            env=environment(**(env or {})),
        )
        self.log: list[str] = []
        port = None
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            match = re.search(r"listening on \S+:(\d+)", line)
            if match:
                port = int(match.group(1))
                break
        assert port, "".join(self.log)
        # Keep reading the log so the server never blocks on a full pipe.
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()
        self.address = f"127.0.0.1:{port}"
        self.channel = (
            grpc.insecure_channel(self.address)
            if credentials is None
            else grpc.secure_channel(self.address, credentials)
        )
        self.wait_for_health(health_pb2.HealthCheckResponse.SERVING)

    def wait(self, timeout: float) -> int:
        """The exit status, once the process has exited and its last log lines are read."""
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=timeout)  # the pipe's end: every line is in self.log
        return code

    def _read_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def health(self) -> int:
        request = health_pb2.HealthCheckRequest(service="")
        status: int = health_pb2_grpc.HealthStub(self.channel).Check(request, timeout=5).status
        return status

    def wait_for_health(self, wanted: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.health() == wanted:
                    return
            except grpc.RpcError:
                pass  # not listening yet
            assert time.monotonic() < deadline, "".join(self.log)
            time.sleep(0.05)

    def close(self) -> None:
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        self._reader.join(timeout=10)
        assert self.proc.stderr is not None
        self.proc.stderr.close()


def environment(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "VOXLITE_SERVER"}
    return env | changes


def voxlite(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=env or environment(), timeout=90
    )


def config_error(capsys: pytest.CaptureFixture[str], *argv: str, **env: str) -> str:
    """The one line config_from_args writes when it refuses `argv` and `env` (exit 2)."""
    with pytest.raises(SystemExit) as exited:
        config_from_args(list(argv), env)
    assert exited.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def voxlite_server(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`voxlite-server` run to its end: a start expected to fail (one that serves instead
    runs into the timeout)."""
    return subprocess.run(
        [SERVER, *args],
        capture_output=True,
        text=True,
        env=environment(**(env or {})),
        timeout=60,
    )


def assert_taken_port_named(flag: str, cache_dir: Path, voices_dir: Path) -> None:
    """A server given a port something else holds, as `flag`: exit 1 and one line naming the
    port and the flag, no traceback."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = str(holder.getsockname()[1])
        result = voxlite_server(
            *("--host", "127.0.0.1", "--port", "0", flag, port, "--engines", "piper"),
            *("--voices-dir", str(voices_dir), "--cache-dir", str(cache_dir)),
        )
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr  # no traceback
    assert f"port {port} ({flag}) is already in use on 127.0.0.1" in lines[0]


def assert_server_refused(result: subprocess.CompletedProcess[str]) -> str:
    """A setting the server refuses: exit 2 and exactly one `voxlite-server: error:` line on
    stderr, no traceback, no usage."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("voxlite-server: error: "), lines
    return lines[0]


def assert_one_error_line(result: subprocess.CompletedProcess[str], code: int = 1) -> str:
    """An expected failure: exit code, and one `voxlite: error:` line (the last, for argparse)."""
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    if code == 1:
        assert len(lines) == 1, result.stderr
    assert re.match(r"voxlite( \w+)?: error: ", lines[-1]), lines
    return lines[-1]


# -- certificates -------------------------------------------------------------------------------


@dataclass
class Issued:
    cert: Path
    key: Path


def pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _alternative_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


_KEY_USAGES = (
    "digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
    "key_agreement", "key_cert_sign", "crl_sign", "encipher_only", "decipher_only",
)  # fmt: skip


def issue(
    folder: Path,
    name: str,
    *,
    issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None = None,
    ca: bool = False,
    server: bool = False,
    hosts: tuple[str, ...] = ("localhost", "127.0.0.1"),
) -> tuple[Issued, x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A certificate for `name`: a self-signed CA, or one signed by `issuer` (server: with
    `hosts` as subject alternative names)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    signer_cert, signer_key = issuer if issuer else (None, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(signer_cert.subject if signer_cert else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        # The key identifiers a CA puts in: Python 3.13's TLS (VERIFY_X509_STRICT) refuses a
        # chain without them ("Missing Authority Key Identifier").
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer_key.public_key()),
            critical=False,
        )
    )
    if ca:
        usage = dict.fromkeys(_KEY_USAGES, False) | {"key_cert_sign": True, "crl_sign": True}
        builder = builder.add_extension(x509.KeyUsage(**usage), critical=True)
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([_alternative_name(host) for host in hosts]),
            critical=False,
        ).add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    elif not ca:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
    cert = builder.sign(signer_key, hashes.SHA256())
    issued = Issued(folder / f"{name}.crt", folder / f"{name}.key")
    issued.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    issued.key.write_bytes(pem_key(key))
    return issued, cert, key


@dataclass
class Pki:
    ca: Issued
    server: Issued
    client: Issued
    rogue_ca: Issued
    rogue_client: Issued
    """Signed by rogue_ca, which the servers do not trust."""


def make_pki(folder: Path) -> Pki:
    """A test CA, a server and a client certificate it signed, and a rogue CA with its client."""
    ca, ca_cert, ca_key = issue(folder, "test-ca", ca=True)
    server, _, _ = issue(folder, "server", issuer=(ca_cert, ca_key), server=True)
    client, _, _ = issue(folder, "client", issuer=(ca_cert, ca_key))
    rogue_ca, rogue_cert, rogue_key = issue(folder, "rogue-ca", ca=True)
    rogue_client, _, _ = issue(folder, "rogue-client", issuer=(rogue_cert, rogue_key))
    return Pki(ca, server, client, rogue_ca, rogue_client)


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


# -- the HTTP API -------------------------------------------------------------------------------


def http_url(srv: ServerThread, path: str = "", *, scheme: str = "http") -> str:
    """The address of `srv`'s HTTP API (a server started with http_port=0)."""
    assert srv.server.http_port, "start the server with http_port=0"
    return f"{scheme}://127.0.0.1:{srv.server.http_port}{path}"


def ffmpeg_pcm(data: bytes, rate: int = 24000) -> np.ndarray:
    """Audio in any container ffmpeg reads (mp3, Ogg Opus), decoded by ffmpeg to mono float32
    at `rate`: a decoder independent of the encoders under test."""
    result = subprocess.run(
        [
            *("ffmpeg", "-hide_banner", "-loglevel", "error", "-i", "pipe:0"),
            *("-f", "s16le", "-ac", "1", "-ar", str(rate), "pipe:1"),
        ],
        input=data,
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return np.frombuffer(result.stdout, "<i2").astype(np.float32) / 32768.0


def opusdec_pcm(data: bytes, folder: Path) -> tuple[np.ndarray, int]:
    """An Ogg Opus file decoded by opus-tools' opusdec (as a WAV, read with soundfile)."""
    source, wav = folder / "in.opus", folder / "out.wav"
    source.write_bytes(data)
    result = subprocess.run(
        ["opusdec", "--quiet", str(source), str(wav)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    samples, rate = soundfile.read(wav, dtype="float32")
    return samples, rate


def sessions(srv: ServerThread) -> frozenset[Session]:
    """The sessions `srv` holds now, read on its loop (which adds and drops them)."""
    return srv.on_loop(lambda: frozenset(srv.server.admission.sessions))


def only_session(srv: ServerThread, before: frozenset[Session] = frozenset()) -> Session:
    """The one session `srv` holds (a call under way) that is not among `before`. A call
    answered just before may still hold its own for a moment: its session ends after its
    client has read the last byte, and under load later than the next call begins."""
    wait_until(lambda: len(sessions(srv) - before) == 1)
    (session,) = sessions(srv) - before
    return session


def check_example_languages(example: str, server: ServerThread, tmp_path: Path) -> None:
    """examples/`example` speaks its scripted replies in the language asked for, with the
    server's voice for it, and refuses one it has no replies in."""
    path = tmp_path / "agent.wav"
    script = str(Path(__file__).resolve().parents[1] / "examples" / example)
    command = [sys.executable, script, "--server", server.address, "-o", str(path)]
    result = subprocess.run(
        [*command, "--language", "en-US"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert soundfile.info(str(path)).duration > 3.0  # both replies
    refused = subprocess.run(
        [*command, "--language", "de"], capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 2
    assert "--language: the scripted replies are in en, zh, ja" in refused.stderr
