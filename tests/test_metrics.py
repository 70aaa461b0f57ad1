"""Prometheus metrics on their own port, request ids, the access log and JSON logs."""

from __future__ import annotations

import json
import logging
import re
import socket
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import h2.config
import h2.connection
import h2.events
import onnx
import pytest
from onnx import numpy_helper
from prometheus_client.parser import text_string_to_metric_families
from voxlite.client import AudioChunk, Client, DeadlineExceeded, Summary, VoiceNotFound
from voxlite.service.engines.piper.family import embedded_voice_files
from voxlite.service.ops.metrics import Metrics
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from .helpers import LONG_TEXT, ServerProcess, ServerThread, base_config, wait_until

SYNTHESIZE = "TextToSpeechService/Synthesize"
STREAMING = "TextToSpeechService/StreamingSynthesize"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample on the /metrics page, by (name, sorted labels)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def calls(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], method: str, code: str
) -> float:
    return samples.get(("voxlite_calls_total", (("code", code), ("method", method))), 0.0)


@pytest.fixture(scope="module")
def observed(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    """A server with a metrics port and one voice file that fails to load."""
    voices = tmp_path_factory.mktemp("voices")
    (voices / "xx_XX-broken-low.onnx").write_bytes(b"not a model")
    (voices / "xx_XX-broken-low.onnx.json").write_text("{}")
    srv = ServerThread(base_config(cache_dir, voices, metrics_port=free_port()))
    yield srv
    srv.close()


def test_metrics_port_serves_calls_latency_and_voices(observed: ServerThread) -> None:
    port = observed.server.metrics_port
    assert port == observed.server.config.metrics_port
    before = scrape(port)
    with Client(observed.address) as client:
        summary = list(client.synthesize("Hello there, metrics."))[-1]
        assert isinstance(summary, Summary)
        with pytest.raises(VoiceNotFound):
            list(client.synthesize("Hello.", voice="nobody"))
        client.voices()
    # The call is counted as its handler ends, a moment after the client has its last message.
    wait_until(lambda: calls(scrape(port), SYNTHESIZE, "NOT_FOUND") > 0)
    after = scrape(port)

    def moved(name: str, labels: tuple[tuple[str, str], ...] = ()) -> float:
        return after.get((name, labels), 0.0) - before.get((name, labels), 0.0)

    assert calls(after, SYNTHESIZE, "OK") - calls(before, SYNTHESIZE, "OK") == 1
    assert calls(after, SYNTHESIZE, "NOT_FOUND") - calls(before, SYNTHESIZE, "NOT_FOUND") == 1
    voices_ok = calls(after, "TextToSpeechService/ListVoices", "OK")
    assert voices_ok - calls(before, "TextToSpeechService/ListVoices", "OK") == 1
    # One time to first audio and one real-time factor: the failed call had no audio.
    assert moved("voxlite_time_to_first_audio_seconds_count") == 1
    ttfa = moved("voxlite_time_to_first_audio_seconds_sum")
    assert ttfa == pytest.approx(summary.time_to_first_audio_ms / 1000, rel=1e-6)
    assert moved("voxlite_real_time_factor_count") == 1
    assert moved("voxlite_real_time_factor_sum") == pytest.approx(summary.real_time_factor)
    bucket = ("voxlite_time_to_first_audio_seconds_bucket", (("le", "2.0"),))
    assert after[bucket] - before.get(bucket, 0) == 1  # 2 s is the top bucket before +Inf
    assert after[("voxlite_active_streams", ())] == 0
    assert after[("voxlite_voices_loaded", ())] == 1
    assert after[("voxlite_voices_failed", ())] == 1
    # The scheduler reports each job's wait; the phrase cache its lookups ("Hello there,"
    # and "metrics." missed).
    assert moved("voxlite_scheduler_queue_wait_seconds_count") >= 2
    assert moved("voxlite_phrase_cache_misses_total") >= 2
    assert ("process_resident_memory_bytes", ()) in after


def test_phrase_cache_hits_and_size_are_visible(observed: ServerThread) -> None:
    port = observed.server.metrics_port
    with Client(observed.address) as client:
        list(client.synthesize("Please hold the line."))
        before = scrape(port)
        list(client.synthesize("Please hold the line."))
    after = scrape(port)
    hits = ("voxlite_phrase_cache_hits_total", ())
    assert after[hits] - before.get(hits, 0.0) == 1
    assert after[("voxlite_phrase_cache_bytes", ())] > 0


def test_active_streams_cancel_and_deadline_are_counted(observed: ServerThread) -> None:
    metrics = observed.server.metrics

    def value(name: str, **labels: str) -> float:
        return metrics.registry.get_sample_value(name, labels) or 0.0

    cancelled = value("voxlite_calls_total", method=STREAMING, code="CANCELLED")
    expired = value("voxlite_calls_total", method=SYNTHESIZE, code="DEADLINE_EXCEEDED")
    with Client(observed.address) as client:
        with client.stream(timeout=60) as session:
            session.send(LONG_TEXT[:300])
            session.flush()
            for event in session:
                if isinstance(event, AudioChunk):
                    break
            assert value("voxlite_active_streams") == 1
            session.cancel()
        wait_until(
            lambda: value("voxlite_calls_total", method=STREAMING, code="CANCELLED") > cancelled
        )
        assert value("voxlite_active_streams") == 0
        with pytest.raises(DeadlineExceeded):
            list(client.synthesize(LONG_TEXT, timeout=0.5))
        wait_until(
            lambda: (
                value("voxlite_calls_total", method=SYNTHESIZE, code="DEADLINE_EXCEEDED") > expired
            )
        )
        assert value("voxlite_active_streams") == 0


def test_a_stream_cut_by_a_barge_in_still_reports_its_first_audio(
    observed: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    """A voice agent cancels its stream when the user speaks over it: that call never gets its
    Summary, and its first audio still goes into its log line and the histogram (the figure
    would otherwise leave out every interrupted reply)."""
    caplog.set_level(logging.INFO, logger="voxlite.access")
    registry = observed.server.metrics.registry

    def value(name: str) -> float:
        return registry.get_sample_value(name) or 0.0

    ttfa_before = value("voxlite_time_to_first_audio_seconds_count")
    rtf_before = value("voxlite_real_time_factor_count")
    with (
        Client(observed.address, metadata={"x-request-id": "barge-in-1"}) as client,
        client.stream(timeout=60) as session,
    ):
        session.send(LONG_TEXT[:300])
        session.flush()
        first = next(event for event in session if isinstance(event, AudioChunk))
        session.cancel()

    def line() -> dict[str, Any] | None:
        for r in caplog.records:
            if r.name == "voxlite.access" and r.__dict__["fields"]["request_id"] == "barge-in-1":
                return dict(r.__dict__["fields"])
        return None

    wait_until(lambda: line() is not None)
    fields = line()
    assert fields is not None
    assert fields["code"] == "CANCELLED"
    assert 0 < fields["ttfa_ms"] < fields["duration_ms"]
    assert fields["audio_seconds"] >= first.duration_ms / 1000 - 0.0005  # logged to 1 ms
    assert value("voxlite_time_to_first_audio_seconds_count") == ttfa_before + 1
    assert value("voxlite_real_time_factor_count") == rtf_before  # a Summary's figure only


def test_request_id_is_kept_or_made_and_sent_back(server: ServerThread) -> None:
    with grpc.insecure_channel(server.address) as channel:
        stub = tts_pb2_grpc.TextToSpeechServiceStub(channel)
        call = stub.Synthesize(
            pb.SynthesizeRequest(text="Hi."), metadata=[("x-request-id", "req-42")], timeout=30
        )
        list(call)
        assert ("x-request-id", "req-42") in call.initial_metadata()
        _, unary = stub.ListVoices.with_call(pb.ListVoicesRequest(), timeout=10)
        made = dict(unary.initial_metadata())["x-request-id"]
        assert re.fullmatch(r"[0-9a-f]{12}", made)
        # An id that would break a log line is replaced, not logged.
        _, odd = stub.ListVoices.with_call(
            pb.ListVoicesRequest(), metadata=[("x-request-id", "a b")], timeout=10
        )
        assert re.fullmatch(r"[0-9a-f]{12}", dict(odd.initial_metadata())["x-request-id"])


def frames_of(address: str, path: str, message: Any) -> list[tuple[str, dict[str, str]]]:
    """A unary-request call made with HTTP/2 by hand: the frames of its answer, as a proxy sees
    them ("headers" with END_STREAM is a trailers-only answer)."""
    host, port = address.rsplit(":", 1)
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    body = message.SerializeToString()
    connection.send_headers(1, [
        (":method", "POST"), (":scheme", "http"), (":path", path), (":authority", address),
        ("content-type", "application/grpc"), ("te", "trailers"),
    ])  # fmt: skip
    connection.send_data(1, b"\0" + len(body).to_bytes(4, "big") + body, end_stream=True)
    frames: list[tuple[str, dict[str, str]]] = []
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(connection.data_to_send())
        while not frames or frames[-1][0] not in ("headers ended", "trailers"):
            data = sock.recv(65536)
            assert data, f"the connection closed after {frames}"
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived | h2.events.TrailersReceived):
                    kind = (
                        "trailers"
                        if isinstance(event, h2.events.TrailersReceived)
                        else ("headers ended" if event.stream_ended else "headers")
                    )
                    frames.append((kind, {k.decode(): v.decode() for k, v in event.headers}))
                elif isinstance(event, h2.events.DataReceived):
                    connection.acknowledge_received_data(event.flow_controlled_length, 1)
            sock.sendall(connection.data_to_send())
    return frames


def test_a_refusal_is_trailers_alone_so_that_a_proxy_can_retry_it(
    cache_dir: Path, tmp_path: Path
) -> None:
    """Bug: the request id went back as headers before the servicer ran, so a draining or full
    server's refusal came as headers, then its status in trailers; Envoy retries on a status
    in the headers only (deploy/envoy's retry_on), and passed the refusal to the caller. The
    id now comes in the trailers of every call, and in the headers of one that answers."""
    srv = ServerThread(base_config(cache_dir, tmp_path, phrase_cache_mb=0))
    path = "/voxlite.tts.v1.TextToSpeechService/Synthesize"
    try:
        served = frames_of(srv.address, path, pb.SynthesizeRequest(text="Hi."))
        assert [kind for kind, _ in served] == ["headers", "trailers"]
        assert "grpc-status" not in served[0][1]
        assert served[1][1]["grpc-status"] == "0"
        assert served[0][1]["x-request-id"] == served[1][1]["x-request-id"]
        srv.on_loop(srv.server.admission.drain)
        (refused,) = frames_of(srv.address, path, pb.SynthesizeRequest(text="Hi."))
    finally:
        srv.close()
    kind, headers = refused
    assert kind == "headers ended", refused
    assert headers["grpc-status"] == str(grpc.StatusCode.UNAVAILABLE.value[0])
    assert "shutting down" in headers["grpc-message"]
    assert re.fullmatch(r"[0-9a-f]{12}", headers["x-request-id"])


def test_access_log_has_one_line_per_call(
    server: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="voxlite.access")
    with Client(server.address, metadata={"x-request-id": "log-1"}) as client:
        summary = list(client.synthesize("Hello, log."))[-1]
        assert isinstance(summary, Summary)
        with pytest.raises(VoiceNotFound):
            list(client.synthesize("Hello.", voice="nobody"))
        client.health()

    def lines() -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.name == "voxlite.access"]

    wait_until(lambda: len(lines()) == 3)
    ok, missing, health = (r.__dict__["fields"] for r in lines())
    assert ok["request_id"] == "log-1"
    assert ok["method"] == SYNTHESIZE
    assert ok["voice"] == "en_US-joe-medium"
    assert ok["code"] == "OK"
    assert ok["audio_seconds"] == pytest.approx(summary.audio_duration_ms / 1000, abs=1e-3)
    assert ok["ttfa_ms"] == pytest.approx(summary.time_to_first_audio_ms, abs=0.1)
    assert ok["duration_ms"] > 0
    assert ok["peer"].startswith("ipv4:127.0.0.1:")
    text = lines()[0].getMessage()
    assert text.startswith(f"request_id=log-1 method={SYNTHESIZE} voice=en_US-joe-medium code=OK")
    assert missing["code"] == "NOT_FOUND"
    assert missing["voice"] is None
    assert missing["audio_seconds"] is None
    assert "audio_seconds=-" in lines()[1].getMessage()
    assert health["method"] == "Health/Check"
    assert [r.levelno for r in lines()] == [logging.INFO, logging.INFO, logging.DEBUG]


