"""A call's bearer token (RFC 6750), checked against the server's tokens, and the tenant it
names: what both edges (gRPC metadata, HTTP headers) ask of a call's credentials."""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ..settings.options import B64TOKEN, Invalid, file_tokens, is_b64token
from ..tls import RECHECK_SECONDS, file_signature

_LOG = logging.getLogger(__name__)

_CREDENTIALS = re.compile(rf"Bearer +({B64TOKEN.pattern})", re.ASCII | re.IGNORECASE)
"""RFC 6750 section 2.1: credentials = "Bearer" 1*SP b64token. ABNF's quoted strings are
case-insensitive (RFC 5234 section 2.3), and so is an auth-scheme (RFC 9110 section 11.1);
nothing else is allowed around the token (re.ASCII: no Unicode case folding either)."""


class Tokens:
    """The server's bearer tokens: whether a call's authorization names one of them."""

    def __init__(self, tokens: Iterable[str]) -> None:
        tokens = list(tokens)
        if not tokens:
            raise ValueError("bearer-token checks need at least one token")
        if not all(is_b64token(t) for t in tokens):
            raise ValueError("a token that no 'Bearer <token>' can carry (RFC 6750 b64token)")
        # Fixed-length digests: comparing them takes the same time whatever a guess's length.
        self._digests = [_digest(t.encode()) for t in tokens]

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


def tenant(metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
    """Who a call's bearer token says it is, as the first 16 hex digits of its SHA-256 (per
    tenant limits and caches, never the token itself); None without one. Called once
    TokenAuth has let the call through, so the token is a configured one."""
    values = [v for k, v in metadata or () if k == "authorization"]
    token = bearer_token(values[0]) if len(values) == 1 else None
    return None if token is None else _digest(token.encode()).hex()[:16]


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


_NONE = object()


class ServerTokens:
    """The tokens calls may name: those given at start, with --auth-tokens-file's read again
    when the file changes (looked at once a second at most, as calls come), so that a token is
    added or withdrawn with no restart. A change that leaves the file unreadable or without a
    valid token is said once at WARNING and the tokens in force stay: never "no auth". Used
    from the server's event loop only (both edges check tokens there)."""

    def __init__(
        self,
        tokens: Iterable[str],
        file: Path | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Raises Invalid when `file` holds no usable token now, ValueError when `tokens` are
        none or not bearer tokens."""
        tokens = tuple(tokens)
        self.current = Tokens(tokens)
        self._file = file
        self._clock = clock
        self._checked = clock()
        self._signature = file_signature(file)
        self._refused: object = _NONE
        """The file as last found unusable (warned once, not read again until it changes)."""
        # Those not from the file stay whatever it holds (a token in both follows the file).
        from_file = file_tokens(file) if file is not None else ()
        self._fixed = tuple(t for t in tokens if t not in from_file)

    def problem(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
        """Why the call's metadata is not authorized, or None when it is."""
        return self.latest().problem(metadata)

    def latest(self) -> Tokens:
        """The tokens in force: the file looked at if RECHECK_SECONDS have passed since the last
        look, and read again when it changed."""
        now = self._clock()
        if self._file is None or now - self._checked < RECHECK_SECONDS:
            return self.current
        self._checked = now
        signature = file_signature(self._file)
        if signature in (self._signature, self._refused):
            return self.current
        try:
            found = file_tokens(self._file)
        except Invalid as exc:
            self._refused = signature
            _LOG.warning("--auth-tokens-file changed: %s; the tokens in force stay", exc)
            return self.current
        self._signature, self._refused = signature, _NONE
        self.current = Tokens((*self._fixed, *found))
        _LOG.info(
            "--auth-tokens-file %s changed: %d token%s from it in force now",
            self._file,
            len(found),
            "" if len(found) == 1 else "s",
        )
        return self.current
