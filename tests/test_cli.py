"""The `voxlite` command, run as a subprocess against a real server on loopback."""

from __future__ import annotations

import http.server
import io
import itertools
import json
import os
import pty
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile
from grpc_health.v1 import health_pb2
from voxlite.client import Voice, VoiceList, VoiceLoadFailure
from voxlite.client._channel import names_no_port
from voxlite.client.cli import _pieces, render_voices

from .helpers import (
    CLI,
    LONG_TEXT,
    ServerProcess,
    ServerThread,
    assert_one_error_line,
    base_config,
    environment,
    voxlite,
    wait_until,
)

TEXT = "Good morning. The meeting starts at nine, in the small room."
WORDS = ["Good", "morning", "The", "meeting", "starts", "at", "nine", "in", "the", "small", "room"]


@pytest.fixture
def refused_address() -> Iterator[str]:
    """An address nothing listens on: the port stays bound (not listening) during the test."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{sock.getsockname()[1]}"


# -- speak --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["out.opus", "out.ogg", "out.wav", "out.mp3"])
def test_speak_writes_files_that_independent_decoders_read(
    server: ServerThread, tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    result = voxlite("speak", TEXT, "-o", str(path), "--server", server.address)
    assert result.returncode == 0, result.stderr
    assert result.stdout == result.stderr == ""  # stderr is not a terminal: no progress
    samples, rate = soundfile.read(path, dtype="float32")
    assert rate == 24000
    assert 2.0 < len(samples) / rate < 10.0
    assert np.abs(samples).max() > 0.1
    if path.suffix in (".opus", ".ogg"):
        info = subprocess.run(["opusinfo", str(path)], capture_output=True, text=True, check=True)
        assert "WARNING" not in info.stdout + info.stderr
        assert "Playback length" in info.stdout
    if path.suffix == ".mp3":
        assert soundfile.info(str(path)).format == "MP3"


@pytest.mark.parametrize(
    ("name", "extra", "bytes_per_second"),
    [
        ("out.raw", ["--sample-rate", "16000"], 32000),
        ("out.ulaw", [], 8000),
        ("out.alaw", [], 8000),
        ("out.bin", ["--format", "raw"], 48000),
    ],
)
def test_speak_writes_headerless_formats(
    server: ServerThread, tmp_path: Path, name: str, extra: list[str], bytes_per_second: int
) -> None:
    path = tmp_path / name
    result = voxlite("speak", "Hello there.", "-o", str(path), *extra, "--server", server.address)
    assert result.returncode == 0, result.stderr
    seconds = path.stat().st_size / bytes_per_second
    assert 0.5 < seconds < 3.0
    assert not path.read_bytes().startswith((b"RIFF", b"OggS"))


def test_format_flag_wins_over_the_extension(server: ServerThread, tmp_path: Path) -> None:
    path = tmp_path / "speech.bin"
    result = voxlite(
        "speak", "Hello.", "-o", str(path), "--format", "wav", "--server", server.address
    )
    assert result.returncode == 0, result.stderr
    assert soundfile.info(str(path)).format == "WAV"


def test_speak_asks_for_a_language(server: ServerThread, tmp_path: Path) -> None:
    """--language reaches the server from one text (Synthesize) and from stdin (streaming)."""
    path = tmp_path / "en.wav"
    result = voxlite(
        "speak", "Hello.", "-o", str(path), "--language", "en-US", "--server", server.address
    )
    assert result.returncode == 0, result.stderr
    assert soundfile.info(str(path)).duration > 0.3
    refused = tmp_path / "de.wav"
    for text, stdin in (("Hallo.", ""), ("-", "Hallo.\n")):
        result = subprocess.run(
            [
                *CLI,
                "speak",
                text,
                "-o",
                str(refused),
                "--language",
                "de",
                "--server",
                server.address,
            ],
            input=stdin,
            capture_output=True,
            text=True,
            env=environment(),
            timeout=90,
        )
        message = "no voice speaks language 'de': this server has en-US"
        assert message in assert_one_error_line(result)
    assert not refused.exists()


def test_speak_to_standard_output(server: ServerThread) -> None:
    wav = subprocess.run(
        [*CLI, "speak", "Hello there.", "-o", "-", "--format", "wav", "--server", server.address],
        capture_output=True,
        env=environment(),
        timeout=90,
        check=True,
    ).stdout
    assert wav[4:8] == wav[40:44] == b"\xff\xff\xff\xff"  # a pipe: sizes unknown
    samples, rate = soundfile.read(io.BytesIO(wav), dtype="int16")
    assert rate == 24000
    assert len(samples) == (len(wav) - 44) // 2
    opus = subprocess.run(
        [*CLI, "speak", "Hello there.", "-o", "-", "--server", server.address],
        capture_output=True,
        env=environment(),
        timeout=90,
        check=True,
    ).stdout
    assert opus.startswith(b"OggS")
    assert b"OpusHead" in opus[:100]


def first_line_spoken(process: subprocess.Popen[bytes], line: bytes, path: Path) -> None:
    """Write `line` to `voxlite speak -`'s stdin and wait (polling) until its audio is in
    `path`, with stdin still open."""
    assert process.stdin is not None
    process.stdin.write(line)
    process.stdin.flush()
    deadline = time.monotonic() + 60
    while not (path.exists() and path.stat().st_size > 0):
        assert process.poll() is None, "the command ended while stdin was open"
        assert time.monotonic() < deadline, "no audio for the first line"
        time.sleep(0.05)  # polling interval


def test_speak_streams_stdin_line_by_line(server: ServerThread, tmp_path: Path) -> None:
    """Audio for the first line is written while stdin is still open (no sentence end needed)."""
    path = tmp_path / "live.raw"
    with subprocess.Popen(
        [*CLI, "speak", "-", "-o", str(path), "--server", server.address],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(),
    ) as process:
        try:
            assert process.stdin is not None
            first_line_spoken(process, b"Hello there this is the first line\n", path)
            assert process.poll() is None
            first = path.stat().st_size
            # communicate() writes the second line, then closes stdin.
            _, stderr = process.communicate(b"And this is the second line.\n", timeout=60)
        finally:
            process.kill()
    assert process.returncode == 0, stderr
    total = path.stat().st_size
    assert total > first
    assert total / 48000 > 2.0  # both lines spoken (24 kHz 16-bit PCM)


def test_a_stream_ended_before_stdin_is_an_error_not_a_truncation(
    cache_dir: Path, tmp_path: Path
) -> None:
    """Bug: a draining server ended `voxlite speak -`'s stream once it had spoken what it held,
    and the command exited 0 while lines were still coming: the rest was silently not spoken.
    It now says so and exits 1; what was spoken is a valid file."""
    srv = ServerThread(base_config(cache_dir, tmp_path / "voices", drain_delay_seconds=0.0))
    path = tmp_path / "cut.opus"
    try:
        with subprocess.Popen(
            [*CLI, "speak", "-", "-o", str(path), "--server", srv.address],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment(),
        ) as process:
            try:
                assert process.stdin is not None
                line = b"The first line is spoken before the server drains.\n"
                first_line_spoken(process, line, path)
                # The drain ends the stream once it has been quiet (spoken all, no text) for 2 s.
                srv.call(srv.server.stop(30))
                assert process.wait(timeout=60) == 1  # stdin is still open
                assert process.stderr is not None
                stderr = process.stderr.read().decode()
            finally:
                process.kill()
    finally:
        srv.close()
    assert "ended the stream before standard input ended" in stderr, stderr
    assert stderr.count("\n") == 1
    info = subprocess.run(["opusinfo", str(path)], capture_output=True, text=True, check=False)
    assert info.returncode == 0, info.stdout


def speak_long_until_audio(srv: ServerProcess, path: Path, then: Callable[[], object]) -> str:
    """`voxlite speak` of a long text into `path`; `then` once its audio is arriving. The
    command fails: its one error line."""
    with subprocess.Popen(
        [*CLI, "speak", " ".join([LONG_TEXT] * 4), "-o", str(path), "--server", srv.address],
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    ) as process:
        try:
            # Audio is arriving: the file holds more than its headers.
            wait_until(lambda: path.exists() and path.stat().st_size > 4000)
            then()
            _, stderr = process.communicate(timeout=60)
        finally:
            process.kill()
    assert process.returncode == 1, stderr
    assert stderr.count("\n") == 1, stderr
    return stderr


@pytest.mark.parametrize("name", ["cut.opus", "cut.wav"])
def test_a_call_the_server_ends_part_way_leaves_a_valid_file_and_says_so(
    cache_dir: Path, tmp_path: Path, name: str
) -> None:
    """Bug: Ctrl-C on the server during a long `voxlite speak -o cut.opus` left a truncated
    file (opusinfo: "EOS not set on stream 1"). The file now holds what was spoken before the
    drain's grace ran out, as a valid file, and the error line says how much and where. The
    text is far longer than any machine speaks in the 1 s grace."""
    srv = ServerProcess(
        cache_dir, tmp_path / "voices", "--grace-seconds", "1", "--phrase-cache-mb", "0"
    )
    path = tmp_path / name
    try:
        stderr = speak_long_until_audio(srv, path, lambda: srv.proc.send_signal(signal.SIGTERM))
        assert srv.wait(timeout=60) == 0
    finally:
        srv.close()
    assert "is unavailable: the server is shutting down" in stderr
    saved = re.search(
        r"; saved the (\d+\.\d) s spoken before the error in (.+), a valid file$", stderr.strip()
    )
    assert saved, stderr
    assert saved[2] == str(path)
    # The message rounds to 0.1 s; Opus trims its encoder delay.
    assert soundfile.info(str(path)).duration == pytest.approx(float(saved[1]), abs=0.1)
    if name.endswith(".opus"):
        info = subprocess.run(["opusinfo", str(path)], capture_output=True, text=True, check=True)
        assert "WARNING" not in info.stdout + info.stderr, info.stdout
    else:
        data = path.read_bytes()
        assert struct.unpack("<I", data[4:8])[0] == len(data) - 8  # RIFF size
        assert struct.unpack("<I", data[40:44])[0] == len(data) - 44  # data size


def test_a_server_gone_part_way_is_not_called_a_tls_mismatch(
    cache_dir: Path, tmp_path: Path
) -> None:
    """Bug: a server killed during a long `speak` was "TLS is on one side only ... give --tls",
    though its audio had been arriving over plaintext for seconds."""
    srv = ServerProcess(cache_dir, tmp_path / "voices", "--phrase-cache-mb", "0")
    try:
        stderr = speak_long_until_audio(srv, tmp_path / "cut.opus", srv.proc.kill)
    finally:
        srv.close()
    assert "closed the connection part way through the call: the server stopped" in stderr
    assert "TLS" not in stderr
    assert re.search(r"; saved the \d+\.\d s spoken before the error in ", stderr), stderr


@pytest.fixture(scope="module")
def small_limit(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerThread]:
    """A server that refuses a stream holding over 200 characters not yet spoken."""
    srv = ServerThread(base_config(cache_dir, tmp_path_factory.mktemp("v"), max_text_chars=200))
    yield srv
    srv.close()


def speak_stdin(
    srv: ServerThread, text: str, path: Path, *, timeout: float
) -> subprocess.CompletedProcess[str]:
    """`voxlite speak - -o path` with `text` on its standard input, all at once."""
    command = [*CLI, "speak", "-", "-o", str(path), "--server", srv.address]
    return subprocess.run(
        command, input=text, capture_output=True, text=True, env=environment(), timeout=timeout
    )


def test_speak_paces_a_fast_producer_under_the_servers_text_limit(
    small_limit: ServerThread, tmp_path: Path
) -> None:
    """`cat file | voxlite speak -` sends all lines at once; unpaced, the server refuses them."""
    lines = "".join(
        f"Line {i} is here, and it says a few more words than that.\n" for i in range(6)
    )
    assert len(lines) > 300
    path = tmp_path / "paced.raw"
    result = speak_stdin(small_limit, lines, path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert path.stat().st_size / 48000 > 6 * 2.0  # every line spoken


def test_a_line_over_the_servers_limit_is_spoken_in_pieces(
    server: ServerThread, tmp_path: Path
) -> None:
    """Bug: a line of standard input over the server's limit (5000 characters), as a text
    file's paragraph often is, failed: "a text piece of 5626 characters is over the limit of
    5000: send it in smaller pieces", a piece the user never chose."""
    sentence = "The quick brown fox jumps over the lazy dog. "  # the phrase cache speaks it again
    line = sentence * 125 + "\n"
    assert len(line) > 5000
    path = tmp_path / "long.raw"
    result = speak_stdin(server, line, path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert path.stat().st_size / 48000 > 125 * 1.5  # every sentence spoken


def test_long_lines_are_cut_after_a_sentence_a_clause_or_a_space() -> None:
    text = "Pi is 3.14 and more. " * 8
    pieces = list(_pieces(text, 50))
    assert "".join(pieces) == text
    assert pieces[0] == "Pi is 3.14 and more. Pi is 3.14 and more. "  # never inside 3.14
    # A Mandarin sentence of 13 characters with a clause's comma, six times.
    mandarin = "\u4eca\u5929\u5929\u6c14\u5f88\u597d\uff0c\u6211\u4eec\u53bb\u516c\u56ed\u3002" * 6
    assert list(_pieces(mandarin, 30)) == [mandarin[:26], mandarin[26:52], mandarin[52:78]]
    assert list(_pieces("one, two three four five six", 12)) == [
        "one, two ",
        "three four ",
        "five six",
    ]
    assert [len(p) for p in _pieces("a" * 130, 50)] == [50, 50, 30]
    assert list(_pieces("short", 50)) == ["short"]


@pytest.mark.parametrize("name", ["words.jsonl", "words.srt", "words.vtt"])
def test_timestamps_file_matches_the_spoken_words(
    server: ServerThread, tmp_path: Path, name: str
) -> None:
    audio, stamps = tmp_path / "a.wav", tmp_path / name
    result = voxlite(
        "speak", TEXT, "-o", str(audio), "--timestamps", str(stamps), "--server", server.address
    )
    assert result.returncode == 0, result.stderr
    duration_ms = soundfile.info(str(audio)).duration * 1000
    text = stamps.read_text()
    if name.endswith(".jsonl"):
        records = [json.loads(line) for line in text.splitlines()]
        assert [r["word"] for r in records] == WORDS
        spans = [(r["start_ms"], r["end_ms"]) for r in records]
        assert [r["segment"] for r in records] == sorted(r["segment"] for r in records)
        words = WORDS
    else:
        sep = "," if name.endswith(".srt") else "."
        assert text.startswith("1\n" if sep == "," else "WEBVTT\n\n")
        clock = rf"(\d\d):(\d\d):(\d\d){re.escape(sep)}(\d\d\d)"
        cues = re.findall(rf"{clock} --> {clock}\n(.+)\n", text)
        assert cues
        # The cues' text is the text's own, its punctuation kept (Bug: dropped).
        assert " ".join(cue[8] for cue in cues) == TEXT
        words = [w.strip(".,") for cue in cues for w in cue[8].split()]
        spans = [(clock_ms(c[0:4]), clock_ms(c[4:8])) for c in cues]
    assert words == WORDS
    assert all(start < end for start, end in spans)
    assert all(a[1] <= b[0] + 1 for a, b in itertools.pairwise(spans))
    assert spans[-1][1] <= duration_ms + 1


def clock_ms(parts: Any) -> float:
    h, m, s, ms = (int(p) for p in parts)
    return ((h * 60 + m) * 60 + s) * 1000 + ms


def test_progress_is_shown_on_a_terminal_only(server: ServerThread, tmp_path: Path) -> None:
    parent, child = pty.openpty()
    try:
        result = subprocess.run(
            [*CLI, "speak", TEXT, "-o", str(tmp_path / "a.opus"), "--server", server.address],
            stdout=subprocess.PIPE,
            stderr=child,
            env=environment(),
            timeout=90,
        )
        os.close(child)
        output = b""
        while True:
            try:
                chunk = os.read(parent, 4096)
            except OSError:  # EIO: the terminal's other side is closed and drained
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(parent)
    assert result.returncode == 0
    line = output.decode().replace("\r\n", "\n").split("\r")[-1]
    assert re.fullmatch(
        r" *\d+\.\d s of audio \| first audio after \d+ ms \| real-time factor \d+\.\d\d\n", line
    ), output


def test_play_without_a_player_says_what_to_install(server: ServerThread, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = environment(PATH=f"{empty}{os.pathsep}{Path(sys.executable).parent}")
    result = voxlite("speak", "Hello.", "--play", "--server", server.address, env=env)
    line = assert_one_error_line(result)
    assert "pulseaudio-utils (paplay)" in line
    assert "alsa-utils (aplay)" in line
    assert "ffmpeg (ffplay)" in line
    assert "sox (play)" in line


def test_play_pipes_pcm_to_the_player(server: ServerThread, tmp_path: Path) -> None:
    bin_dir, record = tmp_path / "bin", tmp_path / "played"
    bin_dir.mkdir()
    fake = bin_dir / "aplay"
    fake.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"open({str(record) + '.args'!r}, 'w').write(' '.join(sys.argv[1:]))\n"
        f"open({str(record)!r}, 'wb').write(sys.stdin.buffer.read())\n"
    )
    fake.chmod(0o755)
    env = environment(PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}")
    result = voxlite(
        "speak", "Hello there.", "--play", "--sample-rate", "16000", "--server", server.address,
        env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert Path(f"{record}.args").read_text() == "-q -t raw -f S16_LE -c 1 -r 16000 -"
    pcm = np.frombuffer(record.read_bytes(), "<i2")
    assert 0.5 < len(pcm) / 16000 < 3.0
    assert np.abs(pcm).max() > 3000


def test_the_servers_words_for_its_fields_are_the_clis_own(
    server: ServerThread, tmp_path: Path
) -> None:
    """Bug: the CLI said "put the words to speak in the text field" and "use
    StreamingSynthesize", words of the API that a user of the command never typed."""
    path = tmp_path / "a.opus"
    empty = voxlite("speak", "", "-o", str(path), "--server", server.address)
    assert "give the words to speak as TEXT" in assert_one_error_line(empty)
    long = voxlite("speak", "Hello. " * 800, "-o", str(path), "--server", server.address)
    assert "or speak them from standard input (TEXT -)" in assert_one_error_line(long)
    # A script no voice here speaks.
    told = voxlite("speak", "Привет, как дела?", "-o", str(path), "--server", server.address)
    assert "a call that gives neither --voice nor --language gets" in assert_one_error_line(told)
    assert not path.exists()


def test_a_player_that_fails_fails_the_command(server: ServerThread, tmp_path: Path) -> None:
    """Bug: a player with no sound device took all of a short text, failed, and the command
    exited 0."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "aplay"  # reads what it is given, then fails as ALSA's aplay does
    fake.write_text(f"#!{sys.executable}\nimport sys\nsys.stdin.buffer.read()\nsys.exit(1)\n")
    fake.chmod(0o755)
    env = environment(PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}")
    result = voxlite("speak", "Hello.", "--play", "--server", server.address, env=env)
    assert "the player aplay failed (exit status 1)" in assert_one_error_line(result)


@pytest.mark.skipif(shutil.which("ffplay") is None, reason="ffplay (ffmpeg) is not installed")
def test_ffplay_that_cannot_open_the_sound_device_fails_the_command(
    server: ServerThread, tmp_path: Path
) -> None:
    """Bug: ffplay with no sound device it can open says so and exits 0, and so did the
    command, having played nothing. Here its device is one that is not there."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ffplay").symlink_to(str(shutil.which("ffplay")))  # the only player on PATH
    env = environment(
        PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}",
        SDL_AUDIODRIVER="alsa",
        AUDIODEV="hw:9,9",
    )
    result = voxlite("speak", "Hello.", "--play", "--server", server.address, env=env)
    line = assert_one_error_line(result)
    assert "the player ffplay could not open the sound device" in line


