"""Kokoro's int8 decoder rewritten with float32 weights, to measure which form runs faster here."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper


def dequantized(model_bytes: bytes) -> bytes:
    """The graph with every dynamically quantized MatMul and Conv (onnxruntime's pattern:
    DynamicQuantizeLinear -> MatMulInteger/ConvInteger -> Cast -> Mul by the two scales) as a
    float32 MatMul or Conv on the unquantized input and the dequantized weights."""
    model = onnx.load_from_string(model_bytes)
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def array(name: str) -> np.ndarray:
        return numpy_helper.to_array(inits[name])

    replaced: dict[int, onnx.NodeProto] = {}
    dropped: set[int] = set()
    for node in graph.node:
        if node.op_type not in ("MatMulInteger", "ConvInteger"):
            continue
        quantize = producer[node.input[0]]
        cast = consumers[node.output[0]][0]
        scale_mul = consumers[cast.output[0]][0]
        if quantize.op_type != "DynamicQuantizeLinear" or scale_mul.op_type != "Mul":
            continue
        scales = producer[scale_mul.input[1]]  # Mul(input scale, weight scale)
        weight_scale = next(i for i in scales.input if i in inits)
        weight = array(node.input[1]).astype(np.float32)
        zero = array(node.input[3]).astype(np.float32) if len(node.input) > 3 else 0.0
        scale = array(weight_scale).astype(np.float32)
        if node.op_type == "MatMulInteger":  # weight [K, N], per-column zero point and scale
            floats = (weight - zero) * scale
        else:  # weight [C_out, C_in, k...], per output channel
            shape = (-1,) + (1,) * (weight.ndim - 1)
            floats = (weight - np.reshape(zero, shape)) * np.reshape(scale, shape)
        name = node.input[1] + "_float"
        graph.initializer.append(numpy_helper.from_array(floats.astype(np.float32), name))
        op = "MatMul" if node.op_type == "MatMulInteger" else "Conv"
        attrs = list(node.attribute)
        made = onnx.helper.make_node(op, [quantize.input[0], name], [scale_mul.output[0]])
        made.attribute.extend(attrs)
        replaced[id(scale_mul)] = made
        dropped.update({id(node), id(cast)})
    nodes = [replaced.get(id(n), n) for n in graph.node if id(n) not in dropped]
    # What no longer feeds anything (the quantizers, the scale products) goes too.
    outputs = {o.name for o in graph.output}
    while True:
        used = {i for n in nodes for i in n.input} | outputs
        kept = [n for n in nodes if any(o in used for o in n.output)]
        if len(kept) == len(nodes):
            break
        nodes = kept
    del graph.node[:]
    graph.node.extend(nodes)
    used = {i for n in nodes for i in n.input}
    kept_inits = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept_inits)
    return model.SerializeToString()
