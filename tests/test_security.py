"""TLS, mutual TLS and bearer tokens, with certificates made here: servers, client and CLI."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from voxlite.client import (
    AsyncClient,
    Client,
    HealthStatus,
    Summary,
    Unauthenticated,
    Unavailable,
)
from voxlite.service.grpc.security import TokenAuth, describe_auth
from voxlite.service.settings.config import config_from_args
from voxlite.tts.v1 import tts_pb2 as pb

from .helpers import (
    Pki,
    ServerProcess,
    ServerThread,
    assert_one_error_line,
    assert_server_refused,
    base_config,
    config_error,
    environment,
    issue,
    voxlite,
    voxlite_server,
)

TOKEN = "s3cret-token-1"
OTHER_TOKEN = "another.token_2"
PADDED_TOKEN = "dG9r/ZW4+Mw=="
"""Every character RFC 6750's b64token allows: + and / inside, = at the end."""


def _started(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory, **changes: Any) -> Any:
    srv = ServerThread(base_config(cache_dir, tmp_path_factory.mktemp("voices"), **changes))
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def tls_server(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory, pki: Pki
) -> Iterator[ServerThread]:
    yield from _started(
        cache_dir, tmp_path_factory, tls_cert=pki.server.cert, tls_key=pki.server.key
    )


@pytest.fixture(scope="module")
def mtls_server(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory, pki: Pki
) -> Iterator[ServerThread]:
    yield from _started(
        cache_dir,
        tmp_path_factory,
        tls_cert=pki.server.cert,
        tls_key=pki.server.key,
        tls_client_ca=pki.ca.cert,
    )


@pytest.fixture(scope="module")
def token_server(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerThread]:
    """Plaintext, three tokens, reflection open (the default)."""
    yield from _started(cache_dir, tmp_path_factory, auth_tokens=(TOKEN, OTHER_TOKEN, PADDED_TOKEN))


@pytest.fixture(scope="module")
def tls_token_server(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory, pki: Pki
) -> Iterator[ServerThread]:
    """TLS, one token, reflection behind the token."""
    yield from _started(
        cache_dir,
        tmp_path_factory,
        tls_cert=pki.server.cert,
        tls_key=pki.server.key,
        auth_tokens=(TOKEN,),
        reflection_auth=True,
    )


def speaks(client: Client) -> bool:
    return isinstance(list(client.synthesize("Hello.", timeout=30))[-1], Summary)


# -- TLS ----------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_tls_synthesize_with_the_servers_ca(tls_server: ServerThread, pki: Pki) -> None:
    with Client(tls_server.address, root_certificates=pki.ca.cert.read_bytes()) as client:
        assert speaks(client)
        assert client.health() is HealthStatus.SERVING
    async with AsyncClient(
        f"localhost:{tls_server.port}", root_certificates=pki.ca.cert.read_bytes()
    ) as aclient:
        events = [e async for e in aclient.synthesize("Hello.", timeout=30)]
    assert isinstance(events[-1], Summary)
    assert events[-1].audio_duration_ms > 0


def test_plaintext_and_untrusting_clients_cannot_talk_to_a_tls_server(
    tls_server: ServerThread, pki: Pki
) -> None:
    with Client(tls_server.address) as plain, pytest.raises(Unavailable):
        plain.health(timeout=10)
    # TLS, but trusting the system's CAs: the test CA is not one of them.
    with Client(tls_server.address, tls=True) as untrusting, pytest.raises(Unavailable):
        untrusting.health(timeout=10)
    rogue_ca = pki.rogue_ca.cert.read_bytes()
    with (
        Client(tls_server.address, root_certificates=rogue_ca) as rogue,
        pytest.raises(Unavailable),
    ):
        rogue.health(timeout=10)


def test_mtls_refuses_a_client_without_a_certificate(mtls_server: ServerThread, pki: Pki) -> None:
    with Client(mtls_server.address, root_certificates=pki.ca.cert.read_bytes()) as client:
        with pytest.raises(Unavailable):
            client.health(timeout=10)  # not even health: the handshake fails
        with pytest.raises(Unavailable):
            list(client.synthesize("Hello.", timeout=10))