def test_a_refused_call_leaves_the_files_already_there(
    server: ServerThread, tmp_path: Path
) -> None:
    """Bug: "^" (refused after the format) replaced an existing file with nothing, and emptied
    the --timestamps file."""
    audio, cues = tmp_path / "keep.opus", tmp_path / "keep.srt"
    audio.write_bytes(b"an earlier reply")
    cues.write_text("earlier cues")
    result = voxlite(
        "speak", "^", "-o", str(audio), "--timestamps", str(cues), "--server", server.address
    )
    assert "says nothing for the text '^'" in assert_one_error_line(result)
    assert audio.read_bytes() == b"an earlier reply"
    assert cues.read_text() == "earlier cues"


def test_timestamps_that_cannot_be_written_name_the_flag_and_leave_no_audio(
    server: ServerThread, tmp_path: Path
) -> None:
    """Bug: a bare "[Errno 2]" line, and a 0-byte .opus left behind."""
    audio = tmp_path / "a.opus"
    result = voxlite(
        "speak", "Hello there.", "-o", str(audio), "--timestamps", str(tmp_path / "no" / "a.srt"),
        "--server", server.address,
    )  # fmt: skip
    line = assert_one_error_line(result)
    assert f"--timestamps: cannot write {tmp_path / 'no' / 'a.srt'}: No such file" in line
    assert not audio.exists()


