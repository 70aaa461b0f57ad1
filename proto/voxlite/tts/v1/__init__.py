"""Generated code for voxlite.tts.v1 (run scripts/gen-proto; do not edit)."""
