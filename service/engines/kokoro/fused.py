"""Kokoro's norm, style and Snake activation before each 8-bit product, as one operator each.

Between two of the decoder's products the export spells out sixteen elementwise operators: an
instance norm over time (ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div), the style's scale
and shift (Mul, Add), the Snake activation x + sin(a x)^2 / a (Mul, Sin, Pow, Mul, Add), the
dynamic 8-bit quantization of the next product's input and its transpose to channels last.
They, not the products, are most of the decoder's time. `fuse_snakes` rewrites each such run
as one operator of fused_ops.c, a native library built at install (pyproject.toml); where the
run starts at a product (a convolution's output, alone or added to a residual block's input)
the operator reads the int32 product itself, so the transpose, dequantization and sum before
the norm go too. A residual block's closing sum that no norm follows (the generator's blocks end
so) is one operator as well, ResidualSum.

The audio is not bit-identical: the operator rounds differently (its own sine, its own order of
sums), which moves a few 8-bit codes, and the decoder carries those moves on. The quality judge
(`python -m bench.kokoro_fused`) finds it as good as the operators it replaces: Whisper's CER
and DNSMOS within what an input perturbation of one part in a million moves them
(docs/kokoro.md, "Decoder forms").
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from importlib import machinery, resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnx

_LOG = logging.getLogger(__name__)
DOMAIN = "voxlite"
_LIBRARY = "_fused_ops"


def library() -> Path | None:
    """The built operator library, or None where the install could not build it (no C
    compiler) or onnxruntime cannot load it: the decoder then keeps the operators as
    exported."""
    folder = Path(str(resources.files(__package__)))
    for suffix in machinery.EXTENSION_SUFFIXES:
        path = folder / f"{_LIBRARY}{suffix}"
        if path.is_file():
            return path if loads(path) else None
    return None


def loads(path: Path) -> bool:
    """Whether onnxruntime registers the operators of the library at `path`."""
    import onnxruntime as ort

    try:
        ort.SessionOptions().register_custom_ops_library(str(path))
    except Exception as exc:  # onnxruntime raises its own untyped errors
        _LOG.warning("Kokoro's fused operators do not load (%s): decoding without them", exc)
        return False
    return True


@dataclass(frozen=True)
class _Snake:
    """One run of operators: from the norm's input to the quantized, transposed output."""

    transpose: onnx.NodeProto
    x: str
    gain: str
    beta: str
    alpha: str
    inv_alpha: str
    eps: str


class _Graph:
    def __init__(self, graph: onnx.GraphProto) -> None:
        self.producer = {out: node for node in graph.node for out in node.output}
        self.consumers: dict[str, list[onnx.NodeProto]] = defaultdict(list)
        for node in graph.node:
            for name in node.input:
                self.consumers[name].append(node)
        self.constants = {init.name for init in graph.initializer}

    def made_by(self, name: str, op: str, *, alone: bool = False) -> onnx.NodeProto | None:
        """The node of type `op` that makes `name` (read by no other node when `alone`)."""
        node = self.producer.get(name)
        if node is None or node.op_type != op or (alone and len(self.consumers[name]) != 1):
            return None
        return node

    def feeds_sin(self, name: str) -> onnx.NodeProto | None:
        """The Mul that scales `name` into a Sin, if any."""
        for node in self.consumers[name]:
            if node.op_type == "Mul" and any(
                c.op_type == "Sin" for c in self.consumers[node.output[0]]
            ):
                return node
        return None

    def split(self, node: onnx.NodeProto, op: str) -> tuple[onnx.NodeProto, str] | None:
        """For a two-input node: the input made by an `op` node, and the other input."""
        for a, b in ((0, 1), (1, 0)):
            made = self.made_by(node.input[a], op)
            if made is not None:
                return made, node.input[b]
        return None

    def snake(self, quantize: onnx.NodeProto) -> _Snake | None:
        """The run ending at a DynamicQuantizeLinear, if it is norm, style and Snake."""
        snake_add = self.made_by(quantize.input[0], "Add")
        transposes = self.consumers[quantize.output[0]]
        if snake_add is None or len(transposes) != 1 or transposes[0].op_type != "Transpose":
            return None
        y = next((i for i in snake_add.input if self.feeds_sin(i)), None)
        if y is None:
            return None
        scaled = self.feeds_sin(y)
        styled = self.made_by(y, "Add")
        assert scaled is not None
        if styled is None:
            return None
        alpha = next(i for i in scaled.input if i != y)
        sin_term = self.made_by(next(i for i in snake_add.input if i != y), "Mul")
        if sin_term is None:
            return None
        squared = self.split(sin_term, "Pow")
        gained = self.split(styled, "Mul")
        if squared is None or gained is None:
            return None
        inv_alpha = squared[1]
        gain_mul, beta = gained
        normed = self.split(gain_mul, "Div")
        if normed is None:
            return None
        div, gain = normed
        centred = self.made_by(div.input[0], "Sub")
        root = self.made_by(div.input[1], "Sqrt")
        plus_eps = self.made_by(root.input[0], "Add") if root is not None else None
        if centred is None or plus_eps is None:
            return None
        eps = next((i for i in plus_eps.input if i in self.constants), None)
        if eps is None:
            return None
        return _Snake(transposes[0], centred.input[0], gain, beta, alpha, inv_alpha, eps)

    def dequantized(self, name: str) -> tuple[str, str, str] | None:
        """(int32 product [T, C], bias, scale) when `name` is a rewritten convolution's output
        as the export dequantizes it, (product + bias) * scale, with no other reader on the
        way."""
        scaling = self.producer.get(name)
        if scaling is None or scaling.op_type != "Mul":
            return None
        for a, b in ((0, 1), (1, 0)):
            cast = self.made_by(scaling.input[a], "Cast", alone=True)
            biased = self.made_by(cast.input[0], "Add", alone=True) if cast else None
            if biased is None:
                continue
            for c, d in ((0, 1), (1, 0)):
                # The int32 product [T, C] of convs.py, turned back to [1, C, T].
                chain = [biased.input[c]]
                for op in ("Unsqueeze", "Transpose", "MatMulInteger"):
                    node = self.made_by(chain[-1], op, alone=True)
                    if node is None:
                        break
                    chain.append(node.input[0] if op != "MatMulInteger" else node.output[0])
                else:
                    return chain[-1], biased.input[d], scaling.input[b]
        return None

    def source(self, x: str) -> tuple[str, list[str], onnx.NodeProto | None]:
        """How the norm's input `x` is made: ("product", [product, bias, scale], None) when it
        is a convolution's output read by the norm alone; ("residual", [product, bias, scale,
        x_old], add) when it is one added to x_old (x being read by others too); else
        ("float", [x], None)."""
        if all(c.op_type in ("ReduceMean", "Sub") for c in self.consumers[x]):
            product = self.dequantized(x)
            if product is not None:
                return "product", list(product), None
        add = self.producer.get(x)
        if add is not None and add.op_type == "Add":
            for a, b in ((0, 1), (1, 0)):
                if len(self.consumers[add.input[a]]) != 1:
                    continue
                product = self.dequantized(add.input[a])
                if product is not None:
                    return "residual", [*product, add.input[b]], add
        return "float", [x], None


