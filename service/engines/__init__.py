"""The voice interface, the families that meet it (Piper, Kokoro), the registry, caches."""
