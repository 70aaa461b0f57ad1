"""Kokoro's 8-bit convolutions rewritten as one 8-bit matrix product each, on CPUs whose
u8 x s8 product is exact.

The int8 export runs each convolution as a ConvInteger of uint8 activations by uint8 weights.
onnxruntime has no fast u8 x u8 kernel on x86: the ConvIntegers take two thirds of the
decoder's time. The same sums, written as im2col (a Gather of the padded input, channels
last) and a MatMulInteger of uint8 columns by int8 weights (each weight and its zero point
less 128), reach onnxruntime's VNNI and AMX kernels: the decoder's output is bit-identical
and it runs much faster (docs/kokoro.md, "Decoder forms"; `python -m bench.kokoro`). The
encoder's convolutions are rewritten the same way.

The generator's two upsamplers are float ConvTransposes the export left unquantized; the fused
form of the decoder (graph.SplitCache) runs each as one 8-bit product too
(`upsamplers_as_matmuls`). That one is not exact: the quality judge covers it
(`python -m bench.kokoro_fused`).
Without VNNI, onnxruntime's u8 x s8 kernel adds products in pairs into 16 bits, which can
saturate: there the graph stays as exported (runtime.exact_int8_products).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .fused import DOMAIN


class _Builder:
    """New nodes and initializers; constants shared between the rewritten convolutions are
    made once."""

    def __init__(self, prefix: str = "im2col") -> None:
        self.initializers: list[onnx.TensorProto] = []
        self._shared: dict[str, str] = {}
        self._prefix = prefix

    def constant(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def shared(self, name: str, value: np.ndarray) -> str:
        if name not in self._shared:
            self._shared[name] = self.constant(f"{self._prefix}/{name}", value)
        return self._shared[name]


def _attributes(node: onnx.NodeProto) -> dict[str, object]:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _rewritable(node: onnx.NodeProto, inits: dict[str, onnx.TensorProto]) -> bool:
    """A 1-D ConvInteger of one group and stride 1 with constant weights and zero point."""
    if node.op_type != "ConvInteger" or len(node.input) != 4:
        return False
    weight, zero = inits.get(node.input[1]), inits.get(node.input[3])
    attrs = _attributes(node)
    return (
        weight is not None
        and zero is not None
        and weight.data_type == onnx.TensorProto.UINT8
        and len(weight.dims) == 3
        and numpy_helper.to_array(zero).size == 1
        and attrs.get("group", 1) == 1
        and list(attrs.get("strides", [1])) == [1]  # type: ignore[call-overload]
        and attrs.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET")
    )


def _as_matmul(
    node: onnx.NodeProto,
    inits: dict[str, onnx.TensorProto],
    made: _Builder,
    index: int,
    im2col_op: bool,
) -> list[onnx.NodeProto]:
    """Nodes computing `node`'s int32 output [1, C_out, T] from its uint8 input [1, C_in, T];
    `im2col_op`: the rows by fused_ops.c's Im2Col rather than a Gather of the padded input."""
    weight = numpy_helper.to_array(inits[node.input[1]]).astype(np.int16)
    zero = int(numpy_helper.to_array(inits[node.input[3]]).reshape(()))
    c_out, c_in, k = weight.shape
    attrs = _attributes(node)
    dilation = int(attrs.get("dilations", [1])[0])  # type: ignore[index]
    before, after = (int(p) for p in attrs.get("pads", [0, 0]))  # type: ignore[attr-defined]
    x, x_zero = node.input[0], node.input[2]
    p = f"{node.name or 'conv'}/im2col{index}"
    # Rows of the product are time steps; row t holds the k taps' C_in channels in turn, so
    # the weights become [k * C_in, C_out] in the same order.
    columns = (weight - 128).astype(np.int8).transpose(2, 1, 0).reshape(k * c_in, c_out)
    axis0, axis1 = (made.shared(f"axis{a}", np.array([a], np.int64)) for a in (0, 1))
    weights = made.constant(f"{p}/weight", columns)
    weight_zero = made.constant(f"{p}/weight_zero", np.array(zero - 128, np.int8))

    def step(op: str, inputs: list[str], output: str, **attrs: Any) -> onnx.NodeProto:
        return helper.make_node(op, inputs, [output], **attrs)

    last = step("Transpose", [x], f"{p}/last", perm=[0, 2, 1])
    product = [
        step("MatMulInteger", [f"{p}/rows", weights, x_zero, weight_zero], f"{p}/product"),
        step("Transpose", [f"{p}/product"], f"{p}/channels", perm=[1, 0]),
        step("Unsqueeze", [f"{p}/channels", axis0], node.output[0]),
    ]
    if im2col_op:
        geometry = made.shared(
            f"geometry_{k}_{dilation}_{before}_{after}",
            np.array([k, dilation, before, after], np.int64),
        )
        columns_op = step("Im2Col", [f"{p}/last", x_zero, geometry], f"{p}/rows", domain=DOMAIN)
        return [last, columns_op, *product]
    pads = made.shared(f"pads_{before}_{after}", np.array([0, before, 0, 0, after, 0], np.int64))
    span = made.shared(f"span_{(k - 1) * dilation}", np.array([(k - 1) * dilation], np.int64))
    taps = made.shared(f"taps_{k}_{dilation}", (np.arange(k) * dilation)[None, :].astype(np.int64))
    rows = made.shared(f"rows_{k * c_in}", np.array([-1, k * c_in], np.int64))
    zero_i, one_i = (
        made.shared("zero", np.array(0, np.int64)),
        made.shared("one", np.array(1, np.int64)),
    )
    return [
        last,
        # Padded with the input's zero point (the quantized 0.0), as ConvInteger pads.
        step("Pad", [f"{p}/last", pads, x_zero], f"{p}/padded"),
        step("Shape", [f"{p}/padded"], f"{p}/length", start=1, end=2),
        step("Sub", [f"{p}/length", span], f"{p}/steps"),
        step("Squeeze", [f"{p}/steps"], f"{p}/steps0"),
        step("Range", [zero_i, f"{p}/steps0", one_i], f"{p}/starts"),
        step("Unsqueeze", [f"{p}/starts", axis1], f"{p}/starts1"),
        step("Add", [f"{p}/starts1", taps], f"{p}/index"),
        step("Gather", [f"{p}/padded", f"{p}/index"], f"{p}/taps", axis=1),
        step("Reshape", [f"{p}/taps", rows], f"{p}/rows"),
        *product,
    ]


