"""What the voice-agent framework plugins share: their connection options and PCM calls."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass

import grpc

from ._async import AsyncClient, AsyncStreamSession
from ._channel import Metadata, Target, resolve_target, security, target_tls
from ._events import Encoding, SynthesisEvent
from ._options import VoiceOptions


@dataclass(frozen=True)
class Connection:
    """Where the server is and how to reach it: the options `AsyncClient` takes."""

    server: Target = "localhost:50051"
    credentials: grpc.ChannelCredentials | None = None
    tls: bool = False
    token: str | None = None
    metadata: Metadata | None = None

    def __post_init__(self) -> None:
        # Checked now, so that a wrong option fails where the plugin is made, not at its
        # first call deep inside the framework.
        server, tls = target_tls(self.server, self.tls, tls_given=self.credentials is not None)
        resolve_target(server)
        security(
            credentials=self.credentials,
            tls=tls,
            root_certificates=None,
            certificate_chain=None,
            private_key=None,
            token=self.token,
        )

    def client(self) -> AsyncClient:
        """A new client (one channel); call it in the event loop that will use it."""
        return AsyncClient(
            self.server,
            credentials=self.credentials,
            tls=self.tls,
            token=self.token,
            metadata=self.metadata,
        )


@dataclass(frozen=True)
class PcmCalls:
    """How a plugin's calls are made: in its voice, answering in 16-bit PCM at the framework's
    rate, each within `timeout` seconds (None: no deadline)."""

    voice: VoiceOptions
    sample_rate_hz: int
    word_timestamps: bool
    timeout: float | None

    def stream(self, client: AsyncClient) -> AsyncStreamSession:
        """A StreamingSynthesize call."""
        return client.stream(
            encoding=Encoding.PCM_S16LE,
            sample_rate_hz=self.sample_rate_hz,
            word_timestamps=self.word_timestamps,
            timeout=self.timeout,
            **self.voice,
        )

    def synthesize(self, client: AsyncClient, text: str) -> AsyncGenerator[SynthesisEvent, None]:
        """A Synthesize call."""
        return client.synthesize(
            text,
            encoding=Encoding.PCM_S16LE,
            sample_rate_hz=self.sample_rate_hz,
            word_timestamps=self.word_timestamps,
            timeout=self.timeout,
            **self.voice,
        )
