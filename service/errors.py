"""Domain errors; the gRPC layer maps each to a status code in one place (status.py)."""

from __future__ import annotations

import logging

_LOG = logging.getLogger(__name__)


class VoxliteError(Exception):
    """Base of all errors the server reports to callers. The message says what to fix."""


class InvalidRequest(VoxliteError):
    """A request field is missing, out of range or in the wrong order (INVALID_ARGUMENT)."""


class VoiceNotFound(VoxliteError):
    """The named voice does not exist, or no voice speaks the language asked for (NOT_FOUND)."""


class Overloaded(VoxliteError):
    """A server or stream limit is reached (RESOURCE_EXHAUSTED)."""


class AtCapacity(Overloaded):
    """The machine is at capacity for now (RESOURCE_EXHAUSTED): worth waiting a moment."""


class Unavailable(VoxliteError):
    """The server is starting or draining (UNAVAILABLE)."""


class IdleTimeout(VoxliteError):
    """A stream sent and received nothing for the idle timeout (DEADLINE_EXCEEDED)."""


class ModelError(VoxliteError):
    """A voice file is missing, corrupt or not a Piper graph. Names the file and the reason."""

    def __init__(self, path: object, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


class ServerFault(VoxliteError):
    """A fault of the server's own, not of the request (INTERNAL, HTTP 500): a bug. Names the
    exception; the log has its traceback."""


def fault(exc: Exception) -> ServerFault:
    """`exc`, which no code of the server expected, logged with its traceback, as its caller is
    told of it (not grpc's UNKNOWN "Unexpected <class ...>", nor aiohttp's bare 500)."""
    _LOG.error("a call failed in the server", exc_info=exc)
    return ServerFault(
        f"the server failed on this call ({type(exc).__name__}), a fault of its own: its log "
        "has the details (report them with the text sent, please)"
    )
