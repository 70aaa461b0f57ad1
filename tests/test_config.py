"""Server settings: each flag and its VOXLITE_* variable checked alike, refused in one line."""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from voxlite.service.engines.piper import embedded_voice_files
from voxlite.service.settings.config import ServerConfig, config_from_args, start_warnings
from voxlite.service.settings.options import OPTIONS
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from .helpers import (
    ServerProcess,
    ServerThread,
    assert_server_refused,
    assert_taken_port_named,
    base_config,
    config_error,
    voxlite_server,
)

ROOT = Path(__file__).resolve().parents[1]
PORT = "must be between 1 and 65535 (or 0: any free port)"
WORKERS = "must be between 1 and 64 (or 0: cores / --ort-threads)"
IDLE = "must be a number of seconds, 0 or more (0: never)"
GRACE = "must be a number of seconds, 0 or more"
AGE = "must be a number of seconds from 0 to 2073600 (0: never)"
ADMISSION = "must be a number of seconds from 0 to 10 (0: refused at once)"
BAD = [
    ("port", "70000", PORT),  # served on 4464 before (70000 - 65536)
    ("port", "-1", PORT),
    ("port", "http", "must be a whole number between 1 and 65535 (or 0: any free port)"),
    ("metrics-port", "65536", "must be between 1 and 65535 (or 0: no metrics)"),
    ("workers", "100000", WORKERS),
    ("workers", "-2", WORKERS),
    ("ort-threads", "0", "must be between 1 and 64"),
    ("wide-threads", "65", "must be between 1 and 64"),
    ("max-streams", "0", "must be between 1 and 10000"),
    ("max-text-chars", "2000000", "must be between 1 and 1000000"),
    ("batch-vocoder", "0", "must be between 1 and 64"),
    ("phrase-cache-mb", "-1", "must be between 0 and 65536"),
    ("idle-timeout-seconds", "nan", IDLE),  # every stream's watchdog spun a core before
    ("idle-timeout-seconds", "inf", IDLE),
    ("idle-timeout-seconds", "-1", IDLE),
    ("grace-seconds", "nan", GRACE),
    ("grace-seconds", "-5", GRACE),
    ("drain-delay-seconds", "61", "must be a number of seconds from 0 to 60"),
    ("admission-wait-seconds", "-inf", ADMISSION),
    ("max-connection-age-seconds", "inf", AGE),  # a traceback before (OverflowError)
    ("max-connection-age-seconds", "3e6", AGE),  # gRPC's 32-bit milliseconds overflow
    ("log-level", "verbose", "must be one of debug, info, warning, error"),
    ("log-format", "xml", "must be one of text, json"),
    ("host", " ", "must not be empty"),
    ("default-voice", " ", "must not be empty"),
    ("engines", "kokoro", "must list engines among piper, kokoro, piper included (it speaks "
     "the default voice)"),
]  # fmt: skip


def env_name(flag: str) -> str:
    return "VOXLITE_" + flag.upper().replace("-", "_")


@pytest.mark.parametrize(("name", "value", "requirement"), BAD)
def test_a_bad_value_is_refused_alike_from_the_flag_and_the_variable(
    capsys: pytest.CaptureFixture[str], name: str, value: str, requirement: str
) -> None:
    shown = value if value.strip() else repr(value)
    from_flag = config_error(capsys, f"--{name}={value}")
    assert from_flag == f"voxlite-server: error: --{name} {requirement}, got {shown}"
    from_env = config_error(capsys, **{env_name(name): value})
    assert from_env == f"voxlite-server: error: {env_name(name)} {requirement}, got {shown}"


def test_switches_take_true_or_false_from_the_environment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert config_error(capsys, VOXLITE_REFLECTION="maybe") == (
        "voxlite-server: error: VOXLITE_REFLECTION must be true or false (or 1/0, yes/no, "
        "on/off), got maybe"
    )
    for text, value in [("0", False), ("off", False), ("No", False), ("TRUE", True)]:
        assert config_from_args([], {"VOXLITE_REFLECTION": text}).reflection is value
    assert config_from_args(["--no-reflection"], {"VOXLITE_REFLECTION": "on"}).reflection is False