def test_mtls_refuses_a_certificate_from_another_ca(mtls_server: ServerThread, pki: Pki) -> None:
    with (
        Client(
            mtls_server.address,
            root_certificates=pki.ca.cert.read_bytes(),
            certificate_chain=pki.rogue_client.cert.read_bytes(),
            private_key=pki.rogue_client.key.read_bytes(),
        ) as client,
        pytest.raises(Unavailable),
    ):
        client.health(timeout=10)


def test_mtls_serves_a_client_with_a_certificate_from_its_ca(
    mtls_server: ServerThread, pki: Pki
) -> None:
    with Client(
        mtls_server.address,
        root_certificates=pki.ca.cert.read_bytes(),
        certificate_chain=pki.client.cert.read_bytes(),
        private_key=pki.client.key.read_bytes(),
    ) as client:
        assert speaks(client)


# -- tokens -------------------------------------------------------------------------------------


def test_no_token_is_unauthenticated_and_says_what_to_send(token_server: ServerThread) -> None:
    with Client(token_server.address) as client:
        with pytest.raises(Unauthenticated) as refused:
            list(client.synthesize("Hello.", timeout=10))
        assert "authorization: Bearer <token>" in refused.value.details
        with pytest.raises(Unauthenticated):
            client.voices(timeout=10)
        with client.stream(timeout=10) as session:
            session.send("Hello.")
            session.close()
            with pytest.raises(Unauthenticated):
                list(session)


def test_a_wrong_token_is_unauthenticated_and_not_echoed(token_server: ServerThread) -> None:
    for token in ("wrong-token", TOKEN + "x", TOKEN[:-1]):
        with Client(token_server.address, token=token) as client:
            with pytest.raises(Unauthenticated) as refused:
                list(client.synthesize("Hello.", timeout=10))
            assert "not valid" in refused.value.details
            assert token not in refused.value.details
    with Client(token_server.address, metadata={"authorization": TOKEN}) as no_scheme:
        with pytest.raises(Unauthenticated) as refused:
            no_scheme.voices(timeout=10)
        assert "Bearer" in refused.value.details


def test_every_configured_token_is_accepted_over_plaintext(token_server: ServerThread) -> None:
    for token in (TOKEN, OTHER_TOKEN, PADDED_TOKEN):
        with Client(token_server.address, token=token) as client:
            assert speaks(client)
            assert [v.name for v in client.voices()] == ["en_US-joe-medium"]


def voices_with(server: ServerThread, authorization: str) -> str:
    """ListVoices with this exact authorization value, through plain gRPC (no client-side
    checks): "OK", or the code and message the server answers."""
    with server.channel() as channel:
        try:
            server.stub(channel).ListVoices(
                pb.ListVoicesRequest(), metadata=[("authorization", authorization)], timeout=10
            )
        except grpc.RpcError as exc:
            return f"{exc.code().name}: {exc.details()}"
    return "OK"


ACCEPTED = [
    f"Bearer {TOKEN}",
    f"bearer {TOKEN}",
    f"BEARER {TOKEN}",
    f"bEaReR {TOKEN}",  # ABNF strings and auth-schemes are case-insensitive
    f"Bearer   {TOKEN}",  # credentials = "Bearer" 1*SP b64token
    f"Bearer {PADDED_TOKEN}",
]
REFUSED = [
    TOKEN,  # no scheme
    "Bearer",
    "Bearer ",
    f" Bearer {TOKEN}",
    f"Bearer {TOKEN} ",  # accepted before: spaces around the token were stripped
    f"Bearer{TOKEN}",
    f"Bearer: {TOKEN}",
    f"Token {TOKEN}",
    "Basic dXNlcjpwYXNz",
    f"Bearer {TOKEN} {TOKEN}",
    f"Bearer {TOKEN},{OTHER_TOKEN}",
    f"Bearer '{TOKEN}'",
    f"Bearer {TOKEN}!",  # outside b64token
    f"Bearer ={TOKEN}",  # = only at the end
]
MALFORMED = (
    "UNAUTHENTICATED: the authorization metadata must be 'Bearer <token>': the scheme Bearer, "
    "a space, the token and nothing else (RFC 6750)"
)


