"""The engine families a server speaks with: a new family is added here, and nowhere else."""

from __future__ import annotations

from .config import ServerConfig
from .engine import Family
from .piper import PiperFamily
from .piper.split_cache import SplitCache


def families(config: ServerConfig) -> list[Family]:
    """One object per family for a server built from `config`, in the order voices list."""
    return [PiperFamily(config.ort, SplitCache(config.cache_dir))]
