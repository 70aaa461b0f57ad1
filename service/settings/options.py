"""The table of server settings: each one's flag, VOXLITE_* variable, parser and help."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from ..tls import read_regular

ENV_PREFIX = "VOXLITE_"
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("text", "json")


_LANGUAGE = re.compile(r"[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*")
"""A BCP-47 language range (zh, zh-CN, cmn-Hans-CN), "_" taken for "-"."""


class Invalid(ValueError):
    """A value a setting cannot take; the message says what it must be ("must be ...")."""


Parse = Callable[[str], object]
N = TypeVar("N", int, float)


def _number(
    read: Callable[[str], N], fits: Callable[[N], bool], unreadable: str, outside: str
) -> Callable[[str], N]:
    """A number read from text with `read` and kept if it `fits`; Invalid with `unreadable`
    (not a number) or `outside` (out of range)."""

    def parse(text: str) -> N:
        try:
            value = read(text)
        except ValueError:
            raise Invalid(unreadable) from None
        if not fits(value):
            raise Invalid(outside)
        return value

    return parse


def _integer(low: int, high: int, zero: str | None = None) -> Parse:
    """A whole number from `low` to `high`, or 0 when `zero` says what 0 means."""
    span = f"between {low} and {high}" + (f" (or 0: {zero})" if zero else "")
    return _number(
        int,
        lambda value: low <= value <= high or (zero is not None and value == 0),
        f"must be a whole number {span}",
        f"must be {span}",
    )


def _seconds(high: float | None = None, zero: str | None = None) -> Parse:
    """A finite number of seconds, 0 or more (at most `high`). NaN compares false with
    everything: a NaN idle timeout would wake each stream's watchdog at once, for ever."""
    span = f" from 0 to {high:.15g}" if high is not None else ", 0 or more"
    requirement = f"must be a number of seconds{span}" + (f" (0: {zero})" if zero else "")
    top = math.inf if high is None else high
    return _number(
        float, lambda value: math.isfinite(value) and 0 <= value <= top, requirement, requirement
    )


def _positive_seconds(high: float) -> Parse:
    """A finite number of seconds above 0, at most `high`."""
    within = _seconds(high)

    def parse(text: str) -> float:
        value = within(text)
        if not isinstance(value, float) or value <= 0:
            raise Invalid(f"must be a number of seconds above 0, at most {high:g}")
        return value

    return parse


ENGINES = ("piper", "kokoro")


def _engines(text: str) -> tuple[str, ...]:
    """The families to load from "piper,kokoro", each once and in that order."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in ENGINES]
    if unknown or "piper" not in names:
        raise Invalid(
            f"must list engines among {', '.join(ENGINES)}, piper included (it speaks the "
            "default voice)"
        )
    return names


def _language_voices(text: str) -> tuple[tuple[str, str], ...]:
    """ "zh=zf_xiaoxiao,ja=jf_alpha": each language range's voice."""
    pairs = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        language, sep, voice = (x.strip() for x in item.partition("="))
        if not sep or not language or not voice or not _LANGUAGE.fullmatch(language):
            raise Invalid(
                "must be LANGUAGE=VOICE pairs separated by commas (zh=zf_xiaoxiao)"
                + (f", not {item!r}" if item != text.strip() else "")
            )
        pairs.append((language, voice))
    return tuple(pairs)


def _choice(*names: str) -> Parse:
    def parse(text: str) -> str:
        if text.strip().lower() not in names:
            raise Invalid(f"must be one of {', '.join(names)}")
        return text.strip().lower()

    return parse


def _switch(text: str) -> bool:
    """A VOXLITE_* value for an on/off flag."""
    if text.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if text.strip().lower() in ("0", "false", "no", "off"):
        return False
    raise Invalid("must be true or false (or 1/0, yes/no, on/off)")


def _text(text: str) -> str:
    if not text.strip():
        raise Invalid("must not be empty")
    return text


