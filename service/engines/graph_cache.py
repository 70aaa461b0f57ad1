"""Split model graphs on disk: each entry's parts checked by digest, written durably."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

_LOG = logging.getLogger(__name__)


class GraphCache:
    """Entries of named parts (bytes) and a JSON description, under a key that names what they
    were made from (a content hash). None as the folder: nothing is kept."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def read(self, key: str) -> tuple[dict[str, Any], dict[str, bytes]] | None:
        """The entry's description and parts if it is whole: every part's bytes match the
        digest the entry recorded (a truncated or overwritten part, its .json intact, is a
        miss, named in a warning)."""
        if self.directory is None:
            return None
        meta_path = self.directory / f"{key}.json"
        try:
            meta = json.loads(meta_path.read_text())
            parts: dict[str, bytes] = {}
            for suffix, digest in meta["parts"].items():
                path = self.directory / f"{key}{suffix}"
                data = path.read_bytes() if path.is_file() else b""
                if hashlib.sha256(data).hexdigest() != digest:
                    _LOG.warning("graph cache file %s is damaged: splitting the model again", path)
                    return None
                parts[suffix] = data
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            _LOG.warning("graph cache entry %s is unreadable (%r): splitting again", meta_path, exc)
            return None
        return meta, parts

    def write(self, key: str, meta: dict[str, Any], parts: dict[str, bytes]) -> None:
        """Keep an entry: its parts (by file suffix, e.g. ".acoustic.onnx"), then its
        description with their digests. A folder that cannot be written costs start-up time,
        never correctness: a warning, no error."""
        if self.directory is None:
            return
        meta = {**meta, "parts": {s: hashlib.sha256(d).hexdigest() for s, d in parts.items()}}
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            # The .json goes last: a reader that finds it finds every part complete.
            for suffix, data in [*parts.items(), (".json", json.dumps(meta).encode())]:
                atomic_write(self.directory / f"{key}{suffix}", data)
        except OSError as exc:
            _LOG.warning("cannot write the graph cache in %s: %s", self.directory, exc)


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` durably: a temporary file synced to disk, renamed over `path`,
    then the folder synced, so that a crash leaves the old file or the new one, whole."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
