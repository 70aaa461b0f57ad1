"""The `voxlite` command: speak text to a file or the speakers, list voices, check health."""

from __future__ import annotations

import argparse
import io
import math
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from ._channel import names_no_port, url_target
from ._errors import DeadlineExceeded, Unavailable, VoxliteError
from ._events import AudioChunk, FlushDone, HealthStatus, StreamEvent, Summary
from ._files import FORMATS, AudioFileWriter, format_for_path
from ._options import SynthesisOptions
from ._player import NoPlayer, Player
from ._subtitles import TimestampsWriter
from ._sync import Client, StreamSession
from ._voices import VoiceList

DEFAULT_SERVER = "localhost:50051"
QUICK_TIMEOUT = 10.0
"""Seconds `voices` and `health` wait when --timeout is not given."""
_PEM_FILES = {
    "ca": "PEM CA to trust instead (implies --tls)",
    "cert": "PEM client certificate, for mutual TLS (with --key)",
    "key": "PEM private key of --cert",
}
"""The TLS options that name a PEM file (read before connecting), and their help."""


def _common(*, defaults: bool) -> argparse.ArgumentParser:
    """The connection options. They go before the command or after it, as in git or kubectl:
    the copy after it has no defaults, so that it only overrides one given before."""

    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--server",
        default=default(os.environ.get("VOXLITE_SERVER") or DEFAULT_SERVER),
        help="host:port (http://host:port too; https:// for TLS), dns:///name:port, or several "
        f"host:port separated by commas (round robin); default $VOXLITE_SERVER or {DEFAULT_SERVER}",
    )
    common.add_argument(
        "--timeout", type=_seconds, default=default(None), help="give up after this many seconds"
    )
    security = common.add_argument_group("TLS and tokens")
    security.add_argument(
        "--tls",
        action="store_true",
        default=default(False),
        help="connect with TLS, trusting the system's CAs",
    )
    for name, text in _PEM_FILES.items():
        security.add_argument(f"--{name}", metavar="FILE", default=default(None), help=text)
    security.add_argument(
        "--token",
        default=default(os.environ.get("VOXLITE_TOKEN") or None),
        help="bearer token sent with each call; default $VOXLITE_TOKEN (safer: not in ps)",
    )
    return common