GOOD: list[tuple[str, str, str, Any]] = [
    ("port", "0", "port", 0),
    ("port", "65535", "port", 65535),
    ("metrics-port", "9090", "metrics_port", 9090),
    ("workers", "0", "workers", 0),
    ("workers", "64", "workers", 64),
    ("idle-timeout-seconds", "0", "idle_timeout_seconds", 0.0),
    ("idle-timeout-seconds", "1e3", "idle_timeout_seconds", 1000.0),
    ("grace-seconds", "30", "grace_seconds", 30.0),
    ("max-connection-age-seconds", "2073600", "max_connection_age_seconds", 2073600.0),
    ("log-level", "WARNING", "log_level", "warning"),
    ("log-format", "JSON", "log_format", "json"),
    ("cache-dir", "none", "cache_dir", None),
    ("voices-dir", "models", "voices_dir", Path("models")),
    ("phrase-cache-mb", "0", "phrase_cache_mb", 0),
]


@pytest.mark.parametrize(("name", "text", "field", "value"), GOOD)
def test_a_good_value_reads_alike_from_the_flag_and_the_variable(
    name: str, text: str, field: str, value: Any
) -> None:
    assert getattr(config_from_args([f"--{name}={text}"], {}), field) == value
    assert getattr(config_from_args([], {env_name(name): text}), field) == value