def rewrite(
    model: onnx.ModelProto,
    build: Callable[[onnx.NodeProto, int], list[onnx.NodeProto] | None],
    initializers: list[onnx.TensorProto],
) -> int:
    """Each node of `model` for which `build(node, how many before it were)` returns nodes
    replaced by them (their new constants in `initializers`), and the initializers then read
    by nothing dropped; how many nodes were replaced."""
    graph = model.graph
    nodes: list[onnx.NodeProto] = []
    rewritten = 0
    for node in graph.node:
        made = build(node, rewritten)
        rewritten += made is not None
        nodes.extend([node] if made is None else made)
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(initializers)
    used = {name for node in graph.node for name in node.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    return rewritten


def convs_as_matmuls(model_bytes: bytes, *, im2col_op: bool = False) -> tuple[bytes, int]:
    """The graph with every rewritable ConvInteger as im2col and a u8 x s8 MatMulInteger
    (exact where runtime.exact_int8_products()), and how many were rewritten; `im2col_op`:
    im2col by fused_ops.c's operator (a session of the graph loads fused.library())."""
    model = onnx.load_from_string(model_bytes)
    inits = {i.name: i for i in model.graph.initializer}
    made = _Builder()

    def build(node: onnx.NodeProto, index: int) -> list[onnx.NodeProto] | None:
        return _as_matmul(node, inits, made, index, im2col_op) if _rewritable(node, inits) else None

    # The uint8 weights the rewritten convolutions read go with the nodes.
    rewritten = rewrite(model, build, made.initializers)
    if im2col_op and rewritten:
        model.opset_import.append(helper.make_opsetid(DOMAIN, 1))
    return model.SerializeToString(), rewritten


def _upsampler(node: onnx.NodeProto, inits: dict[str, onnx.TensorProto]) -> bool:
    """A 1-D float ConvTranspose of one group whose kernel is twice its stride, with constant
    weights and equal pads of at most the stride (the generator's two upsamplers)."""
    if node.op_type != "ConvTranspose" or node.input[1] not in inits:
        return False
    weight = inits[node.input[1]]
    attrs = _attributes(node)
    stride = list(attrs.get("strides", [1]))  # type: ignore[call-overload]
    pads = list(attrs.get("pads", [0, 0]))  # type: ignore[call-overload]
    return (
        weight.data_type == onnx.TensorProto.FLOAT
        and len(weight.dims) == 3
        and len(stride) == 1
        and weight.dims[2] == 2 * stride[0]
        and attrs.get("group", 1) == 1
        and list(attrs.get("dilations", [1])) == [1]  # type: ignore[call-overload]
        and not any(list(attrs.get("output_padding", [0])))  # type: ignore[call-overload]
        and attrs.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET")
        and len(pads) == 2
        and pads[0] == pads[1] <= stride[0]
        and (len(node.input) < 3 or node.input[2] in inits)
    )


def _upsampler_as_matmul(
    node: onnx.NodeProto, inits: dict[str, onnx.TensorProto], made: _Builder, index: int
) -> list[onnx.NodeProto]:
    """Nodes computing `node`'s output [1, C_out, s (T + 1) - 2 p] from its input [1, C_in, T].

    With a kernel of 2s, output block m (steps m s to m s + s - 1) sums input step m through
    the kernel's first half and step m - 1 through its second: one product of rows
    [x[m], x[m - 1]] by the two halves side by side, its s * C_out columns then laid out as s
    steps of C_out channels. The product is 8-bit, as the export's own linear layers are: the
    rows quantized as they come (DynamicQuantizeLinear), the weights once, symmetric, with a
    scale per column; onnxruntime fuses the quantization, product and scaling into one
    operator."""
    weight = numpy_helper.to_array(inits[node.input[1]])  # [C_in, C_out, 2s]
    c_in, c_out, kernel = weight.shape
    s = kernel // 2
    pad = int(_attributes(node).get("pads", [0, 0])[0])  # type: ignore[index]
    # Rows [x[m], x[m - 1]] (2 C_in) by columns (step q of the block, channel o).
    halves = np.concatenate([weight[:, :, :s], weight[:, :, s:]], axis=0)  # [2 C_in, C_out, s]
    columns = halves.transpose(0, 2, 1).reshape(2 * c_in, s * c_out).astype(np.float64)
    column_scale = np.abs(columns).max(axis=0) / 127
    column_scale[column_scale == 0] = 1.0
    p = f"{node.name or 'upsample'}/matmul{index}"
    weights = made.constant(
        f"{p}/weight", np.clip(np.rint(columns / column_scale), -127, 127).astype(np.int8)
    )
    weight_scale = made.constant(f"{p}/weight_scale", column_scale.astype(np.float32))
    weight_zero = made.shared("int8_zero", np.array(0, np.int8))
    ends = made.shared("ends_1_1", np.array([0, 1, 0, 0, 1, 0], np.int64))
    zero, one, minus_one = (made.shared(f"i{v}", np.array([v], np.int64)) for v in (0, 1, -1))
    past_end = made.shared("past_end", np.array([2**62], np.int64))
    steps = made.shared(f"steps_{c_out}", np.array([1, -1, c_out], np.int64))

    def step(op: str, inputs: list[str], output: str, **attrs: Any) -> onnx.NodeProto:
        return helper.make_node(op, inputs, [output], **attrs)

    nodes = [
        step("Transpose", [node.input[0]], f"{p}/last", perm=[0, 2, 1]),
        # A zero step before and after: x[-1] and x[T] of the first and last blocks.
        step("Pad", [f"{p}/last", ends], f"{p}/padded"),
        step("Slice", [f"{p}/padded", one, past_end, one], f"{p}/now"),
        step("Slice", [f"{p}/padded", zero, minus_one, one], f"{p}/before"),
        step("Concat", [f"{p}/now", f"{p}/before"], f"{p}/rows", axis=2),
        helper.make_node(
            "DynamicQuantizeLinear",
            [f"{p}/rows"],
            [f"{p}/rows_q", f"{p}/rows_scale", f"{p}/rows_zero"],
        ),
        step(
            "MatMulInteger",
            [f"{p}/rows_q", weights, f"{p}/rows_zero", weight_zero],
            f"{p}/sums",
        ),
        step("Cast", [f"{p}/sums"], f"{p}/sums_float", to=onnx.TensorProto.FLOAT),
        step("Mul", [f"{p}/rows_scale", weight_scale], f"{p}/scale"),
        step("Mul", [f"{p}/sums_float", f"{p}/scale"], f"{p}/product"),
        step("Reshape", [f"{p}/product", steps], f"{p}/full"),
    ]
    last = f"{p}/full"
    if pad:
        start = made.shared(f"i{pad}", np.array([pad], np.int64))
        end = made.shared(f"i{-pad}", np.array([-pad], np.int64))
        nodes.append(step("Slice", [last, start, end, one], f"{p}/cropped"))
        last = f"{p}/cropped"
    out = node.output[0]
    if len(node.input) < 3 or not node.input[2]:
        return [*nodes, step("Transpose", [last], out, perm=[0, 2, 1])]
    bias = numpy_helper.to_array(inits[node.input[2]]).astype(np.float32)
    biased = made.constant(f"{p}/bias", bias.reshape(1, 1, c_out))
    return [
        *nodes,
        step("Add", [last, biased], f"{p}/biased"),
        step("Transpose", [f"{p}/biased"], out, perm=[0, 2, 1]),
    ]


def upsamplers_as_matmuls(model_bytes: bytes) -> tuple[bytes, int]:
    """The graph with each float ConvTranspose of a kernel twice its stride (_upsampler) as one
    8-bit matrix product (exact only where runtime.exact_int8_products()), and how many were
    rewritten."""
    model = onnx.load_from_string(model_bytes)
    inits = {i.name: i for i in model.graph.initializer}
    made = _Builder("upsample")

    def build(node: onnx.NodeProto, index: int) -> list[onnx.NodeProto] | None:
        return _upsampler_as_matmul(node, inits, made, index) if _upsampler(node, inits) else None

    rewritten = rewrite(model, build, made.initializers)
    return model.SerializeToString(), rewritten
