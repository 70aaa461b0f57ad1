"""The OpenAI-compatible HTTP API on the server's event loop: speech streamed, models, voices and
the page to try them, with gRPC's admission, sessions, tokens and TLS."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import importlib.resources
import ipaddress
import json
import logging
import socket
import struct
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import aiohttp_cors
from aiohttp import HttpVersion11, web

from ..call.events import AudioEvent, FormatEvent
from ..call.opening import SessionOpener, opening_text, segments_of
from ..call.session import Session
from ..call.textlang import text_language
from ..call.tokens import ServerTokens, bearer_token, tenant
from ..call.watchdog import Watchdog
from ..capacity.admission import Admission, Caller
from ..engines.engine import language_matches
from ..engines.registry import VoiceRegistry
from ..errors import (
    AtCapacity,
    IdleTimeout,
    InvalidRequest,
    Overloaded,
    ServerFault,
    Unavailable,
    VoiceNotFound,
    VoxliteError,
    fault,
)
from ..ops.listen import EVERY_INTERFACE, bare_host, listening_socket
from ..ops.logs import ACCESS_LOG, request_id, served, serving
from ..settings.config import ServerConfig
from ..tls import TlsFiles, http_context
from .openai_audio import EVENTS_TYPE, EventsBody, Format, event
from .openai_request import MODELS, OPENAI_VOICES, BadField, Speech, read_speech
from .slow_clients import SlowClients, read_body

_LOG = logging.getLogger(__name__)
MAX_BODY = 1024 * 1024
"""Bytes a request body may have, as gRPC's largest message: --max-text-chars is far less."""
SHUTDOWN_TIMEOUT = 5.0
"""Seconds responses still being written get once the drain is over, as gRPC's STATUS_GRACE."""
CLOSING_TIMEOUT = 1.0
"""Seconds an event stream cut short gets to carry its error event to the client before its
connection is closed all the same (a client that reads nothing never takes it)."""
RETRY_AFTER = "1"
"""Seconds a refused caller is told to wait (429, 503): what "retry in a moment" means."""
API_PATHS = (
    "POST /v1/audio/speech, GET /v1/models, GET /v1/models/{model}, GET /v1/audio/voices, "
    "GET /v1/audio/models"
)
"""What pages of other origins may call (--cors-origins)."""
PATHS = f"{API_PATHS} and GET /"

_ERRORS: dict[type[VoxliteError], tuple[int, str, str]] = {
    InvalidRequest: (400, "invalid_request_error", "invalid_value"),
    VoiceNotFound: (404, "invalid_request_error", "voice_not_found"),
    Overloaded: (429, "rate_limit_error", "too_many_streams"),
    AtCapacity: (429, "rate_limit_error", "at_capacity"),
    Unavailable: (503, "server_error", "unavailable"),
    IdleTimeout: (408, "timeout_error", "idle_timeout"),
    ServerFault: (500, "server_error", "internal_error"),
}
"""Domain errors as HTTP statuses and OpenAI's error type and code: the one place."""


@dataclass
class HttpError(Exception):
    """An answer in OpenAI's error shape: {"error": {"message", "type", "param", "code"}}."""

    status: int
    message: str
    type: str = "invalid_request_error"
    param: str | None = None
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def response(self) -> web.Response:
        error = {"message": self.message, "type": self.type, "param": self.param}
        return web.json_response(
            {"error": error | {"code": self.code}}, status=self.status, headers=self.headers
        )


def http_error(error: VoxliteError, param: str | None = None) -> HttpError:
    """A domain error as its HTTP answer (the message already says what to fix)."""
    status, kind, code = 500, "server_error", "internal_error"
    for cls in type(error).__mro__:
        if cls in _ERRORS:
            status, kind, code = _ERRORS[cls]
            break
    if isinstance(error, BadField):
        param = error.param or None
    headers = {"Retry-After": RETRY_AFTER} if status in (429, 503) else {}
    return HttpError(status, str(error), kind, param, code, headers)


_AIOHTTP_SERVER = logging.getLogger("aiohttp.server")

REQUEST_ID = "X-Request-Id"
"""The header that names a request in the access log, as gRPC's x-request-id metadata."""


