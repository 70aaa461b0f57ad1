"""Playing PCM through a local command-line player that reads standard input."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile

from ._events import AudioChunk, AudioFormat, StreamEvent

PLAYERS = (
    ("paplay", "pulseaudio-utils"),
    ("aplay", "alsa-utils"),
    ("ffplay", "ffmpeg"),
    ("play", "sox"),
)
"""Players tried in this order, with the package that provides each."""
INSTALL_HINT = "install one of: " + ", ".join(f"{pkg} ({prog})" for prog, pkg in PLAYERS)


def player_command(program: str, path: str, rate: int) -> list[str]:
    """The command line that plays 16-bit little-endian mono PCM at `rate` from stdin."""
    r = str(rate)
    if program == "paplay":
        return [path, "--raw", "--format=s16le", "--channels=1", f"--rate={r}"]
    if program == "aplay":
        return [path, "-q", "-t", "raw", "-f", "S16_LE", "-c", "1", "-r", r, "-"]
    if program == "ffplay":  # the s16le demuxer is mono unless told otherwise
        return [path, "-loglevel", "error", "-nodisp", "-autoexit", "-f", "s16le", "-ar", r, "-"]
    if program == "play":
        return [path, "-q", "-t", "raw", "-r", r, "-e", "signed", "-b", "16", "-c", "1", "-"]
    raise ValueError(program)


_FFPLAY_FAILED = "audio open failed"
"""ffplay's words, on stderr, for a sound device it could not open (it exits 0)."""


class NoPlayer(Exception):
    """No player program is on PATH."""


class Player:
    """Starts the first player found on PATH at the AudioFormat event and pipes it the audio."""

    def __init__(self) -> None:
        for program, _ in PLAYERS:
            path = shutil.which(program)
            if path:
                self.name, self._path = program, path
                break
        else:
            raise NoPlayer(f"--play needs an audio player on PATH: {INSTALL_HINT}")
        self._process: subprocess.Popen[bytes] | None = None
        # ffplay exits 0 when it cannot open the sound device, having said so on stderr: its
        # words are kept (in a file: a pipe left unread could fill and stop it) to tell.
        ffplay = self.name == "ffplay"
        self._said = tempfile.TemporaryFile() if ffplay else None  # noqa: SIM115 (close())

    def write(self, event: StreamEvent) -> None:
        if isinstance(event, AudioFormat):
            self._process = subprocess.Popen(
                player_command(self.name, self._path, event.sample_rate_hz),
                stdin=subprocess.PIPE,
                stderr=self._said,
            )
        elif isinstance(event, AudioChunk) and self._process and self._process.stdin:
            try:
                self._process.stdin.write(event.audio)
                self._process.stdin.flush()
            except BrokenPipeError:
                raise OSError(f"the player {self.name} stopped") from None

    def close(self) -> None:
        """Let the player finish what it was given."""
        if self._process is None:
            return
        if self._process.stdin:
            with contextlib.suppress(BrokenPipeError):
                self._process.stdin.close()
        # A player that could not play (no sound device) may take all of a short text before
        # it fails: its exit status says so.
        if self._process.wait() != 0:
            raise OSError(f"the player {self.name} failed (exit status {self._process.returncode})")
        if self._said is not None:
            self._said.seek(0)
            said = self._said.read().decode(errors="replace")
            self._said.close()
            if _FFPLAY_FAILED in said:
                raise OSError(
                    f"the player {self.name} could not open the sound device ({_FFPLAY_FAILED})"
                )
