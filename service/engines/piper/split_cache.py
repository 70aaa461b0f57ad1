"""Split voice graphs on disk, keyed by the model's content hash, so restarts skip the split."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from ...errors import ModelError
from ..graph_cache import GraphCache
from .split import SPLIT_VERSION, SplitGraph, split_graph

_LOG = logging.getLogger(__name__)


class SplitCache:
    """Split graphs on disk, keyed by the model file's content hash, so restarts skip the split."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._entries = GraphCache(directory)

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
        entry = self._entries.read(key)
        if entry is None:
            return None
        meta, parts = entry
        try:
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
                phoneme_ids=int(meta["phoneme_ids"]),
                speakers=int(meta["speakers"]),
            )
        except (KeyError, TypeError) as exc:
            _LOG.warning("split cache entry %s does not describe a split (%r)", key, exc)
            return None

    def _write(self, key: str, split: SplitGraph) -> None:
        parts = {".acoustic.onnx": split.acoustic}
        if split.vocoder:
            parts[".vocoder.onnx"] = split.vocoder
        if split.flow:
            parts[".flow.onnx"] = split.flow
        if split.vocoder_head is not None and split.vocoder_tail is not None:
            parts[".vocoder-head.onnx"] = split.vocoder_head
            parts[".vocoder-tail.onnx"] = split.vocoder_tail
        parts.update({f".flow-{i}.onnx": stage for i, stage in enumerate(split.flow_stages)})
        meta = {
            "latent": split.latent,
            "durations": split.durations,
            "flow_inputs": list(split.flow_inputs),
            "vocoder_extra_inputs": list(split.vocoder_extra_inputs),
            "vocoder_stride": split.vocoder_stride,
            "vocoder_cut": split.vocoder_cut,
            "flow_cuts": list(split.flow_cuts),
            "phoneme_ids": split.phoneme_ids,
            "speakers": split.speakers,
        }
        self._entries.write(key, meta, parts)
