"""The server's settings: one frozen dataclass, built from flags and VOXLITE_* variables."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

from .voice import OrtSettings

ENV_PREFIX = "VOXLITE_"


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
    default_voice: str = ""
    """Voice used when a request names none; empty means the embedded en_US-joe-medium."""
    max_streams: int = 32
    """Calls (either synthesis RPC) served at once; more are refused with RESOURCE_EXHAUSTED."""
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
    ort: OrtSettings = field(default_factory=OrtSettings)
    """onnxruntime session options."""


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
        "--max-text-chars", type=int, help=f"text limit (default {d['max_text_chars'].default})"
    )
    p.add_argument("--workers", type=int, help="model runs at once (default: cores / ort threads)")
    p.add_argument(
        "--cache-dir", help="split-graph cache folder; 'none' disables (default ~/.cache/voxlite)"
    )
    p.add_argument("--grace-seconds", type=float, help="drain period on SIGTERM (default 10)")
    p.add_argument(
        "--idle-timeout-seconds",
        type=float,
        help="end streams idle this long (default 300, 0: never)",
    )
    p.add_argument("--ort-threads", type=int, help="onnxruntime threads per run (default 2)")
    p.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    p.add_argument(
        "--reflection", action=argparse.BooleanOptionalAction, help="serve reflection (default on)"
    )
    return p


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
        "max_text_chars": int,
        "workers": int,
        "ort_threads": int,
        "grace_seconds": float,
        "idle_timeout_seconds": float,
        "reflection": _bool,
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
    if "ort_threads" in values:
        values["ort"] = OrtSettings(intra_op_threads=int(str(values.pop("ort_threads"))))
    for key in ("port", "max_streams", "max_text_chars", "workers"):
        if key in values and int(str(values[key])) < (0 if key in ("port", "workers") else 1):
            low = ">= 0" if key in ("port", "workers") else ">= 1"
            parser.error(f"--{key.replace('_', '-')} must be {low}")
    known = {f.name for f in fields(ServerConfig)}
    return ServerConfig(**{k: v for k, v in values.items() if k in known})  # type: ignore[arg-type]