def test_standard_input_with_no_text_is_an_error_and_no_file(
    server: ServerThread, tmp_path: Path
) -> None:
    """Bug: an empty standard input exited 0 with an Ogg file of no audio."""
    audio = tmp_path / "a.opus"
    result = subprocess.run(
        [*CLI, "speak", "-", "-o", str(audio), "--server", server.address],
        input="\n\n", capture_output=True, text=True, env=environment(), timeout=90,
    )  # fmt: skip
    assert "standard input held no text to speak" in assert_one_error_line(result)
    assert not audio.exists()


# -- voices, health -----------------------------------------------------------------------------


def test_voices_prints_a_table(server: ServerThread) -> None:
    result = voxlite("voices", "--server", server.address)
    assert result.returncode == 0, result.stderr
    header, row = result.stdout.splitlines()
    assert header.split() == ["NAME", "LANGUAGE", "RATE", "QUALITY", "SPEAKERS", "DEFAULT", "NOTE"]
    assert row.split() == ["en_US-joe-medium", "en-US", "22050", "medium", "1", "en-US,", "server"]
    assert header.index("LANGUAGE") == row.index("  en-US ") + 2  # aligned columns
    # A language no voice speaks is said so (it was a table of headers alone).
    none = voxlite("voices", "--language", "de", "--server", server.address)
    assert f"no voice of {server.address} speaks 'de'" in assert_one_error_line(none)


