"""The server's settings: one frozen dataclass, built from flags and VOXLITE_* variables."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import NoReturn

from ..engines.piper import EMBEDDED_VOICE
from ..engines.runtime import OrtSettings
from ..tls import TlsFiles, UnusableFiles
from .options import (
    ENV_PREFIX,
    NOT_SERVER_VARIABLES,
    OPTIONS,
    Invalid,
    file_tokens,
)


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
    """Voice used when a request names neither a voice nor a language (the embedded Piper
    voice by default)."""
    engines: tuple[str, ...] = ("piper", "kokoro")
    """The engine families to load voices from (a family not installed finds none)."""
    language_voices: tuple[tuple[str, str], ...] = ()
    """(language range, voice) pairs: the voice a request of that language gets when it names
    none. Languages not listed get the default voice if it speaks them, else the first voice
    by name that does."""
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
    queue_wait_seconds: float = 3.0
    """A Synthesize call that finds the machine at capacity waits up to this long (or its
    deadline, if sooner), first come first served, before it is refused with
    RESOURCE_EXHAUSTED; 0: no queue (it waits admission_wait_seconds, as a stream does)."""
    max_queued_calls: int = 32
    """Synthesize calls waiting in that queue at once, at most; one more is refused at once."""
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
    read_timeout_seconds: float = 30.0
    """A client has this long to send a whole request: an HTTP connection that has not sent a
    request's head since it opened or since its last answer is closed, a body slower than this
    is refused with 408, and a gRPC connection must finish its handshake (TLS, HTTP/2's
    preface) this soon. Slow or silent connections then cannot hold the process's file
    descriptors until none is left for real callers."""
    grace_seconds: float = 10.0
    """On SIGTERM/SIGINT, how long running streams may take to finish."""
    drain_delay_seconds: float = 0.0
    """On SIGTERM/SIGINT, how long health reports NOT_SERVING while new calls are still
    admitted, before the grace period: time for a balancer's health check to take the replica
    out, so that no caller meets a refusal (behind HAProxy: 3 s, deploy/README.md). 0: refuse
    at once."""
    ort: OrtSettings = field(default_factory=OrtSettings)
    """onnxruntime session options."""
    batch_vocoder: int = 1
    """Run up to this many queued vocoder windows of equal shape as one batch (1: off)."""
    phrase_cache_mb: int = 32
    """Synthesized phrases kept for reuse, in MiB of audio (float32 at the voice's rate: about
    six minutes of speech); 0 disables the cache. Sized to keep the seed article's 20 repeated
    sentences (about 35 Mandarin segments, 9 MiB) while new texts pass through
    (`python -m bench.seeds`, docs/benchmarks.md)."""
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
    """Bearer tokens accepted in the `authorization` metadata at start (VOXLITE_AUTH_TOKENS's
    and `auth_tokens_file`'s); empty: no token is asked for. Health always answers without one
    (probes); reflection too unless `reflection_auth`."""
    auth_tokens_file: Path | None = None
    """The file some of `auth_tokens` came from, one per line: read again when it changes, its
    tokens then replace those it held (call/tokens.py: ServerTokens)."""
    reflection_auth: bool = False
    """Reflection asks for a token like the TTS service (when tokens are configured)."""
    metrics_port: int = 0
    """Prometheus metrics over HTTP on this port, on `host`; 0: none."""
    http_port: int | None = None
    """The OpenAI-compatible HTTP API (`/v1/audio/speech`) and the page at `/` on this port, on
    `host`, with the same TLS and tokens as gRPC; 0 picks a free one; None: no HTTP API."""
    cors_origins: tuple[str, ...] = ()
    """Web origins whose pages may call the HTTP API from a browser (CORS answers to them);
    ("*",): any origin; empty: none (a browser shows other origins nothing of the replies)."""
    log_format: str = "text"
    """text (one readable line per record) or json (one JSON object per line)."""
    max_connection_age_seconds: float = 300.0
    """Connections are told to go (GOAWAY) after about this long, so clients re-resolve and
    spread their new calls onto new replicas; calls running then finish first. 0: never."""

    @property
    def worker_count(self) -> int:
        """The scheduler's workers: `workers`, or cores / ort.intra_op_threads."""
        return self.workers or max(1, (os.cpu_count() or 1) // self.ort.intra_op_threads)


class _Parser(argparse.ArgumentParser):
    """Errors in one line, exit 2: the usage of thirty flags would bury the one that is
    wrong (--help shows them)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="voxlite-server",
        description="Streaming text-to-speech over gRPC. Every flag can also be set as an "
        f"environment variable: {ENV_PREFIX}<FLAG> (e.g. {ENV_PREFIX}PORT=50052).",
    )
    for option in OPTIONS:
        if not option.flag:
            continue
        if option.switch:
            p.add_argument(
                f"--{option.name}", action=argparse.BooleanOptionalAction, help=option.help
            )
        else:
            p.add_argument(f"--{option.name}", metavar=option.metavar, help=option.help)
    return p


def _shown(text: str) -> str:
    return text if text.isprintable() and text.strip() == text and text else repr(text)


def config_from_args(
    argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None
) -> ServerConfig:
    """Flags win over VOXLITE_* variables, which win over the defaults. A value that does not
    fit ends the process with one line on stderr and exit status 2."""
    env = os.environ if env is None else env
    parser = _parser()
    args = vars(parser.parse_args(argv))
    values: dict[str, object] = {}
    given: dict[str, str] = {}  # where each value came from ("--port", "VOXLITE_PORT")
    for option in OPTIONS:
        flag_value = args.get(option.key)
        raw = env.get(option.env)
        if flag_value is not None:
            text, where = flag_value, f"--{option.name}"
        elif raw is not None and (raw != "" or option.strict):
            text, where = raw, option.env
        else:
            continue
        given[option.key] = where
        if isinstance(text, bool):  # a --switch / --no-switch
            values[option.key] = text
            continue
        try:
            values[option.key] = option.parse(text)
        except Invalid as exc:
            shown = "" if option.secret else f", got {_shown(text)}"
            parser.error(f"{where} {exc}{shown}")
    ort_threads = values.pop("ort_threads", None)
    wide_threads = values.pop("wide_threads", None)
    if ort_threads is not None or wide_threads is not None:
        default = OrtSettings()
        values["ort"] = OrtSettings(
            intra_op_threads=int(str(ort_threads or default.intra_op_threads)),
            wide_threads=int(str(wide_threads or default.wide_threads)),
        )
    port, metrics_port = values.get("port", ServerConfig.port), values.get("metrics_port")
    if metrics_port and metrics_port == port:
        parser.error(f"--metrics-port and --port are both {port}: give metrics a port of its own")
    http_port = values.get("http_port")
    grpc_port = values.get("port", ServerConfig.port)
    for other, name in ((grpc_port, "--port"), (metrics_port, "--metrics-port")):
        if http_port and http_port == other:
            parser.error(
                f"--http-port and {name} are both {http_port}: give the HTTP API a port of its own"
            )
    if values.get("cors_origins") and values.get("http_port") is None:
        parser.error(f"{given['cors_origins']} is for the HTTP API: give --http-port too")
    _check_security(values, given, parser)
    _check_voices(values, given, parser)
    stray = sorted(set(values) - {f.name for f in fields(ServerConfig)})
    if stray:  # an option added to OPTIONS without its ServerConfig field: never dropped
        raise TypeError(f"settings with no ServerConfig field: {', '.join(stray)}")
    return ServerConfig(**values)  # type: ignore[arg-type]


def _check_security(
    values: dict[str, object], given: Mapping[str, str], parser: argparse.ArgumentParser
) -> None:
    """TLS files exist and come in the right combinations; tokens are read here, once, so a
    server never starts open because its token file was empty or unreadable."""
    for key in ("tls_cert", "tls_key", "tls_client_ca", "auth_tokens_file"):
        if key in values:
            path = Path(str(values[key]))
            where = given[key]
            if not path.is_file():
                what = (
                    "a folder, not a file"
                    if path.is_dir()
                    else "not a regular file"
                    if path.exists()
                    else "no such file"
                )
                parser.error(f"{where}: {what}: {path}")
            marker = _PEM_MARKERS.get(key)
            try:
                pem = path.read_bytes() if marker else b""
            except OSError as exc:
                parser.error(f"{where}: cannot read {path}: {exc.strerror}")
            if marker and marker not in pem:
                parser.error(f"{where}: {path} is not PEM (no {marker.decode()})")
    if ("tls_cert" in values) != ("tls_key" in values):
        parser.error("--tls-cert and --tls-key go together: give both, or neither for plaintext")
    if "tls_client_ca" in values and "tls_cert" not in values:
        parser.error("--tls-client-ca (mutual TLS) needs --tls-cert and --tls-key")
    cert, private, ca = (values.get(k) for k in ("tls_cert", "tls_key", "tls_client_ca"))
    if isinstance(cert, Path) and isinstance(private, Path):
        try:  # as the ports will read them: the key is the certificate's, and not encrypted
            TlsFiles(cert, private, ca if isinstance(ca, Path) else None)
        except UnusableFiles as exc:
            parser.error(str(exc))
    from_env = values.pop("auth_tokens", ())
    assert isinstance(from_env, tuple)
    tokens = list(from_env)
    file = values.get("auth_tokens_file")
    if isinstance(file, Path):
        try:
            tokens += file_tokens(file)
        except Invalid as exc:
            parser.error(f"{given['auth_tokens_file']}: {exc}")
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


def _missing_folder(folder: Path) -> str | None:
    """Why `folder` cannot hold voices, or None when it is a folder the server can read."""
    if folder.is_dir():
        try:
            with os.scandir(folder):
                return None
        except OSError as exc:  # a volume mounted with the wrong owner, most often
            return f"cannot be read ({exc.strerror}: give the server's user read access)"
    return "is not a folder" if folder.exists() else "does not exist"


def _check_voices(
    values: dict[str, object], given: Mapping[str, str], parser: argparse.ArgumentParser
) -> None:
    """A default voice other than the embedded one can only come from the voices folder:
    without the folder the server could never serve, so it does not start."""
    default = ServerConfig()
    folder = values.get("voices_dir", default.voices_dir)
    voice = str(values.get("default_voice", default.default_voice))
    if not isinstance(folder, Path) or voice == EMBEDDED_VOICE:
        return
    why = _missing_folder(folder)
    if why is not None:
        where = given.get("voices_dir", "the default --voices-dir")
        parser.error(
            f"voices folder {folder} ({where}) {why}, and the default voice {voice} can only "
            f"come from there: point it at the folder with {voice}.onnx, or leave the default "
            f"voice ({EMBEDDED_VOICE}, embedded)"
        )


def start_warnings(config: ServerConfig, env: Mapping[str, str]) -> list[str]:
    """What is odd about a configuration the server starts with anyway, one line each."""
    lines = []
    if config.voices_dir is not None:
        why = _missing_folder(config.voices_dir)
        if why is not None:
            lines.append(
                f"voices folder {config.voices_dir} {why} (--voices-dir): no voice is served "
                f"from it (the embedded {config.default_voice} still is)"
            )
    known = {option.env for option in OPTIONS} | NOT_SERVER_VARIABLES
    unknown = sorted(k for k in env if k.startswith(ENV_PREFIX) and k not in known)
    if unknown:
        lines.append(
            f"{', '.join(unknown)}: no such setting, ignored (voxlite-server --help lists "
            f"the settings; {ENV_PREFIX}<FLAG>)"
        )
    return lines