def _in_order(nodes: list[onnx.NodeProto], ready: set[str]) -> list[onnx.NodeProto]:
    """`nodes` in an order where each comes after the makers of its inputs (`ready`: the
    graph's inputs and initializers)."""
    waiting = list(nodes)
    ordered: list[onnx.NodeProto] = []
    while waiting:
        left = []
        for node in waiting:
            if all(not i or i in ready for i in node.input):
                ordered.append(node)
                ready.update(node.output)
            else:
                left.append(node)
        if len(left) == len(waiting):
            raise ValueError("the rewritten graph has a cycle")
        waiting = left
    return ordered


_OPS = {
    "float": "AdaSnakeQuant",
    "product": "AdaSnakeQuantLast",
    "residual": "AdaSnakeQuantResidual",
}


def fuse_snakes(model_bytes: bytes, *, sums: bool = True) -> tuple[bytes, dict[str, int]]:
    """The decoder (convolutions already as matrix products, convs.py) with each norm-style-
    Snake-quantize run as one operator, and how many runs started at a float tensor, at a
    product, and at a product added to a residual; then each product added to such a sum with
    no run after it (a ResidualSum, unless not `sums`), and how many ("sum")."""
    import onnx  # imported only to rewrite, as the split does
    from onnx import helper

    model = onnx.load_from_string(model_bytes)
    graph = model.graph
    found = _Graph(graph)
    replaced: dict[int, onnx.NodeProto] = {}
    dropped: set[int] = set()
    counts = dict.fromkeys(_OPS, 0)
    for node in graph.node:
        if node.op_type != "DynamicQuantizeLinear":
            continue
        snake = found.snake(node)
        if snake is None:
            continue
        style = [snake.gain, snake.beta, snake.alpha, snake.inv_alpha, snake.eps]
        outputs = [snake.transpose.output[0], node.output[1], node.output[2]]
        kind, inputs, add = found.source(snake.x)
        if add is not None and id(add) in dropped:
            # Another run's operator already makes this sum: read it.
            kind, inputs, add = "float", [snake.x], None
        if add is not None:
            # The residual sum is the operator's first output, for its other readers.
            outputs.insert(0, snake.x)
            dropped.add(id(add))
        fused = helper.make_node(_OPS[kind], [*inputs, *style], outputs, domain=DOMAIN)
        fused.name = f"{node.name}/fused"
        counts[kind] += 1
        replaced[id(node)] = fused
        dropped.add(id(snake.transpose))
    # A residual block whose sum no norm follows (the generator's blocks end so: their outputs
    # are averaged) adds its last product to the sum a residual operator above made.
    block_sums = {n.output[0] for n in replaced.values() if n.op_type == _OPS["residual"]}
    counts["sum"] = 0
    for node in graph.node if sums else ():
        if node.op_type != "Add" or id(node) in dropped:
            continue
        for a, b in ((0, 1), (1, 0)):
            if node.input[b] not in block_sums or len(found.consumers[node.input[a]]) != 1:
                continue
            product = found.dequantized(node.input[a])
            if product:
                fused = helper.make_node(
                    "ResidualSum", [*product, node.input[b]], [node.output[0]], domain=DOMAIN
                )
                fused.name = f"{node.output[0]}/sum"  # unique, as output names are
                counts["sum"] += 1
                replaced[id(node)] = fused
                break
    nodes = [replaced.get(id(n), n) for n in graph.node if id(n) not in dropped]
    # The replaced operators, now read by nothing, go (graph outputs stay).
    wanted = {o.name for o in graph.output}
    while True:
        used = {name for n in nodes for name in n.input} | wanted
        kept = [n for n in nodes if any(o in used for o in n.output)]
        if len(kept) == len(nodes):
            break
        nodes = kept
    ready = {i.name for i in graph.input} | {i.name for i in graph.initializer}
    nodes = _in_order(nodes, ready)
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for n in nodes for name in n.input}
    inits = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(inits)
    if DOMAIN not in {o.domain for o in model.opset_import}:
        model.opset_import.append(helper.make_opsetid(DOMAIN, 1))
    return model.SerializeToString(), counts
