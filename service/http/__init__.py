"""The OpenAI-compatible HTTP edge (aiohttp): speech, models, voices and the page."""
