"""Shared fixtures: the real default voice and real servers on loopback, port 0."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import grpc
import onnxruntime as ort
import pytest
from voxlite.service import server as server_module
from voxlite.service.engines.piper import (
    EMBEDDED_VOICE,
    PiperFamily,
    PiperVoice,
    embedded_voice_files,
)
from voxlite.service.engines.piper.split_cache import SplitCache
from voxlite.service.engines.registry import VoiceRegistry
from voxlite.service.engines.runtime import OrtSettings
from voxlite.tts.v1 import tts_pb2_grpc

from .helpers import Pki, ServerThread, base_config, make_pki

T = TypeVar("T")


@pytest.fixture(scope="session", autouse=True)
def _voices_after_serving_load_at_the_tests_priority() -> Iterator[None]:
    """Servers in the tests' process load the voices after SERVING (and rescans) at the tests'
    own priority. At the server's BACKGROUND_NICE, the lowest, they get only what nothing else
    on the machine wants: with the other test process (or anything else) busy on both cores,
    fixtures waiting for every voice would wait on the machine's load.
    test_voices_loaded_after_serving_run_below_the_workers checks the real priority."""
    patch = pytest.MonkeyPatch()
    patch.setattr(server_module, "BACKGROUND_NICE", os.getpriority(os.PRIO_PROCESS, 0))
    yield
    patch.undo()


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One split-graph cache for the whole run, so the default voice is split once."""
    return tmp_path_factory.mktemp("split-cache")


@pytest.fixture(scope="session")
def registry(cache_dir: Path) -> VoiceRegistry:
    family = PiperFamily(OrtSettings(), SplitCache(cache_dir))
    reg = VoiceRegistry([family], voices_dir=None, default_voice=EMBEDDED_VOICE)
    reg.load()
    return reg


@pytest.fixture(scope="session")
def voice(registry: VoiceRegistry) -> PiperVoice:
    voice = registry.default
    assert isinstance(voice, PiperVoice)
    return voice


@pytest.fixture(scope="session")
def whole_graph() -> ort.InferenceSession:
    """The unsplit voice graph, run in one shot: the reference streamed audio must equal."""
    model, _ = embedded_voice_files()
    return ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """Certificates made for the run (tests/helpers.py: make_pki)."""
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="session")
def server(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    """A server shared by tests that do not change its settings."""
    srv = ServerThread(base_config(cache_dir, tmp_path_factory.mktemp("voices")))
    yield srv
    srv.close()


@pytest.fixture(scope="session")
def kokoro_server(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerThread]:
    """A server with both families, once every voice has loaded (ServerThread waits for
    those loaded after SERVING too), shared by tests that do not change its settings."""
    config = base_config(cache_dir, tmp_path_factory.mktemp("voices"), engines=("piper", "kokoro"))
    srv = ServerThread(config)
    yield srv
    srv.close()


@pytest.fixture
def channel(server: ServerThread) -> Iterator[grpc.Channel]:
    with server.channel() as ch:
        yield ch


@pytest.fixture
def stub(server: ServerThread, channel: grpc.Channel) -> tts_pb2_grpc.TextToSpeechServiceStub:
    return server.stub(channel)