def _parser() -> argparse.ArgumentParser:
    common = _common(defaults=False)
    parser = argparse.ArgumentParser(
        prog="voxlite",
        description="Streaming text-to-speech from a voxlite server.",
        parents=[_common(defaults=True)],
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    speak = commands.add_parser(
        "speak",
        parents=[common],
        help="speak text into a file or through the speakers",
        description="Speak TEXT, or with '-' each line of standard input as it arrives.",
    )
    speak.add_argument("text", metavar="TEXT", help="the text, or - to read lines from stdin")
    speak.add_argument(
        "-o", "--output", metavar="FILE", help="audio file (.opus .ogg .wav .mp3 .raw .ulaw "
        ".alaw), - for standard output (Ogg Opus unless --format)"
    )  # fmt: skip
    speak.add_argument("--format", choices=list(FORMATS), help="force the audio file format")
    speak.add_argument("--play", action="store_true", help="play through a local audio player")
    speak.add_argument("--voice", help="voice name (see `voxlite voices`)")
    speak.add_argument(
        "--language",
        help='BCP-47 language of the text, e.g. "zh" or "en-US": without --voice, the server '
        "speaks it with its voice for that language",
    )
    speak.add_argument("--speaker", help="speaker of a multi-speaker voice")
    speak.add_argument("--rate", type=_rate, help="speaking rate, 1.0 is normal (0.25 to 4)")
    speak.add_argument("--sample-rate", type=int, metavar="HZ", help="output sample rate")
    speak.add_argument(
        "--timestamps", metavar="FILE", help="word timings: .srt, .vtt, else JSON lines"
    )
    voices = commands.add_parser("voices", parents=[common], help="list the server's voices")
    voices.add_argument("--language", help='only voices of this language, e.g. "en"')
    health = commands.add_parser("health", parents=[common], help="exit 0 when it is SERVING")
    for command, handler in ((speak, _speak), (voices, _voices), (health, _health)):
        command.set_defaults(handler=handler, parser=command)  # errors show the command's usage
    return parser


def _rate(value: str) -> float:
    """--rate as a number; the server checks its range (and names the flag). The API reads
    0 as 1.0, but 0 typed is a mistake: it is refused here."""
    try:
        rate = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {value!r}") from None
    if rate == 0:
        raise argparse.ArgumentTypeError("0 is no rate: use 0.25 to 4 (1.0 is normal)")
    return rate


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {value!r}") from None
    if not 0 < seconds < math.inf:  # nan and inf too: gRPC fails those at once
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, got {value}")
    return seconds


_TEXT_ARGUMENTS = {
    "text": "TEXT",
    "voice": "--voice",
    "language": "--language",
    "speaker": "--speaker",
}
"""Arguments sent as text, which must be text: a byte the terminal could not decode reaches
Python as a lone surrogate, which gRPC cannot encode."""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    for name, flag in _TEXT_ARGUMENTS.items():
        value = getattr(args, name, None)
        if isinstance(value, str) and any("\ud800" <= c <= "\udfff" for c in value):
            args.parser.error(
                f"{flag} is not valid UTF-8 (a byte in another encoding, such as Latin-1: "
                "convert it, e.g. with iconv)"
            )
    try:
        code: int = args.handler(args, args.parser)
        return code
    except _SpeakFailed as failed:
        reason = _describe(failed.error, args, answered=failed.answered)
        return _fail(f"{reason}; {failed.kept}" if failed.kept else reason)
    except VoxliteError as exc:
        return _fail(_describe(exc, args))
    except NoPlayer as exc:
        return _fail(str(exc))
    except BrokenPipeError:  # the reader of our stdout went away: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # output file cannot be written, player failed
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130


def _fail(message: str) -> int:
    print(f"voxlite: error: {message}", file=sys.stderr)
    return 1


_IN_FLAGS = (
    (re.compile(r"\b(audio\.)?sample_rate_hz\b"), "--sample-rate"),
    (re.compile(r"\bspeaking_rate\b"), "--rate"),
    (re.compile(r"\bleave speaker empty\b"), "leave out --speaker"),
    (re.compile(r"\bListVoices\b"), "`voxlite voices`"),
    (re.compile(r"\bset language to\b"), "set --language to"),
    (re.compile(r"\bor voice to\b"), "or --voice to"),
    (re.compile(r"\bleave both voice and language empty\b"), "leave out --voice and --language"),
    (re.compile(r"\bleave voice empty\b"), "leave out --voice"),
    (re.compile(r"\bnames neither voice nor language\b"), "gives neither --voice nor --language"),
    (
        re.compile(r"\bput the words to speak in the text field\b"),
        "give the words to speak as TEXT",
    ),
    (re.compile(r"\bor use StreamingSynthesize\b"), "or speak them from standard input (TEXT -)"),
)
"""The server's messages name the API's fields; the user typed flags, so those are named."""

_NOT_LISTENING = ("failed to connect", "connection refused", "dns resolution failed")
"""gRPC's words (lower case) for a server that is not there, as opposed to one that answered."""
_NOT_GRPC = "failed parsing http/2"
"""gRPC's words for a server that answered in something else than HTTP/2: a web server, or
voxlite's --http-port."""
_NO_HANDSHAKE = ("socket closed", "handshake", "ssl")
"""gRPC's words for a server that answered and then closed the connection: TLS on one side
only, or a client certificate missing or refused."""
_PLAINTEXT_REPLY = "wrong_version_number"
"""BoringSSL's words for a TLS handshake answered by a server that speaks none: this command
asked for TLS (--tls, --ca, https://) and the server is plaintext."""


_CUT = ("socket closed", "stream removed", "connection reset", "broken pipe", "end of tcp stream")
"""gRPC's words for a connection lost under a call: after the server answered, it went away."""


def _describe(exc: VoxliteError, args: argparse.Namespace, *, answered: bool = False) -> str:
    """The error line for a failed call. `answered`: the server had answered this call (a
    closed connection is then no handshake refused: the server went away)."""
    server, details = args.server, exc.details
    for field, flag in _IN_FLAGS:
        details = field.sub(flag, details)
    if isinstance(exc, Unavailable):
        if "certificate_verify_failed" in details.lower():
            return (
                f"{server}'s TLS certificate is not signed by a CA this command trusts: give "
                f"--ca FILE, the CA that signed it (gRPC: {details})"
            )
        if "hostname verification" in details.lower():
            return (
                f"{server}'s TLS certificate does not hold the host name given: name the "
                f"server in --server as its certificate does (gRPC: {details})"
            )
        if answered and any(words in details.lower() for words in _CUT):
            return (
                f"{server} closed the connection part way through the call: the server "
                f"stopped or the network failed (gRPC: {details})"
            )
        if _PLAINTEXT_REPLY in details.lower():
            fix = (
                "write http://host:port, or host:port, for a server without TLS"
                if url_target(server)[1]
                else "leave out --tls and --ca for a server without TLS"
            )
            return (
                f"{server} does not speak TLS (it answered the handshake in plaintext): {fix} "
                f"(gRPC: {details})"
            )
        if any(words in details.lower() for words in _NO_HANDSHAKE):
            return (
                f"{server} closed the connection: TLS is on one side only, or the server asks "
                "for a client certificate; give --tls (or --ca) for a server that speaks TLS, "
                "--cert and --key for one that wants a client certificate, neither for one "
                f"that does not (gRPC: {details})"
            )
        if _NOT_GRPC in details.lower():
            return (
                f"{server} answers, but not in gRPC: a web server is there (voxlite-server's "
                "--http-port serves OpenAI's HTTP API); give the server's gRPC port (its --port, "
                f"50051 by default) (gRPC: {details})"
            )
        if any(words in details.lower() for words in _NOT_LISTENING):
            if names_no_port(server):
                return (
                    f"{server} names no port, so gRPC tried 443, where nothing answers: add the "
                    f"server's port, 50051 unless its --port says otherwise ({server}:50051) "
                    f"(gRPC: {details})"
                )
            return (
                f"{server} is unavailable: nothing answers there; start voxlite-server "
                "(scripts/serve in a checkout), or name another with --server or "
                f"VOXLITE_SERVER (gRPC: {details})"
            )
        return f"{server} is unavailable: {details}"
    if isinstance(exc, DeadlineExceeded):
        if args.timeout is None:
            return f"no answer within {QUICK_TIMEOUT:g} s (--timeout to wait longer): {details}"
        return f"no complete answer within --timeout: {details}"
    return details


def _client(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Client:
    if (args.cert is None) != (args.key is None):
        parser.error("--cert and --key go together (the client certificate and its key)")
    ca, cert, key = (_pem(parser, option, getattr(args, option)) for option in _PEM_FILES)
    try:
        return Client(
            args.server,
            tls=args.tls,
            root_certificates=ca,
            certificate_chain=cert,
            private_key=key,
            token=args.token,
        )
    except ValueError as exc:
        option = "--token" if "token" in str(exc) else "--server"
        parser.error(f"{option}: {exc}")


def _pem(parser: argparse.ArgumentParser, option: str, path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        pem = Path(path).read_bytes()
    except OSError as exc:
        parser.error(f"--{option}: cannot read {path}: {exc.strerror or exc}")
    # gRPC takes any bytes here and fails at the handshake, saying only that it could not set
    # it up: a file that is no PEM is said to be so now.
    if b"-----BEGIN " not in pem:
        parser.error(f"--{option}: {path} is not a PEM file (no -----BEGIN line)")
    return pem


# -- speak ----------------------------------------------------------------------------------------


def _speak(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.play and args.output:
        parser.error("-o and --play go one at a time: give one of them")
    if not args.play and not args.output:
        parser.error("say where the audio goes: -o FILE (- for standard output) or --play")
    if args.output and args.output != "-":
        _check_output(parser, Path(args.output))
    file_format = "raw" if args.play else args.format
    if file_format is None:
        try:
            file_format = "opus" if args.output == "-" else format_for_path(args.output)
        except ValueError as exc:
            parser.error(f"{exc} (or --format)")
    player = Player() if args.play else None  # before connecting: says what to install
    options: SynthesisOptions = {
        "voice": args.voice,
        "language": args.language,
        "speaker": args.speaker,
        "encoding": FORMATS[file_format],
        "sample_rate_hz": args.sample_rate,
        "speaking_rate": args.rate,
        "word_timestamps": bool(args.timestamps),
    }
    progress = _Progress(sys.stderr) if not args.play and sys.stderr.isatty() else None
    sink: AudioFileWriter | Player | None = player
    timestamps: TimestampsWriter | None = None
    audio_ms, answered = 0.0, False
    with _client(args, parser) as client:
        events = (
            _stdin_events(client, args.timeout, options)
            if args.text == "-"
            else client.synthesize(args.text, timeout=args.timeout, **options)
        )
        held: list[StreamEvent] = []  # the timestamps before the first audio
        try:
            try:
                for event in events:
                    answered = True
                    if sink is None:  # its file is made at the first audio (AudioFileWriter)
                        sink = _audio_file(args.output, file_format)
                    if args.timestamps and timestamps is None:
                        # Made with the audio's file: a call refused before its first audio
                        # leaves neither file, nor an old one emptied.
                        if not isinstance(event, AudioChunk):
                            held.append(event)
                        else:
                            timestamps = _timestamps_file(args.timestamps)
                            for earlier in held:
                                timestamps.write(earlier)
                    sink.write(event)
                    if timestamps:
                        timestamps.write(event)
                    if progress:
                        progress.update(event)
                    if isinstance(event, AudioChunk):
                        audio_ms += event.duration_ms
            finally:
                for part in (sink, timestamps, progress):
                    if part is not None:
                        part.close()
        except VoxliteError as exc:
            kept = _what_was_kept(args, sink, audio_ms)
            raise _SpeakFailed(exc, kept, answered=answered) from exc
    if audio_ms == 0 and not args.play:
        # A text refused is an error; this is standard input that held none.
        where = "standard output" if args.output == "-" else args.output
        return _fail(f"standard input held no text to speak: nothing was written to {where}")
    return 0


def _check_output(parser: argparse.ArgumentParser, path: Path) -> None:
    """-o names a file that can be made, said before the server does the work (the file itself
    is made at the first audio, so that a refused call leaves an old one as it was)."""
    folder = path.parent
    if path.is_dir():
        parser.error(f"-o: {path} is a folder: name a file in it")
    if not folder.is_dir():
        parser.error(f"-o: no folder {folder} to write {path.name} in")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        parser.error(f"-o: cannot write {path}: permission denied")


def _audio_file(output: str, file_format: str) -> AudioFileWriter:
    if output == "-":
        return AudioFileWriter(sys.stdout.buffer, format=file_format)
    try:
        return AudioFileWriter(output, format=file_format)
    except OSError as exc:
        raise OSError(f"-o: cannot write {output}: {exc.strerror or exc}") from None


def _timestamps_file(path: str) -> TimestampsWriter:
    try:
        return TimestampsWriter(path, with_audio=True)
    except OSError as exc:
        raise OSError(f"--timestamps: cannot write {path}: {exc.strerror or exc}") from None


class _SpeakFailed(Exception):
    """A speak call that failed, and what it left behind (said after the reason)."""

    def __init__(self, error: VoxliteError, kept: str, *, answered: bool) -> None:
        super().__init__(error.details)
        self.error = error
        self.kept = kept
        self.answered = answered


def _what_was_kept(
    args: argparse.Namespace, sink: AudioFileWriter | Player | None, audio_ms: float
) -> str:
    """After a failed call: what the file holds.

    The file keeps what was spoken before the error, finished as a valid file (AudioFileWriter
    ends its Ogg stream and WAV header), rather than being written aside and renamed at the
    end: a long text spoken into a file is read while it grows (a player, `tail -f`), and the
    minutes already spoken are worth keeping when a server drains."""
    if args.play:
        return ""
    seconds = f"{audio_ms / 1000:.1f} s"
    # Only a stream that cannot seek (a pipe, a FIFO) cannot be given its Ogg end.
    cut = isinstance(sink, AudioFileWriter) and not sink.complete
    unended = ", an Ogg stream without its end (write to a file for a valid one)" if cut else ""
    if args.output == "-":
        if audio_ms == 0:
            return "no audio was written to standard output"
        return f"standard output got the {seconds} spoken before the error{unended}"
    if audio_ms == 0:  # neither file was made (AudioFileWriter, _speak)
        return f"nothing was written to {args.output}"
    if cut:
        return f"{args.output} got the {seconds} spoken before the error{unended}"
    return f"saved the {seconds} spoken before the error in {args.output}, a valid file"


def _stdin_events(
    client: Client, timeout: float | None, options: SynthesisOptions
) -> Iterator[StreamEvent]:
    """Stream each line of stdin as it arrives, flushed so it never waits for the next line;
    a line over CHARS_AHEAD characters goes in pieces (_pieces), each flushed."""
    session = client.stream(timeout=timeout, **options)
    window = _LineWindow()
    if isinstance(sys.stdin, io.TextIOWrapper):
        sys.stdin.reconfigure(errors="replace")  # a stray byte must not end the stream

    read_all = threading.Event()

    def feed() -> None:
        try:
            for line in iter(sys.stdin.readline, ""):
                if line.strip():
                    for piece in _pieces(line, _LineWindow.CHARS_AHEAD):
                        window.send(session, piece)
                else:
                    session.send(line)
            read_all.set()
        except (ValueError, Unavailable):
            pass  # send() on an ended session: the call ended and the main thread says why
        finally:
            session.close()

    threading.Thread(target=feed, name="voxlite-stdin", daemon=True).start()
    with session:
        for event in session:
            if isinstance(event, FlushDone):
                window.done(event.id)
            yield event
    if not read_all.is_set():
        # The server ended the stream (a drain, an idle timeout) with input still to come:
        # exiting 0 would be a silent truncation of what the producer wrote.
        raise Unavailable(
            "the server ended the stream before standard input ended (it is shutting down, "
            "or the stream sat idle): what came after was not spoken; run it again"
        )


_CUTS = (
    re.compile(
        r"[.!?\u2026][\"')\u201d\u2019]*\s+|[\u3002\uff01\uff1f][\u300d\u300f\uff09\u201d]*"
    ),
    re.compile(r"[,;:]\s+|[\uff0c\u3001\uff1b\uff1a]"),
    re.compile(r"\s+"),
)
"""Where a long line is cut, best first: after a sentence, a clause, a space. Each piece is
flushed, which the listener hears as the end of a sentence: a cut at a sentence end is not
heard, and "3.14" (no space after its point) is never cut."""


def _pieces(line: str, size: int) -> Iterator[str]:
    """`line` in pieces of at most `size` characters: the server refuses a text piece over its
    limit (5000 characters by default), and a file's paragraph is often one line. Each is cut
    at the best place of _CUTS in its second half, else at `size`."""
    while len(line) > size:
        head = line[:size]
        ends = ([m.end() for m in cut.finditer(head)][-1:] for cut in _CUTS)
        end = next((e[0] for e in ends if e and e[0] > size // 2), size)
        yield line[:end]
        line = line[end:]
    yield line


class _LineWindow:
    """Bounds the text sent but not yet spoken: LINES_AHEAD lines, CHARS_AHEAD characters.

    The server refuses a stream that holds more unspoken text than its limit (5000 characters by
    default), so `cat book.txt | voxlite speak -` must not send faster than speech is made. Two
    lines ahead keep the server busy without a gap; a slow producer (an LLM) never waits."""

    LINES_AHEAD = 2
    CHARS_AHEAD = 2000

    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._pending: dict[int, int] = {}  # flush id -> characters

    def _room_for(self, size: int) -> bool:
        held = sum(self._pending.values())
        return not self._pending or (
            len(self._pending) < self.LINES_AHEAD and held + size <= self.CHARS_AHEAD
        )

    def send(self, session: StreamSession, line: str) -> None:
        with self._ready:
            self._ready.wait_for(lambda: self._room_for(len(line)))
            session.send(line)
            self._pending[session.flush()] = len(line)  # under the lock: done() cannot come first

    def done(self, flush_id: int) -> None:
        with self._ready:
            self._pending.pop(flush_id, None)
            self._ready.notify_all()


class _Progress:
    """One self-updating line on a terminal: audio produced, time to first audio, speed."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._start = time.monotonic()
        self._audio_ms = 0.0
        self._first_ms: float | None = None
        self._rtf: float | None = None
        self._drawn = 0.0

    def update(self, event: StreamEvent) -> None:
        now = time.monotonic()
        if isinstance(event, AudioChunk):
            self._audio_ms += event.duration_ms
            if self._first_ms is None:
                self._first_ms = (now - self._start) * 1000
        elif isinstance(event, Summary):
            self._rtf = event.real_time_factor  # the server's own figure, once known
        if now - self._drawn >= 0.1 or isinstance(event, Summary):
            self._drawn = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        audio_s = self._audio_ms / 1000
        rtf = self._rtf if self._rtf is not None else (now - self._start) / max(audio_s, 1e-3)
        first = f"{self._first_ms:.0f} ms" if self._first_ms is not None else "-"
        self._stream.write(
            f"\r{audio_s:7.1f} s of audio | first audio after {first} | real-time factor {rtf:.2f}"
        )
        self._stream.flush()

    def close(self) -> None:
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()


# -- voices, health -------------------------------------------------------------------------------


def _voices(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    with _client(args, parser) as client:
        voices = client.voices(language=args.language, timeout=args.timeout or QUICK_TIMEOUT)
    if args.language and not list(voices) and not voices.loading:
        return _fail(
            f"no voice of {args.server} speaks {args.language!r} (`voxlite voices` lists all)"
        )
    print(render_voices(voices), end="")
    return 0


def render_voices(voices: VoiceList) -> str:
    """The table `voxlite voices` prints, then the voice files that failed to load and the
    voices still loading. DEFAULT names the language a voice is the default of ("server"
    added for the voice of a request that names neither voice nor language); NOTE says why
    the server advises against a voice."""
    rows = [("NAME", "LANGUAGE", "RATE", "QUALITY", "SPEAKERS", "DEFAULT", "NOTE")]
    rows += [
        (
            v.name,
            v.language,
            str(v.native_sample_rate_hz),
            v.quality,
            str(len(v.speakers) or 1),
            ", ".join(
                ([v.language] if v.language_default else []) + (["server"] if v.default else [])
            ),
            f"not recommended ({v.not_recommended})" if v.not_recommended else "",
        )
        for v in voices
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    lines += [f"failed to load {f.path}: {f.reason}" for f in voices.failed]
    if voices.loading:
        lines.append(f"still loading: {', '.join(voices.loading)}")
    return "\n".join(lines) + "\n"


def _health(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    with _client(args, parser) as client:
        status = client.health(timeout=args.timeout or QUICK_TIMEOUT)
    print(status)
    if status is HealthStatus.SERVING:
        return 0
    return _fail(f"{args.server} is not serving ({status}): it is starting, draining or unwell")


if __name__ == "__main__":
    sys.exit(main())
