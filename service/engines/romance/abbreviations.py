"""Abbreviations written out before espeak-ng reads them. It spells some as letters (Portuguese
"Sr." *esse erre*, French "M." *em*, Italian "Sig." as a syllable, "c/" *ce barra*) and keeps
the point of those it knows as a full stop ("Sr." *señor.*), which Kokoro says as the end of
a sentence, with its fall and its pause, before the name that follows. One that ends its
sentence ("…, etc.") is written out with the full stop its point also was."""

from __future__ import annotations

import re

from ..written import REGNAL, ROMAN_AFTER_NAME, roman_value

_WORDS = {
    "es": {
        "Sr.": "señor", "Sra.": "señora", "Srta.": "señorita", "Sres.": "señores",
        "Sras.": "señoras", "Dr.": "doctor", "Dra.": "doctora", "Ud.": "usted",
        "Uds.": "ustedes", "Dña.": "doña", "Av.": "avenida", "Avda.": "avenida", "c/": "calle",
        "C/": "calle", "pág.": "página", "págs.": "páginas", "núm.": "número",
        "tel.": "teléfono", "Tel.": "teléfono", "tfno.": "teléfono", "tlf.": "teléfono",
        "Dpto.": "departamento", "dpto.": "departamento", "aprox.": "aproximadamente",
        "p. ej.": "por ejemplo", "EE. UU.": "Estados Unidos", "etc.": "etcétera",
        "a. m.": "a eme", "p. m.": "pe eme", "a.m.": "a eme", "p.m.": "pe eme",
        # said as words: espeak-ng spells them (*i uve a*)
        "IVA": "iva", "PIN": "pin",
    },
    "fr": {
        "M.": "monsieur", "MM.": "messieurs", "Dr.": "docteur", "Dr": "docteur",
        "tél.": "téléphone", "Tél.": "téléphone",
        "av.": "avenue", "p. ex.": "par exemple", "env.": "environ", "etc.": "et cetera",
        # said as words, not spelled (*èr dé vé*)
        "RDV": "rendez-vous", "rdv": "rendez-vous", "SVP": "s'il vous plaît",
        "svp": "s'il vous plaît",
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
        "Profa.": "professora", "etc.": "etcétera", "Obs.": "observação", "obs.": "observação",
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


# A monarch's or a pope's numeral ("Felipe II", "Dom Pedro II") is an ordinal to ten in Spanish
# and Portuguese, a number after (Alfonso XIII: trece); in French a number, but premier for
# one (Louis XIV: quatorze). A century's too (siglo XXI, século XXI, le XXIe siècle); espeak-ng
# reads the letters (*Carlos uve*, *quatorze romain*, XXIe as a word).
_ORDINALS = {
    "es": ("primero", "segundo", "tercero", "cuarto", "quinto", "sexto", "séptimo", "octavo",
           "noveno", "décimo"),
    "pt": ("primeiro", "segundo", "terceiro", "quarto", "quinto", "sexto", "sétimo", "oitavo",
           "nono", "décimo"),
    "fr": ("premier",),
}  # fmt: skip
_CENTURY = {
    "es": re.compile(r"(?i:\b(siglos?)\s)([IVX]{1,6})\b"),
    "pt": re.compile(r"(?i:\b(s[ée]culos?)\s)([IVX]{1,6})\b"),
    "fr": re.compile(r"\b()([IVX]{1,6})(?:e|è|ème|ᵉ)(?=\s+si[èe]cle)"),
}


def _numerals(text: str, language: str) -> str:
    ordinals = _ORDINALS.get(language)
    if ordinals is None or not any(c in text for c in "IVX"):
        return text

    def after_name(found: re.Match[str]) -> str:
        name, value = found.group(1), roman_value(found.group(2))
        if value is None or (name not in REGNAL and len(found.group(2)) == 1):
            return found.group()
        if name in REGNAL and value <= len(ordinals):
            return f"{name} {ordinals[value - 1]}"
        return f"{name} {value}"

    def century(found: re.Match[str]) -> str:
        value = roman_value(found.group(2))
        if value is None:
            return found.group()
        word = found.group(1)
        return f"{word} {value}" if word else f"{value}ème"

    text = _CENTURY[language].sub(century, ROMAN_AFTER_NAME.sub(after_name, text))
    return _FRENCH_FIRST.sub(_french_first, text) if language == "fr" else text


# French writes the first of a line, or a first century, Ier and Ire (Louis Ier, Élisabeth Ire,
# le Ier siècle): espeak-ng spells them out (*i e r*).
_FRENCH_FIRST = re.compile(r"\bI(er|re)\b")


def _french_first(found: re.Match[str]) -> str:
    return "premier" if found.group(1) == "er" else "première"


def spoken(text: str, language: str) -> str:
    """`text` with `language`'s abbreviations written as words, and the Roman numerals of
    monarchs, popes and centuries as said; other languages' text unchanged."""
    pattern = _PATTERNS.get(language)
    if pattern is None:
        return text
    text = _numerals(text, language)
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