@web.middleware
async def _request_ids(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Every answer names its request: the caller's X-Request-Id (a proxy's) when sane, else a
    new one, sent back and on every line logged while it is served."""
    named = request_id(request.headers.get(REQUEST_ID))
    serving(named)  # the handler's task: its log lines, and served() for its access line
    response = await handler(request)
    if not response.prepared:  # a body streamed as it is made has sent it with its headers
        response.headers[REQUEST_ID] = named
    return response


@web.middleware
async def _errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Every refusal in OpenAI's error shape, aiohttp's own (no such path, body too large)
    included."""
    try:
        return await handler(request)
    except HttpError as exc:
        return exc.response()
    except VoxliteError as exc:
        return http_error(exc).response()
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        message = {
            404: f"no such path {request.path[:80]!r}: this server answers {PATHS}",
            405: f"{request.method} is not allowed on {request.path}: this server answers {PATHS}",
            413: f"the body is over {MAX_BODY} bytes: send less text in input",
            403: _preflight_refusal(request, exc),
        }.get(exc.status, exc.reason)
        # A 405 says which methods the path takes (RFC 9110), as aiohttp's own answer did.
        allow = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else {}
        code = exc.reason.lower().replace(" ", "_")
        return HttpError(exc.status, message, code=code, headers=allow).response()


_ORIGINS = web.AppKey("origins", tuple)
"""The app's --cors-origins."""


def _preflight_refusal(request: web.Request, exc: web.HTTPException) -> str:
    """What a refused CORS preflight lacked (the only 403 this server gives)."""
    origin = request.headers.get("Origin")
    origins = request.app.get(_ORIGINS, ())
    if origin is None:
        return "a CORS preflight (OPTIONS) carries the Origin of the page: browsers send it"
    if origin not in origins and "*" not in origins:
        return (
            f"pages of {origin[:80]!r} may not call this server: its --cors-origins names the "
            f"origins whose pages may call {API_PATHS}"
        )
    return f"{(exc.text or '').removeprefix('CORS preflight request failed: ')} ({API_PATHS})"


