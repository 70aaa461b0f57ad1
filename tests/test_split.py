"""The split of a Piper graph into its parts and stages, its cache, and the 2-D rewrite."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from piper.config import PiperConfig
from voxlite.service.engines.engine import VoiceInfo
from voxlite.service.engines.piper import embedded_voice_files
from voxlite.service.engines.piper import split_cache as split_cache_module
from voxlite.service.engines.piper.model import check_fits
from voxlite.service.engines.piper.rewrite import convs_as_2d
from voxlite.service.engines.piper.split import split_graph
from voxlite.service.engines.piper.split_cache import SplitCache
from voxlite.service.errors import ModelError

# -- splitting and the cache ---------------------------------------------------------------------


def test_split_is_cached_by_content_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model, _ = embedded_voice_files()
    cache = SplitCache(tmp_path)
    first = cache.load(model)
    # The acoustic part, the flow's four stages, the vocoder's head and tail.
    assert len(list(tmp_path.glob("*.onnx"))) == 7

    def no_split(*args: object) -> None:
        raise AssertionError("a cached model must not be split again")

    monkeypatch.setattr(split_cache_module, "split_graph", no_split)
    again = SplitCache(tmp_path).load(model)
    assert again == first
    # A copy under another name has the same content: still a cache hit.
    copy = tmp_path / "copy.onnx"
    shutil.copyfile(model, copy)
    assert SplitCache(tmp_path).load(copy) == first


@pytest.mark.parametrize("damage", ["truncated", "garbage", "missing"])
def test_a_damaged_cache_entry_is_split_again_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    """Bug: a truncated or garbage file in the split cache (its .json intact) stopped the
    server from starting, every time, with an error that blamed the model. Each part is now
    checked against the digest its entry recorded: a damaged one is a miss, named in a
    warning, and the entry is written again whole."""
    model, _ = embedded_voice_files()
    whole = SplitCache(tmp_path).load(model)
    [tail] = tmp_path.glob("*.vocoder-tail.onnx")
    if damage == "truncated":
        tail.write_bytes(tail.read_bytes()[:1000])
    elif damage == "garbage":
        tail.write_bytes(b"\0" * tail.stat().st_size)
    else:
        tail.unlink()
    with caplog.at_level("WARNING", logger="voxlite.service.engines.graph_cache"):
        again = SplitCache(tmp_path).load(model)
    assert again == whole
    if damage != "missing":
        assert any(
            str(tail) in r.getMessage() and "damaged" in r.getMessage() for r in caplog.records
        )
    assert tail.read_bytes() == whole.vocoder_tail  # repaired
    ort.InferenceSession(tail.read_bytes())  # and loadable


def test_split_finds_the_flow_and_the_vocoder() -> None:
    model, _ = embedded_voice_files()
    split = split_graph(model.read_bytes(), model)
    assert (split.phoneme_ids, split.speakers) == (256, 1)  # the tables its inputs index
    # The vocoder is cut in two after its first upsampling layer (8 head samples per frame):
    # the head holds conv_pre, the tail conv_post, and the tail reads only the head's output.
    assert split.vocoder == b""
    assert split.vocoder_stride == 8
    assert split.vocoder_head is not None
    assert split.vocoder_tail is not None
    head, tail = (onnx.load_from_string(b) for b in (split.vocoder_head, split.vocoder_tail))
    assert any(n.input[1:2] == ["dec.conv_pre.weight/voxlite_2d"] for n in head.graph.node[:5])
    assert any(n.input[1:2] == ["dec.conv_post.weight/voxlite_2d"] for n in tail.graph.node)
    assert [i.name for i in head.graph.input] == [split.latent]
    assert [i.name for i in tail.graph.input] == [split.vocoder_cut]
    assert [o.name for o in head.graph.output] == [split.vocoder_cut]
    # Its convolutions run as 2-D ones of height 1 (onnxruntime's blocked kernels), its three
    # upsampling layers as convolutions over their output phases.
    nodes = [*head.graph.node, *tail.graph.node]
    convs = [n for n in nodes if n.op_type in ("Conv", "ConvTranspose")]
    weights = {i.name: i for part in (head, tail) for i in part.graph.initializer}
    assert [n.op_type for n in convs] == ["Conv"] * 23
    assert all(len(weights[n.input[1]].dims) == 4 for n in convs)
    # Head then tail is the whole vocoder.
    whole = split_graph(model.read_bytes(), model, stages=False)
    assert not whole.flow_stages
    assert whole.vocoder_head is None
    assert whole.flow
    latent = np.random.default_rng(0).normal(size=(1, 192, 40)).astype(np.float32)
    once = ort.InferenceSession(whole.vocoder).run(None, {split.latent: latent})[0]
    cut = ort.InferenceSession(split.vocoder_head).run(None, {split.latent: latent})[0]
    assert cut.shape[-1] == 8 * 40
    staged = ort.InferenceSession(split.vocoder_tail).run(None, {split.vocoder_cut: cut})[0]
    np.testing.assert_allclose(staged, once, rtol=0, atol=1e-6)

    # The flow is cut after each of its coupling layers but the last: four stages, each
    # reading the one before it and the mask, the last making the latent frames.
    assert split.flow == b""
    assert len(split.flow_stages) == 4
    assert len(split.flow_cuts) == 3
    flows = [onnx.load_from_string(b) for b in split.flow_stages]
    assert [o.name for o in flows[-1].graph.output] == [split.latent]
    for before, after, cut_name in zip(flows, flows[1:], split.flow_cuts, strict=False):
        assert [o.name for o in before.graph.output] == [cut_name]
        assert after.graph.input[0].name == cut_name
        assert {i.name for i in after.graph.input} < {cut_name, *split.flow_inputs}
    ids = [1, 0, 25, 0, 31, 0, 59, 0, 27, 0, 2]  # the acoustic part's outputs: the flow's inputs
    acoustic_feed = {
        "input": np.array([ids], dtype=np.int64),
        "input_lengths": np.array([len(ids)], dtype=np.int64),
        "scales": np.array([0.667, 1.0, 0.8], dtype=np.float32),
    }
    outs = ort.InferenceSession(split.acoustic).run([*split.flow_inputs], acoustic_feed)
    feed = dict(zip(split.flow_inputs, outs, strict=True))
    reference = ort.InferenceSession(whole.flow).run(None, feed)[0]
    x = np.empty(0, dtype=np.float32)
    for i, stage in enumerate(split.flow_stages):
        session = ort.InferenceSession(stage)
        wanted = {n.name for n in session.get_inputs()}
        stage_feed = {k: v for k, v in feed.items() if k in wanted}
        if i:
            stage_feed[split.flow_cuts[i - 1]] = x
        x = session.run(None, stage_feed)[0]
    np.testing.assert_allclose(x, reference, rtol=0, atol=1e-5)

    acoustic = onnx.load_from_string(split.acoustic)
    assert [o.name for o in acoustic.graph.output] == [split.durations, *split.flow_inputs]
    # The noise is drawn in the acoustic part, once per sentence: windows of the flow then see
    # the same noise a one-shot run would.
    assert any(n.op_type == "RandomNormalLike" for n in acoustic.graph.node)
    assert not any(n.op_type.startswith("Random") for f in flows for n in f.graph.node)
    # Each part holds its own modules' weights and no other's.
    modules = {"acoustic": {"enc_p", "dp"}, "flow": {"flow"}, "vocoder": {"dec"}}
    parts = {"acoustic": [acoustic], "flow": flows, "vocoder": [head, tail]}
    for name, models in parts.items():
        for part in models:
            held = {i.name.split(".")[0] for i in part.graph.initializer}
            assert held & {"enc_p", "dp", "flow", "dec"} == modules[name], name


def _tiny_multispeaker_vits() -> onnx.ModelProto:
    """A toy graph shaped like a multi-speaker VITS export: the speaker embedding g feeds both
    the acoustic part and the vocoder (HiFi-GAN's `cond` conv), as in Piper's exports."""
    c, speakers = 4, 3
    rng = np.random.default_rng(0)

    def init(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
        return helper.make_tensor(
            name, TensorProto.FLOAT, shape, rng.normal(size=shape).astype(np.float32).ravel()
        )

    nodes = [
        helper.make_node("Gather", ["emb_g.weight", "sid"], ["g0"]),
        helper.make_node("Unsqueeze", ["g0", "axis2"], ["g"]),
        helper.make_node("Cast", ["input"], ["xf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["xf", "axis1"], ["x3"]),
        helper.make_node("Mul", ["x3", "proj"], ["h"]),
        helper.make_node("Add", ["h", "g"], ["z"]),
        helper.make_node("Mul", ["x3", "half"], ["w"]),
        helper.make_node("Ceil", ["w"], ["w_ceil"]),
        helper.make_node("Gather", ["scales", "one"], ["length_scale"]),
        helper.make_node("Mul", ["z", "length_scale"], ["z_masked"]),
        helper.make_node("Conv", ["z_masked", "dec.conv_pre.weight"], ["y"], pads=[1, 1]),
        helper.make_node("Conv", ["g", "dec.cond.weight"], ["cond"]),
        helper.make_node("Add", ["y", "cond"], ["y2"]),
        # Two upsampling layers (stride 2 each): the vocoder is cut before the second.
        helper.make_node("LeakyRelu", ["y2"], ["r0"], alpha=0.1),
        helper.make_node(
            "ConvTranspose", ["r0", "dec.ups.0.weight"], ["u0"], strides=[2], pads=[1, 1]
        ),
        helper.make_node("LeakyRelu", ["u0"], ["r1"], alpha=0.1),
        helper.make_node(
            "ConvTranspose", ["r1", "dec.ups.1.weight"], ["u1"], strides=[2], pads=[1, 1]
        ),
        helper.make_node("Conv", ["u1", "dec.conv_post.weight"], ["output"], pads=[1, 1]),
    ]
    graph = helper.make_graph(
        nodes,
        "toy-vits",
        [
            helper.make_tensor_value_info("input", TensorProto.INT64, [1, None]),
            helper.make_tensor_value_info("input_lengths", TensorProto.INT64, [1]),
            helper.make_tensor_value_info("scales", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("sid", TensorProto.INT64, [1]),
        ],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)],
        [
            init("emb_g.weight", (speakers, c)),
            helper.make_tensor("axis1", TensorProto.INT64, [1], [1]),
            helper.make_tensor("axis2", TensorProto.INT64, [1], [2]),
            init("proj", (1, c, 1)),
            helper.make_tensor("half", TensorProto.FLOAT, [1], [0.5]),
            helper.make_tensor("one", TensorProto.INT64, [], [1]),
            init("dec.conv_pre.weight", (c, c, 3)),
            init("dec.cond.weight", (c, c, 1)),
            init("dec.ups.0.weight", (c, c, 4)),
            init("dec.ups.1.weight", (c, c, 4)),
            init("dec.conv_post.weight", (1, c, 3)),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def test_a_speaker_table_the_split_cannot_find_leaves_the_config_unchecked() -> None:
    """The config's speakers are checked against the speaker table's rows only where the
    split finds the table: an export that reads the speaker id through another node first
    loads whatever its config says, rather than being refused as one speaker's."""
    model = _tiny_multispeaker_vits()
    [gather] = [n for n in model.graph.node if n.op_type == "Gather" and n.input[1] == "sid"]
    gather.input[1] = "sid_read"
    model.graph.node.insert(0, helper.make_node("Identity", ["sid"], ["sid_read"]))
    split = split_graph(model.SerializeToString(), Path("toy.onnx"))
    assert split.speakers == 0
    _, config_path = embedded_voice_files()
    config = json.loads(config_path.read_text())
    config.update(num_speakers=5, speaker_id_map={f"s{i}": i for i in range(5)})
    info = VoiceInfo("toy", "en-US", 22050, "piper", files=(Path("toy.onnx"), config_path))
    check_fits(info, PiperConfig.from_dict(config), split)  # unknown: not refused
    with pytest.raises(ModelError, match=r"num_speakers is 5 .* has 3 speaker\(s\)"):
        check_fits(info, PiperConfig.from_dict(config), replace(split, speakers=3))


def test_split_feeds_the_speaker_embedding_to_the_vocoder() -> None:
    model = _tiny_multispeaker_vits()
    split = split_graph(model.SerializeToString(), Path("toy.onnx"))
    assert split.vocoder_extra_inputs == ("g",)
    assert split.speakers == 3  # the speaker embedding's rows
    assert split.phoneme_ids == 0  # no text embedding in the toy: nothing to check ids against
    feed = {
        "input": np.array([[3, 1, 4, 1, 5]], dtype=np.int64),
        "input_lengths": np.array([5], dtype=np.int64),
        "scales": np.array([0.0, 1.0, 0.0], dtype=np.float32),
        "sid": np.array([2], dtype=np.int64),
    }
    whole = ort.InferenceSession(model.SerializeToString()).run(None, feed)[0]
    acoustic = ort.InferenceSession(split.acoustic)
    wanted = {i.name for i in acoustic.get_inputs()}
    latent, durations, g = acoustic.run(
        [split.latent, split.durations, "g"], {k: v for k, v in feed.items() if k in wanted}
    )
    assert durations.reshape(-1).tolist() == [2.0, 1.0, 2.0, 1.0, 3.0]
    uncut = split_graph(model.SerializeToString(), Path("toy.onnx"), stages=False).vocoder
    parts = ort.InferenceSession(uncut).run(None, {split.latent: latent, "g": g})[0]
    # Equal up to float32 rounding (the split's 2-D convolutions sum in another order).
    np.testing.assert_allclose(parts, whole, rtol=1e-6, atol=1e-6)
    # Cut in two, the head reads the speaker embedding and the tail only the head's output.
    assert split.vocoder_stride == 2
    assert split.vocoder_head is not None
    assert split.vocoder_tail is not None
    head = ort.InferenceSession(split.vocoder_head)
    assert sorted(i.name for i in head.get_inputs()) == sorted([split.latent, "g"])
    (cut,) = head.run(None, {split.latent: latent, "g": g})
    tail = ort.InferenceSession(split.vocoder_tail)
    staged = tail.run(None, {tail.get_inputs()[0].name: cut})[0]
    np.testing.assert_allclose(staged.reshape(whole.shape), whole, rtol=1e-6, atol=1e-6)


def test_non_piper_graph_is_refused_with_the_file_name(tmp_path: Path) -> None:
    identity = helper.make_model(
        helper.make_graph(
            [helper.make_node("Identity", ["input"], ["output"])],
            "x",
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1])],
        )
    )
    path = tmp_path / "identity.onnx"
    with pytest.raises(ModelError, match=r"identity\.onnx: not a Piper voice graph"):
        split_graph(identity.SerializeToString(), path)


