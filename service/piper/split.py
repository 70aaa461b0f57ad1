"""Splits a Piper (VITS) ONNX graph into its acoustic part, its flow and its vocoder, in stages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ModelError
from .cuts import flow_stages, vocoder_stages
from .rewrite import convs_as_2d

if TYPE_CHECKING:
    import onnx

# The vocoder (HiFi-GAN decoder) starts with the Conv whose weight is this initializer. Tensor and
# node names differ between exports; initializer names come from the PyTorch module tree and do not.
VOCODER_FIRST_WEIGHT = "dec.conv_pre.weight"
# Bump when the split's output or the cache entry's form changes: stale entries are not reused.
SPLIT_VERSION = 6
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

    def descendants(node: onnx.NodeProto) -> set[int]:
        consumers: dict[str, list[onnx.NodeProto]] = {}
        for n in graph.node:
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

    def consumed(nodes: list[onnx.NodeProto], produced: set[str]) -> list[str]:
        """Tensors `nodes` read that come from `produced` or the graph's inputs, in order."""
        names: list[str] = []
        for node in nodes:
            for name in node.input:
                if (name in produced or name in inputs) and name not in names:
                    names.append(name)
        return names

    # The flow: VITS draws z_p = m_p + noise * exp(logs_p) * noise_scale over all frames, then
    # runs its flow frame by frame to the latent frames. Its region is everything downstream of
    # that noise and upstream of the latent; the duration predictor's own noise is the other
    # noise node (it decides the durations, so the Ceil depends on it).
    to_latent = {id(n) for n in ancestors([latent], set())}
    durations_side = {id(n) for n in ancestors([durations], set())}
    flow_nodes: list[onnx.NodeProto] = []
    noises = [
        n for n in graph.node
        if n.op_type in _NOISE_OPS and id(n) in to_latent and id(n) not in durations_side
    ]  # fmt: skip
    if len(noises) == 1:
        region = descendants(noises[0]) & to_latent
        flow_nodes = [n for n in graph.node if id(n) in region]
    if flow_nodes:
        flow_produced = {out for n in flow_nodes for out in n.output}
        everything = {out for n in graph.node for out in n.output}
        flow_inputs = consumed(flow_nodes, everything - flow_produced)
        stage_targets = [name for name in flow_inputs if name not in inputs]
    else:
        flow_inputs, stage_targets = [], [latent]
    acoustic_nodes = ancestors([durations, *stage_targets], set())
    computed = {out for n in acoustic_nodes + flow_nodes for out in n.output}
    vocoder_nodes = ancestors([o.name for o in graph.output], computed)
    if any(n.op_type in ("If", "Loop", "Scan") for n in flow_nodes + vocoder_nodes):
        raise ModelError(path, "the flow or vocoder has control-flow nodes; cannot split it")

    # The vocoder's inputs: what it consumes that earlier parts (or the caller) produce.
    vocoder_inputs = consumed(vocoder_nodes, computed)
    if latent not in vocoder_inputs:
        raise ModelError(path, "the vocoder does not consume the latent frames; cannot split it")
    extra = tuple(name for name in vocoder_inputs if name != latent)
    acoustic_produced = {out for n in acoustic_nodes for out in n.output}
    acoustic_outputs = [durations, *stage_targets]
    acoustic_outputs += [e for e in extra if e in acoustic_produced and e not in acoustic_outputs]

    # Cut tensors need a type: shape inference gives it; float is the fallback, which is what
    # a VITS graph is cut at (frames, durations, noise, masks, speaker embedding).
    try:
        inferred = onnx.shape_inference.infer_shapes(model).graph
    except Exception:  # inference is an aid only
        inferred = graph
    known = {vi.name: vi for vi in [*inferred.value_info, *graph.input, *graph.output]}

    def typed(name: str) -> onnx.ValueInfoProto:
        elem: int = onnx.TensorProto.FLOAT
        if name in known and known[name].type.tensor_type.elem_type:
            elem = known[name].type.tensor_type.elem_type
        return onnx.helper.make_tensor_value_info(name, elem, None)

    def submodel(nodes: list[onnx.NodeProto], ins: list[str], outs: list[str]) -> bytes:
        used = {name for n in nodes for name in n.input}
        sub = onnx.helper.make_graph(
            nodes,
            graph.name or "piper",
            [typed(n) for n in ins],
            [typed(n) for n in outs],
            [init for init in graph.initializer if init.name in used],
        )
        out = onnx.helper.make_model(
            sub, opset_imports=list(model.opset_import), ir_version=model.ir_version
        )
        return bytes(out.SerializeToString())

    graph_outputs = [o.name for o in graph.output]
    vocoder_cut = None
    if stages:
        vocoder_cut = vocoder_stages(
            vocoder_nodes, graph_outputs, computed, initializers, ancestors
        )
    flow_cut = None
    if stages and flow_nodes:
        flow_cut = flow_stages(
            flow_nodes, latent, flow_inputs, computed - flow_produced, initializers, ancestors
        )
    as_2d = (lambda nodes: convs_as_2d(nodes, model)) if conv_2d else (lambda nodes: nodes)
    acoustic_reads = {name for n in acoustic_nodes for name in n.input}
    acoustic_inputs = [i.name for i in graph.input if i.name in acoustic_reads]
    return SplitGraph(
        acoustic=submodel(acoustic_nodes, acoustic_inputs, acoustic_outputs),
        flow=(
            None
            if not flow_nodes
            else b""
            if flow_cut
            else submodel(flow_nodes, flow_inputs, [latent])
        ),
        vocoder=b""
        if vocoder_cut
        else submodel(as_2d(vocoder_nodes), vocoder_inputs, graph_outputs),
        latent=latent,
        durations=durations,
        flow_inputs=tuple(flow_inputs),
        vocoder_extra_inputs=extra,
        **(
            {}
            if vocoder_cut is None
            else _vocoder_fields(vocoder_cut, vocoder_inputs, graph_outputs, submodel, as_2d)
        ),
        **({} if flow_cut is None else _flow_fields(flow_cut, flow_inputs, latent, submodel)),
    )


Submodel = Callable[[list["onnx.NodeProto"], list[str], list[str]], bytes]


def _vocoder_fields(
    stages: tuple[list[onnx.NodeProto], list[onnx.NodeProto], str, int],
    vocoder_inputs: list[str],
    outputs: list[str],
    submodel: Submodel,
    as_2d: Callable[[list[onnx.NodeProto]], list[onnx.NodeProto]],
) -> dict[str, Any]:
    head, tail, cut, stride = stages
    return {
        "vocoder_head": submodel(as_2d(head), vocoder_inputs, [cut]),
        "vocoder_tail": submodel(as_2d(tail), [cut], outputs),
        "vocoder_stride": stride,
        "vocoder_cut": cut,
    }


def _flow_fields(
    stages: tuple[list[list[onnx.NodeProto]], list[str]],
    flow_inputs: list[str],
    latent: str,
    submodel: Submodel,
) -> dict[str, Any]:
    nodes, cuts = stages
    parts = []
    for i, stage in enumerate(nodes):
        reads = {name for n in stage for name in n.input}
        ins = ([] if i == 0 else [cuts[i - 1]]) + [n for n in flow_inputs if n in reads]
        parts.append(submodel(stage, ins, [cuts[i]] if i < len(cuts) else [latent]))
    return {"flow_stages": tuple(parts), "flow_cuts": tuple(cuts)}
