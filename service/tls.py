"""The TLS files both ports present, followed as they change: a certificate renewed on disk
(cert-manager's Secret, certbot, a copy by hand) is what new connections get, with no restart
and no signal. Connections already open keep the certificate they shook hands with."""

from __future__ import annotations

import errno
import logging
import os
import ssl
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

_LOG = logging.getLogger(__name__)

RECHECK_SECONDS = 1.0
"""How often at most a handshake looks at the files (three stat calls): a renewal reaches new
connections within a second, and a burst of handshakes costs no more than one look."""

Signature = tuple[tuple[int, int, int, int] | None, ...]
"""Each file's `file_signature`."""


class UnusableFiles(ValueError):
    """The files cannot serve TLS: the message says which flag and what to fix."""


@dataclass(frozen=True)
class Credentials:
    """One reading of the files, in the forms each port takes."""

    version: int
    """1 for the files read at start, one more for each change taken since."""
    cert: bytes
    key: bytes
    client_ca: bytes | None
    """As read, for gRPC's port (grpc/security.py)."""
    ssl: ssl.SSLContext
    """For the HTTP port; its own checks are how a reading is validated."""


class TlsFiles:
    """--tls-cert, --tls-key and --tls-client-ca, read at start and again after a change.

    A change is taken only when the files form a usable whole (the key is the certificate's, the
    CA is PEM); otherwise the port keeps presenting what it has and says once, at WARNING, what
    is wrong, and a renewal that writes the files one by one is taken once the last is written.
    Thread-safe: gRPC asks from its own threads, the HTTP port from the event loop.
    """

    def __init__(
        self,
        cert: Path,
        key: Path,
        client_ca: Path | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Reads the files; raises UnusableFiles when they cannot serve."""
        self._paths = (cert, key, client_ca)
        self._clock = clock
        self._lock = threading.Lock()
        self._signature = self._look()
        self.current = self._read(1)
        self._checked = clock()
        self._refused: Signature | None = None
        """The files as last found unusable: warned about once, not read again until they change."""

    @property
    def client_auth(self) -> bool:
        """Whether clients must show a certificate (mutual TLS)."""
        return self._paths[2] is not None

    def latest(self) -> Credentials:
        """What to present to a connection shaking hands now: the files are looked at when
        RECHECK_SECONDS have passed since the last look, and read again when they changed."""
        with self._lock:
            now = self._clock()
            if now - self._checked < RECHECK_SECONDS:
                return self.current
            self._checked = now
            signature = self._look()
            if signature in (self._signature, self._refused):
                return self.current
            try:
                taken = self._read(self.current.version + 1)
            except UnusableFiles as exc:
                if self._look() == signature:  # not caught mid-write: worth saying
                    self._refused = signature
                    _LOG.warning(
                        "TLS files changed but cannot be used, so the port keeps presenting "
                        "the certificate it has: %s",
                        exc,
                    )
                return self.current
            if self._look() != signature:
                return self.current  # written while read: read again at the next look
            self._signature, self._refused, self.current = signature, None, taken
            _LOG.info(
                "TLS files changed (%s): new connections get them, open ones keep theirs",
                ", ".join(str(p) for p in self._paths if p is not None),
            )
            return taken

    def _look(self) -> Signature:
        return tuple(file_signature(path) for path in self._paths)

    def _read(self, version: int) -> Credentials:
        cert, key, client_ca = self._paths
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            cert_pem, key_pem = read_regular(cert), read_regular(key)
            ca_pem = read_regular(client_ca) if client_ca else None
        except OSError as exc:
            raise UnusableFiles(f"cannot read {exc.filename}: {exc.strerror}") from None
        try:
            context.load_cert_chain(cert, key, password=_no_password)
        except (ssl.SSLError, OSError, _Encrypted) as exc:
            raise UnusableFiles(_why_unusable(cert, key, cert_pem, exc)) from None
        if client_ca is not None and ca_pem is not None:
            if not _holds_certificate(ca_pem):
                raise UnusableFiles(f"--tls-client-ca {client_ca} holds no PEM certificate")
            context.load_verify_locations(cadata=ca_pem.decode("ascii", "replace"))
            context.verify_mode = ssl.CERT_REQUIRED
        return Credentials(version, cert_pem, key_pem, ca_pem, context)


def http_context(files: TlsFiles) -> ssl.SSLContext:
    """The HTTP port's context: every handshake (with a server name or none, the callback runs
    for each) moves to the latest reading before the server's certificate is chosen."""
    first = files.current.ssl

    def choose(connection: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext) -> None:
        latest = files.latest().ssl
        if latest is not connection.context:
            connection.context = latest

    first.sni_callback = choose
    return first


class _Encrypted(Exception):
    pass


def _no_password() -> NoReturn:
    # Never OpenSSL's prompt on the terminal: the server has no one to type it.
    raise _Encrypted


def read_regular(path: Path) -> bytes:
    """The file's bytes; OSError for one that is not a regular file: a named pipe or a device
    would block the read, which runs in a handshake or on the event loop."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(errno.EINVAL, "not a regular file (a named pipe, device or folder)", path)
    return path.read_bytes()


def file_signature(path: Path | None) -> tuple[int, int, int, int] | None:
    """A file's device, inode, size and modification time, links followed (a Kubernetes
    Secret's swap of its `..data` link is a change); None: no file, or it cannot be read."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _why_unusable(cert: Path, key: Path, cert_pem: bytes, exc: BaseException) -> str:
    if isinstance(exc, _Encrypted):
        return f"--tls-key {key} is encrypted: give the key unencrypted (openssl pkey -in KEY)"
    if getattr(exc, "reason", None) == "KEY_VALUES_MISMATCH":
        return f"--tls-key {key} is not the key of --tls-cert {cert}: give the pair"
    if not _holds_certificate(cert_pem):
        return f"--tls-cert {cert} holds no PEM certificate"
    return f"--tls-key {key} holds no PEM private key"


def _holds_certificate(pem: bytes) -> bool:
    try:
        ssl.create_default_context().load_verify_locations(cadata=pem.decode("ascii", "replace"))
    except (ssl.SSLError, ValueError):
        return False
    return True
