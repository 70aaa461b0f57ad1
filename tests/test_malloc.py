"""The server caps glibc's heaps so that resident memory under load stays level (bench/soak.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_stats")

# Eight threads allocate at once, then glibc lists its heaps ("Arena N:") on stderr.
PROBE = """
import ctypes, sys, threading
from voxlite.service.__main__ import limit_malloc_arenas
print(limit_malloc_arenas() if sys.argv[1] == "limit" else None)
held, barrier = [], threading.Barrier(8)
def work():
    held.append(bytearray(100_000))
    barrier.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
ctypes.CDLL(None).malloc_stats()
"""


def heaps(mode: str, **env: str) -> tuple[str, int]:
    environ = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, env=environ, check=True
    )
    return done.stdout.strip(), done.stderr.count("Arena ")


def test_server_start_caps_glibc_heaps_at_two() -> None:
    assert heaps("limit") == ("True", 2)


def test_without_the_cap_each_thread_gets_its_own_heap() -> None:
    _, count = heaps("none")
    assert count > 2, "the probe must be able to tell capped from uncapped"


def test_malloc_arena_max_from_the_environment_wins() -> None:
    assert heaps("limit", MALLOC_ARENA_MAX="3") == ("False", 3)
