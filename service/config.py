"""The server's settings: one frozen dataclass, built from flags and VOXLITE_* variables."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

from .runtime import OrtSettings

ENV_PREFIX = "VOXLITE_"
_LOG_FORMATS = ("text", "json")


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "voxlite"


@dataclass(frozen=True)
class ServerConfig:
    """Everything the server needs to know; handlers receive this, never parsed arguments."""

    host: str = "[::]"
    """Address to listen on. "[::]" listens on every interface, "127.0.0.1" on loopback only."""
    port: int = 50051
    """TCP port; 0 picks a free one (tests)."""
    voices_dir: Path | None = Path("models")
    """Folder searched for Piper voices (`*.onnx` with `*.onnx.json`)."""
    default_voice: str = "en_US-joe-medium"
    """Voice used when a request names none (the embedded Piper voice by default)."""
    max_streams: int = 32
    """Calls (either synthesis RPC) served at once; more are refused with RESOURCE_EXHAUSTED."""
    max_streams_per_peer: int = 0
    """Calls one client address may have at once; 0: no limit of its own. Behind a balancer
    every call comes from the balancer's address: limit clients there instead."""
    max_streams_per_token: int = 0
    """Calls one bearer token (a tenant) may have at once when tokens are asked for; 0: none."""
    config_timeout_seconds: float = 10.0
    """A StreamingSynthesize call must send its config this soon after it opens; until then it
    holds no slot (DEADLINE_EXCEEDED after it)."""
    admission_wait_seconds: float = 0.25
    """A call that finds the machine at capacity waits this long, in arrival order, for room
    before it is refused with RESOURCE_EXHAUSTED; 0: refused at once."""
    max_text_chars: int = 5000
    """Longest text of one Synthesize request, and most text a stream may hold unspoken."""
    reflection: bool = True
    """Serve gRPC server reflection (grpcurl list/describe work without the .proto)."""
    log_level: str = "info"
    """debug, info, warning or error."""
    workers: int = 0
    """Model runs in flight at once, shared by all streams; 0: cores / ort.intra_op_threads."""
    cache_dir: Path | None = field(default_factory=_default_cache_dir)
    """Where split voice graphs are cached; None disables the cache."""
    idle_timeout_seconds: float = 300.0
    """A stream that receives no request and sends nothing for this long is ended with
    DEADLINE_EXCEEDED (a forgotten stream, or a client that stopped reading); 0 disables."""
    grace_seconds: float = 10.0
    """On SIGTERM/SIGINT, how long running streams may take to finish."""
    drain_delay_seconds: float = 0.0
    """On SIGTERM/SIGINT, how long health reports NOT_SERVING while new calls are still
    admitted, before the grace period: time for a balancer's health check to take the replica
    out, so that no caller meets a refusal (behind HAProxy: 2 s). 0: refuse at once."""
    ort: OrtSettings = field(default_factory=OrtSettings)
    """onnxruntime session options."""
    batch_vocoder: int = 1
    """Run up to this many queued vocoder windows of equal shape as one batch (1: off)."""
    phrase_cache_mb: int = 8
    """Synthesized phrases kept for reuse, in MiB of audio; 0 disables the cache."""
    shared_phrase_cache: bool = False
    """With tokens, every tenant's calls share one phrase cache (a tenant could then time a
    hit on what another said); off: each token's calls have entries of their own."""
    tls_cert: Path | None = None
    """PEM certificate chain the server presents; with `tls_key`, the port speaks TLS only."""
    tls_key: Path | None = None
    """PEM private key of `tls_cert`."""
    tls_client_ca: Path | None = None
    """PEM CA bundle: clients must present a certificate signed by it (mutual TLS)."""
    auth_tokens: tuple[str, ...] = field(default=(), repr=False)
    """Bearer tokens accepted in the `authorization` metadata; empty: no token is asked for.
    Health always answers without one (probes); reflection too unless `reflection_auth`."""
    reflection_auth: bool = False
    """Reflection asks for a token like the TTS service (when tokens are configured)."""
    metrics_port: int = 0
    """Prometheus metrics over HTTP on this port, on `host`; 0: none."""
    log_format: str = "text"
    """text (one readable line per record) or json (one JSON object per line)."""
    max_connection_age_seconds: float = 300.0
    """Connections are told to go (GOAWAY) after about this long, so clients re-resolve and
    spread their new calls onto new replicas; calls running then finish first. 0: never."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="voxlite-server",
        description="Streaming text-to-speech over gRPC. Every flag can also be set as an "
        f"environment variable: {ENV_PREFIX}<FLAG> (e.g. {ENV_PREFIX}PORT=50052).",
    )
    d = ServerConfig.__dataclass_fields__
    p.add_argument("--host", help=f"listen address (default {d['host'].default})")
    p.add_argument("--port", type=int, help=f"listen port, 0 for any (default {d['port'].default})")
    p.add_argument("--voices-dir", help="folder of Piper voices (default ./models)")
    p.add_argument(
        "--default-voice", help="voice for requests that name none (default en_US-joe-medium)"
    )
    p.add_argument(
        "--max-streams", type=int, help=f"concurrent calls (default {d['max_streams'].default})"
    )
    p.add_argument(
        "--max-streams-per-peer", type=int, help="concurrent calls per client address (0: no cap)"
    )
    p.add_argument(
        "--max-streams-per-token", type=int, help="concurrent calls per bearer token (0: no cap)"
    )
    p.add_argument(
        "--config-timeout-seconds",
        type=float,
        help="how soon a stream must send its config (default 10)",
    )
    p.add_argument(
        "--admission-wait-seconds",
        type=float,
        help="how long a call may wait for room when the server is at capacity (default 0.25)",
    )
    p.add_argument(
        "--max-text-chars", type=int, help=f"text limit (default {d['max_text_chars'].default})"
    )
    p.add_argument("--workers", type=int, help="model runs at once (default: cores / ort threads)")
    p.add_argument(
        "--cache-dir", help="split-graph cache folder; 'none' disables (default ~/.cache/voxlite)"
    )
    p.add_argument("--grace-seconds", type=float, help="drain period on SIGTERM (default 10)")
    p.add_argument(
        "--drain-delay-seconds",
        type=float,
        help="on SIGTERM, report NOT_SERVING but keep admitting calls this long, so balancers "
        "take the replica out first (default 0)",
    )
    p.add_argument(
        "--idle-timeout-seconds",
        type=float,
        help="end streams idle this long (default 300, 0: never)",
    )
    p.add_argument(
        "--ort-threads", type=int, help="onnxruntime threads per run while runs share (default 1)"
    )
    p.add_argument(
        "--wide-threads",
        type=int,
        help="threads of an urgent run that has the machine to itself (default 2; 1: never)",
    )
    p.add_argument(
        "--batch-vocoder", type=int, help="batch up to N vocoder windows (default 1: off)"
    )
    p.add_argument("--phrase-cache-mb", type=int, help="phrase cache size, 0 disables (default 8)")
    p.add_argument(
        "--shared-phrase-cache",
        action=argparse.BooleanOptionalAction,
        help="with tokens, one phrase cache for every tenant (default: one per token)",
    )
    p.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    p.add_argument(
        "--reflection", action=argparse.BooleanOptionalAction, help="serve reflection (default on)"
    )
    p.add_argument("--tls-cert", metavar="FILE", help="PEM certificate chain: serve TLS only")
    p.add_argument("--tls-key", metavar="FILE", help="PEM private key of --tls-cert")
    p.add_argument(
        "--tls-client-ca",
        metavar="FILE",
        help="PEM CA: require client certificates signed by it (mutual TLS)",
    )
    p.add_argument(
        "--auth-tokens-file",
        metavar="FILE",
        help="bearer tokens, one per line (# comments); also the comma-separated "
        f"{ENV_PREFIX}AUTH_TOKENS; health never needs one",
    )
    p.add_argument(
        "--reflection-auth",
        action=argparse.BooleanOptionalAction,
        help="reflection needs a token too (default: open, like health)",
    )
    p.add_argument("--metrics-port", type=int, help="Prometheus metrics port (default 0: none)")
    p.add_argument("--log-format", choices=_LOG_FORMATS, help="text (default) or json lines")
    p.add_argument(
        "--max-connection-age-seconds",
        type=float,
        help="close connections this old so clients rebalance; calls then get --grace-seconds "
        "(default 300, 0: never)",
    )
    return p


def _log_format(text: str) -> str:
    if text not in _LOG_FORMATS:
        raise ValueError(text)
    return text


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"not a boolean: {text!r}")


def config_from_args(
    argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None
) -> ServerConfig:
    """Flags win over VOXLITE_* variables, which win over the defaults."""
    env = os.environ if env is None else env
    parser = _parser()
    args = vars(parser.parse_args(argv))
    values: dict[str, object] = {}
    converters: dict[str, Callable[[str], object]] = {
        "port": int,
        "max_streams": int,
        "max_streams_per_peer": int,
        "max_streams_per_token": int,
        "config_timeout_seconds": float,
        "max_text_chars": int,
        "workers": int,
        "ort_threads": int,
        "wide_threads": int,
        "grace_seconds": float,
        "drain_delay_seconds": float,
        "idle_timeout_seconds": float,
        "admission_wait_seconds": float,
        "batch_vocoder": int,
        "phrase_cache_mb": int,
        "reflection": _bool,
        "shared_phrase_cache": _bool,
        "reflection_auth": _bool,
        "metrics_port": int,
        "log_format": _log_format,
        "max_connection_age_seconds": float,
    }
    for key, flag_value in args.items():
        raw = env.get(ENV_PREFIX + key.upper())
        if flag_value is not None:
            values[key] = flag_value
        elif raw is not None and raw != "":
            try:
                values[key] = converters.get(key, str)(raw)
            except ValueError:
                parser.error(f"{ENV_PREFIX}{key.upper()}={raw!r} is not valid")
    if "voices_dir" in values:
        values["voices_dir"] = Path(str(values["voices_dir"]))
    if "cache_dir" in values:
        values["cache_dir"] = (
            None if values["cache_dir"] == "none" else Path(str(values["cache_dir"]))
        )
    if "ort_threads" in values or "wide_threads" in values:
        default = OrtSettings()
        ort = OrtSettings(
            intra_op_threads=int(str(values.pop("ort_threads", default.intra_op_threads))),
            wide_threads=int(str(values.pop("wide_threads", default.wide_threads))),
        )
        if min(ort.intra_op_threads, ort.wide_threads) < 1:
            parser.error("--ort-threads and --wide-threads must be >= 1")
        values["ort"] = ort
    for key in ("port", "max_streams", "max_text_chars", "workers"):
        if key in values and int(str(values[key])) < (0 if key in ("port", "workers") else 1):
            low = ">= 0" if key in ("port", "workers") else ">= 1"
            parser.error(f"--{key.replace('_', '-')} must be {low}")
    _check_security(values, env, parser)
    if not 0 <= int(str(values.get("metrics_port", 0))) <= 65535:
        parser.error("--metrics-port must be between 0 (no metrics) and 65535")
    if not 0 <= float(str(values.get("admission_wait_seconds", 0))) <= 10:
        parser.error("--admission-wait-seconds must be between 0 (refuse at once) and 10")
    if not 0 <= float(str(values.get("drain_delay_seconds", 0))) <= 60:
        parser.error("--drain-delay-seconds must be between 0 and 60")
    for key in ("max_streams_per_peer", "max_streams_per_token"):
        if int(str(values.get(key, 0))) < 0:
            parser.error(f"--{key.replace('_', '-')} must be >= 0 (0: no cap)")
    if not 0 < float(str(values.get("config_timeout_seconds", 10))) <= 300:
        parser.error("--config-timeout-seconds must be more than 0 and at most 300")
    if float(str(values.get("max_connection_age_seconds", 0))) < 0:
        parser.error("--max-connection-age-seconds must be >= 0 (0: never)")
    known = {f.name for f in fields(ServerConfig)}
    return ServerConfig(**{k: v for k, v in values.items() if k in known})  # type: ignore[arg-type]


def _check_security(
    values: dict[str, object], env: Mapping[str, str], parser: argparse.ArgumentParser
) -> None:
    """TLS files exist and come in the right combinations; tokens are read here, once, so a
    server never starts open because its token file was empty or unreadable."""
    for key in ("tls_cert", "tls_key", "tls_client_ca", "auth_tokens_file"):
        if key in values:
            path = Path(str(values[key]))
            if not path.is_file():
                parser.error(f"--{key.replace('_', '-')}: no such file: {path}")
            marker = _PEM_MARKERS.get(key)
            try:
                pem = path.read_bytes() if marker else b""
            except OSError as exc:
                parser.error(f"--{key.replace('_', '-')}: cannot read {path}: {exc.strerror}")
            if marker and marker not in pem:
                parser.error(f"--{key.replace('_', '-')}: {path} is not PEM (no {marker.decode()})")
            values[key] = path
    if ("tls_cert" in values) != ("tls_key" in values):
        parser.error("--tls-cert and --tls-key go together: give both, or neither for plaintext")
    if "tls_client_ca" in values and "tls_cert" not in values:
        parser.error("--tls-client-ca (mutual TLS) needs --tls-cert and --tls-key")
    tokens = [t.strip() for t in env.get(ENV_PREFIX + "AUTH_TOKENS", "").split(",") if t.strip()]
    for i, token in enumerate(tokens, 1):
        if not _usable_token(token):
            parser.error(f"{ENV_PREFIX}AUTH_TOKENS: token {i} has spaces or non-ASCII characters")
    file = values.pop("auth_tokens_file", None)
    if isinstance(file, Path):
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            parser.error(f"--auth-tokens-file: cannot read {file}: {exc}")
        read = [(n, line.strip()) for n, line in enumerate(lines, 1)]
        for n, token in read:
            if token and not token.startswith("#") and not _usable_token(token):
                parser.error(f"--auth-tokens-file: line {n} of {file} is not one token")
        found = [t for _, t in read if t and not t.startswith("#")]
        if not found:
            parser.error(f"--auth-tokens-file: {file} holds no token (one per line)")
        tokens += found
    if tokens:
        values["auth_tokens"] = tuple(dict.fromkeys(tokens))
    elif values.get("reflection_auth"):
        parser.error(
            f"--reflection-auth needs tokens: --auth-tokens-file or {ENV_PREFIX}AUTH_TOKENS"
        )


_PEM_MARKERS = {
    "tls_cert": b"-----BEGIN CERTIFICATE-----",
    "tls_client_ca": b"-----BEGIN CERTIFICATE-----",
    "tls_key": b"PRIVATE KEY-----",
}


def _usable_token(token: str) -> bool:
    """Printable ASCII without spaces: what fits after "Bearer " in gRPC metadata."""
    return all("!" <= c <= "~" for c in token)
