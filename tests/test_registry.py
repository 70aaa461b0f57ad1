"""The voice registry: every family's voices loaded, broken files reported, the default required."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from voxlite.service import server as server_module
from voxlite.service.engines.engine import VoiceSource
from voxlite.service.engines.piper import (
    EMBEDDED_VOICE,
    PiperFamily,
    PiperVoice,
    embedded_voice_files,
)
from voxlite.service.engines.piper.split_cache import SplitCache
from voxlite.service.engines.registry import VoiceRegistry
from voxlite.service.engines.runtime import OrtSettings
from voxlite.service.errors import Unavailable, VoiceNotFound
from voxlite.service.server import BACKGROUND_NICE

from .helpers import ServerThread, base_config


def registry_of(folder: Path, cache_dir: Path, default: str = EMBEDDED_VOICE) -> VoiceRegistry:
    family = PiperFamily(OrtSettings(), SplitCache(cache_dir))
    return VoiceRegistry([family], voices_dir=folder, default_voice=default)


def test_registry_loads_folder_voices_and_reports_broken_ones(
    tmp_path: Path, cache_dir: Path
) -> None:
    model, config = embedded_voice_files()
    (tmp_path / "en_GB-copy-medium.onnx").symlink_to(model)
    shutil.copyfile(config, tmp_path / "en_GB-copy-medium.onnx.json")
    (tmp_path / "garbage.onnx").write_bytes(b"this is not onnx")
    shutil.copyfile(config, tmp_path / "garbage.onnx.json")
    (tmp_path / "lonely.onnx").write_bytes(b"no config next to me")
    (tmp_path / "badjson.onnx").write_bytes(b"x")
    (tmp_path / "badjson.onnx.json").write_text("{not json")

    registry = registry_of(tmp_path, cache_dir)
    registry.load()
    # The default serves first; the rest wait for load_rest(), which the server runs after
    # it reports SERVING.
    assert [v.info.name for v in registry.voices()] == [EMBEDDED_VOICE]
    assert registry.pending == {"en_GB-copy-medium", "garbage", "badjson", "lonely"}
    assert registry.loading() == ["badjson", "en_GB-copy-medium", "garbage", "lonely"]
    with pytest.raises(Unavailable, match="voice 'en_GB-copy-medium' is still loading: retry"):
        registry.get("en_GB-copy-medium")
    with pytest.raises(Unavailable, match=r"no voice loaded yet speaks language 'de'.*4 voice"):
        registry.resolve("", "de")
    registry.load_rest()

    assert registry.pending == set()
    assert registry.loading() == []
    assert [v.info.name for v in registry.voices()] == [EMBEDDED_VOICE, "en_GB-copy-medium"]
    reasons = {Path(f.path).name: f.reason for f in registry.failures}
    assert set(reasons) == {"garbage.onnx", "lonely.onnx.json", "badjson.onnx.json"}
    assert "not a readable ONNX model" in reasons["garbage.onnx"]
    assert "cannot read the voice config" in reasons["lonely.onnx.json"]
    assert "not valid JSON" in reasons["badjson.onnx.json"]
    with pytest.raises(VoiceNotFound, match=r"garbage.*not a readable ONNX model"):
        registry.get("garbage")
    with pytest.raises(VoiceNotFound, match="choose one of en_GB-copy-medium, en_US-joe-medium"):
        registry.get("nope")
    assert registry.get("").info.name == EMBEDDED_VOICE


def test_a_config_that_is_another_voices_is_refused_at_load(
    tmp_path: Path, cache_dir: Path
) -> None:
    """Bug: a model beside another voice's config (renamed, or copied over) loaded: phoneme
    ids past its table failed the load in onnxruntime's words ("indices element out of data
    bounds"), and four speakers on a model with one were listed and ignored, every speaker
    speaking in the model's one voice."""
    model, config = embedded_voice_files()
    wrong_ids = json.loads(config.read_text())
    wrong_ids["phoneme_id_map"]["a"] = [300]
    four = json.loads(config.read_text())
    four.update(num_speakers=4, speaker_id_map={"amy": 0, "ben": 1, "cat": 2, "dan": 3})
    for name, changed in (("en_US-ids-medium", wrong_ids), ("en_US-four-medium", four)):
        (tmp_path / f"{name}.onnx").symlink_to(model)
        (tmp_path / f"{name}.onnx.json").write_text(json.dumps(changed))
    registry = registry_of(tmp_path, cache_dir)
    registry.load()
    registry.load_rest()
    assert [v.info.name for v in registry.voices()] == [EMBEDDED_VOICE]
    reasons = {Path(f.path).name: f.reason for f in registry.failures}
    another = "this config is another voice's: use the .onnx.json that came with the model"
    ids = reasons["en_US-ids-medium.onnx.json"]
    assert ids.startswith("phoneme_id_map has ids up to 300, but en_US-ids-medium.onnx knows ")
    assert "ids 0 to 255" in ids
    assert another in ids
    speakers = reasons["en_US-four-medium.onnx.json"]
    assert speakers.startswith("num_speakers is 4 (speaker ids up to 3), but en_US-four-medium")
    assert "has 1 speaker(s)" in speakers
    assert another in speakers


