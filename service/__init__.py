"""voxlite server: Piper voices streamed over gRPC as the vocoder produces audio."""

import os

# onnxruntime 1.32 records usage telemetry in ~/.cache/Microsoft and tries to upload it, unless
# this is set before it is imported. voxlite makes no network calls at run time.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
# gRPC's core writes INFO lines (a client's failed TLS handshake) to stderr, outside the
# server's log format, unless GRPC_VERBOSITY, read as grpc is imported, says otherwise: ERROR,
# gRPC's documented default, where the operator has not chosen.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
