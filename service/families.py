"""The engine families a server speaks with: a new family is added here, and nowhere else."""

from __future__ import annotations

from .engines.engine import Family
from .engines.kokoro import KokoroFamily
from .engines.piper import PiperFamily
from .engines.piper.split_cache import SplitCache
from .settings.config import ServerConfig


def families(config: ServerConfig) -> list[Family]:
    """One object per family for a server built from `config`, in the order voices list."""
    made: dict[str, Family] = {
        "piper": PiperFamily(config.ort, SplitCache(config.cache_dir)),
        "kokoro": KokoroFamily(cache_dir=config.cache_dir, ort_settings=config.ort),
    }
    return [made[name] for name in config.engines]