def test_voices_table_marks_defaults_and_voices_not_recommended() -> None:
    """Bug: `voxlite voices` marked only the server's default voice, and said nothing of a
    voice the server advises against. Each language's default is marked with its language, the
    server's with "server"; NOTE carries the server's reason (Voice.not_recommended)."""
    voices = VoiceList(
        (
            Voice("en_a", "en-US", 22050, (), "medium", default=True, language_default=True),
            Voice("zf_a", "zh-CN", 24000, (), "", default=False, language_default=True),
            Voice("zf_b", "zh-CN", 24000, (), "", default=False, not_recommended="hard to say"),
        ),
    )
    assert render_voices(voices).splitlines() == [
        "NAME  LANGUAGE  RATE   QUALITY  SPEAKERS  DEFAULT        NOTE",
        "en_a  en-US     22050  medium   1         en-US, server",
        "zf_a  zh-CN     24000           1         zh-CN",
        "zf_b  zh-CN     24000           1                        not recommended (hard to say)",
    ]


def test_voices_table_lists_files_that_failed_and_voices_still_loading() -> None:
    voices = VoiceList(
        (Voice("a_B-x-low", "a_B", 16000, ("p1", "p2"), "low", default=False),),
        (VoiceLoadFailure("/v/bad.onnx", "not a Piper graph"),),
        ("jm_kumo", "zf_xiaoyi"),
    )
    assert render_voices(voices).splitlines()[1:] == [
        "a_B-x-low  a_B       16000  low      2",
        "failed to load /v/bad.onnx: not a Piper graph",
        "still loading: jm_kumo, zf_xiaoyi",
    ]