def test_registry_without_its_default_voice_refuses_to_start(
    tmp_path: Path, cache_dir: Path
) -> None:
    registry = registry_of(tmp_path, cache_dir, default="xx_XX-missing")
    with pytest.raises(
        VoiceNotFound, match=r"default voice 'xx_XX-missing' not found: put xx_XX-missing\.onnx"
    ):
        registry.load()


def test_a_language_voice_not_found_refuses_to_start(tmp_path: Path, cache_dir: Path) -> None:
    """Bug: --language-voices zh=nope started; Mandarin calls failed until another voice of
    the range loaded, which then served it, picked by name."""
    family = PiperFamily(OrtSettings(), SplitCache(cache_dir))
    registry = VoiceRegistry(
        [family], voices_dir=tmp_path, default_voice=EMBEDDED_VOICE, language_voices={"zh": "nope"}
    )
    with pytest.raises(VoiceNotFound, match=r"voice 'nope' for zh not found: put nope\.onnx"):
        registry.load()


class _GatedFamily(PiperFamily):
    """The Piper family, but the first voice loaded after `gate_after` loads waits for the
    test: a load in progress at the moment the test chooses."""

    def __init__(self, cache_dir: Path, gate_after: int) -> None:
        super().__init__(OrtSettings(), SplitCache(cache_dir))
        self.loads = 0
        self.gate_after = gate_after
        self.waiting = threading.Event()
        self.go = threading.Event()

    def load(self, source: VoiceSource) -> PiperVoice:
        self.loads += 1
        if self.loads == self.gate_after + 1:
            self.waiting.set()
            assert self.go.wait(timeout=60)
        return super().load(source)


def test_loading_stops_at_the_voice_in_progress_when_the_server_stops(
    tmp_path: Path, cache_dir: Path
) -> None:
    """Bug: SIGTERM while the voices after SERVING loaded kept the process alive until every
    one had loaded (22.7 s with a 2 s grace). stop_loading() lets the voice in progress finish
    and starts no other."""
    model, config = embedded_voice_files()
    names = [f"en_GB-copy{i}-medium" for i in range(4)]
    for name in names:
        (tmp_path / f"{name}.onnx").symlink_to(model)
        shutil.copyfile(config, tmp_path / f"{name}.onnx.json")
    family = _GatedFamily(cache_dir, gate_after=1)  # the default loads; the first copy waits
    registry = VoiceRegistry([family], voices_dir=tmp_path, default_voice=EMBEDDED_VOICE)
    registry.load()
    rest = threading.Thread(target=registry.load_rest)
    rest.start()
    assert family.waiting.wait(timeout=60)
    registry.stop_loading()
    family.go.set()
    rest.join(timeout=60)
    assert not rest.is_alive()
    assert family.loads == 2  # the default and the copy in progress: no other started
    assert [v.info.name for v in registry.voices()] == [EMBEDDED_VOICE, names[0]]
    assert registry.loading() == []


