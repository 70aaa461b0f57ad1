"""Where the flow and the vocoder of a Piper graph are cut into stages."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import onnx


def cut(
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


def vocoder_stages(
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
    stages = cut(nodes, outputs, [ups[1].input[0]], set(), computed, weights, ancestors)
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


def flow_stages(
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
    stages = cut(nodes, [latent], cuts, set(flow_inputs), computed, weights, ancestors)
    return None if stages is None or len(stages) < 2 else (stages, cuts)
