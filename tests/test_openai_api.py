"""The OpenAI-compatible HTTP API through OpenAI's own Python SDK: every format decoded by an
independent decoder, streaming shown by the order of events, every error path, tokens, TLS,
loading and the drain."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import logging
import re
import signal
import socket
import ssl
import struct
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import numpy as np
import openai
import pytest
import soundfile
from grpc_health.v1 import health_pb2
from voxlite.service.call.events import Event
from voxlite.service.call.session import Session
from voxlite.service.http import openai_api
from voxlite.service.server import VoxliteServer

from .helpers import (
    LONG_TEXT,
    Pki,
    ServerProcess,
    ServerThread,
    assert_taken_port_named,
    base_config,
    config_error,
    ffmpeg_pcm,
    held_workers,
    http_url,
    only_session,
    opusdec_pcm,
    sessions,
    speech_fraction,
    wait_until,
)

TEXT = "Sure, I can help with that. The weather today is sunny and warm."
FIRST = "Sure, I can help with that."
TOKEN = "http-token-1"
APP = "https://app.example.com"
"""The origin whose pages token_server lets call it (--cors-origins)."""
RATE = 24000


@pytest.fixture(scope="module")
def http_server(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerThread]:
    srv = ServerThread(base_config(cache_dir, tmp_path_factory.mktemp("voices"), http_port=0))
    yield srv
    srv.close()


Sdk = Callable[..., openai.OpenAI]


@pytest.fixture
def sdk() -> Iterator[Sdk]:
    """OpenAI's client for a server: sdk(srv, api_key=..., **options), closed after the test;
    no retries, so that each refusal is seen as it is."""
    clients: list[openai.OpenAI] = []

    def make(srv: ServerThread, *, api_key: str = "unused", **options: Any) -> openai.OpenAI:
        options.setdefault("base_url", http_url(srv, "/v1"))
        client = openai.OpenAI(api_key=api_key, max_retries=0, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def speak(client: openai.OpenAI, text: str = TEXT, **fields: Any) -> tuple[bytes, Any]:
    """The whole streamed body of one POST /v1/audio/speech, and its headers."""
    fields.setdefault("voice", "alloy")
    with client.audio.speech.with_streaming_response.create(
        model="tts-1", input=text, **fields
    ) as response:
        return b"".join(response.iter_bytes()), response.headers


def reply(
    client: openai.OpenAI, response_format: Any = "pcm", text: str = LONG_TEXT, **fields: Any
) -> Any:
    """A streamed reply whose first sentence is FIRST (say it once before, and its audio comes
    from the phrase cache, with no model run), `text` after it."""
    return client.audio.speech.with_streaming_response.create(
        model="tts-1",
        voice="alloy",
        input=f"{FIRST} {text}",
        response_format=response_format,
        **fields,
    )


def events_of(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """Server-sent events as an SSE client reads them: each event's data lines, joined, as JSON
    (the blank line ends an event)."""
    data: list[str] = []
    for line in lines:
        if line:
            field, _, value = line.partition(":")
            if field == "data":
                data.append(value.removeprefix(" "))
        elif data:
            yield json.loads("\n".join(data))
            data = []
    assert not data, "the stream ended inside an event"


def spoken_events(client: openai.OpenAI, text: str = TEXT, **fields: Any) -> tuple[bytes, Any]:
    """One POST /v1/audio/speech with stream_format "sse": the audio of its delta events, in
    order, and its headers; asserts that speech.audio.done ends it, with the usage."""
    fields.setdefault("voice", "alloy")
    with client.audio.speech.with_streaming_response.create(
        model="gpt-4o-mini-tts", input=text, stream_format="sse", **fields
    ) as response:
        events = list(events_of(response.iter_lines()))
        headers = response.headers
    *deltas, done = events
    assert deltas
    assert {event["type"] for event in deltas} == {"speech.audio.delta"}
    assert done == {
        "type": "speech.audio.done",
        "usage": {"input_tokens": len(text), "output_tokens": 0, "total_tokens": len(text)},
    }
    return b"".join(base64.b64decode(event["audio"]) for event in deltas), headers


def pcm16(data: bytes) -> np.ndarray:
    return np.frombuffer(data, "<i2").astype(np.float32) / 32768.0


def error_of(raised: pytest.ExceptionInfo[openai.APIStatusError]) -> dict[str, Any]:
    body = raised.value.response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "type", "param", "code"}
    error: dict[str, Any] = body["error"]
    return error


def raw_post(srv: ServerThread, body: bytes, headers: dict[str, str] | None = None) -> Any:
    """POST /v1/audio/speech without the SDK (bodies it would never send); the error's JSON."""
    request = urllib.request.Request(
        http_url(srv, "/v1/audio/speech"), data=body, headers=headers or {}, method="POST"
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    with refused.value as error:  # its socket closed now, not whenever it is collected
        return error.code, json.loads(error.read()), error.headers


# -- formats -----------------------------------------------------------------------------------


def test_every_format_streams_audio_an_independent_decoder_reads(
    http_server: ServerThread, tmp_path: Path, sdk: Sdk
) -> None:
    """pcm first: the phrase cache then replays the same audio for every other format, so each
    decoded body can be held against it."""
    client = sdk(http_server)
    pcm_body, headers = speak(client, response_format="pcm")
    assert headers["content-type"] == "audio/pcm"
    assert headers["transfer-encoding"] == "chunked"
    reference = pcm16(pcm_body)
    seconds = reference.size / RATE
    assert seconds > 2.0
    assert speech_fraction(pcm_body, RATE) > 0.4

    wav_body, headers = speak(client, response_format="wav")
    assert headers["content-type"] == "audio/wav"
    wav, rate = soundfile.read(io.BytesIO(wav_body), dtype="float32")
    assert rate == RATE
    np.testing.assert_array_equal(wav, reference)

    opus_body, headers = speak(client, response_format="opus")
    assert headers["content-type"] == "audio/ogg"
    assert opus_body[:4] == b"OggS"
    opus, rate = opusdec_pcm(opus_body, tmp_path)
    assert rate == RATE  # opusdec's output: the rate the Ogg header names
    assert opus.size / rate == pytest.approx(seconds, abs=0.05)
    assert ffmpeg_pcm(opus_body).size / RATE == pytest.approx(seconds, abs=0.05)

    mp3_body, headers = speak(client)  # mp3: the SDK's default
    assert headers["content-type"] == "audio/mpeg"
    mp3 = ffmpeg_pcm(mp3_body)
    # LAME adds its encoder delay and pads the last frame (no seekable header to trim them).
    assert seconds <= mp3.size / RATE < seconds + 0.15
    loud = np.sqrt(np.mean(mp3**2))
    assert loud == pytest.approx(np.sqrt(np.mean(reference**2)), rel=0.2)


def test_server_sent_events_carry_the_audio_of_each_format(
    http_server: ServerThread, tmp_path: Path, sdk: Sdk
) -> None:
    """stream_format "sse": the same audio as the body would be, base64 in speech.audio.delta
    events, then speech.audio.done. pcm first, so that every reply replays the same audio from
    the phrase cache."""
    client = sdk(http_server)
    pcm_body, _ = speak(client, response_format="pcm")
    reference = pcm16(pcm_body)
    seconds = reference.size / RATE

    pcm_events, headers = spoken_events(client, response_format="pcm")
    assert headers["content-type"] == "text/event-stream"
    assert headers["cache-control"] == "no-cache"
    assert headers["x-voxlite-voice"] == "en_US-joe-medium"
    assert pcm_events == pcm_body

    wav, rate = soundfile.read(io.BytesIO(spoken_events(client, response_format="wav")[0]))
    assert rate == RATE
    assert wav.size == reference.size

    opus, rate = opusdec_pcm(spoken_events(client, response_format="opus")[0], tmp_path)
    assert opus.size / rate == pytest.approx(seconds, abs=0.05)

    mp3 = ffmpeg_pcm(spoken_events(client)[0])  # mp3, as without events
    assert seconds <= mp3.size / RATE < seconds + 0.15
    assert np.sqrt(np.mean(mp3**2)) == pytest.approx(np.sqrt(np.mean(reference**2)), rel=0.2)


def test_the_example_from_openais_documentation_saves_a_playable_mp3(
    http_server: ServerThread, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI's own text-to-speech example, with only base_url changed (the key comes from
    OPENAI_API_KEY as there; this server asks for none)."""
    monkeypatch.setenv("OPENAI_API_KEY", "anything")
    speech_file_path = tmp_path / "speech.mp3"

    client = openai.OpenAI(base_url=http_url(http_server, "/v1"))
    with client.audio.speech.with_streaming_response.create(
        model="gpt-4o-mini-tts",
        voice="coral",
        input="Today is a wonderful day to build something people love!",
        instructions="Speak in a cheerful and positive tone.",
    ) as response:
        response.stream_to_file(speech_file_path)

    client.close()
    samples = ffmpeg_pcm(speech_file_path.read_bytes())
    assert samples.size / RATE > 2.0
    assert np.mean(np.abs(samples) > 0.01) > 0.3


def test_the_readmes_three_lines_save_a_playable_mp3(
    http_server: ServerThread, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README's example, run from the README itself with the test server's port."""
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    code = re.search(r"```python\n(from openai import OpenAI\n.*?)```", readme, re.S)
    assert code is not None
    assert len([line for line in code.group(1).splitlines() if line.strip()]) == 3
    monkeypatch.chdir(tmp_path)
    port = str(http_server.server.http_port)
    exec(code.group(1).replace(":8000/", f":{port}/"), {})
    samples = ffmpeg_pcm((tmp_path / "hello.mp3").read_bytes())
    assert samples.size / RATE > 0.4  # "Hello!"
    assert np.mean(np.abs(samples) > 0.01) > 0.3


@pytest.mark.parametrize(
    ("response_format", "stream_format"),
    [("mp3", "audio"), ("opus", "audio"), ("wav", "audio"), ("pcm", "audio"), ("mp3", "sse")],
)
def test_the_first_bytes_arrive_while_the_rest_is_still_being_synthesized(
    http_server: ServerThread, response_format: str, stream_format: str, sdk: Sdk
) -> None:
    """Order, not time: the reply's first sentence is in the phrase cache, every model worker
    is held, and the first bytes of the reply still arrive (as a whole event, with events),
    while its session cannot have synthesized the rest. Closing the response early then ends
    the server's work for it."""
    client = sdk(http_server)
    speak(client, FIRST, response_format=response_format)  # its audio is cached from now on
    before = sessions(http_server)  # that call's may not have ended yet
    # No model run happens inside this block.
    with (
        held_workers(http_server),
        # A sentence no other test says: the phrase cache cannot hold the whole reply.
        reply(
            client,
            response_format,
            f"This is the {response_format} reply as {stream_format}. {LONG_TEXT}",
            stream_format=stream_format,
        ) as response,
    ):
        # Iterators kept to the block's end: one dropped closes the response (httpx), and the
        # server then ends the reply's session, which this test looks at.
        if stream_format == "sse":
            events = events_of(response.iter_lines())
            first = next(events)
            assert first["type"] == "speech.audio.delta"
            assert base64.b64decode(first["audio"])
        else:
            chunks = response.iter_bytes()
            assert next(chunks)
        session = only_session(http_server, before)
        assert not session.finished
        assert session.spoken_seconds < 3.0  # the first sentence's audio, no more
    wait_until(lambda: http_server.server.admission.active == 0)


def test_speed_changes_the_pace(http_server: ServerThread, sdk: Sdk) -> None:
    client = sdk(http_server)
    normal, _ = speak(client, "One, two, three, four, five, six.", response_format="pcm")
    fast, _ = speak(client, "One, two, three, four, five, six.", response_format="pcm", speed=2.0)
    assert len(fast) < 0.7 * len(normal)


def test_openai_voice_names_and_no_voice_get_the_default_voice(
    http_server: ServerThread, sdk: Sdk
) -> None:
    client = sdk(http_server)
    for voice in ("alloy", "onyx", "shimmer", "en_US-joe-medium"):
        _, headers = speak(client, "Hello.", voice=voice, response_format="pcm")
        assert headers["x-voxlite-voice"] == "en_US-joe-medium"


def test_models_and_voices_are_listed(http_server: ServerThread, sdk: Sdk) -> None:
    client = sdk(http_server)
    ids = [model.id for model in client.models.list()]
    assert {"voxlite", "tts-1", "tts-1-hd", "gpt-4o-mini-tts"} <= set(ids)
    assert client.models.retrieve("tts-1").id == "tts-1"
    with pytest.raises(openai.NotFoundError) as refused:
        client.models.retrieve("whisper-1")
    assert error_of(refused)["param"] == "model"
    voices = get_json(http_server, "/v1/audio/voices")
    # Bug: "voices" held names alone; Open WebUI reads each one's id and name (and its model
    # list from /v1/audio/models, which was a 404), else it offers OpenAI's six names.
    assert {v["id"]: v["name"] for v in voices["voices"]} == {
        "en_US-joe-medium": "en_US-joe-medium"
    }
    assert voices["data"] == voices["voices"]
    assert voices["data"][0]["language"] == "en-US"
    assert voices["data"][0]["default"] is True
    assert "alloy" in voices["openai_voices"]
    models = get_json(http_server, "/v1/audio/models")["models"]
    assert {"tts-1", "tts-1-hd"} <= {m["id"] for m in models}


def get_json(srv: ServerThread, path: str) -> Any:
    with urllib.request.urlopen(http_url(srv, path), timeout=30) as answer:
        return json.loads(answer.read())


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "param", "says"),
    [
        ({"input": ""}, "input", "input is empty"),
        ({"input": "……"}, "input", "input has nothing to speak"),
        ({"input": "<speak></speak>"}, "input", "input has nothing to speak"),
        ({"input": "x" * 5001}, "input", "over this server's limit of 5000"),
        ({"speed": 5.0}, "speed", "between 0.25 and 4"),
        ({"speed": 0.1}, "speed", "between 0.25 and 4"),
        ({"response_format": "aac"}, "response_format", "use one of mp3, opus, wav, pcm"),
        ({"response_format": "flac"}, "response_format", "not served here"),
        ({"response_format": "ogg"}, "response_format", "unknown"),
        ({"extra_body": {"colour": "red"}}, "colour", "unknown field"),
        ({"extra_body": {"language": 7}}, "language", "language must be a string"),
        ({"extra_body": {"stream_format": "ws"}}, "stream_format", "or sse (OpenAI's server-sent"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    http_server: ServerThread, fields: dict[str, Any], param: str, says: str, sdk: Sdk
) -> None:
    fields = {"input": TEXT, "voice": "alloy"} | fields
    with pytest.raises(openai.BadRequestError) as refused:
        sdk(http_server).audio.speech.create(model="tts-1", **fields)
    error = error_of(refused)
    assert error["param"] == param
    assert error["type"] == "invalid_request_error"
    assert says in error["message"]


def test_input_the_voice_says_nothing_of_is_a_400(http_server: ServerThread, sdk: Sdk) -> None:
    """Bug: "^" alone was a 200 with an empty file."""
    with pytest.raises(openai.BadRequestError) as refused:
        sdk(http_server).audio.speech.create(model="tts-1", voice="alloy", input="^")
    assert "says nothing for the text '^'" in error_of(refused)["message"]
    assert error_of(refused)["param"] == "input"  # it was null


def test_a_fault_of_the_server_is_a_500_in_the_error_shape(
    http_server: ServerThread, sdk: Sdk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug (an exception injected into the voice's text pass) is OpenAI's server_error with
    words that say whose fault it is, not aiohttp's bare 500; the next request is served."""
    model = http_server.server.registry.get("en_US-joe-medium").model  # type: ignore[attr-defined]

    def broken(text: str) -> list[list[str]]:
        raise KeyError(text)

    with monkeypatch.context() as patch:
        patch.setattr(model, "phonemize", broken)
        with pytest.raises(openai.InternalServerError) as failed:
            sdk(http_server).audio.speech.create(model="tts-1", voice="alloy", input="A fault.")
    error = error_of(failed)
    assert (error["type"], error["code"]) == ("server_error", "internal_error")
    assert "(KeyError), a fault of its own: its log has the details" in error["message"]
    assert speak(sdk(http_server), "Served again.")[0]


def test_a_client_gone_as_the_body_ends_is_a_client_that_left_not_a_fault(
    http_server: ServerThread,
    sdk: Sdk,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Bug: a client that reset its connection as the last audio went, before the body's end
    was written, left aiohttp's ERROR "Error handling request" with a traceback ("Cannot write
    to closing transport") and status 500 on the access line. It is a client that left (499)."""
    caplog.set_level(logging.INFO, logger="voxlite.access")
    sockets: list[socket.socket] = []
    spoken, left = threading.Event(), threading.Event()

    class Watched(openai_api._Reading):
        def __init__(self, transport: asyncio.Transport | None) -> None:
            assert transport is not None
            sockets.append(transport.get_extra_info("socket"))
            super().__init__(transport)

    def reset() -> bool:
        return sockets[-1].getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == TCP_CLOSE

    events = Session.events

    async def then_the_client_leaves(session: Session) -> AsyncGenerator[Event, None]:
        async with contextlib.aclosing(events(session)) as each:
            async for event in each:
                yield event
        spoken.set()
        # The server's loop is held (no await) until its kernel has the client's reset: the
        # body's last write meets it, and the body's end comes after, as a fast client's
        # reset can fall between them.
        assert left.wait(60)
        wait_until(reset)

    monkeypatch.setattr(openai_api, "_Reading", Watched)
    monkeypatch.setattr(Session, "events", then_the_client_leaves)
    body = json.dumps({"input": "Leaving now.", "response_format": "mp3"}).encode()
    with socket.create_connection(("127.0.0.1", http_server.server.http_port), 60) as client:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.sendall(
            b"POST /v1/audio/speech HTTP/1.1\r\nHost: voxlite\r\nX-Request-Id: leaves-1\r\n"
            b"Content-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert spoken.wait(60)
    left.set()  # closed with SO_LINGER 0: a reset
    wait_until(lambda: any("request_id=leaves-1 " in r.getMessage() for r in caplog.records))
    [line] = [r for r in caplog.records if "request_id=leaves-1 " in r.getMessage()]
    assert line.__dict__["fields"]["status"] == 499
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    monkeypatch.undo()
    assert speak(sdk(http_server), "Served again.")[0]


TCP_CLOSE = 7
"""Linux's tcpi_state of a connection its peer has reset."""


def test_a_body_that_is_not_json_is_a_400(http_server: ServerThread) -> None:
    status, body, _ = raw_post(http_server, b"input=hello")
    assert status == 400
    assert "the body is not JSON" in body["error"]["message"]
    status, body, _ = raw_post(http_server, b'["input"]')
    assert status == 400
    assert "JSON object" in body["error"]["message"]


def test_a_body_over_a_mebibyte_is_refused_with_the_error_shape(http_server: ServerThread) -> None:
    status, body, _ = raw_post(http_server, b"{" + b" " * (1024 * 1024 + 10) + b"}")
    assert status == 413
    assert "send less text in input" in body["error"]["message"]


def test_an_unknown_voice_is_a_404_that_lists_the_voices(
    http_server: ServerThread, sdk: Sdk
) -> None:
    with pytest.raises(openai.NotFoundError) as refused:
        sdk(http_server).audio.speech.create(model="tts-1", voice="nobody", input=TEXT)
    error = error_of(refused)
    assert error["param"] == "voice"
    assert "voice 'nobody' not found: choose one of en_US-joe-medium" in error["message"]
    # Asked for as events, a refusal before any audio is still the status and its JSON.
    with pytest.raises(openai.NotFoundError) as refused:
        sdk(http_server).audio.speech.create(
            model="tts-1", voice="nobody", input=TEXT, stream_format="sse"
        )
    assert error_of(refused)["param"] == "voice"


def test_a_language_no_voice_speaks_is_a_404(http_server: ServerThread, sdk: Sdk) -> None:
    with pytest.raises(openai.NotFoundError) as refused:
        sdk(http_server).audio.speech.create(
            model="tts-1", voice="alloy", input=TEXT, extra_body={"language": "ko"}
        )
    error = error_of(refused)
    assert error["param"] == "language"
    assert "this server has en-US" in error["message"]
    # Chinese text with OpenAI's voice name and no language: its script says which.
    with pytest.raises(openai.NotFoundError) as refused:
        sdk(http_server).audio.speech.create(model="tts-1", voice="alloy", input="您好。请问。")
    error = error_of(refused)
    assert error["param"] == "input"
    assert "its text is written in, here 'zh'" in error["message"]


def test_unknown_paths_and_methods_answer_in_the_error_shape(http_server: ServerThread) -> None:
    for url, method in (("/v1/audio/transcriptions", "POST"), ("/v1/audio/speech", "GET")):
        request = urllib.request.Request(http_url(http_server, url), data=None, method=method)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code in (404, 405)
        assert "POST /v1/audio/speech" in json.loads(refused.value.read())["error"]["message"]
    # A method a path does not take: 405 with the methods it does (RFC 9110).
    request = urllib.request.Request(http_url(http_server, "/v1/audio/speech"), method="GET")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    with refused.value as error:
        assert error.code == 405
        assert error.headers["Allow"] == "POST"


def test_bodies_no_sdk_sends_are_400s_not_500s(
    http_server: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    """Bugs: a lone surrogate in input ("\\ud800" in the JSON) failed the English voice's
    espeak-ng, a speed of 400 digits overflowed, and a body not in its Content-Encoding broke
    the read: each a plain-text 500 (the last, once a 400, still logged aiohttp's traceback)."""
    status, body, _ = raw_post(http_server, b'{"input": "Hi \\ud800 there."}')
    assert (status, body["error"]["param"]) == (400, "input")
    assert "unpaired surrogate" in body["error"]["message"]
    huge = b'{"input": "Hi.", "speed": 1' + b"0" * 400 + b"}"
    status, body, _ = raw_post(http_server, huge)
    assert (status, body["error"]["param"]) == (400, "speed")
    status, body, _ = raw_post(http_server, b'{"input": "Hi."}', {"Content-Encoding": "gzip"})
    assert status == 400
    assert "Content-Encoding" in body["error"]["message"]
    # Bug: JSON nested deeper than Python's recursion limit was a plain-text 500.
    for deep in (b"[" * 100_000 + b"]" * 100_000, b'{"input": "Hi.", "voice": ' + b"[" * 100_000):
        status, body, _ = raw_post(http_server, deep)
        assert status == 400
        assert "nests arrays or objects too deep" in body["error"]["message"]
    assert not [r for r in caplog.records if r.name.startswith("aiohttp") and r.levelno >= 40]


def test_an_http_1_0_client_gets_the_audio_until_the_connection_closes(
    http_server: ServerThread,
) -> None:
    """Bug: every good request over HTTP/1.0 (nginx's proxy_pass unless told
    proxy_http_version 1.1) was a 500: the answer was chunked, which HTTP/1.0 lacks."""
    body = b'{"input": "Hello there, over HTTP one point oh.", "response_format": "pcm"}'
    head = (
        "POST /v1/audio/speech HTTP/1.0\r\nHost: localhost\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    port = http_server.server.http_port
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head.encode() + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    headers, _, audio = answer.partition(b"\r\n\r\n")
    assert headers.startswith(b"HTTP/1.0 200") or headers.startswith(b"HTTP/1.1 200")
    assert b"chunked" not in headers.lower()
    assert len(audio) / 2 / RATE > 1.0  # seconds of 24 kHz speech, whole


def test_at_capacity_is_a_429_with_retry_after(cache_dir: Path, tmp_path: Path, sdk: Sdk) -> None:
    srv = ServerThread(base_config(cache_dir, tmp_path, http_port=0, max_streams=1))
    try:
        client = sdk(srv)
        speak(client, FIRST, response_format="pcm")
        # The first reply cannot end while the workers are held.
        with held_workers(srv), reply(client) as running:
            chunks = running.iter_bytes()
            assert next(chunks)
            with pytest.raises(openai.RateLimitError) as refused:
                client.audio.speech.create(model="tts-1", voice="alloy", input=TEXT)
            assert refused.value.response.headers["retry-after"] == "1"
            error = error_of(refused)
            assert "limit of 1 concurrent streams" in error["message"]
            assert error["type"] == "rate_limit_error"
    finally:
        srv.close()


# -- tokens and TLS ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def token_server(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerThread]:
    config = base_config(
        cache_dir,
        tmp_path_factory.mktemp("voices"),
        http_port=0,
        auth_tokens=(TOKEN,),
        cors_origins=(APP,),
    )
    srv = ServerThread(config)
    yield srv
    srv.close()


def test_tokens_are_asked_for_as_bearer(token_server: ServerThread, sdk: Sdk) -> None:
    with pytest.raises(openai.AuthenticationError) as refused:
        sdk(token_server, api_key="wrong-token").audio.speech.create(
            model="tts-1", voice="alloy", input=TEXT
        )
    assert refused.value.response.headers["www-authenticate"] == "Bearer"
    assert "not valid for this server" in error_of(refused)["message"]
    with pytest.raises(openai.AuthenticationError):
        sdk(token_server, api_key="wrong-token").models.list()
    status, body, _ = raw_post(token_server, json.dumps({"input": TEXT}).encode())
    assert status == 401
    assert "Authorization: Bearer <token>" in body["error"]["message"]
    status, body, _ = raw_post(
        token_server, json.dumps({"input": TEXT}).encode(), {"Authorization": "Basic abc"}
    )
    assert status == 401
    assert "must be 'Bearer <token>'" in body["error"]["message"]
    audio, _ = speak(sdk(token_server, api_key=TOKEN), response_format="pcm")
    assert speech_fraction(audio, RATE) > 0.4


def cors_request(
    srv: ServerThread, path: str, method: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    """A request as a browser page sends it: status, headers and body, a refusal too."""
    request = urllib.request.Request(http_url(srv, path), body, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as refused:
        with refused:
            return refused.code, dict(refused.headers), refused.read()


def test_pages_of_the_cors_origins_may_call_the_api_and_no_other_page(
    token_server: ServerThread, http_server: ServerThread
) -> None:
    """What a browser checks before it lets a page of another origin read a reply (the page
    itself is played by chromium in test_openai_page)."""
    preflight = {"Access-Control-Request-Method": "POST"}
    asks = {"Access-Control-Request-Headers": "authorization,content-type,x-stainless-os"}
    status, headers, _ = cors_request(
        token_server, "/v1/audio/speech", "OPTIONS", {"Origin": APP} | preflight | asks
    )
    assert status == 200
    assert headers["Access-Control-Allow-Origin"] == APP
    assert headers["Access-Control-Allow-Methods"] == "POST"
    allowed = set(headers["Access-Control-Allow-Headers"].lower().split(","))
    assert {"authorization", "content-type", "x-stainless-os"} <= allowed
    # Every reply, a refusal too, is readable by the page, with the headers it needs.
    body = json.dumps({"input": TEXT, "response_format": "pcm"}).encode()
    sent = {"Origin": APP, "Content-Type": "application/json"}
    status, headers, audio = cors_request(
        token_server, "/v1/audio/speech", "POST", sent | {"Authorization": f"Bearer {TOKEN}"}, body
    )
    assert status == 200
    assert headers["Access-Control-Allow-Origin"] == APP
    assert {"X-Voxlite-Voice", "X-Request-Id"} <= set(
        headers["Access-Control-Expose-Headers"].split(",")
    )
    assert speech_fraction(audio, RATE) > 0.4
    status, headers, _ = cors_request(token_server, "/v1/audio/speech", "POST", sent, body)
    assert (status, headers["Access-Control-Allow-Origin"]) == (401, APP)
    assert "WWW-Authenticate" in headers["Access-Control-Expose-Headers"].split(",")
    # Another origin's page: its preflight is refused, in the error shape, saying why.
    other = "https://other.example.com"
    status, headers, answer = cors_request(
        token_server, "/v1/models", "OPTIONS", {"Origin": other} | preflight
    )
    assert status == 403
    assert "Access-Control-Allow-Origin" not in headers
    assert json.loads(answer)["error"]["message"].startswith(
        f"pages of '{other}' may not call this server: its --cors-origins names the origins"
    )
    status, headers, _ = cors_request(token_server, "/v1/models", "GET", {"Origin": other})
    assert "Access-Control-Allow-Origin" not in headers
    # Bug: a 404 or a 405 (no route for it) was not readable by the page.
    for path, method in (("/v1/nothing", "GET"), ("/v1/audio/speech", "GET")):
        status, headers, answer = cors_request(token_server, path, method, {"Origin": APP})
        assert (status, headers["Access-Control-Allow-Origin"]) == (
            404 if "no" in path else 405,
            APP,
        )
        assert "X-Request-Id" in headers["Access-Control-Expose-Headers"].split(",")
        assert json.loads(answer)["error"]["code"]
        status, headers, _ = cors_request(token_server, path, method, {"Origin": other})
        assert "Access-Control-Allow-Origin" not in headers
    # A server without --cors-origins answers no page of another origin.
    status, headers, _ = cors_request(
        http_server, "/v1/audio/speech", "OPTIONS", {"Origin": APP} | preflight
    )
    assert status == 405
    status, headers, _ = cors_request(http_server, "/v1/models", "GET", {"Origin": APP})
    assert status == 200
    assert "Access-Control-Allow-Origin" not in headers


def test_request_ids_name_http_answers_and_their_log_lines(
    http_server: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    """An operator follows a request from the proxy's log to the server's: the caller's
    X-Request-Id (nginx's $request_id) is on the access line and comes back, a refusal's too;
    without one, or with one unfit for a log line, the server names the request itself."""
    caplog.set_level(logging.INFO, logger="voxlite.access")
    body = json.dumps({"input": TEXT, "response_format": "pcm"}).encode()
    sent = {"Content-Type": "application/json", "X-Request-Id": "proxy-7f3a"}
    status, headers, audio = cors_request(http_server, "/v1/audio/speech", "POST", sent, body)
    assert (status, headers["X-Request-Id"]) == (200, "proxy-7f3a")
    assert speech_fraction(audio, RATE) > 0.4
    wait_until(lambda: any("proxy-7f3a" in r.getMessage() for r in caplog.records))
    [line] = [r for r in caplog.records if "proxy-7f3a" in r.getMessage()]
    assert line.getMessage().startswith("request_id=proxy-7f3a method=POST /v1/audio/speech")
    assert line.__dict__["fields"]["status"] == 200
    refused = json.dumps({"input": ""}).encode()
    status, headers, _ = cors_request(
        http_server, "/v1/audio/speech", "POST", sent | {"X-Request-Id": "proxy-8"}, refused
    )
    assert (status, headers["X-Request-Id"]) == (400, "proxy-8")
    wait_until(lambda: any("request_id=proxy-8 " in r.getMessage() for r in caplog.records))
    for unfit in ("a b", "x" * 129):
        status, headers, _ = cors_request(http_server, "/v1/models", "GET", {"X-Request-Id": unfit})
        assert status == 200
        assert re.fullmatch(r"[0-9a-f]{12}", headers["X-Request-Id"])
    status, headers, _ = cors_request(http_server, "/v1/no-such-path", "GET", {})
    assert status == 404
    assert re.fullmatch(r"[0-9a-f]{12}", headers["X-Request-Id"])


def test_the_http_port_speaks_grpcs_tls(
    cache_dir: Path, tmp_path: Path, pki: Pki, sdk: Sdk
) -> None:
    config = base_config(
        cache_dir, tmp_path, http_port=0, tls_cert=pki.server.cert, tls_key=pki.server.key
    )
    srv = ServerThread(config)
    try:
        trust = ssl.create_default_context(cafile=str(pki.ca.cert))
        client = sdk(
            srv,
            base_url=http_url(srv, "/v1", scheme="https"),
            http_client=openai.DefaultHttpxClient(verify=trust),
        )
        audio, _ = speak(client, response_format="pcm")
        assert speech_fraction(audio, RATE) > 0.4
        client.close()  # before the server: its TLS close waits for the client's reply
    finally:
        srv.close()


# -- loading and draining ----------------------------------------------------------------------


def test_an_event_stream_cut_at_the_grace_ends_with_an_error_event(
    cache_dir: Path, tmp_path: Path, sdk: Sdk
) -> None:
    """Past the drain's grace an event stream can say why it ends: an error event in OpenAI's
    error shape where speech.audio.done would be, and no done event, so that no client takes
    the audio it has for the whole reply."""
    srv = ServerThread(base_config(cache_dir, tmp_path, http_port=0))
    try:
        client = sdk(srv)
        speak(client, FIRST, response_format="pcm")
        with held_workers(srv), reply(client, stream_format="sse") as running:
            events = events_of(running.iter_lines())
            assert next(events)["type"] == "speech.audio.delta"
            stopped = asyncio.run_coroutine_threadsafe(srv.server.stop(0.2), srv.loop)
            rest = list(events)
        *deltas, last = rest
        assert {event["type"] for event in deltas} <= {"speech.audio.delta"}
        assert last["type"] == "error"
        assert last["error"]["code"] == "unavailable"
        assert last["error"]["type"] == "server_error"
        assert "shutting down and ended this stream" in last["error"]["message"]
        stopped.result(timeout=60)
    finally:
        srv.close()


def test_while_loading_calls_get_503_then_are_served(cache_dir: Path, tmp_path: Path) -> None:
    """The registry's load waits for the test, so the server is still loading for sure."""
    loaded = threading.Event()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def start() -> VoxliteServer:
        server = VoxliteServer(base_config(cache_dir, tmp_path, http_port=0))
        load = server.registry.load
        server.registry.load = lambda: (loaded.wait(60), load())[1]  # type: ignore[method-assign]
        await server.start()
        return server

    def run(coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=60)

    server: VoxliteServer = run(start())
    try:
        url = f"http://127.0.0.1:{server.http_port}/v1"
        client = openai.OpenAI(api_key="unused", base_url=url, max_retries=0)
        with pytest.raises(openai.InternalServerError) as refused:
            client.audio.speech.create(model="tts-1", voice="alloy", input=TEXT)
        assert refused.value.status_code == 503
        assert refused.value.response.headers["retry-after"] == "1"
        assert "loading voices" in error_of(refused)["message"]
        loaded.set()
        run(server.wait_ready())
        audio = client.audio.speech.create(
            model="tts-1", voice="alloy", input=TEXT, response_format="pcm"
        ).read()
        assert speech_fraction(audio, RATE) > 0.4
        client.close()
    finally:
        loaded.set()
        run(server.stop(0))
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.close()


def test_the_drain_finishes_running_replies_and_refuses_new_ones(
    cache_dir: Path, tmp_path: Path, sdk: Sdk
) -> None:
    """As a Synthesize call: the reply under way is spoken to its end (a whole WAV), a new
    request gets 503 with Retry-After while the drain lasts."""
    srv = ServerThread(base_config(cache_dir, tmp_path, http_port=0))
    try:
        client = sdk(srv)
        speak(client, FIRST, response_format="wav")
        before = sessions(srv)  # that call's may not have ended yet
        with contextlib.ExitStack() as holding:
            holding.enter_context(held_workers(srv))  # the reply is under way at the drain
            with reply(client, "wav", LONG_TEXT[:400]) as running:
                chunks = running.iter_bytes()
                body = [next(chunks)]
                session = only_session(srv, before)
                stopped = asyncio.run_coroutine_threadsafe(srv.server.stop(120), srv.loop)
                wait_until(lambda: srv.server.admission.draining)
                with pytest.raises(openai.InternalServerError) as refused:
                    client.audio.speech.create(model="tts-1", voice="alloy", input=TEXT)
                assert refused.value.status_code == 503
                assert refused.value.response.headers["retry-after"] == "1"
                assert "shutting down" in error_of(refused)["message"]
                holding.close()  # the workers go back to the reply
                body += list(chunks)
        samples, rate = soundfile.read(io.BytesIO(b"".join(body)))
        assert samples.size / rate == pytest.approx(session.spoken_seconds, abs=0.01)
        assert samples.size / rate > 15  # all 400 characters were spoken
        stopped.result(timeout=120)
    finally:
        srv.close()


def test_replies_still_speaking_when_the_grace_ends_are_cut_not_passed_off_as_whole(
    cache_dir: Path, tmp_path: Path, sdk: Sdk
) -> None:
    """Past the drain's grace the body ends without its last chunk: the SDK raises rather than
    saving a short file as if it were all."""
    srv = ServerThread(base_config(cache_dir, tmp_path, http_port=0))
    try:
        client = sdk(srv)
        speak(client, FIRST, response_format="pcm")
        with held_workers(srv), reply(client) as running:
            chunks = running.iter_bytes()
            assert next(chunks)
            stopped = asyncio.run_coroutine_threadsafe(srv.server.stop(0.2), srv.loop)
            wait_until(lambda: srv.server.admission.idle.is_set())  # cut, never finished
            with pytest.raises(httpx2.RemoteProtocolError):
                for _ in chunks:
                    pass
        stopped.result(timeout=60)
    finally:
        srv.close()


def test_the_http_port_may_not_be_another_port(capsys: pytest.CaptureFixture[str]) -> None:
    line = config_error(capsys, "--http-port", "50051")
    assert "--http-port and --port are both 50051" in line
    line = config_error(capsys, "--http-port", "9000", "--metrics-port", "9000")
    assert "--http-port and --metrics-port are both 9000" in line
    assert "between 0 and 65535" in config_error(capsys, "--http-port", "70000")


def test_a_taken_http_port_says_so_in_one_line(cache_dir: Path, tmp_path: Path) -> None:
    assert_taken_port_named("--http-port", cache_dir, tmp_path)


def test_a_client_that_stops_reading_is_cut_after_the_idle_timeout(
    cache_dir: Path, tmp_path: Path, sdk: Sdk, caplog: pytest.LogCaptureFixture
) -> None:
    """A reply whose client reads nothing more fills what the sockets hold, its session waits,
    and after --idle-timeout-seconds the server ends it (the slot back, the body cut) rather
    than holding it for ever. Its log line says so, with the audio it was given."""
    caplog.set_level(logging.INFO, logger="voxlite.access")
    srv = ServerThread(base_config(cache_dir, tmp_path, http_port=0, idle_timeout_seconds=0.5))
    try:
        client = sdk(srv)
        text = " ".join([LONG_TEXT] * 4)  # far more audio than the sockets between us hold
        with client.audio.speech.with_streaming_response.create(
            model="tts-1", voice="alloy", input=text, response_format="pcm"
        ) as running:
            chunks = running.iter_bytes()
            assert next(chunks)
            wait_until(lambda: srv.server.admission.active == 0)
            with pytest.raises(httpx2.RemoteProtocolError):
                for _ in chunks:
                    pass
        wait_until(lambda: any(r.name == "voxlite.access" for r in caplog.records))
        [line] = [r for r in caplog.records if r.name == "voxlite.access"]
        fields = line.__dict__["fields"]
        assert fields["status"] == 408
        assert "idle for 0.5 s" in line.getMessage()
        assert "read the audio as it arrives" in line.getMessage()
        assert fields["audio_seconds"] > 0
        assert 0 < fields["ttfa_ms"] < fields["duration_ms"]
    finally:
        srv.close()


def test_a_client_reading_at_its_own_pace_is_not_idle(cache_dir: Path, tmp_path: Path) -> None:
    """Bug: a client that read the body steadily but slowly (a player at real-time pace) was
    cut as idle: one write of a long reply waited for the socket to drain for longer than
    --idle-timeout-seconds, and only finished writes counted. What the client takes in the
    meantime counts now. The client reads a little every few milliseconds (a stall of the
    whole idle timeout would be idleness), then the rest at once: the body is whole."""
    srv = ServerThread(base_config(cache_dir, tmp_path, http_port=0, idle_timeout_seconds=5))
    try:
        body = json.dumps({"input": " ".join([LONG_TEXT] * 4), "response_format": "pcm"})
        with socket.socket() as sock:
            # A small window: the server's writes wait on this client's reading.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", srv.server.http_port))
            sock.sendall(
                b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                + f"\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body.encode()
            )
            received = bytearray()
            slow_until = time.monotonic() + 15  # three idle timeouts of steady reading
            while time.monotonic() < slow_until:
                chunk = sock.recv(512)
                if not chunk:
                    break
                received += chunk
                time.sleep(0.02)  # a pace (a player's), not a verdict
            while chunk := sock.recv(65536):
                received += chunk
        head, _, rest = bytes(received).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        assert rest.endswith(b"\r\n0\r\n\r\n"), "the body was cut: no last chunk"
    finally:
        srv.close()


@pytest.mark.slow
def test_sigterm_drains_http_replies_and_exits_zero(
    cache_dir: Path, tmp_path: Path, sdk: Sdk
) -> None:
    """voxlite-server itself: on SIGTERM a reply under way (far more audio than the sockets
    hold, and unread) goes on while new requests get 503, is spoken to its end, and the
    process exits 0."""
    srv = ServerProcess(cache_dir, tmp_path, "--http-port", "0", "--grace-seconds", "120")
    try:
        wait_until(lambda: any("HTTP API and the page on" in line for line in srv.log))
        line = next(line for line in srv.log if "HTTP API and the page on" in line)
        port = re.search(r":(\d+)/", line)
        assert port is not None
        client = openai.OpenAI(
            api_key="unused", base_url=f"http://127.0.0.1:{port.group(1)}/v1", max_retries=0
        )
        text = " ".join([LONG_TEXT] * 4)
        with client.audio.speech.with_streaming_response.create(
            model="tts-1", voice="alloy", input=text, response_format="pcm"
        ) as running:
            chunks = running.iter_bytes()
            body = [next(chunks)]
            srv.proc.send_signal(signal.SIGTERM)
            srv.wait_for_health(health_pb2.HealthCheckResponse.NOT_SERVING)
            with pytest.raises(openai.InternalServerError) as refused:
                client.audio.speech.create(model="tts-1", voice="alloy", input=TEXT)
            assert refused.value.status_code == 503
            assert "shutting down" in error_of(refused)["message"]
            body += list(chunks)
        client.close()
        assert len(b"".join(body)) / 2 / RATE > 150  # the whole reply
        assert srv.wait(timeout=120) == 0
        access = [line for line in srv.log if "method=POST /v1/audio/speech" in line]
        assert any("status=200" in line for line in access), access
    finally:
        srv.close()


def test_every_interface_means_ipv4_and_ipv6(cache_dir: Path, tmp_path: Path, sdk: Sdk) -> None:
    """Bug: with the default --host [::] the HTTP port listened on IPv6 only, and OpenAI's SDK,
    which resolved localhost to 127.0.0.1, got "connection refused" where curl (::1) worked.
    Every interface is one socket for both, as gRPC's [::] is."""
    srv = ServerThread(base_config(cache_dir, tmp_path, host="[::]", http_port=0))
    try:
        port = srv.server.http_port
        for host in ("127.0.0.1", "[::1]"):
            client = sdk(srv, base_url=f"http://{host}:{port}/v1")
            with client.audio.speech.with_streaming_response.create(
                model="tts-1", voice="alloy", input="Hello.", response_format="pcm"
            ) as response:
                assert response.read()
    finally:
        srv.close()


def test_han_text_to_a_voice_that_cannot_read_it_is_a_400(
    http_server: ServerThread, sdk: Sdk
) -> None:
    """The HTTP API takes the path of a Synthesize call: Chinese text sent to the English
    voice is refused with what to set, never read out as letters."""
    with pytest.raises(openai.BadRequestError) as refused:
        sdk(http_server).audio.speech.create(
            model="tts-1", voice="en_US-joe-medium", input="你好。今天天气很好。"
        )
    error = error_of(refused)
    assert error["param"] == "input"  # Bug: null
    assert "language" in error["message"]
    assert "voice" in error["message"]
