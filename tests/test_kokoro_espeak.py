"""Spanish, French, Italian and Portuguese text to Kokoro phonemes: misaki's espeak-ng G2P, and
the prices and numbers it would misread written first as people say them (amounts.py)."""

from __future__ import annotations

import functools

import pytest
from voxlite.service.engines.kokoro.amounts import spoken
from voxlite.service.engines.kokoro.family import ESPEAK_LANGUAGES
from voxlite.service.engines.kokoro.g2p import EspeakG2P, Word
from voxlite.service.engines.kokoro.tokens import cut_pieces, load_vocab


@functools.cache
def g2p(language: str) -> EspeakG2P:
    """The G2P of the voices of `language`'s primary subtag ("es")."""
    tag = next(t for t in ESPEAK_LANGUAGES if t.startswith(f"{language}-"))
    return EspeakG2P(ESPEAK_LANGUAGES[tag])


def said(language: str, text: str) -> str:
    return "".join(w.phonemes for w in g2p(language)(text))


@pytest.mark.parametrize(("language", "written", "spoken_as"), [
    # A price: the currency after its amount, in the plural, and the cents after a joining word.
    ("es", "El total es de 25,50 €.", "El total es de 25 euros con 50."),
    ("es", "Cuesta $25.99.", "Cuesta 25 dólares con 99."),
    ("es", "Solo 1 €.", "Solo un euro."),
    ("fr", "Le total est de 25,50 €.", "Le total est de 25 euros 50."),
    ("it", "Il totale è di € 25,50.", "Il totale è di 25 euro e 50."),
    ("pt", "O total é de R$ 25,90.", "O total é de 25 reais e 90."),
    ("pt", "São R$ 1.250,00.", "São 1250 reais."),
    # A point between thousands groups, and a decimal comma.
    ("es", "Son 1.250 personas.", "Son 1250 personas."),
    ("es", "Ha subido un 3,5 %.", "Ha subido un 3 coma 5 %."),
    ("it", "Pesa 2,5 chili.", "Pesa 2 virgola 5 chili."),
])  # fmt: skip
def test_prices_and_numbers_are_read_as_people_say_them(
    language: str, written: str, spoken_as: str
) -> None:
    """espeak-ng reads 25,50 € as "veinticinco, cincuenta euro", $25 as "dólar veinticinco",
    1.250 as "uno. doscientos cincuenta" and 3,5 as two numbers with a pause between."""
    assert spoken(written, language) == spoken_as
    assert said(language, written) == said(language, spoken_as)


@pytest.mark.parametrize("text", [
    "Versión 2.0, pasos 1,2,3 y el 15/03.",  # no price, no thousands, no decimal
    "Visite ejemplo.es/1.250",  # a web address's path
])  # fmt: skip
def test_other_numbers_are_left_to_espeak(text: str) -> None:
    assert spoken(text, "es") == text


def test_only_these_languages_are_rewritten() -> None:
    assert spoken("It costs 25,50 €.", "en") == "It costs 25,50 €."
    assert spoken("Il costo è 25,50 £.", "it") == "Il costo è 25 sterline e 50."


def test_every_phoneme_is_in_kokoros_vocabulary() -> None:
    """espeak-ng writes some nasal vowels as one character (Portuguese "um" ũ), which Kokoro's
    vocabulary lacks and the model would never hear: they reach it as the vowel and its tilde."""
    vocab = load_vocab()
    phonemes = said("pt", "Um pão, um irmão, bom dia.")
    assert "\u0303" in phonemes
    assert set(phonemes.replace(" ", "")) <= set(vocab)


def test_a_long_text_is_cut_at_its_marks() -> None:
    """The G2P's words are its space-separated groups, the marks with them: pieces end at a
    mark, not inside a clause."""
    text = " ".join(["Hola, buenos días, gracias por llamar al servicio de atención."] * 8)
    words = g2p("es")(text)
    assert all(isinstance(w, Word) and not w.text for w in words)
    pieces = cut_pieces(words, load_vocab(), 120)
    assert len(pieces) > 1
    assert all(piece.words[-1].is_break for piece in pieces[:-1])