def test_health(server: ServerThread) -> None:
    script = Path(sys.executable).parent / "voxlite"  # the installed console script
    serving = subprocess.run(
        [str(script), "health", "--server", server.address],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=90,
    )
    assert (serving.returncode, serving.stdout, serving.stderr) == (0, "SERVING\n", "")
    not_serving = health_pb2.HealthCheckResponse.NOT_SERVING
    server.call(server.server.health.set("", not_serving))
    try:
        result = voxlite("health", "--server", server.address)
    finally:
        server.call(server.server.health.set("", health_pb2.HealthCheckResponse.SERVING))
    assert result.stdout == "NOT_SERVING\n"
    assert "is not serving (NOT_SERVING)" in assert_one_error_line(result)


def test_connection_options_go_before_or_after_the_command(
    server: ServerThread, refused_address: str, tmp_path: Path
) -> None:
    """Bug: `voxlite --server HOST:PORT speak ...` failed with "argument COMMAND: invalid
    choice": the connection options worked only after the command. They go either side, as
    in git or kubectl; given both sides, the one after the command wins."""
    path = tmp_path / "a.wav"
    spoken = voxlite(
        "--server", server.address, "--timeout", "60", "speak", "Options first.", "-o", str(path)
    )
    assert spoken.returncode == 0, spoken.stderr
    assert soundfile.info(str(path)).duration > 0.2
    listed = voxlite("--server", server.address, "voices")
    assert listed.returncode == 0, listed.stderr
    assert "en_US-joe-medium" in listed.stdout
    assert (
        voxlite("--server", refused_address, "health", "--server", server.address).returncode == 0
    )
    result = voxlite("--server", server.address, "health", "--server", refused_address)
    assert f"{refused_address} is unavailable" in assert_one_error_line(result)