@pytest.mark.parametrize(
    ("kernel", "stride", "pads"),
    [
        (16, 8, (4, 4)),
        (8, 4, (2, 2)),
        (4, 2, (1, 1)),
        (5, 2, (2, 1)),
        (3, 3, (0, 0)),
        (7, 3, (1, 2)),
    ],
)
def test_transposed_convolutions_become_exact_phase_convolutions(
    kernel: int, stride: int, pads: tuple[int, int]
) -> None:
    """Piper's voices upsample with ConvTranspose of various kernels, strides and pads (the
    default voice: 16/8/4 and 8/4/2; x_low and high ones others). The split's rewrite (a Conv
    per output phase, interleaved) must equal onnxruntime's own ConvTranspose on each, batched
    too."""
    rng = np.random.default_rng(kernel * 100 + stride)
    c, o = 3, 2
    weight = helper.make_tensor(
        "up.weight", TensorProto.FLOAT, (c, o, kernel), rng.normal(size=(c, o, kernel)).ravel()
    )
    bias = helper.make_tensor("up.bias", TensorProto.FLOAT, (o,), rng.normal(size=o))
    node = helper.make_node(
        "ConvTranspose",
        ["x", "up.weight", "up.bias"],
        ["y"],
        kernel_shape=[kernel],
        strides=[stride],
        pads=list(pads),
    )
    model = helper.make_model(
        helper.make_graph(
            [node],
            "up",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, c, None])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            [weight, bias],
        ),
        opset_imports=[helper.make_opsetid("", 15)],
    )
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    nodes = convs_as_2d(list(rewritten.graph.node), rewritten)
    assert "ConvTranspose" not in [n.op_type for n in nodes]
    del rewritten.graph.node[:]
    rewritten.graph.node.extend(nodes)
    x = rng.normal(size=(2, c, 11)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    got = ort.InferenceSession(rewritten.SerializeToString()).run(None, {"x": x})[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