def test_bearer_credentials_are_read_as_rfc_6750_writes_them(token_server: ServerThread) -> None:
    """Bug: the token was whatever followed "bearer " with spaces stripped, so "Bearer tok "
    passed. Now: the scheme in any case, one or more spaces, a b64token, nothing else."""
    answers = {value: voices_with(token_server, value) for value in ACCEPTED + REFUSED}
    assert answers == dict.fromkeys(ACCEPTED, "OK") | dict.fromkeys(REFUSED, MALFORMED)
    # Well formed, but not a configured token: a token is compared whole.
    for value in (f"Bearer {PADDED_TOKEN.rstrip('=')}", f"Bearer {TOKEN}="):
        assert "not valid for this server" in voices_with(token_server, value)


def test_bearer_forms_grpc_clients_cannot_send_are_refused_too() -> None:
    """gRPC's own client refuses these metadata values before sending; another HTTP/2 client
    might not."""
    auth = TokenAuth([TOKEN, "K" + TOKEN])
    for value in [
        f"Bearer\t{TOKEN}",
        f"Bearer {TOKEN}\t",
        f"Bearer {TOKEN}\n",
        f"Bearer {TOKEN}\x00",
        f"Bearer\u00a0{TOKEN}",  # a no-break space
        f"Bearer \u212a{TOKEN}",  # the Kelvin sign, K under Unicode case folding
        f"Bearer {TOKEN}\u00e9",
    ]:
        assert auth.problem([("authorization", value)]) is not None, repr(value)
        assert "RFC 6750" in str(auth.problem([("authorization", value.encode("utf-8"))]))


@pytest.mark.asyncio
async def test_token_over_tls_travels_as_call_credentials(
    tls_token_server: ServerThread, pki: Pki
) -> None:
    ca = pki.ca.cert.read_bytes()
    with Client(tls_token_server.address, root_certificates=ca, token=TOKEN) as client:
        assert speaks(client)
    anonymous = Client(tls_token_server.address, root_certificates=ca)
    with anonymous, pytest.raises(Unauthenticated):
        list(anonymous.synthesize("Hello.", timeout=10))
    wrong = Client(tls_token_server.address, root_certificates=ca, token=OTHER_TOKEN)
    with wrong, pytest.raises(Unauthenticated):
        wrong.voices(timeout=10)
    async with AsyncClient(tls_token_server.address, root_certificates=ca, token=TOKEN) as aclient:
        assert len(await aclient.voices(timeout=10)) == 1


def test_health_answers_without_a_token(
    token_server: ServerThread, tls_token_server: ServerThread, pki: Pki
) -> None:
    with Client(token_server.address) as plain:
        assert plain.health() is HealthStatus.SERVING
        assert plain.health(service="voxlite.tts.v1.TextToSpeechService") is HealthStatus.SERVING
    with Client(tls_token_server.address, root_certificates=pki.ca.cert.read_bytes()) as tls:
        assert tls.health() is HealthStatus.SERVING
    with Client(token_server.address, token="wrong") as wrong:
        assert wrong.health() is HealthStatus.SERVING  # health does not look at tokens


def list_services(channel: grpc.Channel, metadata: Any = None) -> list[str]:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    [response] = stub.ServerReflectionInfo(iter([request]), metadata=metadata, timeout=10)
    return [s.name for s in response.list_services_response.service]


def test_reflection_is_open_by_default_and_behind_the_token_when_asked(
    token_server: ServerThread, tls_token_server: ServerThread, pki: Pki
) -> None:
    with grpc.insecure_channel(token_server.address) as channel:
        assert "voxlite.tts.v1.TextToSpeechService" in list_services(channel)
    credentials = grpc.ssl_channel_credentials(pki.ca.cert.read_bytes())
    with grpc.secure_channel(tls_token_server.address, credentials) as channel:
        with pytest.raises(grpc.RpcError) as refused:
            list_services(channel)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        services = list_services(channel, metadata=[("authorization", f"Bearer {TOKEN}")])
        assert "voxlite.tts.v1.TextToSpeechService" in services


def test_tokens_are_compared_by_digest_against_every_token() -> None:
    auth = TokenAuth([TOKEN, OTHER_TOKEN])
    assert auth.problem([("authorization", f"Bearer {OTHER_TOKEN}")]) is None
    assert auth.problem([("authorization", f"Bearer {TOKEN}".encode())]) is None
    assert auth.problem([("authorization", "Bearer ")]) is not None
    assert auth.problem([("authorization", "Basic dXNlcjpwYXNz")]) is not None
    twice = [("authorization", f"Bearer {TOKEN}"), ("authorization", f"Bearer {TOKEN}")]
    assert auth.problem(twice) is not None
    assert auth.problem([]) is not None
    with pytest.raises(ValueError, match="at least one token"):
        TokenAuth([])
    with pytest.raises(ValueError, match="b64token"):
        TokenAuth(["two words"])  # no 'Bearer <token>' could carry it


