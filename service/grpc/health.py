"""gRPC health with a bound on Watch streams, which anyone may open (probes need no token)."""

from __future__ import annotations

from typing import Any

import grpc
from grpc_health.v1 import health

MAX_WATCHES = 64
"""Health Watch streams open at once, all callers together: a balancer or an orchestrator keeps
one or two per replica. Each stream holds its call's buffers, so without a cap anyone could hold
thousands (tests/test_limits.py)."""
MAX_SERVICE_NAME = 256
"""Longest service name a health request may name (ours are under 40 characters)."""


class BoundedHealthServicer(health.aio.HealthServicer):
    """grpc's health servicer; past MAX_WATCHES open Watch streams, a new one is refused with
    RESOURCE_EXHAUSTED, and a service name over MAX_SERVICE_NAME with INVALID_ARGUMENT."""

    def __init__(self, max_watches: int = MAX_WATCHES) -> None:
        super().__init__()
        self.max_watches = max_watches
        self.watches = 0
        """Watch streams open now."""

    async def Check(self, request: Any, context: Any) -> Any:
        await _check_name(request, context)
        return await super().Check(request, context)

    async def Watch(self, request: Any, context: Any) -> None:
        await _check_name(request, context)
        if self.watches >= self.max_watches:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{self.watches} health Watch streams are open, the most this server keeps: "
                "use Check, or close a Watch first",
            )
        self.watches += 1
        try:
            await super().Watch(request, context)
        finally:
            self.watches -= 1


async def _check_name(request: Any, context: Any) -> None:
    if len(request.service) > MAX_SERVICE_NAME:
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"service name of {len(request.service)} characters: at most {MAX_SERVICE_NAME}",
        )
