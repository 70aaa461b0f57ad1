"""Split voice graphs on disk, keyed by the model's content hash, so restarts skip the split."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from ..errors import ModelError
from .split import SPLIT_VERSION, SplitGraph, split_graph

_LOG = logging.getLogger(__name__)


class SplitCache:
    """Split graphs on disk, keyed by the model file's content hash, so restarts skip the split."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def load(self, model_path: Path) -> SplitGraph:
        """The split of `model_path`, from the cache or freshly made (and then cached)."""
        try:
            model_bytes = model_path.read_bytes()
        except OSError as exc:
            raise ModelError(model_path, f"cannot read the model file ({exc.strerror})") from exc
        key = f"{hashlib.sha256(model_bytes).hexdigest()}-v{SPLIT_VERSION}"
        cached = self._read(key)
        if cached is not None:
            return cached
        split = split_graph(model_bytes, model_path)
        self._write(key, split)
        return split

    def _read(self, key: str) -> SplitGraph | None:
        """The entry under `key` if it is whole: every part's bytes match the digest the entry
        recorded (a truncated or overwritten part, its .json intact, is a miss, said once)."""
        if self.directory is None:
            return None
        meta_path = self.directory / f"{key}.json"
        try:
            meta = json.loads(meta_path.read_text())
            parts: dict[str, bytes] = {}
            for suffix, digest in meta["parts"].items():
                path = self.directory / f"{key}{suffix}"
                data = path.read_bytes() if path.is_file() else b""
                if hashlib.sha256(data).hexdigest() != digest:
                    _LOG.warning("split cache file %s is damaged: splitting the voice again", path)
                    return None
                parts[suffix] = data
            staged = bool(meta["vocoder_stride"])
            return SplitGraph(
                acoustic=parts[".acoustic.onnx"],
                flow=(
                    None
                    if not meta["flow_inputs"]
                    else b""
                    if meta["flow_cuts"]
                    else parts[".flow.onnx"]
                ),
                vocoder=b"" if staged else parts[".vocoder.onnx"],
                latent=meta["latent"],
                durations=meta["durations"],
                flow_inputs=tuple(meta["flow_inputs"]),
                vocoder_extra_inputs=tuple(meta["vocoder_extra_inputs"]),
                vocoder_head=parts[".vocoder-head.onnx"] if staged else None,
                vocoder_tail=parts[".vocoder-tail.onnx"] if staged else None,
                vocoder_stride=meta["vocoder_stride"],
                vocoder_cut=meta["vocoder_cut"],
                flow_stages=tuple(
                    parts[f".flow-{i}.onnx"]
                    for i in range(len(meta["flow_cuts"]) + 1 if meta["flow_cuts"] else 0)
                ),
                flow_cuts=tuple(meta["flow_cuts"]),
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            _LOG.warning("split cache entry %s is unreadable (%r): splitting again", meta_path, exc)
            return None

    def _write(self, key: str, split: SplitGraph) -> None:
        if self.directory is None:
            return
        parts = [(".acoustic.onnx", split.acoustic)]
        if split.vocoder:
            parts.append((".vocoder.onnx", split.vocoder))
        if split.flow:
            parts.append((".flow.onnx", split.flow))
        if split.vocoder_head is not None and split.vocoder_tail is not None:
            parts.append((".vocoder-head.onnx", split.vocoder_head))
            parts.append((".vocoder-tail.onnx", split.vocoder_tail))
        parts += [(f".flow-{i}.onnx", stage) for i, stage in enumerate(split.flow_stages)]
        meta = {
            "latent": split.latent,
            "durations": split.durations,
            "flow_inputs": list(split.flow_inputs),
            "vocoder_extra_inputs": list(split.vocoder_extra_inputs),
            "vocoder_stride": split.vocoder_stride,
            "vocoder_cut": split.vocoder_cut,
            "flow_cuts": list(split.flow_cuts),
            "parts": {suffix: hashlib.sha256(data).hexdigest() for suffix, data in parts},
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            # The .json goes last: a reader that finds it finds every part complete.
            for suffix, data in [*parts, (".json", json.dumps(meta).encode())]:
                _atomic_write(self.directory / f"{key}{suffix}", data)
        except OSError as exc:
            # A read-only cache costs start-up time, never correctness.
            _LOG.warning("cannot write the split cache in %s: %s", self.directory, exc)


def _atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` durably: a temporary file synced to disk, renamed over `path`,
    then the folder synced, so that a crash leaves the old file or the new one, whole."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
