"""The short soak CI runs: 300 calls from concurrent callers against a real server process
(about a minute), failing on any unexpected error and on memory, file descriptors or threads
that keep growing."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


@pytest.mark.timeout(420)
def test_short_soak_has_no_errors_and_no_growth() -> None:
    # The soak runs for a number of calls, not a time, and memory is judged over its second
    # half: the allocators reach their working size after so many calls, and a host twice as
    # slow or twice as busy does the same work in twice the time. The phrase cache's audio is
    # left out of it: the cache fills as fast as the host speaks.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.soak",
            "--calls",
            "300",
            "--warmup-calls",
            "150",
            "--callers",
            "6",
            "--check",
        ],
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "problems: none" in result.stdout
    assert "stream: OK" in result.stdout
