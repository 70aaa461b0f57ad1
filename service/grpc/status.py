"""Domain errors to gRPC status codes, in one place."""

from __future__ import annotations

from typing import Any, NoReturn

import grpc

from ..errors import (
    IdleTimeout,
    InvalidRequest,
    Overloaded,
    Unavailable,
    VoiceNotFound,
    VoiceUnavailable,
    VoxliteError,
)

_STATUS: dict[type[VoxliteError], grpc.StatusCode] = {
    InvalidRequest: grpc.StatusCode.INVALID_ARGUMENT,
    VoiceNotFound: grpc.StatusCode.NOT_FOUND,
    VoiceUnavailable: grpc.StatusCode.FAILED_PRECONDITION,
    Overloaded: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Unavailable: grpc.StatusCode.UNAVAILABLE,
    IdleTimeout: grpc.StatusCode.DEADLINE_EXCEEDED,
}


def status_of(error: VoxliteError) -> grpc.StatusCode:
    for cls in type(error).__mro__:
        if cls in _STATUS:
            return _STATUS[cls]
    return grpc.StatusCode.INTERNAL


async def abort(context: grpc.aio.ServicerContext[Any, Any], error: VoxliteError) -> NoReturn:
    """End the call with `error`'s status and its message (which says what to fix)."""
    await context.abort(status_of(error), str(error))
    raise AssertionError("context.abort() returned")  # it raises, always
