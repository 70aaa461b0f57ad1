"""voxlite server: Piper voices streamed over gRPC as the vocoder produces audio."""
