"""The vocoder's 1-D convolutions rewritten as 2-D ones, which onnxruntime runs faster on a CPU."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnx

_HEIGHT_AXIS = "voxlite_height_axis"
# Attributes of a 1-D convolution that gain a leading height entry of 1 (pads: two of 0).
_SPATIAL_ATTRS = ("kernel_shape", "strides", "dilations", "output_padding", "output_shape")


def convs_as_2d(nodes: list[onnx.NodeProto], model: onnx.ModelProto) -> list[onnx.NodeProto]:
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