class _AnsweredBodies(logging.Filter):
    """Drops aiohttp's record of a request body it could not read (not in its
    Content-Encoding, broken chunks): _json answered it with a 400 already, and aiohttp, reading
    the rest of the body to keep the connection, logs the same failure as an unhandled
    exception with its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], web.RequestPayloadError))


def _peer(remote: str | None) -> str:
    """A client address as the gRPC peers read (per-address limits count both transports): an
    IPv4 client of the dual-stack socket ("::ffff:10.0.0.7") as IPv4, as gRPC names it."""
    if not remote:
        return ""
    with contextlib.suppress(ValueError):  # not an IP address: kept as it is
        address = ipaddress.ip_address(remote)
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            remote = str(address.ipv4_mapped)
    return f"ipv6:[{remote}]" if ":" in remote else f"ipv4:{remote}"


class SpeechHTTP:
    """The HTTP port: POST /v1/audio/speech through the sessions gRPC calls get, GET /v1/models,
    GET /v1/audio/voices, and the page at /."""

    def __init__(
        self,
        config: ServerConfig,
        opener: SessionOpener,
        registry: VoiceRegistry,
        admission: Admission,
        *,
        tokens: ServerTokens | None = None,
    ) -> None:
        self._config = config
        self._opener = opener
        self._registry = registry
        self._admission = admission
        self._auth = tokens
        page = importlib.resources.files("voxlite.service.http").joinpath("openai_page.html")
        self._page = page.read_bytes()
        if not any(isinstance(f, _AnsweredBodies) for f in _AIOHTTP_SERVER.filters):
            _AIOHTTP_SERVER.addFilter(_AnsweredBodies())
        self._slow = SlowClients(config.read_timeout_seconds)
        self._sweeper: asyncio.Task[None] | None = None
        app = web.Application(
            middlewares=[self._slow.middleware, _request_ids, _errors], client_max_size=MAX_BODY
        )
        app.router.add_get("/", self._index)
        app.router.add_post("/v1/audio/speech", self._speech)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/v1/models/{model}", self._model)
        app.router.add_get("/v1/audio/voices", self._voices)
        app.router.add_get("/v1/audio/models", self._audio_models)
        if config.cors_origins:
            _allow_origins(app, config.cors_origins)
        # A client gone mid-reply cancels its handler, so its synthesis stops at once.
        self._runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT
        )

    async def start(self, tls: TlsFiles | None = None) -> int:
        """Listen on the config's host and http_port (TLS from `tls`, the files gRPC's port
        presents); returns the port. Raises OSError."""
        config = self._config
        context = None if tls is None else http_context(tls)
        await self._runner.setup()
        host = bare_host(config.host)
        site: web.BaseSite
        try:
            if host == EVERY_INTERFACE:
                # Every interface as gRPC's port takes it (listen.py): a client resolving
                # localhost to 127.0.0.1 finds it too (asyncio's own sockets for "::" are IPv6
                # only), and a kernel without IPv6 gets 0.0.0.0.
                sock = listening_socket(host, config.http_port or 0)
                sock.setblocking(False)
                site = web.SockSite(self._runner, sock, ssl_context=context)
            else:
                site = web.TCPSite(self._runner, host, config.http_port or 0,
                                   ssl_context=context, reuse_port=False)  # fmt: skip
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            if exc.errno == errno.EADDRINUSE:
                raise OSError(
                    f"port {config.http_port} (--http-port) is already in use on {config.host}: "
                    "stop what holds it, or choose another port with --http-port (or "
                    "VOXLITE_HTTP_PORT)"
                ) from None
            raise OSError(
                f"cannot serve the HTTP API on {config.host}:{config.http_port}: {exc.strerror} "
                "(check --host and --http-port)"
            ) from None
        server = self._runner.server
        assert server is not None  # set up above
        self._sweeper = asyncio.ensure_future(self._slow.run(lambda: server.connections))
        return int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        """Close the port; answers still being written get SHUTDOWN_TIMEOUT seconds."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self._runner.cleanup()

    # -- handlers --------------------------------------------------------------------------

    async def _index(self, request: web.Request) -> web.Response:
        # Nothing outside this page: inline script and style, and requests to this server only.
        policy = (
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "connect-src 'self'"
        )
        return web.Response(
            body=self._page,
            content_type="text/html",
            charset="utf-8",
            headers={"Content-Security-Policy": policy},
        )

    async def _models(self, request: web.Request) -> web.Response:
        self._authorize(request)
        return web.json_response({"object": "list", "data": [_model(m) for m in MODELS]})

    async def _model(self, request: web.Request) -> web.Response:
        """OpenAI's retrieve: one of the models listed, else a 404 naming them."""
        self._authorize(request)
        name = request.match_info["model"]
        if name not in MODELS:
            raise HttpError(
                404,
                f"no model {name[:80]!r} is listed here: GET /v1/models lists {', '.join(MODELS)}"
                " (the speech API takes any model name: the voice decides the engine)",
                param="model",
                code="model_not_found",
            )
        return web.json_response(_model(name))

    async def _audio_models(self, request: web.Request) -> web.Response:
        """Open WebUI's list of speech models for a server that is not OpenAI's."""
        self._authorize(request)
        return web.json_response({"models": [{"id": m, "name": m} for m in MODELS]})

    async def _voices(self, request: web.Request) -> web.Response:
        """Open WebUI's shape ("voices": each voice's id and name), each voice described, the
        same list in "data"."""
        self._authorize(request)
        registry = self._registry
        language = request.query.get("language", "")
        voices = [v for v in registry.voices() if language_matches(v.info.language, language)]
        data = [
            {
                "id": v.info.name,
                "name": v.info.name,
                "language": v.info.language,
                "family": v.info.family,
                "gender": v.info.gender,
                "default": v.info.name == registry.default_name,
                "language_default": registry.speaks_for(v),
            }
            for v in voices
        ]
        return web.json_response(
            {
                "voices": data,
                "data": data,
                "loading": registry.loading(),
                "openai_voices": list(OPENAI_VOICES),
            }
        )

    async def _speech(self, request: web.Request) -> web.StreamResponse:
        started = time.monotonic()
        log = _Access(served() or "", _peer(request.remote), started)
        try:
            who = self._authorize(request)
            speech = read_speech(await self._json(request), self._config.max_text_chars)
            log.voice = speech.voice or speech.language or None
            self._admission.check_open()
            caller = Caller(_peer(request.remote), who)
            # The path of a Synthesize call: the voice from the first segment's script when
            # none is named, the queue at capacity, a text all in the phrase cache let in.
            segments = segments_of(speech.input)
            first = opening_text(speech.input, segments)
            try:
                session, slot = await self._opener.open(caller, speech, first, segments)
            except VoiceNotFound as exc:
                raise _voice_error(speech, exc, first) from None
            except InvalidRequest as exc:  # the fields were read above: the input's script
                raise http_error(exc, "input") from None
            try:
                return await self._stream(request, session, speech, log)
            finally:
                self._admission.leave(slot)
        except HttpError as exc:
            log.status = exc.status
            raise
        except VoxliteError as exc:
            log.status = http_error(exc).status
            raise
        except asyncio.CancelledError:
            log.status = 499  # the client left (nginx's word for it)
            raise
        finally:
            log.write()

    async def _stream(
        self, request: web.Request, session: Session, speech: Speech, log: _Access
    ) -> web.StreamResponse:
        """The session's audio as the body, written as it comes: the status and headers go
        with the first audio, so that any refusal before it is still a JSON error."""
        log.session = session
        fmt: Format = speech.format
        body = fmt.body()
        headers = {"Content-Type": fmt.media_type}
        if speech.events:
            body = EventsBody(body, len(speech.input))
            headers = {"Content-Type": EVENTS_TYPE, "Cache-Control": "no-cache"}
        response: web.StreamResponse | None = None
        watchdog = Watchdog(self._config.idle_timeout_seconds or None)

        async def send(data: bytes, end: bool = False) -> web.StreamResponse:
            nonlocal response
            if response is None:
                response = web.StreamResponse(
                    headers=headers
                    | {"X-Voxlite-Voice": log.voice or "", REQUEST_ID: log.request_id}
                )
                if request.version >= HttpVersion11:
                    # HTTP/1.0 has no chunks: its body ends as the connection closes (nginx's
                    # proxy_pass speaks 1.0 unless told proxy_http_version 1.1).
                    response.enable_chunked_encoding()
                await response.prepare(request)
            try:
                if data:
                    await response.write(data)
                if end:
                    await response.write_eof()
            except ConnectionResetError:
                # The client left between two writes (or before the end): as when aiohttp
                # cancels the handler, not an error of aiohttp's with a traceback and a 500.
                raise asyncio.CancelledError from None
            return response

        try:
            session.speak_whole(speech.input)
            reading = _Reading(request.transport)

            def busy() -> bool:
                took = reading()  # at every look, so that each compares with the one before
                return session.working or took

            watchdog.watch(busy, unread=lambda: session.unread)
            async with contextlib.aclosing(session.events()) as events:
                async for event in events:
                    if isinstance(event, FormatEvent):
                        log.voice = event.voice
                    elif isinstance(event, AudioEvent):
                        log.audio_ms += event.duration_ms
                        if data := body.encode(event.data):
                            await send(data)
                    watchdog.touch()
            done = await send(body.finish(), end=True)
            log.status = 200
            return done
        except (OSError, HttpError, web.HTTPException):
            raise  # the client gone, or an answer already made
        except Exception as exc:
            error = exc if isinstance(exc, VoxliteError) else fault(exc)
            if response is None:  # before any audio: the input's ("says nothing for")
                if isinstance(error, InvalidRequest):
                    raise http_error(error, "input") from None
                raise error from None
            if speech.events and await _end_with_error(response, error):
                log.status, log.cut = http_error(error).status, str(error)
                return response
            return _cut(request, response, error, log)
        except asyncio.CancelledError:
            if watchdog.error is None:
                raise
            if response is None:
                raise watchdog.error from None
            return _cut(request, response, watchdog.error, log)
        finally:
            watchdog.stop()

    # -- requests --------------------------------------------------------------------------

    def _authorize(self, request: web.Request) -> str | None:
        """The caller's tenant with tokens on (None without); raises 401 with what to send."""
        if self._auth is None:
            return None
        values = request.headers.getall("Authorization", [])
        metadata = [("authorization", v) for v in values]

        def refused(message: str, code: str) -> HttpError:
            return HttpError(401, message, code=code, headers={"WWW-Authenticate": "Bearer"})

        if not values:
            raise refused(
                "this server needs a token: send the header 'Authorization: Bearer <token>' "
                "(the OpenAI SDK's api_key, or OPENAI_API_KEY)",
                "missing_api_key",
            )
        if len(values) > 1:
            raise refused(f"send one Authorization header, not {len(values)}", "invalid_api_key")
        if bearer_token(values[0]) is None:
            raise refused(
                "the Authorization header must be 'Bearer <token>': the scheme Bearer, a space, "
                "the token and nothing else (RFC 6750)",
                "invalid_api_key",
            )
        if self._auth.problem(metadata) is not None:
            raise refused(
                "the bearer token is not valid for this server: check the api_key you gave",
                "invalid_api_key",
            )
        return tenant(metadata)

    async def _json(self, request: web.Request) -> object:
        timeout = self._config.read_timeout_seconds
        try:
            raw = await read_body(request, timeout)
        except web.RequestPayloadError as exc:  # a Content-Encoding the body is not in
            why = " ".join(str(getattr(exc.__cause__, "message", exc)).split())
            raise BadField(
                "",
                f"the body cannot be read ({why}): send it as its Content-Encoding says, "
                "or without that header",
            ) from None
        if raw is None:
            raise HttpError(
                408,
                f"the body did not arrive within {timeout:g} s (--read-timeout-seconds): send "
                "the whole body with the request",
                code="timeout",
                headers={"Connection": "close"},
            )
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadField(
                "", f"the body is not JSON ({exc}): send a JSON object with input and voice"
            ) from None
        except RecursionError:
            raise BadField(
                "",
                "the body nests arrays or objects too deep: send a flat JSON object with "
                "input and voice",
            ) from None


