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
        if self.directory is None:
            return None
        try:
            meta = json.loads((self.directory / f"{key}.json").read_text())
            flow = self.directory / f"{key}.flow.onnx"
            vocoder = self.directory / f"{key}.vocoder.onnx"
            head = self.directory / f"{key}.vocoder-head.onnx"
            tail = self.directory / f"{key}.vocoder-tail.onnx"
            return SplitGraph(
                acoustic=(self.directory / f"{key}.acoustic.onnx").read_bytes(),
                flow=(
                    None
                    if not meta["flow_inputs"]
                    else b""
                    if meta["flow_cuts"]
                    else flow.read_bytes()
                ),
                vocoder=b"" if meta["vocoder_stride"] else vocoder.read_bytes(),
                latent=meta["latent"],
                durations=meta["durations"],
                flow_inputs=tuple(meta["flow_inputs"]),
                vocoder_extra_inputs=tuple(meta["vocoder_extra_inputs"]),
                vocoder_head=head.read_bytes() if meta["vocoder_stride"] else None,
                vocoder_tail=tail.read_bytes() if meta["vocoder_stride"] else None,
                vocoder_stride=meta["vocoder_stride"],
                vocoder_cut=meta["vocoder_cut"],
                flow_stages=tuple(
                    (self.directory / f"{key}.flow-{i}.onnx").read_bytes()
                    for i in range(len(meta["flow_cuts"]) + 1 if meta["flow_cuts"] else 0)
                ),
                flow_cuts=tuple(meta["flow_cuts"]),
            )
        except (OSError, ValueError, KeyError):
            return None

    def _write(self, key: str, split: SplitGraph) -> None:
        if self.directory is None:
            return
        meta = {
            "latent": split.latent,
            "durations": split.durations,
            "flow_inputs": list(split.flow_inputs),
            "vocoder_extra_inputs": list(split.vocoder_extra_inputs),
            "vocoder_stride": split.vocoder_stride,
            "vocoder_cut": split.vocoder_cut,
            "flow_cuts": list(split.flow_cuts),
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            # The .json goes last: a reader that finds it finds every part complete.
            parts = [(".acoustic.onnx", split.acoustic)]
            if split.vocoder:
                parts.append((".vocoder.onnx", split.vocoder))
            if split.flow:
                parts.append((".flow.onnx", split.flow))
            if split.vocoder_head is not None and split.vocoder_tail is not None:
                parts.append((".vocoder-head.onnx", split.vocoder_head))
                parts.append((".vocoder-tail.onnx", split.vocoder_tail))
            parts += [(f".flow-{i}.onnx", stage) for i, stage in enumerate(split.flow_stages)]
            for suffix, data in [*parts, (".json", json.dumps(meta).encode())]:
                _atomic_write(self.directory / f"{key}{suffix}", data)
        except OSError as exc:
            # A read-only cache costs start-up time, never correctness.
            _LOG.warning("cannot write the split cache in %s: %s", self.directory, exc)


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