def test_flags_win_and_an_empty_variable_is_unset_except_for_security(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert config_from_args(["--port=5"], {"VOXLITE_PORT": "6"}).port == 5
    assert config_from_args([], {"VOXLITE_PORT": "", "VOXLITE_LOG_LEVEL": ""}).port == 50051
    # A template that left a security setting empty must not turn it off.
    for name in ("VOXLITE_TLS_CERT", "VOXLITE_TLS_KEY", "VOXLITE_TLS_CLIENT_CA"):
        assert config_error(capsys, **{name: ""}).endswith(f"{name} must be a path, got ''")
    assert "VOXLITE_AUTH_TOKENS_FILE must be a path" in config_error(
        capsys, VOXLITE_AUTH_TOKENS_FILE=""
    )
    assert "VOXLITE_REFLECTION_AUTH must be true or false" in config_error(
        capsys, VOXLITE_REFLECTION_AUTH=""
    )
    assert "VOXLITE_AUTH_TOKENS is set but holds no token" in config_error(
        capsys, VOXLITE_AUTH_TOKENS=""
    )


def test_cors_origins_are_read_as_browsers_write_them(capsys: pytest.CaptureFixture[str]) -> None:
    """A browser's Origin is lower case with no default port: an origin written otherwise
    would never match it. Anything more than an origin (a path, no scheme) is refused."""
    written = "https://App.Example.com:443/, http://localhost:3000,http://[::1]:8080"
    config = config_from_args(["--http-port=0", f"--cors-origins={written}"], {})
    assert config.cors_origins == (
        "https://app.example.com",
        "http://localhost:3000",
        "http://[::1]:8080",
    )
    env = {"VOXLITE_HTTP_PORT": "8000", "VOXLITE_CORS_ORIGINS": "*"}
    assert config_from_args([], env).cors_origins == ("*",)
    for bad in ("app.example.com", "https://app.example.com/speech", "ftp://x.org", "http://x:0"):
        assert f"--cors-origins has {bad!r}, which is not an origin: write the scheme" in (
            config_error(capsys, "--http-port=0", f"--cors-origins={bad}")
        )
    assert "* alone allows any origin" in config_error(
        capsys, "--http-port=0", "--cors-origins=*,https://a.org"
    )
    assert config_error(capsys, "--cors-origins=*") == (
        "voxlite-server: error: --cors-origins is for the HTTP API: give --http-port too"
    )


def test_metrics_need_a_port_of_their_own(capsys: pytest.CaptureFixture[str]) -> None:
    assert config_error(capsys, "--port=9000", VOXLITE_METRICS_PORT="9000") == (
        "voxlite-server: error: --metrics-port and --port are both 9000: give metrics a port "
        "of its own"
    )
    assert config_from_args(["--port=0", "--metrics-port=0"], {}).metrics_port == 0
    # --port left at its default counts too (it failed at the bind, with a bare OSError).
    assert config_error(capsys, "--metrics-port=50051") == (
        "voxlite-server: error: --metrics-port and --port are both 50051: give metrics a port "
        "of its own"
    )


def test_a_taken_metrics_port_says_so_in_one_line(cache_dir: Path, tmp_path: Path) -> None:
    assert_taken_port_named("--metrics-port", cache_dir, tmp_path)


def test_a_voices_folder_the_server_cannot_read_is_warned_of(tmp_path: Path) -> None:
    """Bug: a folder the server's user may not read (a volume mounted with another owner) was
    taken as an empty one, with no word. Root reads anything: the check runs with the
    capabilities that let it dropped (setpriv), as a user without them would."""
    folder = tmp_path / "voices"
    folder.mkdir(mode=0)
    code = (
        "import pathlib, sys; from voxlite.service.settings.config import ServerConfig, "
        "start_warnings; folder = pathlib.Path(sys.argv[1]); "
        "print(start_warnings(ServerConfig(voices_dir=folder), {}))"
    )
    command = [sys.executable, "-c", code, str(folder)]
    if os.geteuid() == 0:
        drop = "-dac_override,-dac_read_search"
        command = ["setpriv", "--bounding-set", drop, "--inh-caps", drop, *command]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    assert (
        f"voices folder {folder} cannot be read (Permission denied: give the server's user read "
        "access) (--voices-dir): no voice is served from it (the embedded en_US-joe-medium "
        "still is)"
    ) in result.stdout


def test_unknown_flags_and_missing_values_are_one_line_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert config_error(capsys, "--scheduler=deadline") == (
        "voxlite-server: error: unrecognized arguments: --scheduler=deadline"
    )
    assert config_error(capsys, "--port") == (
        "voxlite-server: error: argument --port: expected one argument"
    )


def test_a_missing_voices_folder_warns_unless_the_default_voice_needs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing, a_file = tmp_path / "missing", tmp_path / "a-file"
    a_file.write_text("not a folder")
    config = config_from_args([f"--voices-dir={missing}"], {})
    assert start_warnings(config, {}) == [
        f"voices folder {missing} does not exist (--voices-dir): no voice is served from it "
        "(the embedded en_US-joe-medium still is)"
    ]
    config = config_from_args([], {"VOXLITE_VOICES_DIR": str(a_file)})
    assert start_warnings(config, {}) == [
        f"voices folder {a_file} is not a folder (--voices-dir): no voice is served from it "
        "(the embedded en_US-joe-medium still is)"
    ]
    assert start_warnings(config_from_args([f"--voices-dir={tmp_path}"], {}), {}) == []
    # A default voice other than the embedded one can only come from the folder.
    error = config_error(capsys, f"--voices-dir={missing}", "--default-voice=en_GB-x-medium")
    assert error == (
        f"voxlite-server: error: voices folder {missing} (--voices-dir) does not exist, and "
        "the default voice en_GB-x-medium can only come from there: point it at the folder "
        "with en_GB-x-medium.onnx, or leave the default voice (en_US-joe-medium, embedded)"
    )
    error = config_error(
        capsys, VOXLITE_VOICES_DIR=str(a_file), VOXLITE_DEFAULT_VOICE="en_GB-x-medium"
    )
    assert f"voices folder {a_file} (VOXLITE_VOICES_DIR) is not a folder" in error


def test_unknown_variables_are_named_in_one_warning() -> None:
    """VOXLITE_SCHEDULER (a setting no more) or a misspelt name was ignored in silence."""
    config = config_from_args([], {})
    env = {
        "VOXLITE_SCHEDULER": "thread-per-stream",
        "VOXLITE_MAX_STREAM": "4",
        "VOXLITE_PORT": "50051",
        "VOXLITE_SERVER": "localhost:50051",  # the client's
        "VOXLITE_TOKEN": "a-token",
        "PATH": "/bin",
    }
    assert start_warnings(config, env) == [
        "VOXLITE_MAX_STREAM, VOXLITE_SCHEDULER: no such setting, ignored (voxlite-server "
        "--help lists the settings; VOXLITE_<FLAG>)"
    ]


def test_the_scripts_variables_are_no_unknown_setting() -> None:
    """A VOXLITE_* variable a script reads (VOXLITE_LANGUAGES=en scripts/setup) is no setting
    the server warns about when it is left exported."""
    scripts = Path(__file__).resolve().parents[1] / "scripts"
    names = {n for f in scripts.iterdir() for n in re.findall(r"VOXLITE_[A-Z_]+", f.read_text())}
    assert names
    assert start_warnings(config_from_args([], {}), dict.fromkeys(names, "x")) == []


def test_the_configuration_page_lists_every_setting() -> None:
    """docs/configuration.md's table and the options table name the same flags (README's
    table still listed --scheduler after the flag was removed)."""
    section = (ROOT / "docs" / "configuration.md").read_text()
    rows = [line for line in section.splitlines() if line.startswith("| `--")]
    listed = {
        name
        for row in rows
        for name in re.findall(r"`--([a-z-]+)`", row.split("|")[1])
        if not name.startswith("no-")
    }
    assert listed == {option.name for option in OPTIONS if option.flag}
    assert all(option.env in section for option in OPTIONS if not option.flag)


README_LINES = 300
"""README.md is the user manual: what voxlite is, how to start and use it, the headline figures
with their commands; the rest lives in docs/ (issue 29)."""


def test_the_readme_is_a_manual() -> None:
    """README.md fits in README_LINES, and the flags its configuration table names are options
    (a removed flag stays listed nowhere)."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_LINES
    rows = [line for line in readme.splitlines() if line.startswith("| `--")]
    named = {name for row in rows for name in re.findall(r"`--([a-z-]+)`", row.split("|")[1])}
    assert named
    assert named <= {option.name for option in OPTIONS if option.flag}


# -- real server processes ----------------------------------------------------------------------

PROCESS_CASES = [
    pytest.param(["--idle-timeout-seconds", "nan"], {}, "--idle-timeout-seconds", id="idle-nan"),
    pytest.param([], {"VOXLITE_IDLE_TIMEOUT_SECONDS": "inf"}, "VOXLITE_IDLE", id="idle-env"),
    pytest.param(["--port", "70000"], {}, "--port must be between 1 and 65535", id="port"),
    pytest.param([], {"VOXLITE_PORT": "70000"}, "VOXLITE_PORT must be", id="port-env"),
    pytest.param(["--workers", "100000"], {}, "--workers must be between 1 and 64", id="workers"),
    pytest.param([], {"VOXLITE_LOG_LEVEL": "verbose"}, "VOXLITE_LOG_LEVEL must be", id="log-env"),
    pytest.param(["--max-connection-age-seconds", "inf"], {}, "--max-connection-age", id="age"),
    pytest.param(["--grace-seconds", "-5"], {}, "--grace-seconds must be", id="grace"),
    pytest.param(["--no-such-flag"], {}, "unrecognized arguments", id="unknown-flag"),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("args", "env", "expected"), PROCESS_CASES)
def test_a_server_with_a_bad_setting_exits_2_with_one_line(
    cache_dir: Path, args: list[str], env: dict[str, str], expected: str
) -> None:
    """Bug: --idle-timeout-seconds nan served (and each call then spun a core for ever),
    --port 70000 served on 4464, VOXLITE_LOG_LEVEL=verbose and an infinite connection age
    ended in tracebacks."""
    port = [] if "VOXLITE_PORT" in env else ["--port", "0"]
    base = ["--host", "127.0.0.1", *port, "--cache-dir", str(cache_dir)]
    line = assert_server_refused(voxlite_server(*base, *args, env=env))
    assert expected in line


@pytest.mark.slow
def test_a_server_with_a_voices_folder_that_cannot_give_its_default_voice_exits_2(
    cache_dir: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "missing"
    result = voxlite_server(
        "--port", "0", "--cache-dir", str(cache_dir), "--voices-dir", str(missing),
        "--default-voice", "en_GB-x-medium",
    )  # fmt: skip
    assert "the default voice en_GB-x-medium can only come from there" in (
        assert_server_refused(result)
    )


@pytest.mark.slow
def test_a_server_without_its_voices_folder_warns_and_serves_the_embedded_voice(
    cache_dir: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "missing"
    srv = ServerProcess(cache_dir, missing, env={"VOXLITE_SCHEDULER": "deadline"})
    try:
        stub = tts_pb2_grpc.TextToSpeechServiceStub(srv.channel)
        listed = stub.ListVoices(pb.ListVoicesRequest(), timeout=10)
        assert [v.name for v in listed.voices] == ["en_US-joe-medium"]
    finally:
        srv.close()
    warnings = [line.split(" voxlite: ", 1)[1] for line in srv.log if " WARNING " in line]
    assert warnings == [
        f"voices folder {missing} does not exist (--voices-dir): no voice is served from it "
        "(the embedded en_US-joe-medium still is)\n",
        "VOXLITE_SCHEDULER: no such setting, ignored (voxlite-server --help lists the "
        "settings; VOXLITE_<FLAG>)\n",
    ]


# -- voice configs ------------------------------------------------------------------------------


def test_a_voice_whose_sample_rate_is_not_a_rate_is_reported_and_not_found(
    cache_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Bug: a voice config with sample rate 0 was listed as a voice, then every call naming
    it failed with UNKNOWN and an exception's text."""
    model, config = embedded_voice_files()
    for name, rate in (("en_GB-zero-medium", "0"), ("en_GB-minus-medium", "-22050")):
        (tmp_path / f"{name}.onnx").symlink_to(model)
        text = re.sub(r'"sample_rate": *\d+', f'"sample_rate": {rate}', config.read_text())
        assert f'"sample_rate": {rate}' in text
        (tmp_path / f"{name}.onnx.json").write_text(text)
    caplog.set_level(logging.INFO, logger="voxlite.service.server")
    srv = ServerThread(base_config(cache_dir, tmp_path))
    try:
        # The log does not call the voices that failed loaded.
        assert "0 more voice(s) loaded, 2 failed (ListVoices says why): 1 in all" in caplog.text
        with srv.channel() as channel:
            stub = srv.stub(channel)
            listed = stub.ListVoices(pb.ListVoicesRequest(), timeout=10)
            assert [v.name for v in listed.voices] == ["en_US-joe-medium"]
            assert {Path(f.path).name: f.reason for f in listed.failed} == {
                "en_GB-minus-medium.onnx.json": "audio.sample_rate -22050 is not a sample rate "
                "in Hz (1000 to 192000)",
                "en_GB-zero-medium.onnx.json": "audio.sample_rate 0 is not a sample rate in Hz "
                "(1000 to 192000)",
            }
            request = pb.SynthesizeRequest(
                text="Hello.", config=pb.SynthesisConfig(voice="en_GB-zero-medium")
            )
            with pytest.raises(grpc.RpcError) as refused:
                list(stub.Synthesize(request, timeout=30))
            assert refused.value.code() == grpc.StatusCode.NOT_FOUND
            assert refused.value.details().startswith(
                "voice 'en_GB-zero-medium' not found (its file failed to load: "
                "audio.sample_rate 0 is not a sample rate in Hz (1000 to 192000))"
            )
    finally:
        srv.close()


# Options that config_from_args turns into other fields: the onnxruntime settings.
FOLDED = {"ort_threads", "wide_threads"}


def test_every_option_is_a_field_of_the_server_config() -> None:
    """A setting is never parsed and then dropped: each option is a ServerConfig field or is
    folded into one, and config_from_args refuses a value it has no field for."""
    fields_ = {f.name for f in dataclasses.fields(ServerConfig)}
    assert {o.key for o in OPTIONS} - fields_ == FOLDED


def _documented() -> dict[str, str]:
    """docs/configuration.md's table: each flag and the default its row shows."""
    rows: dict[str, str] = {}
    for line in (ROOT / "docs" / "configuration.md").read_text().splitlines():
        if line.startswith("| `--"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            for flag in re.findall(r"`--([a-z-]+)`", cells[0]):
                rows[flag] = cells[1]
    return rows


def test_the_configuration_page_and_the_help_say_the_defaults_the_server_has() -> None:
    """Bug: defaults and their meaning were written three times and had drifted apart. Every
    flag has its row in docs/configuration.md, and a number shown as a default there or in the
    help's "(default N)" is the ServerConfig's own."""
    documented = _documented()
    flags = {o.name for o in OPTIONS if o.flag}
    assert flags <= set(documented), sorted(flags - set(documented))
    defaults = ServerConfig()
    for option in OPTIONS:
        value = getattr(defaults, option.key, None)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        shown = re.fullmatch(r"`(-?[\d.]+)`.*", documented.get(option.name, ""))
        if shown:
            assert float(shown.group(1)) == value, option.name
        helped = re.search(r"\(default (-?[\d.]+)", option.help)
        if helped:
            assert float(helped.group(1)) == value, option.name