def test_server_comes_from_the_environment(server: ServerThread, refused_address: str) -> None:
    assert voxlite("health", env=environment(VOXLITE_SERVER=server.address)).returncode == 0
    result = voxlite("health", env=environment(VOXLITE_SERVER=refused_address))
    assert f"{refused_address} is unavailable" in assert_one_error_line(result)


# -- expected failures --------------------------------------------------------------------------


def test_server_down_is_one_line(refused_address: str, tmp_path: Path) -> None:
    for args in (["health"], ["voices"], ["speak", "Hello.", "-o", str(tmp_path / "a.opus")]):
        result = voxlite(*args, "--server", refused_address)
        line = assert_one_error_line(result)
        assert f"voxlite: error: {refused_address} is unavailable: nothing answers there" in line
        assert "start voxlite-server (scripts/serve in a checkout)" in line
    assert not (tmp_path / "a.opus").exists()


def test_a_server_without_a_port_is_told_to_name_one(tmp_path: Path) -> None:
    """Bug: --server localhost (the port left out) said "nothing answers there; start
    voxlite-server" while a server was up on 50051: gRPC had dialled 443."""
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 443)) == 0:
            pytest.skip("something listens on 127.0.0.1:443 here")
    result = voxlite("health", "--server", "127.0.0.1")
    line = assert_one_error_line(result)
    assert "127.0.0.1 names no port, so gRPC tried 443, where nothing answers" in line
    assert "(127.0.0.1:50051)" in line
    assert [names_no_port(t) for t in ("tts", "dns:///tts", "::1", "[::1]")] == [True] * 4
    named = ("tts:50051", "[::1]:50051", "dns:///tts:50051", "http://tts", "unix:/run/v.sock")
    assert not any(names_no_port(t) for t in named)
    assert not names_no_port("a:50051,b:50051")