@pytest.mark.skipif(sys.platform != "linux", reason="a nice value per thread is Linux's")
def test_voices_loaded_after_serving_run_below_the_workers(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28: a replica that has just reported SERVING loads the rest of its voices (each
    Kokoro voice a second of CPU) beside its first callers. The thread that loads them, and
    the threads it starts (one per family), run at the lowest priority; the workers that speak
    to the callers at the process's own."""

    def nice() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def loader_and_its_child() -> tuple[int, int]:
        child: list[int] = []
        thread = threading.Thread(target=lambda: child.append(nice()))
        thread.start()
        thread.join()
        return nice(), child[0]

    # The server's own priority, as imported (conftest has other tests' servers load at the
    # tests' priority).
    monkeypatch.setattr(server_module, "BACKGROUND_NICE", BACKGROUND_NICE)
    server = ServerThread(base_config(cache_dir, tmp_path))
    try:
        loader, child = server.server._background.submit(loader_and_its_child).result(timeout=30)
        worker = server.call(server.server.scheduler.runner().run(lambda wide: nice()))
    finally:
        server.close()
    assert loader == child == BACKGROUND_NICE > os.getpriority(os.PRIO_PROCESS, os.getpid())
    assert worker == os.getpriority(os.PRIO_PROCESS, os.getpid())


def test_the_voices_loaded_before_serving_are_listed_as_loading_meanwhile(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug: ListVoices, answered while the server starts, listed the voices it loads before
    SERVING (the default, each language's) neither among the voices nor as loading: for the
    seconds Kokoro's take, a caller saw no default voice at all."""
    registry = registry_of(tmp_path, cache_dir)
    listed = []
    load = registry._load

    def listing_then_load(*args: Any, **kwargs: Any) -> Any:
        listed.append(registry.loading())
        return load(*args, **kwargs)

    monkeypatch.setattr(registry, "_load", listing_then_load)
    registry.load()
    assert listed == [[EMBEDDED_VOICE]]
    assert registry.loading() == []


def test_a_voice_file_that_is_not_a_regular_file_fails_at_once(
    tmp_path: Path, cache_dir: Path
) -> None:
    """Bug: a named pipe called NAME.onnx (or NAME.onnx.json) in the voices folder blocked its
    load for ever: the voices after it listed as loading for good, SIGHUP's rescans waiting
    behind it, and SIGTERM's drain never ending. A pipe, a device or a folder now fails as a
    voice file, naming it, and the others load."""
    model, config = embedded_voice_files()
    os.mkfifo(tmp_path / "en_GB-pipe-medium.onnx")
    shutil.copyfile(config, tmp_path / "en_GB-pipe-medium.onnx.json")
    (tmp_path / "en_GB-piped-medium.onnx").symlink_to(model)
    os.mkfifo(tmp_path / "en_GB-piped-medium.onnx.json")
    (tmp_path / "en_GB-folder-medium.onnx").mkdir()
    shutil.copyfile(config, tmp_path / "en_GB-folder-medium.onnx.json")
    (tmp_path / "en_GB-zero-medium.onnx").symlink_to("/dev/zero")
    shutil.copyfile(config, tmp_path / "en_GB-zero-medium.onnx.json")
    (tmp_path / "en_GB-good-medium.onnx").symlink_to(model)
    shutil.copyfile(config, tmp_path / "en_GB-good-medium.onnx.json")
    registry = registry_of(tmp_path, cache_dir)

    def load_all() -> None:
        registry.load()
        registry.load_rest()

    done = threading.Thread(target=load_all, daemon=True)
    done.start()
    done.join(timeout=120)
    assert not done.is_alive(), "a load blocked on a voice file"
    assert [v.info.name for v in registry.voices()] == [EMBEDDED_VOICE, "en_GB-good-medium"]
    reasons = {Path(f.path).name: f.reason for f in registry.failures}
    not_regular = "is not a regular file (a named pipe, device or socket)"
    assert not_regular in reasons["en_GB-pipe-medium.onnx"]
    assert not_regular in reasons["en_GB-piped-medium.onnx.json"]
    assert not_regular in reasons["en_GB-zero-medium.onnx"]
    assert reasons["en_GB-folder-medium.onnx"] == "is a folder, not a voice file"
    assert registry.loading() == []
    os.mkfifo(tmp_path / "en_GB-later-medium.onnx")  # and on a rescan
    shutil.copyfile(config, tmp_path / "en_GB-later-medium.onnx.json")
    assert registry.reload() == []
    assert "en_GB-later-medium.onnx" in {Path(f.path).name for f in registry.failures}


def test_the_drain_waits_for_a_stuck_load_for_a_bounded_time(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    """Bug: the drain waited for the voice being loaded however long its read took (a file on a
    hung network mount), so SIGTERM never ended the process, and a second SIGTERM ended in a
    CancelledError traceback, still waiting. It now waits up to the grace or LOAD_WAIT_SECONDS,
    whichever is longer, says so, and the load's thread, a daemon, does not hold the process at
    exit."""
    model, config = embedded_voice_files()
    (tmp_path / "en_GB-stuck-medium.onnx").symlink_to(model)
    shutil.copyfile(config, tmp_path / "en_GB-stuck-medium.onnx.json")
    family = _GatedFamily(cache_dir, gate_after=1)  # the default loads; the folder voice hangs
    monkeypatch.setattr(server_module, "families", lambda config: [family])
    monkeypatch.setattr(server_module, "LOAD_WAIT_SECONDS", 0.5)  # the stuck load's bound
    srv = ServerThread(base_config(cache_dir, tmp_path), hold_rest=True)
    stuck: list[threading.Thread] = []
    try:
        srv.loop.call_soon_threadsafe(srv.server._reload_lock.release)  # not waiting for it
        assert family.waiting.wait(timeout=60)
        stuck.extend(t for t in threading.enumerate() if t.name.startswith("voxlite-background"))

        async def signalled_twice() -> None:
            first = asyncio.ensure_future(srv.server.stop(30))
            done, _ = await asyncio.wait([first], timeout=1)
            assert not done  # the first SIGTERM's drain waits for the load, up to 30 s
            first.cancel()  # the second SIGTERM: what serve() does
            with contextlib.suppress(asyncio.CancelledError):
                await first
            await srv.server.stop(0)

        with caplog.at_level("WARNING", logger="voxlite.service.server"):
            srv.call(signalled_twice())
        assert "a voice load still running after 0.5 s" in caplog.text
        assert "en_GB-stuck-medium" in caplog.text
        assert [t.daemon for t in stuck] == [True]  # the process can exit with it still reading
    finally:
        family.go.set()
        for thread in stuck:  # its voice loads: nothing of onnxruntime's runs at the tests' exit
            thread.join(timeout=60)
        srv.close()
