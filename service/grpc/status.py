"""Domain errors to gRPC status codes, in one place."""

from __future__ import annotations

from typing import Any, NoReturn

import grpc

from .. import errors
from ..errors import VoxliteError

_STATUS: dict[type[VoxliteError], grpc.StatusCode] = {
    errors.InvalidRequest: grpc.StatusCode.INVALID_ARGUMENT,
    errors.VoiceNotFound: grpc.StatusCode.NOT_FOUND,
    errors.Overloaded: grpc.StatusCode.RESOURCE_EXHAUSTED,
    errors.Unavailable: grpc.StatusCode.UNAVAILABLE,
    errors.IdleTimeout: grpc.StatusCode.DEADLINE_EXCEEDED,
    errors.ServerFault: grpc.StatusCode.INTERNAL,
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
