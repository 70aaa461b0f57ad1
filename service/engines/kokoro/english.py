"""Latin words inside Chinese text, as Kokoro's English phonemes from misaki's US lexicon."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

from ..espeak import misaki_phonemes

# "WiFi" -> Wi, Fi; "iPhone" -> i, Phone; "USB3" -> USB, 3: the parts of a word written in
# camel case, each looked up on its own when the whole word is not in the lexicon.
_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# Words Chinese text writes in capitals that are said as words, not spelled (打开WIFI).
_SAID_AS_WORDS = {"WIFI": "Wi-Fi"}
# ... and words in capitals that are spelled, which the lexicon reads as words (VS: "viz").
_SPELLED = frozenset(("VS",))


class Lexicon:
    """misaki's gold and silver US dictionaries (the phoneme set Kokoro v1.0 was trained on):
    a word or its singular, else its camel-case parts (joined by a hyphen, then each alone),
    else espeak's reading of it; a word in capitals or of two letters that no dictionary has
    is spelled out, as a listener hears an unknown acronym."""

    def __init__(self) -> None:
        data = resources.files("misaki") / "data"
        self._words: list[dict[str, Any]] = [
            json.loads((data / name).read_text(encoding="utf-8"))
            for name in ("us_gold.json", "us_silver.json")
        ]
        self._letters = {c: self._lookup(c) or "" for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}

    def _lookup(self, word: str) -> str | None:
        for candidate in (word, word.lower(), word.capitalize()):
            for table in self._words:
                entry = table.get(candidate)
                if isinstance(entry, dict):  # readings by part of speech
                    entry = entry.get("DEFAULT") or next(iter(entry.values()), None)
                if isinstance(entry, str):
                    return entry
        return None

    def _acronym(self, word: str) -> bool:
        """Whether the lexicon says a word in capitals is spelled as a name: "IT", "US", "ID"
        and "WHO" have no reading as a noun (misaki spells a proper noun so), while "OK",
        "NASA" and "SIM" are read as words. In Chinese text a word in capitals is a name."""
        for table in self._words:
            entry = table.get(word)
            if isinstance(entry, dict):
                return "NOUN" in entry and entry["NOUN"] is None
            if entry is not None:
                return False
        return False

    def _plural(self, word: str) -> str | None:
        """A plural the lexicon has only the singular of ("apps", "tickets", "emails", "boxes",
        "replies"), with the ending English gives after the stem's last sound: s after a
        voiceless one, ᵻz after a hissing one, z after the rest."""
        if len(word) < 3 or not word.endswith("s") or word.endswith("ss"):
            return None
        stems = [word[:-1]]
        if word.endswith("ies"):
            stems.append(word[:-3] + "y")
        elif word.endswith("es"):
            stems.append(word[:-2])
        for stem in stems:
            said = self._lookup(stem)
            if said:
                if said[-1] in "ptkfθ":
                    return said + "s"
                return said + ("ᵻz" if said[-1] in "szʃʒʧʤ" else "z")
        return None

    def spell(self, word: str) -> str:
        return "".join(self._letters.get(c, "") for c in word.upper())

    def phonemes(self, word: str) -> str:
        """Phonemes of one Latin word (letters, apostrophes and hyphens)."""
        word = _SAID_AS_WORDS.get(word, word)
        if word in _SPELLED:
            return self.spell(word)
        if len(word) > 1 and word.isupper() and self._acronym(word):
            return self.spell(word)
        found = self._lookup(word)
        if found is None and not word.isupper():
            found = self._plural(word)
        if found is not None:
            return found
        parts = [p for p in _PARTS.findall(word) if not p.isdigit()]
        if len(parts) > 1:
            found = self._lookup("-".join(parts))
            if found is not None:
                return found
            return " ".join(self.phonemes(p) for p in parts)
        if not parts:
            return ""
        (part,) = parts
        if part != word:
            return self.phonemes(part)
        if word.isupper() or len(word) < 3:
            return self.spell(word)
        # A name the lexicon lacks (Samsung, Kevin, Spotify): espeak's reading, as misaki's
        # own English reader falls back to it; spelled letter by letter, no one knew it.
        return misaki_phonemes(word) or self.spell(word)
