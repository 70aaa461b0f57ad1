"""The voice registry: every family's voices loaded, broken files reported, the default required."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from voxlite.service.errors import Unavailable, VoiceNotFound
from voxlite.service.piper import EMBEDDED_VOICE, PiperFamily, embedded_voice_files
from voxlite.service.piper.split_cache import SplitCache
from voxlite.service.registry import VoiceRegistry
from voxlite.service.runtime import OrtSettings


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


def test_registry_without_its_default_voice_refuses_to_start(
    tmp_path: Path, cache_dir: Path
) -> None:
    registry = registry_of(tmp_path, cache_dir, default="xx_XX-missing")
    with pytest.raises(
        VoiceNotFound, match=r"default voice 'xx_XX-missing' not found: put xx_XX-missing\.onnx"
    ):
        registry.load()