def _voice_error(speech: Speech, error: VoiceNotFound, first: str) -> HttpError:
    """Which field a voice not found is about: with neither voice nor language named, the
    language came from the script of the input's first segment, which the caller never
    asked for (the message says so)."""
    if speech.voice:
        return http_error(error, "voice")
    if not speech.language and text_language(first):
        return http_error(error, "input")
    return http_error(error, "language")


async def _end_with_error(response: web.StreamResponse, error: VoxliteError) -> bool:
    """End an event stream cut short with an error event in place of speech.audio.done, in
    OpenAI's error shape; False when the client does not take it in time (then the connection
    is cut, as a body's is)."""
    answer = http_error(error)
    fields = {"message": answer.message, "type": answer.type, "param": None, "code": answer.code}

    async def close() -> None:
        await response.write(event({"type": "error", "error": fields}))
        await response.write_eof()

    try:
        await asyncio.wait_for(close(), CLOSING_TIMEOUT)
    except (OSError, asyncio.TimeoutError):  # the client gone, or reading nothing
        return False
    return True


def _cut(
    request: web.Request, response: web.StreamResponse, error: VoxliteError, log: _Access
) -> web.StreamResponse:
    """End a body already under way without its last chunk: the client sees an incomplete
    transfer, never a short reply passed off as whole."""
    log.status = http_error(error).status
    log.cut = str(error)
    if request.transport is not None:
        request.transport.abort()
    return response


