"""Cut a stream of text pieces into sentence/clause segments, independently of how it was split."""

from __future__ import annotations

import re
import unicodedata

# Sentence terminators. `…` and the rare double marks behave like `.`/`!`/`?`: they need
# whitespace after them, because "3.14" and "example.com" must not cut.
_TERM_LATIN = frozenset(
    (".", "!", "?", "\N{HORIZONTAL ELLIPSIS}", "\N{DOUBLE EXCLAMATION MARK}",
     "\N{DOUBLE QUESTION MARK}", "\N{QUESTION EXCLAMATION MARK}",
     "\N{EXCLAMATION QUESTION MARK}")
)  # fmt: skip
# CJK text has no spaces between sentences, so these cut without waiting for whitespace.
# A full-width semicolon ends a Chinese sentence as a full stop does.
_TERM_CJK = frozenset(
    ("\N{IDEOGRAPHIC FULL STOP}", "\N{FULLWIDTH EXCLAMATION MARK}",
     "\N{FULLWIDTH QUESTION MARK}", "\N{HALFWIDTH IDEOGRAPHIC FULL STOP}",
     "\N{FULLWIDTH SEMICOLON}")
)  # fmt: skip
_TERM = _TERM_LATIN | _TERM_CJK
_CLAUSE_LATIN = frozenset((",", ";", ":"))
_CLAUSE_CJK = frozenset(
    ("\N{FULLWIDTH COMMA}", "\N{IDEOGRAPHIC COMMA}", "\N{FULLWIDTH COLON}",
     "\N{HALFWIDTH IDEOGRAPHIC COMMA}")
)  # fmt: skip
# An ellipsis before a wide (CJK) character ends the sentence with no space after it: "请稍等…我".
_ELLIPSIS = "\N{HORIZONTAL ELLIPSIS}"
# A CJK character carries the speech of about three Latin ones: clause_min_chars counts them so.
_WIDE_WEIGHT = 3
_CLAUSE = _CLAUSE_LATIN | _CLAUSE_CJK
# A character reference's end (&amp; &#39; &#x4e2d;): its ";" is no clause mark.
_REFERENCE_END = re.compile(r"&(?:[A-Za-z]+|#\d+|#x[0-9A-Fa-f]+);\Z")
# Closing quotes/brackets belong to the sentence they close. `*`, `_` and backticks close
# Markdown emphasis/code, which LLM output is full of ("**Done.** Next").
_CLOSERS = frozenset(
    ('"', "'", ")", "]", "}", "*", "_", "`",
     "\N{RIGHT SINGLE QUOTATION MARK}", "\N{RIGHT DOUBLE QUOTATION MARK}",
     "\N{RIGHT-POINTING DOUBLE ANGLE QUOTATION MARK}",
     "\N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK}",
     "\N{RIGHT CORNER BRACKET}", "\N{RIGHT WHITE CORNER BRACKET}",
     "\N{FULLWIDTH RIGHT PARENTHESIS}", "\N{RIGHT BLACK LENTICULAR BRACKET}",
     "\N{RIGHT TORTOISE SHELL BRACKET}", "\N{RIGHT ANGLE BRACKET}",
     "\N{RIGHT DOUBLE ANGLE BRACKET}", "\N{RIGHT WHITE LENTICULAR BRACKET}",
     "\N{RIGHT WHITE TORTOISE SHELL BRACKET}", "\N{RIGHT WHITE SQUARE BRACKET}",
     "\N{FULLWIDTH RIGHT SQUARE BRACKET}", "\N{FULLWIDTH RIGHT CURLY BRACKET}",
     "\N{FULLWIDTH QUOTATION MARK}", "\N{FULLWIDTH APOSTROPHE}")
)  # fmt: skip
# Marks a value may follow (a colon after 验证码, "Code: 4839", コードは、): a digit after one
# keeps the clause whole, since the number's words come from its label ("483920" read alone
# is a quantity, 四十八万…, after 验证码 a code, 四八三九二零).
_COLONS = frozenset((":", "\N{FULLWIDTH COLON}"))
_TOPIC_COMMAS = frozenset(("\N{IDEOGRAPHIC COMMA}", "\N{FULLWIDTH COMMA}", ","))
_TOPIC = "\N{HIRAGANA LETTER HA}"  # Japanese は: "XXは、483920です"
_DASHES = frozenset(("\N{EM DASH}", "\N{EN DASH}"))
# A spaced hyphen is a dash only on one line: "\n- item" is a Markdown bullet.
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
# Only words that (almost) never end a sentence: "etc." and "no." do, so they are left out.
_ABBREVIATIONS = frozenset(
    (
        "mr", "mrs", "ms", "mx", "dr", "prof", "st", "jr", "sr", "vs",
        "mt", "rev", "fr", "gen", "col", "capt", "lt", "sgt", "cf", "approx",
        # months before a day ("Dec. 5th"), which the voice reads as the month's name, and
        # after one in Spanish, French, Italian and Portuguese ("5 déc. à 14h", "12 de dic."):
        # "ago", "set" and "out" end English sentences too, so they are left out
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
        "janv", "févr", "fév", "avr", "juil", "déc", "ene", "abr", "dic", "mag", "giu", "lug",
        "ott", "fev", "dez",
        # days before a date ("Mon. 12/7"; "sat", "sun" and "wed" are words too), numbered
        # things ("Vol. 3", "Ver. 2"), and "incl. tax"
        "mon", "tue", "tues", "thu", "thur", "thurs", "fri", "vol", "ver", "incl", "excl", "dept",
        # an address's parts ("Elm Rd. now", "Apt. 4B", "Rte. 26"), a phone's extension
        # ("ext. 89")
        "apt", "ste", "ave", "rd", "blvd", "ln", "hwy", "pkwy", "rte", "rt", "ext", "bldg", "rm",
        "fl",
        # units of time and measure after a number ("30 min. or 2 hrs"), which the voice says
        # as words
        "min", "mins", "sec", "secs", "hr", "hrs", "wk", "wks", "mo", "mos", "yr", "yrs", "oz",
        "lb", "lbs", "ft", "tbsp", "tsp",
        # titles and the like in Spanish, French, Italian and Portuguese ("la Sra. Pérez",
        # "Mme. Martin", "il dott. Rossi", "Av. Paulista", "pág. 3", "tel. 912...", "p. ej.",
        # "EE. UU.", "l'Avv. Neri"), which engines/romance writes out whole
        "sra", "srta", "sres", "sras", "srs", "dra", "profa", "ud", "uds", "dña", "mme", "mlle",
        "sig", "dott", "avv", "ing", "av", "avda", "pág", "págs", "núm", "tel", "tél", "aprox",
        "env", "ej", "ex", "ee", "uu", "tfno", "tlf", "dpto", "obs",
        # "Avg. wait", "Qty. 2"
        "avg", "qty",
        # days of the week by their short names in those languages ("lun.-vie.", "du lun. au
        # ven."), those that are no word of their own
        "lun", "mié", "jue", "sáb", "sab", "gio",
    )
)  # fmt: skip
_ABBREVIATION_MAX_LEN = max(len(a) for a in _ABBREVIATIONS)
# Words that end a sentence, or stand before a number: "Your order No. 4521 ships" is one
# sentence, so a number after the dot (and its spaces) keeps the segment going.
_BEFORE_NUMBER = frozenset(
    (
        "no", "nos", "nr", "num", "fig", "figs", "ref", "art", "pp",
        # days of the week by short names that are words too ("vie" life, "ven" come, "Sun"),
        # before a time or a date ("sáb. 10:00", "Sat. 12/7")
        "mar", "mie", "vie", "dom", "mer", "jeu", "ven", "sam", "dim", "seg", "ter", "qua",
        "qui", "sex", "sat", "sun", "wed",
        # "Est. 1998" (established), "Max. 2 per customer"
        "est", "max",
    )
)  # fmt: skip
# Words whose point ends no sentence before a small word either: a day ("du lun.-ven. de 9h",
# "seg.-sex. das 9h"), "Est. delivery" (estimated).
_INTO_WORDS = frozenset(
    ("mar", "mie", "vie", "dom", "mer", "jeu", "ven", "sam", "dim", "seg", "ter", "qua", "qui",
     "sex", "est", "max")
)  # fmt: skip
# A list item's mark at a line's start: a bullet ("- ", "* ", "• ", "・", "①"), or the mark
# after its number ("1. ", "2) ", "3、"). The item starts a segment, and its number's mark ends
# none: cut after "2.", a list reads "open settings, two. tap account, three."
_BULLETS = frozenset(
    "-*+\N{BULLET}\N{KATAKANA MIDDLE DOT}\N{BLACK CIRCLE}\N{BLACK SQUARE}\N{BLACK DIAMOND}"
    + "".join(map(chr, range(0x2460, 0x2474)))  # circled numbers: ① to ⑳
)
_NUMBER_MARKS = frozenset(".)、")
_ITEM_NUMBER_MAX_DIGITS = 3

