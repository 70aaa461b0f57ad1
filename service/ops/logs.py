"""Logging set-up: readable lines, or one JSON object per line (--log-format json)."""

from __future__ import annotations

import contextvars
import json
import logging
import secrets
import sys
from datetime import datetime, timezone
from typing import Any

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
ACCESS_LOG = logging.getLogger("voxlite.access")
"""One line per call, from either edge (gRPC, HTTP)."""
_REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "voxlite_request_id", default=None
)


def request_id(given: str | None) -> str:
    """The caller's request id when it is a sane one (printable, no spaces, at most 128
    characters: it goes into log lines), else a new random one."""
    if given is not None and 0 < len(given) <= 128 and all("!" <= c <= "~" for c in given):
        return given
    return secrets.token_hex(6)


def serving(request_id: str) -> None:
    """The running task serves the call `request_id`: every line it logs carries it. Not
    reset: each call runs in a task of its own, which ends with the call."""
    _REQUEST_ID.set(request_id)


def served() -> str | None:
    """The request id of the call the running task serves (None outside calls)."""
    return _REQUEST_ID.get()


class RequestIdFilter(logging.Filter):
    """Gives each record the request id of the call being served (None outside calls), so
    every line a call causes can be tied to its access-log line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time (UTC, ISO 8601), level, logger, message, request_id
    when in a call, the access log's fields, and the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None)
        if request_id is not None:
            out["request_id"] = request_id
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            out.update(fields)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        elif record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        return json.dumps(out, default=str)


class ClientGoneFilter(logging.Filter):
    """Demotes grpc.aio's "ExecuteBatchError raised in core" ERROR, and its traceback, to
    DEBUG. grpc logs it when a response cannot be sent because the client went away (a
    closed connection, a killed process) and its own notice of the close has not yet arrived:
    `_handle_exceptions` ignores the failed write only once `client_closed` is set, which a
    second batch does, in a race with the write. The call is over either way, and its
    access-log line already says CANCELLED."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith("ExecuteBatchError raised in core"):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


GRPC_AIO_LOGGER = "grpc._cython.cygrpc"
"""Where grpc.aio's server logs what its servicers' calls raise."""
_CLIENT_GONE = ClientGoneFilter()


def quiet_client_gone() -> None:
    """Put ClientGoneFilter on grpc.aio's logger; once, however often it is called (a
    logger holds a filter once)."""
    logging.getLogger(GRPC_AIO_LOGGER).addFilter(_CLIENT_GONE)


def configure(level: str, log_format: str) -> None:
    """Send the root logger to stderr at `level`, in `log_format` ("text" or "json")."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(
        JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    )
    logging.basicConfig(level=level.upper(), handlers=[handler])
