"""TLS credentials and bearer-token checks for the server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, NoReturn

import grpc

from ..call.tokens import Tokens
from ..settings.config import ServerConfig

Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]]
"""What an aio interceptor calls for the handler of a method (grpc's signature)."""

HEALTH_PREFIX = "/grpc.health.v1.Health/"
REFLECTION_PREFIXES = (
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.reflection.v1.ServerReflection/",
)


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
        self._tokens = Tokens(tokens)
        self._open = (
            (HEALTH_PREFIX,) if protect_reflection else (HEALTH_PREFIX, *REFLECTION_PREFIXES)
        )

    async def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
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
        return self._tokens.problem(metadata)


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


def _refusal(message: str) -> grpc.RpcMethodHandler:
    """A handler that ends any call with UNAUTHENTICATED. It never reads a request, so one
    stream-stream handler fits unary and streaming methods alike (arity is not on the wire)."""

    async def refuse(
        request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> NoReturn:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)
        raise AssertionError("context.abort() returned")  # it raises, always

    return grpc.stream_stream_rpc_method_handler(refuse)
