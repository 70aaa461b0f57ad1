"""The exceptions the client raises instead of grpc.RpcError."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import grpc


class VoxliteError(Exception):
    """A call failed; `.code` is the gRPC status code, `.details` the server's message
    (which says what to fix). Raised when a call starts and in the middle of its events; the
    subclass tells the kind of failure:

        VoxliteError              any other status (INTERNAL, UNIMPLEMENTED, UNKNOWN, ...)
        ├── InvalidRequest        INVALID_ARGUMENT: a field is out of range or missing (and
        │                         RESOURCE_EXHAUSTED for a request over gRPC's size limit)
        ├── VoiceNotFound         NOT_FOUND: no voice (or speaker, or language) by that name
        ├── FailedPrecondition    FAILED_PRECONDITION: the server cannot do it in its state
        ├── Overloaded            RESOURCE_EXHAUSTED: a server or stream limit; retry later
        ├── Unavailable           UNAVAILABLE: cannot connect, or the server starts or drains
        ├── DeadlineExceeded      DEADLINE_EXCEEDED: the call's `timeout` ran out
        ├── Cancelled             CANCELLED: the call was cancelled
        └── Unauthenticated       UNAUTHENTICATED: missing or wrong credentials
    """

    status: ClassVar[grpc.StatusCode | None] = None

    def __init__(self, details: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(details)
        self.code: grpc.StatusCode = code or self.status or grpc.StatusCode.UNKNOWN
        self.details = details

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code}, {self.details!r})"


class InvalidRequest(VoxliteError):
    """A request field is missing, out of range or in the wrong order (INVALID_ARGUMENT)."""

    status = grpc.StatusCode.INVALID_ARGUMENT


class VoiceNotFound(VoxliteError):
    """The named voice or speaker does not exist (NOT_FOUND)."""

    status = grpc.StatusCode.NOT_FOUND


class FailedPrecondition(VoxliteError):
    """The server cannot do what was asked in its present state (FAILED_PRECONDITION; a voxlite
    server does not send it: a voice that failed to load is VoiceNotFound, with the reason)."""

    status = grpc.StatusCode.FAILED_PRECONDITION


class Overloaded(VoxliteError):
    """A server or stream limit is reached: retry later or elsewhere (RESOURCE_EXHAUSTED)."""

    status = grpc.StatusCode.RESOURCE_EXHAUSTED


class Unavailable(VoxliteError):
    """The server cannot be reached, or is starting or shutting down (UNAVAILABLE)."""

    status = grpc.StatusCode.UNAVAILABLE


class DeadlineExceeded(VoxliteError):
    """The call did not finish within its timeout (DEADLINE_EXCEEDED)."""

    status = grpc.StatusCode.DEADLINE_EXCEEDED


class Cancelled(VoxliteError):
    """The call was cancelled (CANCELLED)."""

    status = grpc.StatusCode.CANCELLED


class Unauthenticated(VoxliteError):
    """The call carried no valid credentials (UNAUTHENTICATED)."""

    status = grpc.StatusCode.UNAUTHENTICATED


_BY_CODE: dict[grpc.StatusCode, type[VoxliteError]] = {
    cls.status: cls
    for cls in (
        InvalidRequest,
        VoiceNotFound,
        FailedPrecondition,
        Overloaded,
        Unavailable,
        DeadlineExceeded,
        Cancelled,
        Unauthenticated,
    )
    if cls.status is not None
}


_CUT_SHORT = "Stream removed"
"""gRPC's message for a response stream that ended without a status (no trailers)."""
_CHANNEL_CLOSED = "Channel closed"
"""In gRPC's message for a call whose channel this client closed while it ran (close()): the
caller's doing, not a server gone away ("Stream removed (Channel closed!)")."""
_TOO_LARGE = "Received message larger than max"
"""gRPC's message for a request over the server's grpc.max_receive_message_length (1 MiB), sent
as RESOURCE_EXHAUSTED before the server reads it."""
_CORE_INTERNAL = "Internal error from Core"
"""grpc.aio's message in place of the status when a write met the call's end (grpc/grpc#36066)."""


def ended_after_summary(error: grpc.RpcError, summary: bool) -> bool:
    """A stream that ended with CANCELLED right after its Summary (the last event) is complete.

    The server ends a stream that the client has not half-closed (a drain, an idle timeout)
    with its status and then RST_STREAM(NO_ERROR); HAProxy may pass that on as RST_STREAM(CANCEL)
    before the status, which gRPC reports as CANCELLED (grpc.aio, when a write meets that end:
    INTERNAL "Internal error from Core"). Everything was received."""
    rpc: Any = error
    code = rpc.code() if callable(getattr(rpc, "code", None)) else None
    details = rpc.details() if callable(getattr(rpc, "details", None)) else ""
    overwritten = code == grpc.StatusCode.INTERNAL and details == _CORE_INTERNAL
    return summary and (code == grpc.StatusCode.CANCELLED or overwritten)


def ended_by_server() -> Unavailable:
    """What sending on a stream that the server has ended raises (its Summary came before the
    client closed it: the server drains, and the stream had spoken all it held)."""
    return Unavailable(
        "the server ended this stream (it is shutting down) after speaking all it held: send "
        "the rest on a new stream, which goes to another replica"
    )


_CODES = {code.value[0]: code for code in grpc.StatusCode}


def cancelled_here(call: Any) -> Cancelled | None:
    """What an asyncio read of `call` raises in place of asyncio.CancelledError when the call,
    not the reading task, was cancelled (cancel() from another task, the client closed): a
    task nobody cancelled must not end as cancelled. None where the task itself is being
    cancelled (or Python 3.10 cannot tell), which must go on as asyncio's."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    if not call.cancelled() or cancelling is None or cancelling():
        return None
    return Cancelled("the call was cancelled: cancel(), or its client was closed")


def delivered_status(call: Any) -> tuple[grpc.StatusCode, str] | None:
    """The status a finished grpc.aio call holds now: read as the call is done (a done
    callback), it is the one the server sent. grpc.aio may later replace it with INTERNAL
    "Internal error from Core", when one of the call's writes fails as the server ends it
    (grpc/grpc#36066), and offers no other way to keep it than its own record, read here.
    None where that record is not there (another grpcio)."""
    status: Any = getattr(getattr(call, "_cython_call", None), "_status", None)
    try:
        return _CODES[status.code()], str(status.details())
    except (AttributeError, KeyError, TypeError):
        return None


def grpc_aio_own(status: tuple[grpc.StatusCode, str] | None) -> bool:
    """Whether `status` is grpc.aio's stand-in for the server's (grpc/grpc#36066), or none."""
    return status is None or status == (grpc.StatusCode.INTERNAL, _CORE_INTERNAL)


def from_rpc_error(
    error: grpc.RpcError, *delivered: tuple[grpc.StatusCode, str] | None
) -> VoxliteError:
    """The exception for a failed call (sync or asyncio), keeping its code and message.

    A call whose stream ended without a status was cut off on the way, not answered: a proxy
    ends it so when the replica behind it dies mid-call (HAProxy sends an empty DATA frame
    with END_STREAM, which gRPC reports as UNKNOWN "Stream removed"; on a stream the caller
    has not half-closed, then RST_STREAM(CANCEL) too, which gRPC reports as CANCELLED "Stream
    removed"). That is the same failure as a connection lost under a direct call, and as
    retryable: Unavailable, code UNAVAILABLE. A call the caller cancels says otherwise.
    `delivered`: the statuses the call held (delivered_status), one of which is the server's
    where grpc.aio replaced it with its own."""
    rpc: Any = error  # grpc.RpcError itself declares no code(); the raised calls all have it
    code = rpc.code() if callable(getattr(rpc, "code", None)) else grpc.StatusCode.UNKNOWN
    details = rpc.details() if callable(getattr(rpc, "details", None)) else str(error)
    if code == grpc.StatusCode.INTERNAL and details == _CORE_INTERNAL:
        sent = [d for d in delivered if d is not None and d[1] != _CORE_INTERNAL]
        code, details = sent[0] if sent else (code, details)
    if code == grpc.StatusCode.CANCELLED and _CHANNEL_CLOSED in (details or ""):
        return Cancelled(f"the call was cancelled: its client was closed ({details})")
    cut_codes = (grpc.StatusCode.UNKNOWN, grpc.StatusCode.CANCELLED)
    if code in cut_codes and (details or "").startswith(_CUT_SHORT):
        return Unavailable(
            f"the call was cut off before the server finished it ({details}): its server "
            "went away, e.g. a replica behind a proxy stopped; try again",
            grpc.StatusCode.UNAVAILABLE,
        )
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED and _TOO_LARGE in (details or ""):
        # No limit of the server's at the moment: this request will never be taken, and a
        # caller that retries Overloaded would send it for ever.
        return InvalidRequest(
            f"the request is over the server's limit on one message ({details}): its text is "
            "far over the server's limit on characters: split it into several requests or use "
            "StreamingSynthesize, sending the text in pieces",
            code,
        )
    return _BY_CODE.get(code, VoxliteError)(details or code.name, code)
