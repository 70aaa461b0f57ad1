"""Abbreviations written out before espeak-ng reads them. It spells some as letters (Portuguese
"Sr." *esse erre*, French "M." *em*, Italian "Sig." as a syllable, "c/" *ce barra*) and keeps
the point of those it knows as a full stop ("Sr." *señor.*), which Kokoro says as the end of
a sentence, with its fall and its pause, before the name that follows. One that ends its
sentence ("…, etc.") is written out with the full stop its point also was."""

from __future__ import annotations

import re

_WORDS = {
    "es": {
        "Sr.": "señor", "Sra.": "señora", "Srta.": "señorita", "Sres.": "señores",
        "Sras.": "señoras", "Dr.": "doctor", "Dra.": "doctora", "Ud.": "usted",
        "Uds.": "ustedes", "Dña.": "doña", "Av.": "avenida", "Avda.": "avenida", "c/": "calle",
        "C/": "calle", "pág.": "página", "págs.": "páginas", "núm.": "número",
        "tel.": "teléfono", "Tel.": "teléfono", "aprox.": "aproximadamente",
        "p. ej.": "por ejemplo", "EE. UU.": "Estados Unidos", "etc.": "etcétera",
        "a. m.": "a eme", "p. m.": "pe eme", "a.m.": "a eme", "p.m.": "pe eme",
        # said as words: espeak-ng spells them (*i uve a*)
        "IVA": "iva", "PIN": "pin",
    },
    "fr": {
        "M.": "monsieur", "MM.": "messieurs", "Dr.": "docteur", "Dr": "docteur",
        "tél.": "téléphone", "Tél.": "téléphone",
        "av.": "avenue", "p. ex.": "par exemple", "env.": "environ", "etc.": "et cetera",
    },
    "it": {
        "Sig.": "signor", "Sig.ra": "signora", "Sig.na": "signorina", "Sig.ri": "signori",
        "Dott.": "dottor", "Dott.ssa": "dottoressa", "Prof.": "professor",
        "Prof.ssa": "professoressa", "Avv.": "avvocato", "Ing.": "ingegner",
        "tel.": "telefono", "Tel.": "telefono", "ecc.": "eccetera", "p.es.": "per esempio",
        "V.le": "viale", "P.za": "piazza", "IVA": "iva",
    },
    "pt": {
        "Sr.": "senhor", "Sra.": "senhora", "Srta.": "senhorita", "Srs.": "senhores",
        "Dr.": "doutor", "Dra.": "doutora", "Av.": "avenida", "tel.": "telefone",
        "Tel.": "telefone", "aprox.": "aproximadamente", "Prof.": "professor",
        "Profa.": "professora", "etc.": "etcétera",
    },
}  # fmt: skip

# Those that lead into a name or an example ("Sr. García", "Av. Paulista", "p. ej. Visa"). Any
# other followed by a capital ends its sentence too ("…en EE. UU. Viven…"): its full stop stays.
_LEAD_IN = {
    "es": {"Sr.", "Sra.", "Srta.", "Sres.", "Sras.", "Dr.", "Dra.", "Dña.", "Av.", "Avda.", "c/",
           "C/", "p. ej.", "P. ej."},
    "fr": {"M.", "MM.", "Dr.", "Dr", "p. ex.", "P. ex."},
    "it": {"Sig.", "Sig.ra", "Sig.na", "Sig.ri", "Dott.", "Dott.ssa", "Prof.", "Prof.ssa",
           "Avv.", "Ing.", "V.le", "P.za", "p.es.", "P.es."},
    "pt": {"Sr.", "Sra.", "Srta.", "Srs.", "Dr.", "Dra.", "Av.", "Prof.", "Profa."},
}  # fmt: skip

for _language, _words in _WORDS.items():
    # The same at the start of a sentence ("Tel. 912…"), and a title in lower case ("il
    # dott. Verdi", "la sra. Pérez"), which leads into the name as the capital one does.
    _words.update({a[0].upper() + a[1:]: w for a, w in list(_words.items()) if a[0].islower()})
    for _title in [a for a in _LEAD_IN[_language] if a[0].isupper() and a[1:2].islower()]:
        _words.setdefault(_title.lower(), _words[_title])
        _LEAD_IN[_language].add(_title.lower())

# Longest first, so that "Sra." is not read as "Sr." and an "a".
_PATTERNS = {
    language: re.compile(
        r"(?<![\w./])("
        + "|".join(re.escape(a) for a in sorted(words, key=len, reverse=True))
        + r")(?:(?P<space>[ \t\u00a0]*)(?P<next>[\w(])|(?!\w)(?!\.\w))"
    )
    for language, words in _WORDS.items()
}


def spoken(text: str, language: str) -> str:
    """`text` with `language`'s abbreviations written as words; other languages' text
    unchanged."""
    pattern = _PATTERNS.get(language)
    if pattern is None:
        return text
    words, lead_in = _WORDS[language], _LEAD_IN[language]

    def word(found: re.Match[str]) -> str:
        abbreviation, said = found.group(1), words[found.group(1)]
        if following := found.group("next"):
            if following.isupper() and abbreviation not in lead_in and abbreviation.endswith("."):
                said += "."
            # "c/Mayor": the word needs the space the slash stood for.
            return f"{said}{found.group('space') or ' '}{following}"
        # Last in its sentence ("etc."): its point was also the full stop, which stays.
        rest = found.string[found.end() : found.end() + 1]
        ends = abbreviation.endswith(".") and (not rest or rest[0].isspace())
        return f"{said}." if ends else said

    return pattern.sub(word, text)
