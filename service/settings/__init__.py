"""The server's settings: the one frozen config object and its table of options."""
