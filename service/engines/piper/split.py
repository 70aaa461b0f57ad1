"""Splits a Piper (VITS) ONNX graph into its acoustic part, its flow and its vocoder, in stages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ModelError
from .cuts import flow_stages, vocoder_stages
from .rewrite import convs_as_2d

if TYPE_CHECKING:
    import onnx

# The vocoder (HiFi-GAN decoder) starts with the Conv whose weight is this initializer. Tensor and
# node names differ between exports; initializer names come from the PyTorch module tree and do not.
VOCODER_FIRST_WEIGHT = "dec.conv_pre.weight"
# Bump when the split's output or the cache entry's form changes: stale entries are not reused.
SPLIT_VERSION = 7
_NOISE_OPS = ("RandomNormalLike", "RandomNormal")


@dataclass(frozen=True)
class SplitGraph:
    """The parts of one voice graph, as serialized ONNX models plus the tensor names between them.

    acoustic -> [flow] -> vocoder. The acoustic part works on the whole sentence (text encoder,
    duration predictor, noise); the flow and the vocoder work frame by frame, so both can run on
    windows of frames with some context on each side.
    """

    acoustic: bytes
    """Phoneme ids (and scales, speaker id) to per-phoneme frame counts and the flow's inputs
    (or the latent frames themselves when no flow was split off)."""
    flow: bytes | None
    """Frame-level prior (noise already drawn) to latent frames: VITS's normalising flow
    (None: no flow was split off; empty: it is in `flow_stages`)."""
    vocoder: bytes
    """Latent frames (and speaker embedding) to waveform (empty: it is in `vocoder_head` and
    `vocoder_tail`); its 1-D convolutions are 2-D ones of height 1 (rewrite.convs_as_2d)."""
    latent: str
    """Name of the latent-frames tensor [1, C, T]: the flow's output, the vocoder's input."""
    durations: str
    """Name of the per-phoneme frame counts tensor (output of the graph's single Ceil node)."""
    flow_inputs: tuple[str, ...]
    """What the flow consumes: acoustic outputs or graph inputs. Those shaped [1, C, T] are cut
    into windows along T; the others (scalars, the speaker embedding) are passed whole."""
    vocoder_extra_inputs: tuple[str, ...]
    """Other tensors the vocoder consumes (the speaker embedding of multi-speaker voices): each is
    either an acoustic output or a graph input (such as the speaker id), under the same name."""
    vocoder_head: bytes | None = None
    """The vocoder up to its second upsampling layer: latent frames (and the speaker embedding)
    to `vocoder_stride` samples per frame, the input of the tail. None when the vocoder could
    not be cut there (fewer than two upsampling layers, or a path around the cut)."""
    vocoder_tail: bytes | None = None
    """The rest of the vocoder: the head's output [1, C, stride * T] to the waveform. Its
    receptive field is a few head samples, where the head's is about ten frames, so a vocoder
    run window by window recomputes only the head's context: the tail keeps little context,
    measured in head samples (stages.Sentence)."""
    vocoder_stride: int = 0
    """Head samples per latent frame (the first upsampling layer's stride); 0 when not cut."""
    vocoder_cut: str = ""
    """Name of the head's output, the tail's input."""
    flow_stages: tuple[bytes, ...] = ()
    """The flow cut after each of its coupling layers but the last (empty: not cut). A flow
    run window by window then recomputes one layer's context (8 frames a side in Piper's
    voices) in each stage, not the whole flow's (32) in every layer (stages.Sentence)."""
    flow_cuts: tuple[str, ...] = ()
    """The tensor each flow stage after the first reads from the one before it (besides the
    flow's inputs, such as the mask)."""
    phoneme_ids: int = 0
    """Rows of the text encoder's embedding: phoneme ids run from 0 to this less one (0: the
    embedding was not found)."""
    speakers: int = 1
    """Rows of the speaker embedding (1: the graph takes no speaker id; 0: it takes one, but
    its table was not found, so no count is known)."""

    def names_only(self) -> SplitGraph:
        """This split without the parts' bytes (an empty flow stays a flow): what a voice
        keeps once its sessions are made."""
        staged = self.vocoder_head is not None
        return replace(
            self,
            acoustic=b"",
            flow=None if self.flow is None else b"",
            vocoder=b"",
            vocoder_head=b"" if staged else None,
            vocoder_tail=b"" if staged else None,
            flow_stages=tuple(b"" for _ in self.flow_stages),
        )


def split_graph(
    model_bytes: bytes, path: Path, *, conv_2d: bool = True, stages: bool = True
) -> SplitGraph:
    """Split a serialized Piper graph. `path` only names the file in errors. `conv_2d`: the
    vocoder's convolutions as 2-D ones (rewrite.convs_as_2d); `stages`: the flow and the vocoder cut
    into stages where they can be (both False for bench/engine.py's comparisons)."""
    import onnx  # Only needed on a cache miss; keeps its import cost off a warm start.

    try:
        model = onnx.load_from_string(model_bytes)
    except Exception as exc:
        raise ModelError(path, f"not a readable ONNX model ({exc})") from exc
    return _PiperGraph(model, path).split(conv_2d=conv_2d, stages=stages)


@dataclass
class _Parts:
    """The graph's nodes as acoustic part, flow and vocoder (each in the graph's order), with
    the tensors each reads and writes."""

    acoustic: list[onnx.NodeProto]
    acoustic_outputs: list[str]
    flow: list[onnx.NodeProto]
    """Empty when no flow was split off."""
    flow_inputs: list[str]
    flow_produced: set[str]
    vocoder: list[onnx.NodeProto]
    vocoder_inputs: list[str]
    computed: set[str]
    """What the acoustic part and the flow compute: where the vocoder's walk stops."""


class _PiperGraph:
    """One Piper graph and the steps that split it: where its parts meet (the latent frames and
    the durations), which nodes make each part, and each part as a model of its own."""

    def __init__(self, model: onnx.ModelProto, path: Path) -> None:
        self.model = model
        self.graph = model.graph
        self.path = path
        """Only names the file in errors."""
        self.inputs = {i.name for i in self.graph.input}
        if "input" not in self.inputs or "scales" not in self.inputs:
            raise ModelError(path, "not a Piper voice graph (no 'input' and 'scales' inputs)")
        self.latent = self._latent()
        self.durations = self._durations()
        self.producer = {out: node for node in self.graph.node for out in node.output}
        self.weights = {init.name for init in self.graph.initializer}
        self.outputs = [o.name for o in self.graph.output]

    def rows(self, graph_input: str) -> int:
        """Rows of the table that a graph input indexes (an embedding's Gather), 0 if none."""
        dims = {init.name: list(init.dims) for init in self.graph.initializer}
        for node in self.graph.node:
            if node.op_type == "Gather" and node.input[1:2] == [graph_input]:
                return int(dims.get(node.input[0], [0])[0])
        return 0

    def _latent(self) -> str:
        conv_pre = [n for n in self.graph.node if VOCODER_FIRST_WEIGHT in n.input]
        if len(conv_pre) != 1:
            raise ModelError(
                self.path, f"not a Piper VITS graph (no node uses '{VOCODER_FIRST_WEIGHT}')"
            )
        return conv_pre[0].input[0]

    def _durations(self) -> str:
        ceil_outputs = [n.output[0] for n in self.graph.node if n.op_type == "Ceil"]
        if len(ceil_outputs) != 1:
            raise ModelError(
                self.path, f"expected one Ceil node (phoneme durations), found {len(ceil_outputs)}"
            )
        return ceil_outputs[0]

    def ancestors(self, targets: list[str], stop: set[str]) -> list[onnx.NodeProto]:
        """Nodes needed to compute `targets`, not walking past tensors in `stop`."""
        needed: set[int] = set()
        todo = list(targets)
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            if name in seen or name in stop or name in self.inputs or name in self.weights:
                continue
            if not name:  # an optional input left out
                continue
            seen.add(name)
            node = self.producer[name]
            if id(node) not in needed:
                needed.add(id(node))
                todo.extend(node.input)
        # Keep the graph's order, which is topological.
        return [n for n in self.graph.node if id(n) in needed]

    def descendants(self, node: onnx.NodeProto) -> set[int]:
        consumers: dict[str, list[onnx.NodeProto]] = {}
        for n in self.graph.node:
            for name in n.input:
                consumers.setdefault(name, []).append(n)
        found: set[int] = set()
        todo = list(node.output)
        while todo:
            for n in consumers.get(todo.pop(), []):
                if id(n) not in found:
                    found.add(id(n))
                    todo.extend(n.output)
        return found

    def consumed(self, nodes: list[onnx.NodeProto], produced: set[str]) -> list[str]:
        """Tensors `nodes` read that come from `produced` or the graph's inputs, in order."""
        names: list[str] = []
        for node in nodes:
            for name in node.input:
                if (name in produced or name in self.inputs) and name not in names:
                    names.append(name)
        return names

    def flow_nodes(self) -> list[onnx.NodeProto]:
        """The flow's nodes; none when its region cannot be told.

        VITS draws z_p = m_p + noise * exp(logs_p) * noise_scale over all frames, then runs its
        flow frame by frame to the latent frames. Its region is everything downstream of that
        noise and upstream of the latent; the duration predictor's own noise is the other noise
        node (it decides the durations, so the Ceil depends on it)."""
        to_latent = {id(n) for n in self.ancestors([self.latent], set())}
        durations_side = {id(n) for n in self.ancestors([self.durations], set())}
        noises = [
            n for n in self.graph.node
            if n.op_type in _NOISE_OPS and id(n) in to_latent and id(n) not in durations_side
        ]  # fmt: skip
        if len(noises) != 1:
            return []
        region = self.descendants(noises[0]) & to_latent
        return [n for n in self.graph.node if id(n) in region]

    def parts(self) -> _Parts:
        """The acoustic part, the flow and the vocoder; ModelError if the vocoder cannot be
        split off."""
        flow_nodes = self.flow_nodes()
        flow_produced = {out for n in flow_nodes for out in n.output}
        if flow_nodes:
            everything = {out for n in self.graph.node for out in n.output}
            flow_inputs = self.consumed(flow_nodes, everything - flow_produced)
            stage_targets = [name for name in flow_inputs if name not in self.inputs]
        else:
            flow_inputs, stage_targets = [], [self.latent]
        acoustic_nodes = self.ancestors([self.durations, *stage_targets], set())
        computed = {out for n in acoustic_nodes + flow_nodes for out in n.output}
        vocoder_nodes = self.ancestors(self.outputs, computed)
        if any(n.op_type in ("If", "Loop", "Scan") for n in flow_nodes + vocoder_nodes):
            raise ModelError(
                self.path, "the flow or vocoder has control-flow nodes; cannot split it"
            )
        # The vocoder's inputs: what it consumes that earlier parts (or the caller) produce.
        vocoder_inputs = self.consumed(vocoder_nodes, computed)
        if self.latent not in vocoder_inputs:
            raise ModelError(
                self.path, "the vocoder does not consume the latent frames; cannot split it"
            )
        acoustic_produced = {out for n in acoustic_nodes for out in n.output}
        acoustic_outputs = [self.durations, *stage_targets]
        acoustic_outputs += [
            e
            for e in vocoder_inputs
            if e != self.latent and e in acoustic_produced and e not in acoustic_outputs
        ]
        return _Parts(
            acoustic=acoustic_nodes,
            acoustic_outputs=acoustic_outputs,
            flow=flow_nodes,
            flow_inputs=flow_inputs,
            flow_produced=flow_produced,
            vocoder=vocoder_nodes,
            vocoder_inputs=vocoder_inputs,
            computed=computed,
        )

    @cached_property
    def _known(self) -> dict[str, onnx.ValueInfoProto]:
        """Value infos by tensor name, shape inference's where it works (the weights
        convs_as_2d adds to the model change no type)."""
        import onnx

        try:
            inferred = onnx.shape_inference.infer_shapes(self.model).graph
        except Exception:  # inference is an aid only
            inferred = self.graph
        return {vi.name: vi for vi in [*inferred.value_info, *self.graph.input, *self.graph.output]}

    def typed(self, name: str) -> onnx.ValueInfoProto:
        """Cut tensors need a type: shape inference gives it; float is the fallback, which is
        what a VITS graph is cut at (frames, durations, noise, masks, speaker embedding)."""
        import onnx

        elem: int = onnx.TensorProto.FLOAT
        if name in self._known and self._known[name].type.tensor_type.elem_type:
            elem = self._known[name].type.tensor_type.elem_type
        return onnx.helper.make_tensor_value_info(name, elem, None)

    def submodel(self, nodes: list[onnx.NodeProto], ins: list[str], outs: list[str]) -> bytes:
        """`nodes` as a serialized model of their own, with the weights they use."""
        import onnx

        used = {name for n in nodes for name in n.input}
        sub = onnx.helper.make_graph(
            nodes,
            self.graph.name or "piper",
            [self.typed(n) for n in ins],
            [self.typed(n) for n in outs],
            [init for init in self.graph.initializer if init.name in used],
        )
        out = onnx.helper.make_model(
            sub, opset_imports=list(self.model.opset_import), ir_version=self.model.ir_version
        )
        return bytes(out.SerializeToString())

    def split(self, *, conv_2d: bool, stages: bool) -> SplitGraph:
        """The parts as models, the flow and the vocoder in stages where they can be cut."""
        parts = self.parts()

        def as_2d(nodes: list[onnx.NodeProto]) -> list[onnx.NodeProto]:
            return convs_as_2d(nodes, self.model) if conv_2d else nodes

        vocoder_cut = None
        if stages:
            vocoder_cut = vocoder_stages(
                parts.vocoder, self.outputs, parts.computed, self.weights, self.ancestors
            )
        flow_cut = None
        if stages and parts.flow:
            flow_cut = flow_stages(
                parts.flow,
                self.latent,
                parts.flow_inputs,
                parts.computed - parts.flow_produced,
                self.weights,
                self.ancestors,
            )
        acoustic_reads = {name for n in parts.acoustic for name in n.input}
        acoustic_inputs = [i.name for i in self.graph.input if i.name in acoustic_reads]
        flow = None
        if parts.flow:
            flow = b"" if flow_cut else self.submodel(parts.flow, parts.flow_inputs, [self.latent])
        return SplitGraph(
            acoustic=self.submodel(parts.acoustic, acoustic_inputs, parts.acoustic_outputs),
            flow=flow,
            vocoder=b""
            if vocoder_cut
            else self.submodel(as_2d(parts.vocoder), parts.vocoder_inputs, self.outputs),
            latent=self.latent,
            durations=self.durations,
            flow_inputs=tuple(parts.flow_inputs),
            vocoder_extra_inputs=tuple(n for n in parts.vocoder_inputs if n != self.latent),
            phoneme_ids=self.rows("input"),
            speakers=self.rows("sid") if "sid" in self.inputs else 1,
            **({} if vocoder_cut is None else self._vocoder_fields(vocoder_cut, parts, as_2d)),
            **({} if flow_cut is None else self._flow_fields(flow_cut, parts)),
        )

    def _vocoder_fields(
        self,
        stages: tuple[list[onnx.NodeProto], list[onnx.NodeProto], str, int],
        parts: _Parts,
        as_2d: Callable[[list[onnx.NodeProto]], list[onnx.NodeProto]],
    ) -> dict[str, Any]:
        head, tail, cut, stride = stages
        return {
            "vocoder_head": self.submodel(as_2d(head), parts.vocoder_inputs, [cut]),
            "vocoder_tail": self.submodel(as_2d(tail), [cut], self.outputs),
            "vocoder_stride": stride,
            "vocoder_cut": cut,
        }

    def _flow_fields(
        self, stages: tuple[list[list[onnx.NodeProto]], list[str]], parts: _Parts
    ) -> dict[str, Any]:
        nodes, cuts = stages
        submodels = []
        for i, stage in enumerate(nodes):
            reads = {name for n in stage for name in n.input}
            ins = ([] if i == 0 else [cuts[i - 1]]) + [n for n in parts.flow_inputs if n in reads]
            outs = [cuts[i]] if i < len(cuts) else [self.latent]
            submodels.append(self.submodel(stage, ins, outs))
        return {"flow_stages": tuple(submodels), "flow_cuts": tuple(cuts)}
