"""TLS credentials and bearer-token checks for the server's gRPC port."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, NoReturn

import grpc

from ..call.tokens import ServerTokens
from ..settings.config import ServerConfig
from ..tls import Credentials, TlsFiles

Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]]
"""What an aio interceptor calls for the handler of a method (grpc's signature)."""

HEALTH_PREFIX = "/grpc.health.v1.Health/"
REFLECTION_PREFIXES = (
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.reflection.v1.ServerReflection/",
)


def server_credentials(files: TlsFiles) -> grpc.ServerCredentials:
    """TLS (mutual TLS with --tls-client-ca) that asks `files` at each handshake whether they
    changed: gRPC keeps its reading until handed a newer one."""
    given = files.current.version

    def fetch() -> grpc.ServerCertificateConfiguration | None:
        nonlocal given
        latest = files.latest()
        if latest.version == given:
            return None
        given = latest.version
        return _configuration(latest)

    return grpc.dynamic_ssl_server_credentials(
        _configuration(files.current), fetch, require_client_authentication=files.client_auth
    )


def _configuration(read: Credentials) -> grpc.ServerCertificateConfiguration:
    return grpc.ssl_server_certificate_configuration([(read.key, read.cert)], read.client_ca)


class TokenAuth(grpc.aio.ServerInterceptor):
    """Lets a call through when its `authorization: Bearer <token>` names a configured token.

    Health always passes (orchestrator probes carry no token); reflection too unless
    `protect_reflection`. Others get UNAUTHENTICATED with what to send.
    """

    def __init__(
        self, tokens: ServerTokens | Iterable[str], *, protect_reflection: bool = False
    ) -> None:
        self._tokens = tokens if isinstance(tokens, ServerTokens) else ServerTokens(tokens)
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