def _path(text: str) -> Path:
    if not text.strip():
        raise Invalid("must be a path")
    return Path(text)


def _cache_dir(text: str) -> Path | None:
    return None if text == "none" else _path(text)


def _origins(text: str) -> tuple[str, ...]:
    """ "https://app.example.com,http://localhost:3000" or "*": the web origins whose pages may
    call the HTTP API, each as a browser writes it in Origin (lower case, no default port)."""
    origins = [o.strip() for o in text.split(",") if o.strip()]
    if not origins:
        raise Invalid("holds no origin: give origins such as https://app.example.com, or *")
    if "*" in origins:
        if len(origins) > 1:
            raise Invalid("has * beside other origins: * alone allows any origin")
        return ("*",)
    return tuple(dict.fromkeys(_origin(o) for o in origins))


def _origin(text: str) -> str:
    parts = urlsplit(text.removesuffix("/"))
    try:
        port = parts.port
    except ValueError:
        port = -1
    if (
        parts.scheme.lower() not in ("http", "https")
        or not parts.hostname
        or (port is not None and port <= 0)
        or parts.path
        or parts.query
        or parts.fragment
        or parts.username is not None
    ):
        raise Invalid(
            f"has {text!r}, which is not an origin: write the scheme, host and port only "
            "(https://app.example.com, http://localhost:3000), or * for any"
        )
    scheme, host = parts.scheme.lower(), parts.hostname  # hostname is lower case
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}[scheme]
    return f"{scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


B64TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*", re.ASCII)
"""RFC 6750's b64token: what may follow "Bearer " in an authorization header."""
B64TOKEN_CHARSET = "letters, digits and - . _ ~ + / only, = at the end (RFC 6750)"


def is_b64token(token: str) -> bool:
    return B64TOKEN.fullmatch(token) is not None


