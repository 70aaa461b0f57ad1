"""A code after the word that names it, read digit by digit, as the one who must type it needs
it: espeak-ng reads "Su código es 482913" as *cuatrocientos ochenta y dos mil…*, and "482 913"
as one number too. After código, clave, contraseña, PIN, número de pedido, IBAN, a card terminada
en (es); code, mot de passe, numéro de commande (fr); codice, password, numero d'ordine (it);
código, senha, número do pedido, protocolo, CPF, cartão final (pt), and a number sign with
its name either way round (pedido n.º, N° de commande); and a flight's number after its
capitals (IB3456). A postal code or a tax
code is left as written: each country reads those its own way."""

from __future__ import annotations

import re

_IS = {"es": r"es|será", "fr": r"est|sera", "it": r"è|sarà", "pt": r"é|será"}
_NAMES = {
    "es": (
        r"c[óo]digo(?!\s+postal)(?:\s+de\s+(?:verificaci[óo]n|seguridad|acceso|confirmaci[óo]n"
        r"|descuento|cliente|reserva|pedido))?|clave|contraseña|PIN|localizador|referencia|IBAN|DNI|NIE"
        r"|(?:tarjeta|cuenta|número|teléfono)\s+(?:que\s+)?(?:terminad[oa]|acabad[oa]|termina"
        r"|acaba)\s+en"
        r"|extensi[óo]n|n[úu]mero\s+de\s+(?:pedido|referencia|seguimiento|cliente|cuenta|reserva"
        r"|confirmaci[óo]n|expediente|incidencia|ticket|socio)"
        r"|(?:pedido|reserva|expediente|factura|ticket|paquete|envío)\s+n\.?\s?[º°]"
        r"|n\.?\s?[º°]\s+de\s+(?:pedido|reserva|expediente|factura|cliente|socio)"
    ),
    "fr": (
        r"code(?!\s+postal)(?:\s+(?:de\s+(?:vérification|sécurité|confirmation|réduction|accès)"
        r"|promo|PIN|confidentiel))?|mot\s+de\s+passe|PIN|r[ée]f[ée]rence|poste|IBAN"
        r"|(?:carte|compte|numéro)\s+(?:qui\s+se\s+termine|se\s+terminant|finissant)\s+par"
        r"|num[ée]ro\s+de\s+(?:commande|suivi|dossier|client|réservation|confirmation|ticket"
        r"|colis|contrat)"
        r"|(?:commande|dossier|colis|contrat)\s+n[°º]"
        r"|n[°º]\s+de\s+(?:commande|dossier|suivi|client|colis|contrat)"
    ),
    "it": (
        r"codice(?!\s+(?:postale|fiscale))(?:\s+(?:di\s+(?:verifica|sicurezza|conferma|accesso"
        r"|sconto)|OTP|PIN|promozionale|cliente))?|password|PIN|riferimento|interno|IBAN"
        r"|(?:carta|conto|numero)\s+che\s+termina\s+(?:con|in)"
        r"|numero\s+(?:di\s+|d')?(?:ordine|pratica|prenotazione|cliente|tracking|conferma"
        r"|spedizione|ticket|contratto)"
        r"|(?:ordine|pratica|prenotazione|fattura|pacco|spedizione)\s+n(?:\.\s?|[°º]\s?)"
        r"|n(?:\.|[°º])\s+(?:ordine|pratica|prenotazione|fattura)"
    ),
    "pt": (
        r"c[óo]digo(?!\s+postal)(?:\s+de\s+(?:verificação|segurança|confirmação|acesso|desconto"
        r"|rastreio|rastreamento))?|senha|PIN|protocolo|ramal|CPF|CNPJ|RG|IBAN"
        r"|cart[ãa]o\s+(?:com\s+)?final|(?:com|de)\s+final"
        r"|(?:cart[ãa]o|conta|n[úu]mero)\s+(?:que\s+termina|terminad[oa])\s+em"
        r"|n[úu]mero\s+d[oa]\s+(?:pedido|protocolo|cliente|reserva|rastreio|chamado|contrato)"
        r"|(?:pedido|protocolo|reserva|chamado|pacote|encomenda)\s+n\.?\s?[º°]"
        r"|n\.?\s?[º°]\s+d[oa]\s+(?:pedido|protocolo|reserva|chamado|cliente)"
    ),
}
# The name, "is" or a colon, then the code: capitals and digits, in groups perhaps ("482 913",
# "123.456.789-00", a CNPJ's "12.345.678/0001-95", an IBAN's "IT60 X054 2811…", a NIE's
# "X1234567L", a locator's "ABC123"). A group after a space holds a digit; _code() wants three.
_CODES = {
    language: re.compile(
        rf"(?i)\b((?:{names})(?:\s+(?:{_IS[language]})\b)?\s?:?\s?)"
        r"((?-i:[A-Z0-9]+(?:[./-][A-Z0-9]+|\s(?=[A-Z]*\d)[A-Z0-9]{2,})*))(?![\d.,]\d|\w)"
    )
    for language, names in _NAMES.items()
}


def _code(found: re.Match[str]) -> str:
    """Each character alone (a letter by its name: "ES" is not the word *es*), a pause between
    the groups; fewer than three digits are no code ("PIN A1")."""
    if sum(c.isdigit() for c in found.group(2)) < 3:
        return found.group(0)
    groups = re.split(r"[ ./-]", found.group(2))
    return found.group(1) + ", ".join(" ".join(group) for group in groups)


# A number sign before a number or a code ("pedido #4521", "#A1234"): espeak-ng names the sign
# (*almohadilla*, *cancelletto*) or drops it, and reads the number as an amount.
_NUMBER_SIGN = re.compile(r"(?<![\w&#])#\s?([A-Z0-9]*\d[A-Z0-9]*)\b")
_NUMBER_WORD = {"es": "número", "fr": "numéro", "it": "numero", "pt": "número"}
# An HTTP status after the word error ("error 404", "erreur 503"): digit by digit, as said.
_STATUS = re.compile(r"(?i)\b(error|erreur|errore|erro)\s([1-5]0\d)\b(?![.,]\d)")
# Three digits or more right after two or three capitals are a flight's, a model's or a
# parcel's number (IB3456, RTX4090): one by one, not tres mil cuatrocientos… (After one
# capital they may be a name's number: the Airbus A320 is *A trescientos veinte*.)
_AFTER_CAPITALS = re.compile(r"(?<![\w-])([A-Z]{2,3})(\d{3,})(?![\w-]|[.,]\d)")


def spoken(text: str, language: str) -> str:
    """`text` with each code after its name or a number sign digit by digit (groups with a
    pause between), for `language`'s primary subtag ("es"); other languages' text unchanged."""
    codes = _CODES.get(language)
    if codes is None or not any(c.isdigit() for c in text):
        return text
    if "#" in text:
        text = _NUMBER_SIGN.sub(lambda m: f"{_NUMBER_WORD[language]} {' '.join(m[1])}", text)
    text = _STATUS.sub(lambda m: f"{m[1]} {' '.join(m[2])}", codes.sub(_code, text))
    return _AFTER_CAPITALS.sub(lambda m: f"{m[1]} {' '.join(m[2])}", text)