CORS_MAX_AGE = 600
"""Seconds a browser may reuse a preflight's answer: one OPTIONS per page and path in ten
minutes, not one per request."""


_EXPOSED = ("X-Voxlite-Voice", REQUEST_ID, "Retry-After", "WWW-Authenticate")
"""The headers a page of another origin may read."""


def _allow_origins(app: web.Application, origins: tuple[str, ...]) -> None:
    """Let pages of `origins` ("*": any) call the API from a browser: preflights answered, and
    each reply (errors included) marked readable by them, its headers (X-Voxlite-Voice,
    X-Request-Id, Retry-After) too. A page sends its token itself, as any client: no cookies, no
    credentials mode. The page at / is served from this origin and needs none of it."""
    app[_ORIGINS] = origins
    cors = aiohttp_cors.setup(app)
    for resource in list(app.router.resources()):
        if resource.canonical == "/":
            continue
        # Its __new__ carries no annotations (the package's only untyped call here).
        options = aiohttp_cors.ResourceOptions(  # type: ignore[no-untyped-call,unused-ignore]
            allow_methods=sorted({route.method for route in resource} - {"HEAD"}),
            allow_headers="*",  # Authorization, Content-Type, and the SDKs' own (x-stainless-*)
            expose_headers=_EXPOSED,
            max_age=CORS_MAX_AGE,
        )
        cors.add(resource, dict.fromkeys(origins, options))
    app.on_response_prepare.append(_readable_refusals)


