"""Splits a Piper (VITS) ONNX graph into its acoustic part and its vocoder, with a cache on disk."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import ModelError

if TYPE_CHECKING:
    import onnx

_LOG = logging.getLogger(__name__)

# The vocoder (HiFi-GAN decoder) starts with the Conv whose weight is this initializer. Tensor and
# node names differ between exports; initializer names come from the PyTorch module tree and do not.
VOCODER_FIRST_WEIGHT = "dec.conv_pre.weight"
# Bump when the split's output changes, so stale cache entries are not reused.
_SPLIT_VERSION = 5
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
    `vocoder_tail`); its 1-D convolutions are 2-D ones of height 1 (_convs_as_2d)."""
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
    measured in head samples (voice.Sentence)."""
    vocoder_stride: int = 0
    """Head samples per latent frame (the first upsampling layer's stride); 0 when not cut."""
    vocoder_cut: str = ""
    """Name of the head's output, the tail's input."""
    flow_stages: tuple[bytes, ...] = ()
    """The flow cut after each of its coupling layers but the last (empty: not cut). A flow
    run window by window then recomputes one layer's context (8 frames a side in Piper's
    voices) in each stage, not the whole flow's (32) in every layer (voice.Sentence)."""
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
    vocoder's convolutions as 2-D ones (_convs_as_2d); `stages`: the flow and the vocoder cut
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
        vocoder_cut = _vocoder_stages(
            vocoder_nodes, graph_outputs, computed, initializers, ancestors
        )
    flow_cut = None
    if stages and flow_nodes:
        flow_cut = _flow_stages(
            flow_nodes, latent, flow_inputs, computed - flow_produced, initializers, ancestors
        )
    as_2d = (lambda nodes: _convs_as_2d(nodes, model)) if conv_2d else (lambda nodes: nodes)
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


def _cut(
    nodes: list[onnx.NodeProto],
    outputs: list[str],
    cuts: list[str],
    later_reads: set[str],
    computed: set[str],
    weights: set[str],
    ancestors: Callable[[list[str], set[str]], list[onnx.NodeProto]],
) -> list[list[onnx.NodeProto]] | None:
    """`nodes` (computing `outputs`) as stages between the tensors `cuts`: stage i computes
    cuts[i] (the last stage `outputs`). None unless every node is in exactly one stage and
    each later stage reads only the cut before it, `later_reads` and weights."""
    ends = [[cut] for cut in cuts] + [outputs]
    stages = [ancestors(end, computed | set(cuts[:i])) for i, end in enumerate(ends)]
    ids = [{id(n) for n in stage} for stage in stages]
    if sum(map(len, ids)) != len(nodes) or set().union(*ids) != {id(n) for n in nodes}:
        return None
    for i, stage in enumerate(stages[1:]):
        readable = {out for n in stage for out in n.output} | weights | later_reads
        readable |= {cuts[i], ""}  # "": an optional input left out
        if any(name not in readable for n in stage for name in n.input):
            return None
    return stages


def _vocoder_stages(
    nodes: list[onnx.NodeProto],
    outputs: list[str],
    computed: set[str],
    weights: set[str],
    ancestors: Callable[[list[str], set[str]], list[onnx.NodeProto]],
) -> tuple[list[onnx.NodeProto], list[onnx.NodeProto], str, int] | None:
    """The vocoder as head and tail, cut at the input of its second upsampling layer (HiFi-GAN:
    conv_pre, the first upsampling and its residual blocks in the head), with the head's
    samples per frame; None if it has no such layer or the tail would read anything but the
    cut (and its weights)."""
    import onnx

    ups = [n for n in nodes if n.op_type == "ConvTranspose"]
    if len(ups) < 2:
        return None
    stages = _cut(nodes, outputs, [ups[1].input[0]], set(), computed, weights, ancestors)
    if stages is None:
        return None
    head, tail = stages
    strides = [
        onnx.helper.get_attribute_value(a)
        for n in head
        if n.op_type == "ConvTranspose"
        for a in n.attribute
        if a.name == "strides"
    ]
    if any(len(s) != 1 for s in strides):
        return None
    return head, tail, ups[1].input[0], int(np.prod([s[0] for s in strides]))


def _flow_stages(
    nodes: list[onnx.NodeProto],
    latent: str,
    flow_inputs: list[str],
    computed: set[str],
    weights: set[str],
    ancestors: Callable[[list[str], set[str]], list[onnx.NodeProto]],
) -> tuple[list[list[onnx.NodeProto]], list[str]] | None:
    """VITS's flow cut after each coupling layer (each joins its two halves with a Concat)
    but the last, so that each stage's context is one layer's; with the cut tensors."""
    conv_after = False  # a Concat with no convolution after it would make an empty stage
    cuts: list[str] = []
    for node in reversed(nodes):
        conv_after = conv_after or node.op_type == "Conv"
        if node.op_type == "Concat" and conv_after:
            cuts.insert(0, node.output[0])
    stages = _cut(nodes, [latent], cuts, set(flow_inputs), computed, weights, ancestors)
    return None if stages is None or len(stages) < 2 else (stages, cuts)


_HEIGHT_AXIS = "voxlite_height_axis"
# Attributes of a 1-D convolution that gain a leading height entry of 1 (pads: two of 0).
_SPATIAL_ATTRS = ("kernel_shape", "strides", "dilations", "output_padding", "output_shape")


def _convs_as_2d(nodes: list[onnx.NodeProto], model: onnx.ModelProto) -> list[onnx.NodeProto]:
    """`nodes` with each 1-D convolution run as a 2-D one of height 1 (Unsqueeze, Conv with
    [O, I, 1, k] weights, Squeeze), and each 1-D transposed convolution as the same kind of
    Conv over its polyphase decomposition. The result is the same within float rounding
    (2e-6 on the vocoder's samples); what changes is that onnxruntime's layout optimisation
    gives 2-D convolutions its blocked (NCHWc) kernels: Piper's HiFi-GAN runs 15 to 20%
    faster on one thread, 3 to 5% more from its upsampling layers. (The flow gains 5% from
    them, for 50 MB of reordered weights: it stays 1-D.) New weights and constants are added
    to the model's initializers under new names."""
    import onnx

    graph = model.graph
    weights = {init.name: init for init in graph.initializer}
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < 13:  # Unsqueeze takes its axes as an input from opset 13 on (Piper exports 15)
        return nodes

    def constant(name: str, array: np.ndarray) -> str:
        if name not in weights:
            weights[name] = onnx.numpy_helper.from_array(array, name)
            graph.initializer.append(weights[name])
        return name

    constant(_HEIGHT_AXIS, np.array([2], dtype=np.int64))
    out: list[onnx.NodeProto] = []
    for node in nodes:
        weight = weights.get(node.input[1]) if len(node.input) > 1 else None
        if node.op_type not in ("Conv", "ConvTranspose") or weight is None or len(weight.dims) != 3:
            out.append(node)
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        x, y = node.input[0], node.output[0]
        x_2d, y_2d = f"{y}/voxlite_2d_in", f"{y}/voxlite_2d_out"
        out.append(onnx.helper.make_node("Unsqueeze", [x, _HEIGHT_AXIS], [x_2d]))
        if node.op_type == "ConvTranspose" and _polyphase_fits(attrs):
            out += _polyphase(node, attrs, weights, constant, x_2d, y_2d)
        else:
            array = onnx.numpy_helper.to_array(weight)[:, :, None, :]
            conv = onnx.NodeProto()
            conv.CopyFrom(node)
            for attr in conv.attribute:
                if attr.name in _SPATIAL_ATTRS or attr.name == "pads":
                    values = list(attr.ints)
                    del attr.ints[:]
                    if attr.name == "pads":  # [begin, end] to [top, begin, bottom, end]
                        attr.ints.extend([0, values[0], 0, values[1]])
                    else:
                        attr.ints.extend([1, *values])
            conv.input[0], conv.output[0] = x_2d, y_2d
            conv.input[1] = constant(f"{weight.name}/voxlite_2d", array)
            out.append(conv)
        out.append(onnx.helper.make_node("Squeeze", [y_2d, _HEIGHT_AXIS], [y]))
    return out


def _polyphase_fits(attrs: dict[str, Any]) -> bool:
    return (
        attrs.get("group", 1) == 1
        and all(d == 1 for d in attrs.get("dilations", [1]))
        and not any(attrs.get("output_padding", []))
        and "output_shape" not in attrs
        and attrs.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET")
    )


def _polyphase(
    node: onnx.NodeProto,
    attrs: dict[str, Any],
    weights: dict[str, onnx.TensorProto],
    constant: Callable[[str, np.ndarray], str],
    x: str,
    y: str,
) -> list[onnx.NodeProto]:
    """A 1-D ConvTranspose (stride s, kernel k, pads a and b) on x [N, C, 1, T] as a Conv
    of kernel j = ceil(k / s) with s times the output channels (one set per output phase),
    then the phases interleaved: Reshape [N, s, O, Q], Transpose [N, O, Q, s], Reshape
    [N, O, 1, Q s], and the pads cut off. Output sample s q + p (before the pads) is the
    sum over i < j of x[q - i] W[p + s i]: phase p's Conv weights are W[p + s (j - 1 - i)]
    at tap i, over x padded with j - 1 zeros each side."""
    import onnx

    w = onnx.numpy_helper.to_array(weights[node.input[1]])  # [C, O, k]
    c, o, k = w.shape
    s = int(attrs.get("strides", [1])[0])
    begin, end = (int(p) for p in attrs.get("pads", [0, 0]))
    j = -(-k // s)
    padded = np.zeros((c, o, j * s), dtype=w.dtype)
    padded[..., :k] = w
    taps = padded.reshape(c, o, j, s)[:, :, ::-1, :]  # [C, O, tap i, phase p]
    phase_w = np.ascontiguousarray(taps.transpose(3, 1, 0, 2)).reshape(s * o, c, 1, j)
    name = node.output[0]
    conv_inputs = [x, constant(f"{name}/voxlite_phase_w", phase_w)]
    if len(node.input) > 2 and node.input[2]:
        bias = onnx.numpy_helper.to_array(weights[node.input[2]])
        conv_inputs.append(constant(f"{name}/voxlite_phase_b", np.tile(bias, s)))
    # Q s = (T + j - 1) s samples computed; the output keeps (T - 1) s + k - begin - end.
    cut = j * s - k + end
    stop = -cut if cut else np.iinfo(np.int64).max
    return [
        onnx.helper.make_node(
            "Conv",
            conv_inputs,
            [f"{name}/voxlite_phases"],
            kernel_shape=[1, j],
            pads=[0, j - 1, 0, j - 1],
        ),
        onnx.helper.make_node(
            "Reshape",
            [f"{name}/voxlite_phases", constant(f"{name}/voxlite_split", np.array([0, s, o, -1]))],
            [f"{name}/voxlite_split_out"],
        ),
        onnx.helper.make_node(
            "Transpose", [f"{name}/voxlite_split_out"], [f"{name}/voxlite_inter"], perm=[0, 2, 3, 1]
        ),
        onnx.helper.make_node(
            "Reshape",
            [f"{name}/voxlite_inter", constant(f"{name}/voxlite_join", np.array([0, o, 1, -1]))],
            [f"{name}/voxlite_joined"],
        ),
        onnx.helper.make_node(
            "Slice",
            [
                f"{name}/voxlite_joined",
                constant(f"{name}/voxlite_from", np.array([begin])),
                constant(f"{name}/voxlite_to", np.array([stop])),
                constant(f"{name}/voxlite_axis", np.array([3])),
            ],
            [y],
        ),
    ]


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