def test_client_security_options_are_checked(pki: Pki) -> None:
    with pytest.raises(ValueError, match="not both"):
        Client("localhost:1", credentials=grpc.ssl_channel_credentials(), tls=True)
    with pytest.raises(ValueError, match="go together"):
        Client("localhost:1", certificate_chain=pki.client.cert.read_bytes())
    with pytest.raises(ValueError, match="printable ASCII") as bad:
        Client("localhost:1", token="has a space")
    assert "has a space" not in str(bad.value)


# -- the CLI ------------------------------------------------------------------------------------


def test_cli_with_tls_ca_and_token(
    tls_token_server: ServerThread, pki: Pki, tmp_path: Path
) -> None:
    server = ["--server", tls_token_server.address, "--ca", str(pki.ca.cert)]
    out = tmp_path / "hello.opus"
    spoken = voxlite("speak", "Hello.", "-o", str(out), *server, "--token", TOKEN)
    assert spoken.returncode == 0, spoken.stderr
    assert out.stat().st_size > 1000
    # The token from the environment, as the help recommends.
    listed = voxlite("voices", *server, env=environment(VOXLITE_TOKEN=TOKEN))
    assert listed.returncode == 0, listed.stderr
    assert "en_US-joe-medium" in listed.stdout
    refused = voxlite("speak", "Hello.", "-o", str(tmp_path / "no.opus"), *server)
    line = assert_one_error_line(refused)
    assert "needs a token" in line
    assert not (tmp_path / "no.opus").exists()
    wrong = voxlite("voices", *server, "--token", "not-it")
    assert "not valid" in assert_one_error_line(wrong)
    healthy = voxlite("health", *server)  # no token needed
    assert healthy.returncode == 0, healthy.stderr
    assert healthy.stdout.strip() == "SERVING"


def test_cli_mutual_tls_and_bad_options(mtls_server: ServerThread, pki: Pki) -> None:
    server = ["--server", mtls_server.address, "--ca", str(pki.ca.cert)]
    ok = voxlite("health", *server, "--cert", str(pki.client.cert), "--key", str(pki.client.key))
    assert ok.returncode == 0, ok.stderr
    # Bug: a refused handshake said "nothing answers there; start voxlite-server".
    refused = voxlite("health", *server)
    closed = "closed the connection: TLS is on one side only, or the server asks for a client"
    assert closed in assert_one_error_line(refused)
    assert "--cert and --key for one that wants a client certificate" in refused.stderr
    plaintext = voxlite("health", "--server", mtls_server.address)
    assert closed in assert_one_error_line(plaintext)
    half = voxlite("health", *server, "--cert", str(pki.client.cert))
    assert half.returncode == 2
    assert "--cert and --key go together" in half.stderr
    missing = voxlite("health", "--server", mtls_server.address, "--ca", "/nonexistent.pem")
    assert missing.returncode == 2
    assert "--ca: cannot read /nonexistent.pem" in missing.stderr


def test_cli_says_which_tls_option_is_wrong(
    tls_token_server: ServerThread, pki: Pki, tmp_path: Path
) -> None:
    """Bug: a server whose certificate no CA the command trusts had signed, and a --ca file
    that holds no certificate, were both "TLS is on one side only ... give --tls", when --tls
    was given: the first needs --ca, the second another file."""
    # As a user's shell runs it (this process's import of voxlite.client set the variable).
    unset = {k: v for k, v in environment().items() if k != "GRPC_VERBOSITY"}
    untrusted = voxlite("health", "--server", tls_token_server.address, "--tls", env=unset)
    line = assert_one_error_line(untrusted)  # gRPC's own INFO lines about it came before
    assert "TLS certificate is not signed by a CA this command trusts: give --ca FILE" in line
    not_pem = tmp_path / "ca.pem"
    not_pem.write_text("not a certificate\n")
    refused = voxlite("health", "--server", tls_token_server.address, "--ca", str(not_pem))
    line = assert_one_error_line(refused, code=2)
    assert f"--ca: {not_pem} is not a PEM file" in line


