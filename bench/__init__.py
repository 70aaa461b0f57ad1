"""Benchmarks: voxlite side by side with Piper's own engine and HTTP server, run as modules."""