def file_tokens(path: Path) -> tuple[str, ...]:
    """The tokens of an --auth-tokens-file: one per line, blank lines and `#` comments skipped.
    Raises Invalid, never echoing a token, when it cannot be read, holds none, or a line is not
    one token: at start and when the file changes, never "no auth"."""
    try:
        # utf-8-sig: the byte-order mark some Windows editors write is no part of a token.
        lines = read_regular(path).decode("utf-8-sig").splitlines()
    except OSError as exc:
        raise Invalid(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise Invalid(f"cannot read {path}: {exc}") from None
    found = [(n, line.strip()) for n, line in enumerate(lines, 1)]
    found = [(n, token) for n, token in found if token and not token.startswith("#")]
    for n, token in found:
        if not is_b64token(token):
            raise Invalid(f"line {n} of {path} is not one token: {B64TOKEN_CHARSET}")
    if not found:
        raise Invalid(f"{path} holds no token (one per line)")
    return tuple(dict.fromkeys(token for _, token in found))


def _tokens(text: str) -> tuple[str, ...]:
    """VOXLITE_AUTH_TOKENS: tokens separated by commas. Set but holding no token (",", " , ",
    "": what a template with an unset variable writes), it is an error, never "no auth"."""
    tokens = [t.strip() for t in text.split(",") if t.strip()]
    if not tokens:
        raise Invalid(
            "is set but holds no token (only commas or spaces): give comma-separated tokens, "
            "or unset it to serve without tokens"
        )
    for i, token in enumerate(tokens, 1):
        if not is_b64token(token):
            raise Invalid(
                f"has a token (number {i}) that is not a bearer token: {B64TOKEN_CHARSET}"
            )
    return tuple(tokens)


@dataclass(frozen=True)
class Option:
    """One setting: its flag, its VOXLITE_* variable, and how its text becomes a value."""

    name: str
    """The flag without its dashes, e.g. "idle-timeout-seconds"."""
    parse: Parse
    """Text (of the flag or of the variable, the same checks) to value; raises Invalid."""
    help: str
    metavar: str | None = None
    switch: bool = False
    """--name / --no-name; the variable takes true or false."""
    strict: bool = False
    """An empty VOXLITE_* value is an error rather than "unset": a security setting that a
    template left empty must not turn into plaintext or no tokens."""
    secret: bool = False
    """Errors never repeat the value."""
    flag: bool = True
    """False: the variable only (tokens do not belong on a command line, which `ps` shows)."""

    @property
    def key(self) -> str:
        return self.name.replace("-", "_")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.key.upper()


MAX_WORKERS = 64
"""Most model runs at once in one process. Its single event loop encodes every stream's audio
and serves gRPC, and saturates long before 64 cores of model work would: past that, run more
replicas."""
MAX_CONNECTION_AGE = 24 * 86400
"""gRPC keeps the connection age in milliseconds as a 32-bit number (at most 24.8 days)."""

OPTIONS: tuple[Option, ...] = (
    Option("host", _text, 'listen address (default "[::]": every interface)'),
    Option("port", _integer(1, 65535, zero="any free port"), "listen port (default 50051)"),
    Option("voices-dir", _path, "folder of Piper voices (default ./models)", metavar="FOLDER"),
    Option("default-voice", _text, "voice for requests that name none (default en_US-joe-medium)"),
    Option(
        "engines",
        _engines,
        "engine families to load voices from, e.g. piper (English only; default piper,kokoro)",
        metavar="NAME,...",
    ),
    Option(
        "language-voices",
        _language_voices,
        "each language's voice for requests that name none, replacing those of its languages "
        "(default: the clearest voice of each, zh-CN=zf_xiaoxiao, ja-JP=jf_alpha, es-ES=ef_dora, "
        "fr-FR=ff_siwis, it-IT=if_sara, pt-BR=pf_dora), e.g. zh=zm_yunxi",
        metavar="LANG=VOICE,...",
    ),
    Option("max-streams", _integer(1, 10000), "synthesis calls at once (default 32)"),
    Option(
        "max-streams-per-peer",
        _integer(1, 10000, zero="no cap"),
        "synthesis calls at once from one client address (default 0: no cap)",
    ),
    Option(
        "max-streams-per-token",
        _integer(1, 10000, zero="no cap"),
        "synthesis calls at once per bearer token (default 0: no cap)",
    ),
    Option(
        "config-timeout-seconds",
        _positive_seconds(300),
        "how soon a stream must send its config (default 10)",
    ),
    Option(
        "admission-wait-seconds",
        _seconds(10, zero="refused at once"),
        "how long a call may wait for room when the server is at capacity (default 0.25)",
    ),
    Option(
        "queue-wait-seconds",
        _seconds(60, zero="no queue"),
        "how long a Synthesize call with no deadline may wait in line when the server is at "
        "capacity; one with a deadline waits up to it, at most 60 s (default 3)",
    ),
    Option(
        "max-queued-calls",
        _integer(1, 10000, zero="no queue"),
        "Synthesize calls waiting in that line at once (default 32)",
    ),
    Option(
        "max-text-chars",
        # A request over 1 MiB is refused by gRPC before it is read (server.py).
        _integer(1, 1_000_000),
        "longest Synthesize text, most unspoken text of a stream (default 5000)",
    ),
    Option(
        "workers",
        _integer(1, MAX_WORKERS, zero="cores / --ort-threads"),
        "model runs at once (default 0: cores / --ort-threads)",
    ),
    Option(
        "ort-threads",
        _integer(1, 64),
        "onnxruntime threads per run while runs share the machine (default 1)",
    ),
    Option(
        "wide-threads",
        _integer(1, 64),
        "threads of an urgent run that has the machine to itself (default 2; 1: never)",
    ),
    Option("batch-vocoder", _integer(1, 64), "batch up to N vocoder windows (default 1: off)"),
    Option(
        "phrase-cache-mb", _integer(0, 65536), "phrase cache size in MiB, 0 disables (default 32)"
    ),
    Option(
        "shared-phrase-cache",
        _switch,
        "with tokens, one phrase cache for every tenant (default: one per token)",
        switch=True,
    ),
    Option(
        "idle-timeout-seconds",
        _seconds(zero="never"),
        "end streams idle this long (default 300, 0: never)",
    ),
    Option(
        "read-timeout-seconds",
        _positive_seconds(600),
        "close a connection that sends no whole request this long after it opens or after "
        "its last answer (HTTP), or that has not finished its handshake (gRPC) (default 30)",
    ),
    Option(
        "cache-dir",
        _cache_dir,
        "split-graph cache folder; 'none' disables "
        "(default $XDG_CACHE_HOME/voxlite, else ~/.cache/voxlite)",
        metavar="FOLDER",
    ),
    Option(
        "grace-seconds",
        _seconds(),
        "drain period on SIGTERM or SIGINT; a second signal stops at once (default 10)",
    ),
    Option(
        "drain-delay-seconds",
        _seconds(60),
        "on SIGTERM, report NOT_SERVING but keep admitting calls this long, so balancers "
        "take the replica out first (default 0)",
    ),
    Option("reflection", _switch, "serve reflection (default on)", switch=True),
    Option("log-level", _choice(*LOG_LEVELS), "debug, info (default), warning or error"),
    Option("log-format", _choice(*LOG_FORMATS), "text (default) or json lines"),
    Option(
        "tls-cert",
        _path,
        "PEM certificate chain: serve TLS only (files renewed while serving are taken "
        "for new connections)",
        metavar="FILE",
        strict=True,
    ),
    Option("tls-key", _path, "PEM private key of --tls-cert", metavar="FILE", strict=True),
    Option(
        "tls-client-ca",
        _path,
        "PEM CA: require client certificates signed by it (mutual TLS)",
        metavar="FILE",
        strict=True,
    ),
    Option(
        "auth-tokens-file",
        _path,
        "bearer tokens, one per line (# comments), read again when it changes; also the "
        f"comma-separated {ENV_PREFIX}AUTH_TOKENS; health never needs one",
        metavar="FILE",
        strict=True,
    ),
    Option("auth-tokens", _tokens, "", strict=True, secret=True, flag=False),
    Option(
        "reflection-auth",
        _switch,
        "reflection needs a token too (default: open, like health)",
        switch=True,
        strict=True,
    ),
    Option(
        "metrics-port",
        _integer(1, 65535, zero="no metrics"),
        "Prometheus metrics and /readyz over HTTP on this port (default 0: none)",
    ),
    Option(
        "http-port",
        _integer(0, 65535),
        "OpenAI-compatible HTTP API (POST /v1/audio/speech) and a page to try the voices at / "
        "on this port, with the same TLS and tokens (0: any free port; default: none)",
    ),
    Option(
        "cors-origins",
        _origins,
        "web origins whose pages may call the HTTP API from a browser (CORS), comma-separated "
        "(https://app.example.com), or * for any; tokens are still asked for (default: none)",
        metavar="ORIGINS",
    ),
    Option(
        "max-connection-age-seconds",
        _seconds(MAX_CONNECTION_AGE, zero="never"),
        "close connections this old so clients rebalance; the calls running on one finish "
        "there, however long they last (default 300, 0: never)",
    ),
)
"""Every setting, flag and variable alike: the one place a value is checked."""

NOT_SERVER_VARIABLES = frozenset(
    {
        *("VOXLITE_SERVER", "VOXLITE_TOKEN"),  # the client's
        *("VOXLITE_VENV", "VOXLITE_LANGUAGES", "VOXLITE_BASE", "VOXLITE_IMAGE"),  # scripts'
        "VOXLITE_DEBIAN_MIRROR",
    }
)
"""VOXLITE_* variables that the client and the scripts read, not the server."""