def test_cli_says_when_it_asked_a_plaintext_server_for_tls(server: ServerThread) -> None:
    """Bug: --tls or an https:// address to a server without TLS said "TLS is on one side only,
    or the server asks for a client certificate; give --tls (or --ca)", which the command had
    given: it now says the server speaks no TLS and which part of the command asked for it."""
    https = voxlite("health", "--server", f"https://{server.address}")
    line = assert_one_error_line(https)
    assert "does not speak TLS" in line
    assert "write http://host:port, or host:port, for a server without TLS" in line
    flagged = voxlite("health", "--server", server.address, "--tls")
    assert "leave out --tls and --ca for a server without TLS" in assert_one_error_line(flagged)


def test_cli_says_when_the_certificate_names_another_host(
    cache_dir: Path, pki: Pki, tmp_path: Path
) -> None:
    """Bug: a server whose certificate does not name the host dialled was "nothing answers
    there; start voxlite-server", though it was up."""
    ca = x509.load_pem_x509_certificate(pki.ca.cert.read_bytes())
    ca_key = serialization.load_pem_private_key(pki.ca.key.read_bytes(), password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    other, _, _ = issue(
        tmp_path, "other", issuer=(ca, ca_key), server=True, hosts=("other.invalid",)
    )
    (tmp_path / "voices").mkdir()
    srv = ServerThread(
        base_config(cache_dir, tmp_path / "voices", tls_cert=other.cert, tls_key=other.key)
    )
    try:
        refused = voxlite("health", "--server", srv.address, "--ca", str(pki.ca.cert))
    finally:
        srv.close()
    line = assert_one_error_line(refused)
    assert "TLS certificate does not hold the host name given: name the server in" in line
    assert "nothing answers there" not in line


# -- server configuration -----------------------------------------------------------------------


def test_server_security_flags_are_validated(
    pki: Pki, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cert, key, ca = str(pki.server.cert), str(pki.server.key), str(pki.ca.cert)
    assert "go together" in config_error(capsys, "--tls-cert", cert)
    assert "go together" in config_error(capsys, "--tls-key", key)
    assert "needs --tls-cert" in config_error(capsys, "--tls-client-ca", ca)
    assert "no such file: /nope.pem" in config_error(
        capsys, "--tls-cert", "/nope.pem", "--tls-key", key
    )
    assert f"--tls-key: a folder, not a file: {tmp_path}" in config_error(
        capsys, "--tls-cert", cert, "--tls-key", str(tmp_path)
    )
    empty = tmp_path / "empty-tokens"
    empty.write_text("# no tokens yet\n\n")
    assert "holds no token" in config_error(capsys, "--auth-tokens-file", str(empty))
    spaced = tmp_path / "spaced-tokens"
    spaced.write_text("two words\n")
    error = config_error(capsys, "--auth-tokens-file", str(spaced))
    assert "line 1" in error
    assert "two words" not in error
    assert "needs tokens" in config_error(capsys, "--reflection-auth")
    assert "VOXLITE_LOG_FORMAT" in config_error(capsys, VOXLITE_LOG_FORMAT="xml")
    assert "--metrics-port" in config_error(capsys, "--metrics-port", "70000")


def test_tokens_come_from_the_file_and_the_environment(pki: Pki, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    # As a Windows editor may save it: a byte-order mark, CRLF line ends.
    tokens.write_bytes(f"\ufeff# team a\r\n{TOKEN}\r\n\r\n  {OTHER_TOKEN}  \r\n".encode())
    config = config_from_args(
        ["--auth-tokens-file", str(tokens), "--tls-cert", str(pki.server.cert)],
        {"VOXLITE_AUTH_TOKENS": "env-one, env-two,", "VOXLITE_TLS_KEY": str(pki.server.key)},
    )
    assert config.auth_tokens == ("env-one", "env-two", TOKEN, OTHER_TOKEN)
    assert TOKEN not in repr(config)
    assert config.tls_key == pki.server.key
    assert config.tls_client_ca is None
    assert not config.reflection_auth
    defaults = config_from_args([], {})
    assert defaults.auth_tokens == ()
    assert defaults.tls_cert is None
    assert defaults.max_connection_age_seconds == 300
    assert defaults.metrics_port == 0
    assert defaults.log_format == "text"


def test_thread_flags_set_narrow_and_wide_runs(capsys: pytest.CaptureFixture[str]) -> None:
    defaults = config_from_args([], {}).ort
    assert defaults.intra_op_threads == 1
    old_style = config_from_args(["--ort-threads", "2"], {}).ort
    assert (old_style.intra_op_threads, old_style.wide) == (2, False)
    never_wide = config_from_args([], {"VOXLITE_WIDE_THREADS": "1"}).ort
    assert (never_wide.intra_op_threads, never_wide.wide) == (1, False)
    assert "between 1 and 64" in config_error(capsys, "--wide-threads", "0")


def test_admission_wait_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert config_from_args([], {}).admission_wait_seconds == 0.25
    assert config_from_args([], {"VOXLITE_ADMISSION_WAIT_SECONDS": "0"}).admission_wait_seconds == 0
    assert "from 0 to 10" in config_error(capsys, "--admission-wait-seconds", "-1")
    assert "from 0 to 10" in config_error(capsys, "--admission-wait-seconds", "60")


# -- failing closed -----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("tokens", [",", " , ", "", ",,", " "])
def test_auth_tokens_of_separators_only_refuse_to_start(tokens: str) -> None:
    """Bug: VOXLITE_AUTH_TOKENS made only of separators ("," or " , ": what a template whose
    variable is unset writes) started a server that asked for no token, silently."""
    result = voxlite_server("--port", "0", env={"VOXLITE_AUTH_TOKENS": tokens})
    line = assert_server_refused(result)
    assert "VOXLITE_AUTH_TOKENS is set but holds no token" in line


def test_auth_tokens_must_be_bearer_tokens_and_are_never_echoed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for bad in ("ok-token,two words", "ok-token,caf\u00e9", "ok-token,a!b", "ok-token,=x"):
        error = config_error(capsys, VOXLITE_AUTH_TOKENS=bad)
        assert "token (number 2) that is not a bearer token" in error
        assert bad.split(",")[1] not in error
    file = tmp_path / "tokens"
    file.write_text(f"{TOKEN}\nsemi;colon\n")
    error = config_error(capsys, "--auth-tokens-file", str(file))
    assert "line 2" in error
    assert "semi;colon" not in error
    padded = config_from_args([], {"VOXLITE_AUTH_TOKENS": PADDED_TOKEN})
    assert padded.auth_tokens == (PADDED_TOKEN,)


@pytest.mark.slow
def test_the_start_log_says_whether_auth_is_on_and_for_which_calls(
    cache_dir: Path, tmp_path: Path
) -> None:
    tokens = {"VOXLITE_AUTH_TOKENS": f"{TOKEN},{OTHER_TOKEN}"}
    srv = ServerProcess(cache_dir, tmp_path, "--reflection-auth", env=tokens)
    srv.close()  # the whole log, read to its end
    [line] = [line for line in srv.log if ": auth " in line]
    assert line.split(" voxlite: ", 1)[1].strip() == (
        "auth on, 2 tokens: a bearer token is needed for voxlite.tts.v1.TextToSpeechService "
        "and reflection; open to all: grpc.health.v1.Health; over plaintext (tokens readable "
        "on the network path)"
    )
    assert " INFO " in line
    assert not [line for line in srv.log if TOKEN in line or OTHER_TOKEN in line]
    open_server = ServerProcess(cache_dir, tmp_path)
    open_server.close()
    [line] = [line for line in open_server.log if ": auth " in line]
    assert "auth off: every call is served without a token, over plaintext" in line


def test_the_auth_line_names_what_is_open(pki: Pki) -> None:
    config = base_config(Path("cache"), Path("voices"), auth_tokens=(TOKEN,))
    assert describe_auth(config).startswith(
        "auth on, 1 token: a bearer token is needed for voxlite.tts.v1.TextToSpeechService; "
        "open to all: grpc.health.v1.Health, reflection (--reflection-auth to protect it); "
    )
    no_reflection = describe_auth(replace(config, reflection=False))
    assert "open to all: grpc.health.v1.Health; " in no_reflection
    tls = replace(config, tls_cert=pki.server.cert, tls_key=pki.server.key)
    assert describe_auth(tls).endswith("over TLS")
