"""Credential files that change while the server runs: a renewed certificate, a new client CA,
TLS files written one by one or unusable, a tokens file rewritten. Real servers on loopback,
certificates made here."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import ssl
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from voxlite.client import Client, HealthStatus, Unauthenticated, Unavailable
from voxlite.service.call.tokens import ServerTokens
from voxlite.service.tls import RECHECK_SECONDS, TlsFiles

from .helpers import (
    Issued,
    Pki,
    ServerThread,
    base_config,
    config_error,
    http_url,
    issue,
    make_pki,
    wait_until,
)
from .test_security import speaks


def renewed(pki: Pki, folder: Path) -> Issued:
    """A new server certificate and key from `pki`'s CA, as a renewal gives."""
    ca_cert = x509.load_pem_x509_certificate(pki.ca.cert.read_bytes())
    ca_key = serialization.load_pem_private_key(pki.ca.key.read_bytes(), None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    folder.mkdir(exist_ok=True)
    issued, _, _ = issue(folder, "server", issuer=(ca_cert, ca_key), server=True)
    return issued


class Secret:
    """A folder as Kubernetes mounts a Secret: tls.crt and tls.key are links through `..data`,
    a link to the current version's folder, which an update swaps in one rename."""

    def __init__(self, folder: Path, issued: Issued) -> None:
        self.folder = folder
        folder.mkdir()
        self.versions = 0
        self.put(issued)
        for name in ("tls.crt", "tls.key"):
            (folder / name).symlink_to(Path("..data") / name)
        self.cert, self.key = folder / "tls.crt", folder / "tls.key"

    def put(self, issued: Issued) -> None:
        self.versions += 1
        version = self.folder / f"..v{self.versions}"
        version.mkdir()
        shutil.copyfile(issued.cert, version / "tls.crt")
        shutil.copyfile(issued.key, version / "tls.key")
        (self.folder / "..data_tmp").symlink_to(version.name)
        os.replace(self.folder / "..data_tmp", self.folder / "..data")


def presented(port: int, *, alpn: str | None = None) -> bytes:
    """The certificate a new connection to `port` is shown (DER), checking nothing."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if alpn:
        context.set_alpn_protocols([alpn])
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def der(issued: Issued) -> bytes:
    return ssl.PEM_cert_to_DER_cert(issued.cert.read_text())


def test_a_renewed_certificate_reaches_new_connections_on_both_ports(
    cache_dir: Path, tmp_path: Path, pki: Pki
) -> None:
    """A renewal (cert-manager updating the Secret) is presented on new connections to the gRPC
    and HTTP ports with no restart; a connection made before keeps serving."""
    secret = Secret(tmp_path / "secret", pki.server)
    srv = ServerThread(
        base_config(cache_dir, tmp_path, http_port=0, tls_cert=secret.cert, tls_key=secret.key)
    )
    ca = pki.ca.cert.read_bytes()
    try:
        with Client(f"localhost:{srv.port}", root_certificates=ca) as before:
            assert speaks(before)
            assert presented(srv.port, alpn="h2") == der(pki.server)
            assert presented(srv.server.http_port) == der(pki.server)
            renewal = renewed(pki, tmp_path / "renewal")
            secret.put(renewal)
            wait_until(lambda: presented(srv.port, alpn="h2") == der(renewal), timeout=30)
            wait_until(lambda: presented(srv.server.http_port) == der(renewal), timeout=30)
            assert speaks(before)  # its connection shook hands with the old certificate
        with Client(f"localhost:{srv.port}", root_certificates=ca) as after:
            assert speaks(after)
        trust = ssl.create_default_context(cafile=str(pki.ca.cert))
        url = http_url(srv, "/v1/models", scheme="https").replace("127.0.0.1", "localhost")
        with urllib.request.urlopen(url, context=trust, timeout=30) as reply:
            assert reply.status == 200
    finally:
        srv.close()


def admitted(srv: ServerThread, ca: Path, client: Issued) -> bool:
    """Whether a new gRPC connection showing `client`'s certificate is served."""
    with Client(
        f"localhost:{srv.port}",
        root_certificates=ca.read_bytes(),
        certificate_chain=client.cert.read_bytes(),
        private_key=client.key.read_bytes(),
    ) as tts:
        try:
            return tts.health(timeout=10) is HealthStatus.SERVING
        except Unavailable:
            return False


def http_admitted(srv: ServerThread, ca: Path, client: Issued) -> bool:
    """Whether a new HTTPS connection showing `client`'s certificate is served."""
    context = ssl.create_default_context(cafile=str(ca))
    context.load_cert_chain(client.cert, client.key)
    url = http_url(srv, "/v1/models", scheme="https").replace("127.0.0.1", "localhost")
    try:
        with urllib.request.urlopen(url, context=context, timeout=10) as reply:
            return int(reply.status) == 200
    except (urllib.error.URLError, ConnectionError, ssl.SSLError):
        return False


def test_mutual_tls_follows_a_new_client_ca(cache_dir: Path, tmp_path: Path, pki: Pki) -> None:
    """--tls-client-ca rewritten in place with another CA: clients that CA signed are let in on
    both ports, those of the CA it replaced are refused."""
    (tmp_path / "other").mkdir()
    other = make_pki(tmp_path / "other")
    client_ca = tmp_path / "clients.crt"
    shutil.copyfile(pki.ca.cert, client_ca)
    srv = ServerThread(
        base_config(
            cache_dir,
            tmp_path,
            http_port=0,
            tls_cert=pki.server.cert,
            tls_key=pki.server.key,
            tls_client_ca=client_ca,
        )
    )
    try:
        assert admitted(srv, pki.ca.cert, pki.client)
        assert http_admitted(srv, pki.ca.cert, pki.client)
        assert not admitted(srv, pki.ca.cert, other.client)
        client_ca.write_bytes(other.ca.cert.read_bytes())
        wait_until(lambda: admitted(srv, pki.ca.cert, other.client), timeout=30)
        wait_until(lambda: http_admitted(srv, pki.ca.cert, other.client), timeout=30)
        assert not admitted(srv, pki.ca.cert, pki.client)
        assert not http_admitted(srv, pki.ca.cert, pki.client)
    finally:
        srv.close()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def later(self) -> None:
        self.now += RECHECK_SECONDS


def test_files_written_one_by_one_are_taken_once_they_form_a_pair(
    pki: Pki, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A renewal that writes the certificate, then the key: in between the pair is unusable,
    said once at WARNING, and the old one stays; once the key is written the new pair is taken.
    The files are looked at once a second at most."""
    cert, key = tmp_path / "server.crt", tmp_path / "server.key"
    shutil.copyfile(pki.server.cert, cert)
    shutil.copyfile(pki.server.key, key)
    clock = Clock()
    files = TlsFiles(cert, key, clock=clock)
    first = files.current
    renewal = renewed(pki, tmp_path / "renewal")
    caplog.set_level(logging.INFO, logger="voxlite.service.tls")
    shutil.copyfile(renewal.cert, cert)
    assert files.latest() is first  # not looked at again within the second
    clock.later()
    assert files.latest() is first
    clock.later()
    assert files.latest() is first
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert f"--tls-key {key} is not the key of --tls-cert {cert}" in warnings[0]
    shutil.copyfile(renewal.key, key)
    clock.later()
    taken = files.latest()
    assert taken.version == 2
    assert ssl_presents(taken.ssl) == der(renewal)
    assert "new connections get them" in caplog.records[-1].getMessage()
    key.unlink()
    clock.later()
    assert files.latest() is taken
    assert f"cannot read {key}" in caplog.records[-1].getMessage()
    key.write_bytes(b"-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    clock.later()
    assert files.latest() is taken
    assert f"--tls-key {key} holds no PEM private key" in caplog.records[-1].getMessage()
    key.unlink()
    os.mkfifo(key)  # a read would block the handshake
    clock.later()
    assert files.latest() is taken
    assert f"cannot read {key}: not a regular file" in caplog.records[-1].getMessage()
    key.unlink()
    shutil.copyfile(renewal.key, key)
    clock.later()
    assert files.latest().version == 3


def ssl_presents(context: ssl.SSLContext) -> bytes:
    """The certificate `context` shows a client, through a handshake in memory."""
    client = ssl.create_default_context()
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE
    server_in, server_out, client_in, client_out = (ssl.MemoryBIO() for _ in range(4))
    server = context.wrap_bio(server_in, server_out, server_side=True)
    peer = client.wrap_bio(client_in, client_out, server_hostname="localhost")
    for _ in range(10):
        for side in (peer, server):
            with contextlib.suppress(ssl.SSLWantReadError):
                side.do_handshake()
        server_in.write(client_out.read())
        client_in.write(server_out.read())
    cert = peer.getpeercert(binary_form=True)
    assert cert is not None
    return cert


def test_unusable_tls_files_stop_the_start_with_what_to_fix(
    pki: Pki, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cert, key = str(pki.server.cert), str(pki.server.key)
    assert f"--tls-key {pki.client.key} is not the key of --tls-cert {cert}" in config_error(
        capsys, "--tls-cert", cert, "--tls-key", str(pki.client.key)
    )
    encrypted = tmp_path / "encrypted.key"
    private = serialization.load_pem_private_key(pki.server.key.read_bytes(), None)
    encrypted.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    assert "is encrypted: give the key unencrypted" in config_error(
        capsys, "--tls-cert", cert, "--tls-key", str(encrypted)
    )
    broken = tmp_path / "broken.crt"
    broken.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    assert f"--tls-cert {broken} holds no PEM certificate" in config_error(
        capsys, "--tls-cert", str(broken), "--tls-key", key
    )
    pipe = tmp_path / "pipe.crt"
    os.mkfifo(pipe)  # reading it would block the start
    assert f"--tls-cert: not a regular file: {pipe}" in config_error(
        capsys, "--tls-cert", str(pipe), "--tls-key", key
    )
    assert f"--tls-client-ca {broken} holds no PEM certificate" in config_error(
        capsys, "--tls-cert", cert, "--tls-key", key, "--tls-client-ca", str(broken)
    )


# -- the tokens file -----------------------------------------------------------------------------


def lists_voices(srv: ServerThread, token: str) -> bool:
    """Whether ListVoices with `token` is served (False: UNAUTHENTICATED)."""
    with Client(srv.address, token=token) as tts:
        try:
            return len(tts.voices(timeout=10)) > 0
        except Unauthenticated:
            return False


def http_status(srv: ServerThread, token: str) -> int:
    request = urllib.request.Request(
        http_url(srv, "/v1/models"), headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as refused:
        return refused.code


def test_a_token_added_to_or_withdrawn_from_the_file_needs_no_restart(
    cache_dir: Path, tmp_path: Path
) -> None:
    """The tokens file rewritten (a Secret updated): its new token is accepted and the one it
    dropped refused, on both ports; the token from VOXLITE_AUTH_TOKENS stays."""
    tokens = tmp_path / "tokens"
    tokens.write_text("# team a\nfile-token-a\n")
    srv = ServerThread(
        base_config(
            cache_dir,
            tmp_path,
            http_port=0,
            auth_tokens=("env-token", "file-token-a"),
            auth_tokens_file=tokens,
        )
    )
    try:
        assert lists_voices(srv, "file-token-a")
        assert not lists_voices(srv, "file-token-b")
        fresh = tmp_path / "tokens.new"
        fresh.write_text("# team b\nfile-token-b\n")
        os.replace(fresh, tokens)
        wait_until(lambda: lists_voices(srv, "file-token-b"), timeout=30)
        assert not lists_voices(srv, "file-token-a")
        assert lists_voices(srv, "env-token")
        assert http_status(srv, "file-token-b") == 200
        assert http_status(srv, "file-token-a") == 401
        assert http_status(srv, "env-token") == 200
    finally:
        srv.close()


def replace(path: Path, text: str) -> None:
    """`path` becomes a regular file holding `text`, whatever it was."""
    path.unlink()
    path.write_text(text)


def test_a_tokens_file_left_without_a_token_keeps_those_in_force(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Emptied, gone, or with a line that is no token: never "no auth". The tokens in force stay
    and a WARNING says what is wrong, once per change, without a token in it."""
    tokens = tmp_path / "tokens"
    tokens.write_text("first-token\n")
    clock = Clock()
    server_tokens = ServerTokens(("first-token",), tokens, clock=clock)
    caplog.set_level(logging.INFO, logger="voxlite.service.call.tokens")
    authorized = [("authorization", "Bearer first-token")]
    for change, said in (
        (lambda: tokens.write_text("# none yet\n"), "holds no token"),
        (lambda: tokens.unlink(), "cannot read"),
        (lambda: os.mkfifo(tokens), "not a regular file"),  # a read would block the loop
        (lambda: replace(tokens, "second-token\nnot one\n"), "line 2 of"),
    ):
        change()
        clock.later()
        assert server_tokens.problem(authorized) is None
        clock.later()
        assert server_tokens.problem(authorized) is None
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, warnings
        assert said in warnings[0]
        assert "second-token" not in warnings[0]
        caplog.clear()
    tokens.write_text("second-token\n")
    assert server_tokens.problem(authorized) is None  # not looked at again within the second
    clock.later()
    assert server_tokens.problem(authorized) is not None
    assert server_tokens.problem([("authorization", "Bearer second-token")]) is None
    assert caplog.records[-1].getMessage().endswith("1 token from it in force now")
    assert "second-token" not in caplog.text