async def _readable_refusals(request: web.Request, response: web.StreamResponse) -> None:
    """A 404 or a 405 (no route, so aiohttp_cors marks none) readable by the pages of the
    origins too, as every other reply is."""
    origin = request.headers.get("Origin")
    origins = request.app[_ORIGINS]
    if (
        origin is None
        or "Access-Control-Allow-Origin" in response.headers
        or request.method == "OPTIONS"
        or (origin not in origins and "*" not in origins)
    ):
        return
    response.headers["Access-Control-Allow-Origin"] = origin
    response.headers["Access-Control-Expose-Headers"] = ",".join(_EXPOSED)
    response.headers.add("Vary", "Origin")


class _Reading:
    """Whether the client took some of the body since last asked: the bytes it acknowledged
    (Linux's TCP_INFO, tcpi_bytes_acked) grew. A write waiting for a slow but steady reader (a
    player at real-time pace) may take longer than the idle timeout, the kernel asking for more
    only once a large part of its queue has gone: that is the client's pace, not its idleness.
    Where the count is unknown (another system), finished writes alone count, as before."""

    def __init__(self, transport: asyncio.Transport | None) -> None:
        self._socket = None if transport is None else transport.get_extra_info("socket")
        self._acked = self._count()

    def _count(self) -> int:
        if self._socket is None or _TCP_INFO is None:
            return 0
        try:
            info = self._socket.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, _ACKED_END)
        except OSError:  # closed meanwhile
            return 0
        return int(_ACKED.unpack_from(info, _ACKED_AT)[0]) if len(info) >= _ACKED_END else 0

    def __call__(self) -> bool:
        acked = self._count()
        took = acked > self._acked
        self._acked = acked
        return took


_TCP_INFO = getattr(socket, "TCP_INFO", None)
# struct tcp_info's tcpi_bytes_acked: a u64 at byte 120 (Linux 4.1 and later).
_ACKED = struct.Struct("=Q")
_ACKED_AT = 120
_ACKED_END = _ACKED_AT + _ACKED.size


def _model(name: str) -> dict[str, object]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "voxlite"}


@dataclass
class _Access:
    """One access-log line per speech request, in the fields of gRPC's (calls.py)."""

    request_id: str
    peer: str
    started: float
    voice: str | None = None
    status: int = 500
    audio_ms: float = 0.0
    """The audio handed to the body so far, also for a body cut part way."""
    session: Session | None = None
    """Once the request has one: its first audio's time."""
    cut: str | None = None

    def write(self) -> None:
        if not ACCESS_LOG.isEnabledFor(logging.INFO):
            return
        first_audio_ms = self.session.first_audio_ms if self.session is not None else None
        fields = {
            "request_id": self.request_id,
            "method": "POST /v1/audio/speech",
            "voice": self.voice,
            "status": self.status,
            # "-" when it sent none, as gRPC's line
            "audio_seconds": round(self.audio_ms / 1000, 3) if self.audio_ms else None,
            "ttfa_ms": None if first_audio_ms is None else round(first_audio_ms, 1),
            "duration_ms": round((time.monotonic() - self.started) * 1000, 1),
            "peer": self.peer,
        }
        text = " ".join(f"{k}={'-' if v is None else v}" for k, v in fields.items())
        if self.cut:
            text += f" cut: {self.cut}"
        ACCESS_LOG.info("%s", text, extra={"fields": fields})
