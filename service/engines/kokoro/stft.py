"""The decoder's short-time Fourier transform as a convolution with a fixed basis.

Kokoro's generator takes the spectrum of its harmonic source with an STFT of 20 samples every
5 (11 bins). onnxruntime's STFT operator transforms each frame on its own, with complex
arithmetic, at a cost that shows in the decoder's profile (docs/kokoro.md, "The rest of the
decoder"). The same transform is a float convolution of stride 5 whose 22 output channels are
the window times the cosine and minus the sine of each bin, which onnxruntime's convolution
kernel runs in a small fraction of that time.

One difference is more than rounding. onnxruntime's STFT leaves noise of about 1e-6 in the
imaginary part of the DC and Nyquist bins, which a real signal does not have. The export's
phase (atan2 spelled as Atan, Greater and Where) turns the sign of that noise into +pi or -pi
wherever the real part is negative, frame by frame at random. The basis gives those bins an
exact zero, so their phase there is always -pi. The quality judge (`python -m
bench.kokoro_fused`) scores the audio at least as well as the operator's (docs/kokoro.md,
"Decoder forms").
"""

from __future__ import annotations

import numpy as np


def basis(window: np.ndarray, onesided: bool) -> np.ndarray:
    """Convolution weights [2 * bins, 1, n]: channel 2b is bin b's real part, 2b + 1 its
    imaginary part, as ONNX's DFT defines them (X[b] = sum x[t] e^(-2 pi i b t / n))."""
    n = int(window.size)
    bins = n // 2 + 1 if onesided else n
    turns = np.outer(np.arange(bins), np.arange(n)) % n  # b * t, in n-ths of a turn
    angle = 2 * np.pi * turns / n
    weights = np.empty((bins, 2, n), np.float64)
    weights[:, 0] = window * np.cos(angle)
    # Where the angle is 0 or pi the sine is exactly 0, not float64's sin(pi) = 1.2e-16: the
    # DC and Nyquist bins of a real signal get no imaginary part at all.
    weights[:, 1] = np.where((turns == 0) | (2 * turns == n), 0.0, -window * np.sin(angle))
    return weights.reshape(2 * bins, 1, n).astype(np.float32)


def stft_as_conv(model_bytes: bytes) -> tuple[bytes, int]:
    """The graph with each STFT of constant step, window and length (a real signal [B, L] or
    [B, L, 1]) as Reshape, Conv, Reshape and Transpose to the STFT's own [B, frames, bins, 2],
    and how many were rewritten."""
    import onnx  # imported only to rewrite, as the split does
    from onnx import helper, numpy_helper

    from .convs import rewrite

    model = onnx.load_from_string(model_bytes)
    inits = {i.name: i for i in model.graph.initializer}
    made: list[onnx.TensorProto] = []

    def build(node: onnx.NodeProto, index: int) -> list[onnx.NodeProto] | None:
        signal, step, window, length = [*node.input, "", "", "", ""][:4]
        if node.op_type != "STFT" or not {step, window, length} <= inits.keys():
            return None
        n = int(numpy_helper.to_array(inits[length]).reshape(()))
        taper = numpy_helper.to_array(inits[window]).astype(np.float64).reshape(-1)
        if taper.size != n:
            return None
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        weights = basis(taper, bool(attrs.get("onesided", 1)))
        bins = weights.shape[0] // 2
        p = f"{node.name or 'stft'}/conv{index}"
        made.extend(
            [
                numpy_helper.from_array(weights, f"{p}/basis"),
                numpy_helper.from_array(np.array([0, 1, -1], np.int64), f"{p}/one_channel"),
                numpy_helper.from_array(np.array([0, bins, 2, -1], np.int64), f"{p}/split"),
            ]
        )
        stride = int(numpy_helper.to_array(inits[step]).reshape(()))
        return [
            helper.make_node("Reshape", [signal, f"{p}/one_channel"], [f"{p}/signal"]),
            helper.make_node(
                "Conv", [f"{p}/signal", f"{p}/basis"], [f"{p}/sums"], strides=[stride]
            ),
            helper.make_node("Reshape", [f"{p}/sums", f"{p}/split"], [f"{p}/parts"]),
            helper.make_node("Transpose", [f"{p}/parts"], [node.output[0]], perm=[0, 3, 1, 2]),
        ]

    rewritten = rewrite(model, build, made)
    return model.SerializeToString(), rewritten
