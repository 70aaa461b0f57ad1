"""TLS credentials and bearer-token checks for the server."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, NoReturn

import grpc

from ..settings.config import ServerConfig
from ..settings.options import B64TOKEN, is_b64token

HEALTH_PREFIX = "/grpc.health.v1.Health/"
REFLECTION_PREFIXES = (
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.reflection.v1.ServerReflection/",
)
_CREDENTIALS = re.compile(rf"Bearer +({B64TOKEN.pattern})", re.ASCII | re.IGNORECASE)
"""RFC 6750 section 2.1: credentials = "Bearer" 1*SP b64token. ABNF's quoted strings are
case-insensitive (RFC 5234 section 2.3), and so is an auth-scheme (RFC 9110 section 11.1);
nothing else is allowed around the token (re.ASCII: no Unicode case folding either)."""


def server_credentials(config: ServerConfig) -> grpc.ServerCredentials | None:
    """TLS (and mutual TLS with `tls_client_ca`) from the config's PEM files; None: plaintext."""
    if config.tls_cert is None or config.tls_key is None:
        return None
    ca = config.tls_client_ca.read_bytes() if config.tls_client_ca else None
    return grpc.ssl_server_credentials(
        [(config.tls_key.read_bytes(), config.tls_cert.read_bytes())],
        root_certificates=ca,
        require_client_auth=ca is not None,
    )


class TokenAuth(grpc.aio.ServerInterceptor):
    """Lets a call through when its `authorization: Bearer <token>` names a configured token.

    Health always passes (orchestrator probes carry no token); reflection too unless
    `protect_reflection`. Others get UNAUTHENTICATED with what to send.
    """

    def __init__(self, tokens: Iterable[str], *, protect_reflection: bool = False) -> None:
        tokens = list(tokens)
        if not tokens:
            raise ValueError("TokenAuth needs at least one token")
        if not all(is_b64token(t) for t in tokens):
            raise ValueError("a token that no 'Bearer <token>' can carry (RFC 6750 b64token)")
        # Fixed-length digests: comparing them takes the same time whatever a guess's length.
        self._digests = [_digest(t.encode()) for t in tokens]
        self._open = (
            (HEALTH_PREFIX,) if protect_reflection else (HEALTH_PREFIX, *REFLECTION_PREFIXES)
        )

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or details.method.startswith(self._open):
            return handler  # unknown methods stay UNIMPLEMENTED
        problem = self.problem(details.invocation_metadata)
        if problem is None:
            return handler
        return _refusal(problem)

    def problem(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
        """Why the call's metadata is not authorized, or None when it is."""
        values = [v for k, v in metadata or () if k == "authorization"]
        if not values:
            return (
                "this server needs a token: send the metadata 'authorization: Bearer <token>' "
                "(voxlite --token, VOXLITE_TOKEN, or Client(token=...))"
            )
        if len(values) > 1:
            return f"send one authorization metadata, not {len(values)}"
        token = bearer_token(values[0])
        if token is None:
            return (
                "the authorization metadata must be 'Bearer <token>': the scheme Bearer, a "
                "space, the token and nothing else (RFC 6750)"
            )
        presented = _digest(token.encode())
        # Compare with every token, without stopping at a match: the time taken does not
        # depend on which token (if any) matched.
        matched = False
        for digest in self._digests:
            matched |= hmac.compare_digest(presented, digest)
        if not matched:
            return "the bearer token is not valid for this server: check --token or VOXLITE_TOKEN"
        return None


def bearer_token(value: str | bytes) -> str | None:
    """The token of an authorization value written as RFC 6750 says; None for any other."""
    text = value if isinstance(value, str) else value.decode("latin-1")
    credentials = _CREDENTIALS.fullmatch(text)
    return None if credentials is None else credentials.group(1)


def describe_auth(config: ServerConfig) -> str:
    """One line for the start-up log: whether calls need a token, and which ones."""
    transport = "TLS" if config.tls_cert else "plaintext"
    if not config.auth_tokens:
        return (
            f"auth off: every call is served without a token, over {transport} "
            "(--auth-tokens-file or VOXLITE_AUTH_TOKENS to ask for one)"
        )
    protected = ["voxlite.tts.v1.TextToSpeechService"]
    open_ = [HEALTH_PREFIX.strip("/")]
    if config.reflection and config.reflection_auth:
        protected.append("reflection")
    elif config.reflection:
        open_.append("reflection (--reflection-auth to protect it)")
    count = len(config.auth_tokens)
    return (
        f"auth on, {count} token{'s' if count > 1 else ''}: a bearer token is needed for "
        f"{' and '.join(protected)}; open to all: {', '.join(open_)}; over {transport}"
        + ("" if config.tls_cert else " (tokens readable on the network path)")
    )


def tenant(metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
    """Who a call's bearer token says it is, as the first 16 hex digits of its SHA-256 (per
    tenant limits and caches, never the token itself); None without one. Called once
    TokenAuth has let the call through, so the token is a configured one."""
    values = [v for k, v in metadata or () if k == "authorization"]
    token = bearer_token(values[0]) if len(values) == 1 else None
    return None if token is None else _digest(token.encode()).hex()[:16]


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


def _refusal(message: str) -> grpc.RpcMethodHandler:
    """A handler that ends any call with UNAUTHENTICATED. It never reads a request, so one
    stream-stream handler fits unary and streaming methods alike (arity is not on the wire)."""

    async def refuse(
        request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> NoReturn:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)
        raise AssertionError("context.abort() returned")  # it raises, always

    return grpc.stream_stream_rpc_method_handler(refuse)
