"""voxlite client: streaming text-to-speech over gRPC, sync (`Client`) and asyncio (`AsyncClient`).

from voxlite.client import Client
with Client("localhost:50051") as tts:
    tts.synthesize_to_file("Hello there!", "hello.opus")
"""

import os

# gRPC's core writes its own INFO lines to stderr (a failed TLS handshake, each retry) unless
# GRPC_VERBOSITY, read as grpc is imported, says otherwise: ERROR, gRPC's documented default,
# where the program has not chosen (the CLI's one error line says it in its own words). Unset
# again after, so that a process this one starts (a voxlite-server) makes its own choice.
if "GRPC_VERBOSITY" not in os.environ:
    os.environ["GRPC_VERBOSITY"] = "ERROR"
    import grpc  # noqa: F401

    del os.environ["GRPC_VERBOSITY"]

from ._async import AsyncClient, AsyncStreamSession
from ._channel import Metadata, Options, Target
from ._errors import (
    Cancelled,
    DeadlineExceeded,
    FailedPrecondition,
    InvalidRequest,
    Overloaded,
    Unauthenticated,
    Unavailable,
    VoiceNotFound,
    VoxliteError,
)
from ._events import (
    AudioChunk,
    AudioFormat,
    ClearDone,
    Encoding,
    FlushDone,
    HealthStatus,
    StreamEvent,
    Summary,
    SynthesisEvent,
    Timestamps,
    WordTimestamp,
)
from ._files import AudioFileWriter
from ._options import FileOptions, SynthesisOptions
from ._subtitles import TimestampsWriter
from ._sync import Client, StreamSession
from ._voices import Voice, VoiceList, VoiceLoadFailure

__all__ = [
    "AsyncClient",
    "AsyncStreamSession",
    "AudioChunk",
    "AudioFileWriter",
    "AudioFormat",
    "Cancelled",
    "ClearDone",
    "Client",
    "DeadlineExceeded",
    "Encoding",
    "FailedPrecondition",
    "FileOptions",
    "FlushDone",
    "HealthStatus",
    "InvalidRequest",
    "Metadata",
    "Options",
    "Overloaded",
    "StreamEvent",
    "StreamSession",
    "Summary",
    "SynthesisEvent",
    "SynthesisOptions",
    "Target",
    "Timestamps",
    "TimestampsWriter",
    "Unauthenticated",
    "Unavailable",
    "Voice",
    "VoiceList",
    "VoiceLoadFailure",
    "VoiceNotFound",
    "VoxliteError",
    "WordTimestamp",
]
