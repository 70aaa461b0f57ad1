"""voxlite server: Piper voices streamed over gRPC as the vocoder produces audio."""

import os

# onnxruntime 1.32 records usage telemetry in ~/.cache/Microsoft and tries to upload it, unless
# this is set before it is imported. voxlite makes no network calls at run time.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
