"""The Markdown a language model writes around its words, taken out before a voice reads them:
espeak-ng reads "**Sure!**" as "asterisk asterisk sure exclamation asterisk asterisk"."""

from __future__ import annotations

import re

# Emphasis and bullets: a run of asterisks not between two spaces or digits ("2 * 3", "5*3",
# "press *69" keep theirs). Backticks around code. A heading's hashes at a line's start.
_ASTERISKS = re.compile(r"(?<![\d\s])\*+|\*+(?![\d\s])")
_BACKTICKS = re.compile(r"`+")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.MULTILINE)
# A link is read as its text: [the docs](https://example.com) → the docs.
_LINK = re.compile(r"\[([^\]\n]+)\]\([^)\s]+\)")


def spoken(text: str) -> str:
    """`text` (one segment) without Markdown's emphasis, code marks, heading hashes and link
    targets; anything else as it is."""
    if not any(c in text for c in "*`#]"):
        return text
    text = _LINK.sub(r"\1", text)
    text = _HEADING.sub("", text)
    text = _BACKTICKS.sub("", text)
    return _ASTERISKS.sub("", text)