# Kinds of cut candidate being scanned (a run of marks whose fate depends on what follows).
_NONE = 0
_TERM_RUN = 1
_CLAUSE_RUN = 2
_DASH_RUN = 3
_HYPHEN_RUN = 4
_LINE_RUN = 5


class Segmenter:
    """Incremental sentence/clause segmenter for streamed text.

    Decisions at a position depend only on the text of the current segment up to a bounded
    lookahead, never on where the pieces were split, so push() waits rather than guesses.
    Every returned segment is an exact slice of the input, and none is longer than max_chars.
    """

    def __init__(
        self, *, clause_min_chars: int = 40, max_chars: int = 300, first_clause_chars: int = 0
    ) -> None:
        """`first_clause_chars`: the fewest a reply's first clause or sentence needs to end a
        segment (a voice's Voice.first_clause_chars); later clauses need `clause_min_chars`."""
        if max_chars < 1:
            raise ValueError(f"max_chars must be >= 1, got {max_chars}")
        if min(clause_min_chars, first_clause_chars) < 0:
            raise ValueError("clause_min_chars and first_clause_chars must be >= 0")
        self._clause_min = clause_min_chars
        self._first_min = first_clause_chars
        self._max = max_chars
        # Pending text: the current segment starts at index 0. It is cut from the front as
        # segments complete, so it never grows past max_chars and appends stay cheap.
        self._buf = ""
        self._first = True
        self._reset_segment()

    def _reset_segment(self) -> None:
        # Index of the next character to scan: every character is examined once per segment,
        # which keeps a stream of one-character pieces linear.
        self._pos = 0
        self._kind = _NONE
        self._closing = False  # closers have started: more marks no longer extend the run
        self._cjk = False  # the run ends in a CJK mark, which needs no whitespace after it
        self._abbrev = False  # the run is a single "." ending an abbreviation or initial
        self._numbered = False  # ... or ending a word a number may follow (_BEFORE_NUMBER)
        self._into_words = False  # ... which a small word may follow too (_INTO_WORDS)
        self._last_mark = ""  # the run's last mark
        self._run_len = 0
        self._run_start = 0
        self._space_at = -1  # the first space after a clause mark a value may follow
        self._digit_before = False
        self._last_ws = -1
        self._first_visible = -1
        self._has_word = False

    @property
    def buffered_chars(self) -> int:
        """Characters received but not yet returned in a segment."""
        return len(self._buf)

    def push(self, text: str) -> list[str]:
        """Feed a piece of text; return the segments it completed (often none)."""
        if not text:
            return []
        self._buf += text
        return self._scan()

    def flush(self) -> list[str]:
        """Return everything buffered as a final segment and start a new reply."""
        # Every candidate but the last was already settled by the character after it, and the
        # last one would cut at the end of the text anyway, so the tail is a single segment.
        out = [self._buf] if self._buf else []
        self._buf = ""
        self._first = True
        self._reset_segment()
        return out

    def clear(self) -> None:
        """Drop buffered text (barge-in) and start a new reply."""
        self._buf = ""
        self._first = True
        self._reset_segment()

    def _scan(self) -> list[str]:
        out: list[str] = []
        while self._pos < len(self._buf):
            i = self._pos
            ch = self._buf[i]
            if self._kind != _NONE:
                if self._extends(ch):
                    if i >= self._max:
                        self._cap_cut(i, ch, out)
                    else:
                        self._pos = i + 1
                    continue
                at = self._settle(ch, i)
                self._kind = _NONE
                if at >= 0:
                    # What follows the cut is scanned again as the next segment's start.
                    self._cut(at, out)
                    continue
            if i >= self._max:
                self._cap_cut(i, ch, out)
                continue
            if ch in _BULLETS or ch in _NUMBER_MARKS:
                line = self._item_line(i, ch)
                if line > 0 and any(c.isalnum() for c in self._buf[:line]):
                    self._cut(line, out)  # the item is scanned again as the next segment
                    continue
                if line >= 0:
                    if self._first_visible < 0:
                        self._first_visible = i
                    self._pos = i + 1
                    continue
            self._scan_char(ch, i)
            self._pos = i + 1
        return out

    def _extends(self, ch: str) -> bool:
        """Whether `ch` continues the pending candidate; updates the run if so."""
        kind = self._kind
        if kind in (_TERM_RUN, _CLAUSE_RUN):
            marks = _TERM if kind == _TERM_RUN else _CLAUSE
            if not self._closing and ch in marks:
                self._run_len += 1
                self._abbrev = self._numbered = self._into_words = False
                self._last_mark = ch
                # The last mark decides: "?。" ends like "。", "。." like ".".
                self._cjk = ch in _TERM_CJK or ch in _CLAUSE_CJK
                return True
            if ch in _CLOSERS:
                self._closing = True
                self._numbered = self._into_words = False
                return True
            if ch in " \t" and (
                self._numbered or (kind == _CLAUSE_RUN and self._value_may_follow())
            ):
                # Wait for what the spaces lead to: a value stays with its label.
                if self._space_at < 0:
                    self._space_at = self._pos
                self._last_ws = self._pos
                return True
            return False
        if kind == _LINE_RUN:
            return ch in _LINE_BREAKS
        if kind in (_DASH_RUN, _HYPHEN_RUN) and ch in " \t" and self._digit_before:
            # "3 - 5 días", "10 - 15 min" (or an en dash): wait for what the spaces lead to, a
            # digit keeps the span in one segment.
            if self._space_at < 0:
                self._space_at = self._pos
            self._last_ws = self._pos
            return True
        if kind == _DASH_RUN:
            return ch in _DASHES
        if kind == _HYPHEN_RUN and ch == "-":
            self._run_len += 1
            return True
        return False

    def _settle(self, ch: str, i: int) -> int:
        """Where the candidate run that `ch` (at `i`) follows ends the segment: `i`, or the
        first space after it; -1 for no cut."""
        if not self._has_word:
            # A segment of bare punctuation is no use to the synthesizer: keep it for the next.
            return -1
        kind = self._kind
        long_enough = not self._first or i - self._first_visible >= self._first_min
        if kind == _TERM_RUN and self._space_at >= 0:  # "No. " (_BEFORE_NUMBER)
            goes_on = ch.isdigit() or ch == "#" or (self._into_words and ch.islower())
            return -1 if goes_on or not long_enough else self._space_at
        if kind == _TERM_RUN:
            wide_next = self._last_mark == _ELLIPSIS and _wide(ch)
            ends = (self._cjk or ch.isspace() or wide_next) and not self._abbrev
            # A voice that says a short first clause badly alone says a short first sentence
            # ("Hola.", "Olá!") no better: it runs on to the next mark too.
            return i if ends and long_enough else -1
        if kind == _LINE_RUN:
            # A line ends its text as a sentence does: a heading ("### 第1步 登录") or a line
            # with no mark is not run into the next line's words.
            return i if long_enough else -1
        at = i
        if kind == _CLAUSE_RUN:
            if ch.isdigit() and self._value_may_follow():
                return -1
            if self._space_at >= 0:
                at = self._space_at
            ok = self._cjk or self._space_at >= 0 or ch.isspace()
        elif kind == _DASH_RUN:
            # A dash between digits is a range ("pages 10 to 20"), read as one phrase.
            ok = not (self._digit_before and ch.isdigit())
            at = self._space_at if self._space_at >= 0 else i
        elif self._space_at >= 0:  # " - " after a digit, spaces read: a range unless no digit
            ok = self._run_len <= 2 and not ch.isdigit()
            at = self._space_at
        else:
            # "---" is a Markdown rule or a separator, not a dash.
            ok = self._run_len <= 2 and ch.isspace()
        spoken = at - self._first_visible
        if self._cjk:
            spoken *= _WIDE_WEIGHT
        return at if ok and spoken >= (self._first_min if self._first else self._clause_min) else -1

    def _value_may_follow(self) -> bool:
        """Whether the clause run ends in a colon, or is a comma after Japanese は: a label a
        value follows."""
        if self._last_mark in _COLONS:
            return True
        start = self._run_start
        return (
            self._run_len == 1
            and self._last_mark in _TOPIC_COMMAS
            and (start > 0 and self._buf[start - 1] == _TOPIC)
        )

    def _scan_char(self, ch: str, i: int) -> None:
        if ch.isspace():
            self._last_ws = i
            if ch in _LINE_BREAKS and self._has_word:
                self._start_run(_LINE_RUN, False)
            return
        if self._first_visible < 0:
            self._first_visible = i
        if ch.isalnum():
            self._has_word = True
            return
        if ch in _TERM:
            self._start_run(_TERM_RUN, ch in _TERM_CJK)
            self._abbrev = ch == "." and self._ends_abbreviation(i)
            word = self._word_before(i).lower() if ch == "." else ""
            self._numbered = word in _BEFORE_NUMBER
            self._into_words = word in _INTO_WORDS
        elif ch in _CLAUSE and not (ch == ";" and self._ends_reference(i)):
            self._start_run(_CLAUSE_RUN, ch in _CLAUSE_CJK)
        elif ch in _DASHES:
            self._start_run(_DASH_RUN, False)
            self._digit_before = self._digit_left_of(i)
        elif ch == "-" and i > 0:
            before = self._buf[i - 1]
            if before.isspace() and before not in _LINE_BREAKS:
                self._start_run(_HYPHEN_RUN, False)
                self._digit_before = self._digit_left_of(i)

    def _digit_left_of(self, i: int) -> bool:
        """Whether a digit stands before `i`, spaces and tabs aside ("3 - 5", "10 - 15")."""
        j = i - 1
        while j >= 0 and self._buf[j] in " \t":
            j -= 1
        return j >= 0 and self._buf[j].isdigit()

    def _ends_reference(self, i: int) -> bool:
        """Whether the ";" at `i` ends a character reference ("Tom &amp; Jerry"), which is read
        as its character (markup.spoken), not as a clause's end."""
        return _REFERENCE_END.search(self._buf, max(0, i - 12), i + 1) is not None

    def _item_line(self, i: int, ch: str) -> int:
        """Where the line starts when `ch` at `i` marks a list item (see _BULLETS), else -1.
        The segment's own start counts as a line's: an item cut off before stays one."""
        buf = self._buf
        start = i
        if ch in _NUMBER_MARKS:
            while start > 0 and buf[start - 1].isdigit() and i - start < _ITEM_NUMBER_MAX_DIGITS:
                start -= 1
            if start == i:
                return -1
        while start > 0 and buf[start - 1] in " \t":
            start -= 1
        return start if start == 0 or buf[start - 1] in _LINE_BREAKS else -1

    def _start_run(self, kind: int, cjk: bool) -> None:
        self._kind = kind
        self._cjk = cjk
        self._last_mark = self._buf[self._pos] if self._pos < len(self._buf) else ""
        self._closing = False
        self._abbrev = self._numbered = self._into_words = False
        self._run_len = 1
        self._run_start = self._pos
        self._space_at = -1

    def _word_before(self, dot: int) -> str:
        """The word of letters that the "." at `dot` ends, "" where there is none."""
        buf = self._buf
        start = dot
        # Look back a bounded distance: a longer word is no abbreviation we know.
        while start > 0 and buf[start - 1].isalpha() and dot - start <= _ABBREVIATION_MAX_LEN:
            start -= 1
        if start > 0 and buf[start - 1].isalnum():
            return ""
        return buf[start:dot]

    def _ends_abbreviation(self, dot: int) -> bool:
        """Whether the "." at `dot` ends a title, e.g./i.e., or an initial (J. R. R., U.S.)."""
        word = self._word_before(dot)
        if not word:
            return False
        if len(word) == 1:
            # Initials exist only in cased scripts; a lone CJK character is a word.
            return word.isupper() or word.islower()
        return word.lower() in _ABBREVIATIONS

    def _cap_cut(self, i: int, ch: str, out: list[str]) -> None:
        """Cut a segment that reached max_chars: at its last word boundary, else at the cap."""
        if ch.isspace():
            at = i
        elif self._last_ws > 0:
            at = self._last_ws
        else:
            at = i
        # Characters after the cut are scanned again as the start of the next segment, where a
        # mark run cut short by the cap can now complete.
        self._cut(at, out)

    def _cut(self, at: int, out: list[str]) -> None:
        segment = self._buf[:at]
        out.append(segment)
        self._buf = self._buf[at:]
        if self._first and not segment.isspace():
            self._first = False
        self._reset_segment()


def _wide(ch: str) -> bool:
    """A character of a script written without spaces (CJK ideographs, kana, full-width).
    Unassigned code points are not: Python gives some of them width W (U+0378, U+0E5C)."""
    return unicodedata.category(ch) != "Cn" and unicodedata.east_asian_width(ch) in ("W", "F")
