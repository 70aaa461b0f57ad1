"""The short soak CI runs: about a minute of concurrent callers against a real server process,
failing on any unexpected error and on memory, file descriptors or threads that keep growing."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


@pytest.mark.timeout(240)
def test_short_soak_has_no_errors_and_no_growth() -> None:
    # Memory is judged over the second half: on a slower CPU the allocators still reach their
    # working size well into the run, and a leak keeps growing through the half that is judged.
    # The phrase cache's audio is left out of it: the cache fills as fast as the host speaks.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.soak",
            "--seconds",
            "60",
            "--callers",
            "6",
            "--warmup",
            "30",
            "--check",
        ],
        capture_output=True,
        text=True,
        timeout=230,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "problems: none" in result.stdout
    assert "stream: OK" in result.stdout
