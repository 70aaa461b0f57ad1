"""A stream's audio from PCM to the client's format: settings, pipeline, encoders, Ogg."""
