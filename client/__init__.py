"""voxlite client library (see issue: generated stub, sync and asyncio clients, CLI)."""
