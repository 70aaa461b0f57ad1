"""Splits a Piper (VITS) ONNX graph into its acoustic part and its vocoder, with a cache on disk."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import ModelError

if TYPE_CHECKING:
    import onnx

_LOG = logging.getLogger(__name__)

# The vocoder (HiFi-GAN decoder) starts with the Conv whose weight is this initializer. Tensor and
# node names differ between exports; initializer names come from the PyTorch module tree and do not.
VOCODER_FIRST_WEIGHT = "dec.conv_pre.weight"
# Bump when the split's output changes, so stale cache entries are not reused.
_SPLIT_VERSION = 1


@dataclass(frozen=True)
class SplitGraph:
    """The two halves of one voice graph, as serialized ONNX models plus their tensor names."""

    acoustic: bytes
    """Phoneme ids (and scales, speaker id) to latent frames and per-phoneme frame counts."""
    vocoder: bytes
    """Latent frames (and speaker embedding) to waveform."""
    latent: str
    """Name of the latent-frames tensor [1, C, T]: acoustic output, vocoder input."""
    durations: str
    """Name of the per-phoneme frame counts tensor (output of the graph's single Ceil node)."""
    vocoder_extra_inputs: tuple[str, ...]
    """Other tensors the vocoder consumes (the speaker embedding of multi-speaker voices): each is
    either an acoustic output or a graph input (such as the speaker id), under the same name."""


def split_graph(model_bytes: bytes, path: Path) -> SplitGraph:
    """Split a serialized Piper graph. `path` only names the file in errors."""
    import onnx  # Only needed on a cache miss; keeps its import cost off a warm start.

    try:
        model = onnx.load_from_string(model_bytes)
    except Exception as exc:
        raise ModelError(path, f"not a readable ONNX model ({exc})") from exc
    graph = model.graph
    inputs = {i.name for i in graph.input}
    if "input" not in inputs or "scales" not in inputs:
        raise ModelError(path, "not a Piper voice graph (no 'input' and 'scales' inputs)")

    conv_pre = [n for n in graph.node if VOCODER_FIRST_WEIGHT in n.input]
    if len(conv_pre) != 1:
        raise ModelError(path, f"not a Piper VITS graph (no node uses '{VOCODER_FIRST_WEIGHT}')")
    latent = conv_pre[0].input[0]
    ceil_outputs = [n.output[0] for n in graph.node if n.op_type == "Ceil"]
    if len(ceil_outputs) != 1:
        raise ModelError(
            path, f"expected one Ceil node (phoneme durations), found {len(ceil_outputs)}"
        )
    durations = ceil_outputs[0]

    producer = {out: node for node in graph.node for out in node.output}
    initializers = {init.name for init in graph.initializer}

    def ancestors(targets: list[str], stop: set[str]) -> list[onnx.NodeProto]:
        """Nodes needed to compute `targets`, not walking past tensors in `stop`."""
        needed: set[int] = set()
        todo = list(targets)
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            if name in seen or name in stop or name in inputs or name in initializers or not name:
                continue
            seen.add(name)
            node = producer[name]
            if id(node) not in needed:
                needed.add(id(node))
                todo.extend(node.input)
        # Keep the graph's order, which is topological.
        return [n for n in graph.node if id(n) in needed]

    acoustic_nodes = ancestors([latent, durations], set())
    acoustic_tensors = {out for n in acoustic_nodes for out in n.output}
    vocoder_nodes = ancestors([o.name for o in graph.output], acoustic_tensors)
    if any(n.op_type in ("If", "Loop", "Scan") for n in vocoder_nodes):
        raise ModelError(path, "vocoder has control-flow nodes; cannot split it")

    # The vocoder's inputs: what it consumes that the acoustic part (or the caller) produces.
    vocoder_inputs: list[str] = []
    for node in vocoder_nodes:
        for name in node.input:
            if (name in acoustic_tensors or name in inputs) and name not in vocoder_inputs:
                vocoder_inputs.append(name)
    if latent not in vocoder_inputs:
        raise ModelError(path, "the vocoder does not consume the latent frames; cannot split it")
    extra = tuple(name for name in vocoder_inputs if name != latent)

    # Cut tensors need a type: the exporter's value_info has it when present; the tensors a
    # VITS graph is cut at (latent frames, durations, speaker embedding) are float otherwise.
    known = {vi.name: vi for vi in [*graph.input, *graph.value_info, *graph.output]}

    def typed(name: str) -> onnx.ValueInfoProto:
        return onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)

    def submodel(nodes: list[onnx.NodeProto], ins: list[str], outs: list[str]) -> bytes:
        used = {name for n in nodes for name in n.input}
        sub = onnx.helper.make_graph(
            nodes,
            graph.name or "piper",
            [known.get(n) or typed(n) for n in ins],
            [known.get(n) or typed(n) for n in outs],
            [init for init in graph.initializer if init.name in used],
        )
        out = onnx.helper.make_model(
            sub, opset_imports=list(model.opset_import), ir_version=model.ir_version
        )
        return bytes(out.SerializeToString())

    acoustic_reads = {name for n in acoustic_nodes for name in n.input}
    acoustic_inputs = [i.name for i in graph.input if i.name in acoustic_reads]
    return SplitGraph(
        acoustic=submodel(
            acoustic_nodes,
            acoustic_inputs,
            [latent, durations, *(e for e in extra if e not in inputs)],
        ),
        vocoder=submodel(vocoder_nodes, vocoder_inputs, [o.name for o in graph.output]),
        latent=latent,
        durations=durations,
        vocoder_extra_inputs=extra,
    )


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
        key = f"{hashlib.sha256(model_bytes).hexdigest()}-v{_SPLIT_VERSION}"
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
            return SplitGraph(
                acoustic=(self.directory / f"{key}.acoustic.onnx").read_bytes(),
                vocoder=(self.directory / f"{key}.vocoder.onnx").read_bytes(),
                latent=meta["latent"],
                durations=meta["durations"],
                vocoder_extra_inputs=tuple(meta["vocoder_extra_inputs"]),
            )
        except (OSError, ValueError, KeyError):
            return None

    def _write(self, key: str, split: SplitGraph) -> None:
        if self.directory is None:
            return
        meta = {
            "latent": split.latent,
            "durations": split.durations,
            "vocoder_extra_inputs": list(split.vocoder_extra_inputs),
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            # The .json goes last: a reader that finds it finds both models complete.
            for suffix, data in (
                (".acoustic.onnx", split.acoustic),
                (".vocoder.onnx", split.vocoder),
                (".json", json.dumps(meta).encode()),
            ):
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