def test_metrics_without_a_port_are_kept_in_memory_per_server() -> None:
    first, second = Metrics(), Metrics()  # own registries: no clash in one process
    first.queue_wait(0.003)
    first.cache_hit()
    first.cache_hit()
    first.cache_miss()
    first.track_voices(lambda: (3, 1))
    first.call_started(SYNTHESIZE)
    assert first.registry.get_sample_value("voxlite_active_streams") == 1
    first.call_finished(SYNTHESIZE, "OK", None)

    def value(metrics: Metrics, name: str) -> float | None:
        return metrics.registry.get_sample_value(name)

    assert value(first, "voxlite_scheduler_queue_wait_seconds_count") == 1
    assert value(first, "voxlite_phrase_cache_hits_total") == 2
    assert value(first, "voxlite_phrase_cache_misses_total") == 1
    assert value(first, "voxlite_voices_loaded") == 3
    assert value(first, "voxlite_voices_failed") == 1
    assert value(first, "voxlite_active_streams") == 0
    assert value(first, "voxlite_time_to_first_audio_seconds_count") == 0  # no summary
    assert value(second, "voxlite_phrase_cache_hits_total") == 0


@pytest.mark.slow
def test_json_log_format_and_metrics_flag(cache_dir: Path, tmp_path: Path) -> None:
    """Every line is JSON, an error of onnxruntime's own too. Bug: a voice whose graph fails
    as it runs (here a text embedding narrower than the layers that read it) printed
    onnxruntime's error to stderr as it is (in colour), beside the JSON line that says why the
    voice did not load."""
    model_path, config = embedded_voice_files()
    model = onnx.load(str(model_path))
    [embedding] = [n.input[0] for n in model.graph.node if n.op_type == "Gather" and
                   n.input[1] == "input"]  # fmt: skip
    [table] = [t for t in model.graph.initializer if t.name == embedding]
    table.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(table)[:, :-1], embedding))
    onnx.save(model, str(tmp_path / "en_US-wrong-medium.onnx"))
    (tmp_path / "en_US-wrong-medium.onnx.json").symlink_to(config)
    metrics_port = free_port()
    srv = ServerProcess(
        cache_dir, tmp_path, "--log-format", "json", "--metrics-port", str(metrics_port)
    )
    try:
        with Client(srv.address, metadata={"x-request-id": "json-1"}) as client:
            list(client.synthesize("Hello, JSON."))
        wait_until(lambda: any("json-1" in line for line in srv.log))
        wait_until(lambda: any("en_US-wrong-medium not loaded" in line for line in srv.log))
        assert calls(scrape(metrics_port), SYNTHESIZE, "OK") == 1
    finally:
        srv.close()
    records = [json.loads(line) for line in srv.log if line.strip()]
    for record in records:
        assert {"time", "level", "logger", "message"} <= record.keys()
    assert any(
        r["message"] == f"metrics on http://127.0.0.1:{metrics_port}/metrics" for r in records
    )
    [access] = [r for r in records if r["logger"] == "voxlite.access"]
    assert access["request_id"] == "json-1"
    assert access["method"] == SYNTHESIZE
    assert access["voice"] == "en_US-joe-medium"
    assert access["code"] == "OK"
    assert access["audio_seconds"] > 0.5
    assert access["ttfa_ms"] > 0
    assert access["duration_ms"] > 0
    assert access["level"] == "INFO"
