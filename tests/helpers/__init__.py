"""Helpers the tests share beyond conftest's fixtures."""