def test_a_server_written_as_a_url_is_taken_and_a_path_is_named(server: ServerThread) -> None:
    assert voxlite("--server", f"http://{server.address}", "health").returncode == 0
    result = voxlite("--server", f"http://{server.address}/v1", "health")
    line = assert_one_error_line(result, code=2)  # argparse's: its usage first
    assert "--server: 'http://127.0.0.1:" in line
    assert "has a path (/v1): a gRPC server is reached at host:port alone" in line
    result = voxlite("--server", f"http://{server.address}", "--tls", "health")
    assert "says plaintext, but TLS options were given" in assert_one_error_line(result, code=2)


def test_a_web_server_is_not_called_absent(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Bug: --server naming a web server (voxlite's own --http-port, any HTTP/1 server) said
    "nothing answers there; start voxlite-server"."""
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    voxlite_http = ServerThread(
        base_config(cache_dir, tmp_path_factory.mktemp("voices"), http_port=0)
    )
    try:
        for port in (web.server_address[1], voxlite_http.server.http_port):
            address = f"127.0.0.1:{port}"
            result = voxlite("--server", address, "speak", "Hi.", "-o", str(tmp_path / "a.opus"))
            line = assert_one_error_line(result)
            assert f"voxlite: error: {address} answers, but not in gRPC: a web server" in line
            assert "give the server's gRPC port (its --port, 50051 by default)" in line
            assert not (tmp_path / "a.opus").exists()
    finally:
        web.shutdown()
        web.server_close()
        voxlite_http.close()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--voice", "xx_XX-nobody"], 1, "voice 'xx_XX-nobody' not found: choose one of"),
        (
            ["--voice", "en_US-joe-medium", "--language", "de"],
            1,
            "voice 'en_US-joe-medium' speaks en-US, not de: name a voice of that language, or "
            "leave out --voice",
        ),
        # The server names its fields (speaking_rate); the line names the flag typed.
        (["--rate", "10"], 1, "--rate must be between 0.25 and 4, got 10"),
        (["--sample-rate", "22050"], 1, "--sample-rate 22050 cannot be carried by Opus"),
        (["--rate", "fast"], 2, "argument --rate: invalid float value: 'fast'"),
        # Bug: 0 (the API's "1.0") was taken, and spoke at the normal rate.
        (["--rate", "0"], 2, "argument --rate: 0 is no rate: use 0.25 to 4"),
        (["--format", "flac"], 2, "argument --format: invalid choice: 'flac'"),
    ],
)
def test_bad_requests_are_one_line(
    server: ServerThread, tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    path = tmp_path / "a.opus"
    result = voxlite("speak", "Hello.", "-o", str(path), *args, "--server", server.address)
    line = assert_one_error_line(result, code)
    assert message in line
    if code == 1:  # the call failed, rather than the command line: it says what it left
        assert line.endswith(f"; nothing was written to {path}")
    assert not path.exists()


def test_what_cannot_be_sent_or_written_is_refused_before_the_call(
    refused_address: str, tmp_path: Path
) -> None:
    """Bugs: a byte that is no UTF-8 in the text was a traceback; --timeout inf, nan or -1
    failed every call at once; an -o the command could not write failed after the server had
    done the work, with an OS error naming no flag. Each is refused before any call (the
    server here is not even there), naming the flag."""
    folder = tmp_path / "sub"
    folder.mkdir()
    cases = {
        "TEXT is not valid UTF-8": ["speak", "Hello \udcff world.", "-o", str(tmp_path / "a.opus")],
        "--voice is not valid UTF-8": [
            "speak",
            "Hi.",
            "--voice",
            "x\udcff",
            "-o",
            str(tmp_path / "a.opus"),
        ],
        f"-o: no folder {tmp_path / 'none'} to write a.opus in": [
            "speak",
            "Hi.",
            "-o",
            str(tmp_path / "none" / "a.opus"),
        ],
        f"-o: {folder} is a folder: name a file in it": ["speak", "Hi.", "-o", str(folder)],
        "-o and --play go one at a time": ["speak", "Hi.", "-o", "-", "--play"],
    }
    for timeout in ("inf", "nan", "-1", "0"):
        cases[f"argument --timeout: must be a number of seconds above 0, got {timeout}"] = [
            "health",
            "--timeout",
            timeout,
        ]
    for message, args in cases.items():
        assert message in assert_one_error_line(voxlite(*args, "--server", refused_address), 2)
    assert not list(tmp_path.glob("*.opus"))


def test_bad_arguments_exit_2(server: ServerThread, tmp_path: Path) -> None:
    cases = {
        "cannot tell the audio format of": ["speak", "Hi.", "-o", str(tmp_path / "a.flac")],
        "say where the audio goes": ["speak", "Hi."],
        "--server: 'nowhere' in a list of targets must be host:port": [
            "health",
            "--server",
            "nowhere,10.0.0.1:1",
        ],
    }
    for message, args in cases.items():
        assert message in assert_one_error_line(voxlite(*args), 2)
    assert voxlite().returncode == 2
