"""Shared fixtures: the real default voice and real servers on loopback, port 0."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import grpc
import numpy as np
import onnxruntime as ort
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from voxlite.service.config import ServerConfig
from voxlite.service.graph import SplitCache
from voxlite.service.registry import VoiceRegistry, embedded_voice_files
from voxlite.service.server import VoxliteServer, create_server
from voxlite.service.voice import OrtSettings, Voice
from voxlite.tts.v1 import tts_pb2_grpc

T = TypeVar("T")


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One split-graph cache for the whole run, so the default voice is split once."""
    return tmp_path_factory.mktemp("split-cache")


@pytest.fixture(scope="session")
def registry(cache_dir: Path) -> VoiceRegistry:
    reg = VoiceRegistry(voices_dir=None, cache=SplitCache(cache_dir), ort_settings=OrtSettings())
    reg.load()
    return reg


@pytest.fixture(scope="session")
def voice(registry: VoiceRegistry) -> Voice:
    return registry.default


@pytest.fixture(scope="session")
def whole_graph() -> ort.InferenceSession:
    """The unsplit voice graph, run in one shot: the reference streamed audio must equal."""
    model, _ = embedded_voice_files()
    return ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])


def one_shot(session: ort.InferenceSession, voice: Voice, text: str) -> np.ndarray:
    """`text` through the unsplit graph, sentence by sentence (noise 0, native rate)."""
    parts = []
    for phonemes in voice.phonemize(text):
        ids = voice.phoneme_ids(phonemes)
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


async def eventually(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll `condition` on the running event loop until it holds: a wait with a generous
    deadline, never a verdict on how fast it came."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.001)


class ServerThread:
    """A real voxlite server running on its own event loop in a background thread."""

    def __init__(self, config: ServerConfig) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.server: VoxliteServer
        self.server, self.port = self.call(create_server(config))
        self.call(self.server.wait_ready())
        self.address = f"127.0.0.1:{self.port}"

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


def base_config(cache_dir: Path, tmp_path: Path, **changes: Any) -> ServerConfig:
    config = ServerConfig(
        host="127.0.0.1", port=0, voices_dir=tmp_path, cache_dir=cache_dir, workers=2
    )
    return replace(config, **changes)


@pytest.fixture(scope="session")
def server(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    """A server shared by tests that do not change its settings."""
    srv = ServerThread(base_config(cache_dir, tmp_path_factory.mktemp("voices")))
    yield srv
    srv.close()


@pytest.fixture
def channel(server: ServerThread) -> Iterator[grpc.Channel]:
    with server.channel() as ch:
        yield ch


@pytest.fixture
def stub(server: ServerThread, channel: grpc.Channel) -> tts_pb2_grpc.TextToSpeechServiceStub:
    return server.stub(channel)
