"""Tests for the streaming sentence/clause segmenter."""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from voxlite.service.call.segmenter import Segmenter


def run(pieces: list[str], **options: int) -> list[str]:
    """Push `pieces` one by one, then flush; return every segment in order."""
    segmenter = Segmenter(**options)
    out: list[str] = []
    for piece in pieces:
        out += segmenter.push(piece)
    out += segmenter.flush()
    return out


def segments(text: str, **options: int) -> list[str]:
    return run([text], **options)


# --- sentence ends ---------------------------------------------------------------------------


def test_period_followed_by_whitespace_cuts_before_the_whitespace() -> None:
    assert segments("Hello there. How are you?") == ["Hello there.", " How are you?"]


def test_sentence_cut_waits_until_the_next_character_is_known() -> None:
    segmenter = Segmenter()
    assert segmenter.push("Hello there.") == []
    assert segmenter.buffered_chars == 12
    assert segmenter.push(" H") == ["Hello there."]
    assert segmenter.buffered_chars == 2


def test_exclamation_and_question_marks_cut() -> None:
    assert segments("Wow! Really? Yes.") == ["Wow!", " Really?", " Yes."]


def test_runs_of_marks_stay_in_one_segment() -> None:
    assert segments("What?! No way?!? Ok!!") == ["What?!", " No way?!?", " Ok!!"]


def test_ellipses_cut() -> None:
    assert segments("Well... I think so\u2026 Maybe.") == [
        "Well...",
        " I think so\u2026",
        " Maybe.",
    ]


def test_closing_quotes_and_brackets_are_absorbed() -> None:
    text = 'He said "hi." Then she left (quietly!) and asked \u2018why?\u2019 Done?") Yes.'
    assert segments(text) == [
        'He said "hi."',
        " Then she left (quietly!)",
        " and asked \u2018why?\u2019",
        ' Done?")',
        " Yes.",
    ]


def test_markdown_emphasis_after_a_sentence_end_is_absorbed() -> None:
    assert segments("**Done.** Next.") == ["**Done.**", " Next."]


def test_newline_counts_as_whitespace_after_a_sentence_end() -> None:
    assert segments("One.\nTwo.\n") == ["One.", "\nTwo.", "\n"]


def test_a_character_references_semicolon_does_not_cut() -> None:
    """Bug: "Tom &amp; Jerry." was two segments, with a clause's pause after "Tom &": the
    reference is read as its character."""
    assert segments("Tom &amp; Jerry. Then, more.") == ["Tom &amp; Jerry.", " Then, more."]
    assert run(["Tom &am", "p; Jerry, &#39;yes&#39;; no."]) == [
        "Tom &amp; Jerry,",
        " &#39;yes&#39;; no.",
    ]


def test_marks_inside_numbers_times_and_domains_do_not_cut() -> None:
    text = "Pi is 3.14 and 1,000 people visit example.com at 12:30 daily."
    assert segments(text) == [text]


def test_mark_followed_by_a_letter_does_not_cut() -> None:
    assert segments("Wait.what?Really!no") == ["Wait.what?Really!no"]


# --- CJK ---------------------------------------------------------------------------------------


# Full-width marks by name: they look like their ASCII twins.
BANG = "\N{FULLWIDTH EXCLAMATION MARK}"
QUERY = "\N{FULLWIDTH QUESTION MARK}"
COMMA = "\N{FULLWIDTH COMMA}"


def test_cjk_sentence_ends_cut_without_whitespace() -> None:
    text = f"你好。世界{BANG}真的{QUERY}"
    assert segments(text) == ["你好。", f"世界{BANG}", f"真的{QUERY}"]


def test_cjk_cut_waits_for_a_possible_closing_bracket() -> None:
    segmenter = Segmenter()
    assert segmenter.push("他说「好。") == []
    assert segmenter.push("」走") == ["他说「好。」"]
    assert segmenter.flush() == ["走"]


def test_cjk_clause_marks_cut_without_whitespace() -> None:
    """A CJK character counts as three Latin ones towards clause_min_chars: four
    characters and a clause mark say about as much as fifteen letters."""
    assert segments(f"你好{COMMA}世界。") == [f"你好{COMMA}", "世界。"]
    text = f"好。一二三四{COMMA}五"
    assert segments(text, clause_min_chars=15) == ["好。", f"一二三四{COMMA}", "五"]
    assert segments(text, clause_min_chars=16) == ["好。", f"一二三四{COMMA}五"]


# --- abbreviations -----------------------------------------------------------------------------


TITLES = [
    "Mr.", "Mrs.", "Ms.", "Mx.", "Dr.", "Prof.", "St.", "Jr.", "Sr.", "vs.",
    "Mt.", "Rev.", "Fr.", "Gen.", "Col.", "Capt.", "Lt.", "Sgt.", "cf.", "approx.",
]  # fmt: skip


@pytest.mark.parametrize("title", TITLES)
def test_titles_do_not_end_a_sentence(title: str) -> None:
    text = f"I met {title} Smith today. Bye."
    assert segments(text) == [f"I met {title} Smith today.", " Bye."]


@pytest.mark.parametrize("month", ["Jan.", "Sept.", "Dec."])
def test_a_month_before_its_day_does_not_end_a_sentence(month: str) -> None:
    """Bug: "ships on Dec. 5th" was cut after "Dec.", and the voice said "deck" and ended a
    sentence there."""
    assert segments(f"It ships on {month} 5th. Bye.") == [f"It ships on {month} 5th.", " Bye."]


@pytest.mark.parametrize(
    "text",
    [
        "Il arrive le 5 déc. à 14h30.",
        "Llega el 12 de dic. por la tarde.",
        "Arriva il 5 lug. alle 10.",
        "Chega em 5 de dez. às 10h.",
    ],
)
def test_a_month_after_its_day_does_not_end_a_sentence(text: str) -> None:
    """Bug: "le 5 déc. à 14h30" was cut after "déc.", a pause and a sentence's fall inside
    the date."""
    assert segments(f"{text} Bye.") == [text, " Bye."]


@pytest.mark.parametrize(
    "text",
    [
        "It ships Mon. 12/7.",
        "Read Vol. 3 now.",
        "Get Ver. 2 now.",
        "Go to Elm Rd. now.",
        "Drive on Rte. 26 and Rt. 9 now.",
        "Call ext. 89 now.",
    ],
)
def test_a_day_or_a_volume_before_its_number_does_not_end_a_sentence(text: str) -> None:
    assert segments(f"{text} Bye.") == [text, " Bye."]


@pytest.mark.parametrize(
    "text",
    [
        "La Sra. Pérez llamó.",
        "Mme. Martin est là.",
        "Il dott. Rossi arriva.",
        "Fica na Av. Paulista.",
        "Vea la pág. 3 ahora.",
        "Llame al tel. 912 345 678.",
        "Pague con una tarjeta p. ej. Visa.",
        "Vive en EE. UU. desde 2020.",
        "Appelez le tél. 01 23 45.",
        "Il reste env. 5 places.",
        "L'Avv. Neri e l'Ing. Blu arrivano.",
        "A Profa. Lima chega em aprox. 5 minutos.",
    ],
)
def test_titles_and_the_like_in_other_languages_do_not_end_a_sentence(text: str) -> None:
    assert segments(f"{text} Adiós.") == [text, " Adiós."]


@pytest.mark.parametrize(
    "text",
    ["Wait 30 min. or 2 hrs. for it.", "Add 2 oz. of milk.", "Go to Bldg. 3 and Rm. 204 now."],
)
def test_short_units_and_an_address_s_parts_do_not_end_a_sentence(text: str) -> None:
    """Regression: "30 min. or" was cut after "min.", so the voice ended a sentence there."""
    assert segments(f"{text} Bye.") == [text, " Bye."]


@pytest.mark.parametrize("title", ["DR.", "dr.", "mR.", "PROF."])
def test_abbreviations_are_case_insensitive(title: str) -> None:
    assert segments(f"Ask {title} Jones now. Ok.") == [f"Ask {title} Jones now.", " Ok."]


@pytest.mark.parametrize("abbreviation", ["e.g.", "i.e.", "E.g.", "I.E."])
def test_eg_and_ie_do_not_end_a_sentence(abbreviation: str) -> None:
    text = f"Eat fruit {abbreviation} apples daily. Ok."
    assert segments(text) == [f"Eat fruit {abbreviation} apples daily.", " Ok."]


def test_single_letter_initials_do_not_end_a_sentence() -> None:
    text = "J. R. R. Tolkien wrote it. The U.S. Army read it. Ok."
    assert segments(text) == ["J. R. R. Tolkien wrote it.", " The U.S. Army read it.", " Ok."]


@pytest.mark.parametrize("word", ["etc.", "no.", "No."])
def test_etc_and_no_end_a_sentence(word: str) -> None:
    assert segments(f"Take apples {word} Then go.") == [f"Take apples {word}", " Then go."]


@pytest.mark.parametrize("one_by_one", [False, True])
def test_a_number_after_no_keeps_the_sentence(one_by_one: bool) -> None:
    """Bug: "Your order No. 4521 ships today." was cut after "No.", and the voice read the
    order number as a count starting a new sentence ("four thousand five hundred...")."""
    text = "Your order No. 4521 ships today. See Fig. 3 below. Say no. Then go."
    assert run(list(text) if one_by_one else [text]) == [
        "Your order No. 4521 ships today.",
        " See Fig. 3 below.",
        " Say no.",
        " Then go.",
    ]


@pytest.mark.parametrize("one_by_one", [False, True])
@pytest.mark.parametrize(
    "expected",
    [
        ["Horario:", " lun.-vie. 9:00-18:00, sáb. 10:00-14:00, dom. cerrado."],
        ["Nous sommes ouverts du lun. au ven. de 9h à 18h."],
        ["Atendimento seg.-sex. das 9h às 18h.", " Obrigado."],
        ["C'est la vie.", " Merci."],
        ["Est. delivery: 3-5 days.", " Est. 1998.", " See pp. 45-67."],
    ],
)
def test_short_days_est_and_pp_do_not_end_a_sentence(one_by_one: bool, expected: list[str]) -> None:
    """Bug: "lun.-vie. 9:00" and "du lun. au ven. de 9h" were cut after each day, a pause and
    a sentence's fall inside the hours, and the reading of the days needs them together; so
    were "Est. delivery" and "pp. 45". A day that is a word too still ends a sentence before a
    capital ("C'est la vie. Merci.")."""
    text = "".join(expected)
    assert run(list(text) if one_by_one else [text]) == expected


@pytest.mark.parametrize("one_by_one", [False, True])
def test_a_span_with_a_spaced_dash_stays_in_one_segment(one_by_one: bool) -> None:
    """Bug: "entre 3 - 5 días" and "en 10 - 15 minutos" (an en dash) were cut at the dash (it
    looked for the digit right before it, a space), and the span was read as two numbers."""
    text = (
        "El envío tarda entre 3 - 5 días hábiles en llegar, o 10 \N{EN DASH} 15 minutos en tienda. "
        "Abrimos a las 9 - venga temprano, por favor, que siempre hay cola."
    )
    said = run(list(text) if one_by_one else [text])
    assert said[:3] == [
        "El envío tarda entre 3 - 5 días hábiles en llegar,",
        " o 10 \N{EN DASH} 15 minutos en tienda.",
        " Abrimos a las 9 - venga temprano, por favor,",
    ]


def test_abbreviation_must_be_the_whole_word() -> None:
    """Regression: only the letters right before the dot matter, so "ModernST." must not
    match "st", and a digit glued to the word ("5a.") makes it no initial."""
    assert segments("Welcome to ModernST. Enjoy.") == ["Welcome to ModernST.", " Enjoy."]
    assert segments("Go to room 5a. Then eat.") == ["Go to room 5a.", " Then eat."]


def test_a_single_cjk_character_is_not_an_initial() -> None:
    assert segments("I like 中. Next.") == ["I like 中.", " Next."]


def test_an_abbreviation_dot_followed_by_more_marks_cuts() -> None:
    assert segments("Call the Dr.. Now.") == ["Call the Dr..", " Now."]


# --- clauses -----------------------------------------------------------------------------------


def test_first_segment_cuts_at_a_clause_mark_of_any_length() -> None:
    assert segments("Sure, I can help.") == ["Sure,", " I can help."]


def test_a_voice_may_need_a_longer_first_clause() -> None:
    """Voice.first_clause_chars: a Spanish voice says "Hola," alone poorly, so a first clause
    shorter than its minimum runs on to the next mark; a longer one is cut as usual."""
    segmenter = Segmenter(first_clause_chars=8)
    text = "Hola, su pedido ya ha salido, y llegará mañana."
    assert segmenter.push(text) + segmenter.flush() == [
        "Hola, su pedido ya ha salido,",
        " y llegará mañana.",
    ]
    segmenter = Segmenter(first_clause_chars=8)
    text = "Buenos días, su pedido ya ha salido."
    assert segmenter.push(text) + segmenter.flush() == ["Buenos días,", " su pedido ya ha salido."]


def test_a_short_first_sentence_runs_on_for_such_a_voice() -> None:
    """ "Hola." alone is lost as "Hola," is: it runs on to the next mark; later short
    sentences, and every sentence for a voice with no minimum, are cut as usual."""
    segmenter = Segmenter(first_clause_chars=8)
    text = "Hola. Su saldo es de 25 euros. Gracias. Adiós."
    assert segmenter.push(text) + segmenter.flush() == [
        "Hola. Su saldo es de 25 euros.",
        " Gracias.",
        " Adiós.",
    ]
    assert segments("Hi. Your balance is 25 dollars.") == ["Hi.", " Your balance is 25 dollars."]


def test_later_clause_shorter_than_minimum_does_not_cut() -> None:
    assert segments("Hi. Well, ok. Fine; yes: no.") == ["Hi.", " Well, ok.", " Fine; yes: no."]


@pytest.mark.parametrize(
    ("minimum", "expected"), [(5, ["Hi.", " abcd,", " e"]), (6, ["Hi.", " abcd, e"])]
)
def test_clause_minimum_counts_stripped_chars_including_the_mark(
    minimum: int, expected: list[str]
) -> None:
    assert segments("Hi. abcd, e", clause_min_chars=minimum) == expected


def test_long_clause_cuts_with_the_default_minimum() -> None:
    text = "Hi. This clause is long enough to be spoken on its own, so it is cut there."
    assert segments(text) == [
        "Hi.",
        " This clause is long enough to be spoken on its own,",
        " so it is cut there.",
    ]


def test_semicolon_and_colon_cut() -> None:
    assert segments("Note: this; that", clause_min_chars=0) == ["Note:", " this;", " that"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "您的验证码是\uff1a483920\uff0c5分钟内有效。",
            ["您的验证码是\uff1a483920\uff0c", "5分钟内有效。"],
        ),
        ("Your code: 483920. It expires soon.", ["Your code: 483920.", " It expires soon."]),
        ("認証コードは\u3001483920です。", ["認証コードは\u3001483920です。"]),
        # a colon before words, and a comma after anything but は, still cut
        ("Note: this works", ["Note:", " this works"]),
        ("您好\uff1a请问\uff0c3位", ["您好\uff1a", "请问\uff0c", "3位"]),
    ],
)
def test_a_number_after_its_label_and_a_colon_stays_in_the_labels_segment(
    text: str, expected: list[str]
) -> None:
    """Bug: 验证码, a colon, then 483920 was cut at the colon, and the code, alone in its
    segment, was read as an amount (四十八万三千九百二十): the readers of codes see the label in
    the same segment."""
    assert segments(text, clause_min_chars=0) == expected
    assert run(list(text), clause_min_chars=0) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("### 第1步\n请使用您的手机号登录。", ["### 第1步\n", "请使用您的手机号登录。"]),
        ("Step one\n\nStep two", ["Step one\n\n", "Step two"]),
        ("One.\nTwo", ["One.", "\nTwo"]),
    ],
)
def test_a_line_ends_a_segment(text: str, expected: list[str]) -> None:
    """Bug: a Markdown heading ran into the next line's words with no pause ("登录 请使用")."""
    assert segments(text) == expected
    assert run(list(text)) == expected


def test_latin_clause_marks_need_whitespace_after() -> None:
    text = "Hi. 1,000 at 12:30 is a;b ok"
    assert segments(text, clause_min_chars=0) == ["Hi.", " 1,000 at 12:30 is a;b ok"]


def test_clause_mark_absorbs_closing_quote() -> None:
    assert segments('"Yes," she said.') == ['"Yes,"', " she said."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Wait\u2014what?", ["Wait\u2014", "what?"]),
        ("Wait \u2014 what", ["Wait \u2014", " what"]),
        ("Wait \u2013 what", ["Wait \u2013", " what"]),
        ("Wait - what", ["Wait -", " what"]),
        ("Wait -- what", ["Wait --", " what"]),
    ],
)
def test_dashes_cut_like_clause_marks(text: str, expected: list[str]) -> None:
    assert segments(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "A well-known fact",
        "Pages 1990\u20132000 and 3\u20144",
        "It was -5 degrees",
        "a --- b",
        "a-- b",
    ],
)
def test_hyphens_and_ranges_that_are_not_dashes_do_not_cut(text: str) -> None:
    assert segments(text, clause_min_chars=0) == [text]


def test_markdown_bullet_hyphen_is_not_a_dash() -> None:
    text = "Items:\n- apples\n- pears"
    assert segments(text, clause_min_chars=0) == ["Items:", "\n- apples\n", "- pears"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Here's how:\n1. Open Settings\n2. Tap Account\n3) Sign out",
            ["Here's how:", "\n1. Open Settings\n", "2. Tap Account\n", "3) Sign out"],
        ),
        (
            "步骤\uff1a\n1、打开设置\n2、点击账户。",
            ["步骤\uff1a", "\n1、打开设置\n", "2、点击账户。"],
        ),
        ("Buy:\n* milk\n\u2022 eggs", ["Buy:", "\n* milk\n", "\u2022 eggs"]),
        ("①開く\n②選ぶ", ["①開く\n", "②選ぶ"]),
        ("・傘\n・財布", ["・傘\n", "・財布"]),
        # not at a line's start: a number that ends a sentence
        ("The answer is 2. Then go.", ["The answer is 2.", " Then go."]),
    ],
)
def test_a_list_item_is_a_segment_of_its_own(text: str, expected: list[str]) -> None:
    """Bug: cut after each item's "2.", a list was read "open settings two. tap account three"
    (each number with the item before it), and items without a full stop ran together."""
    assert segments(text) == expected


def test_dash_in_a_later_segment_respects_the_minimum() -> None:
    assert segments("Hi. Wait \u2014 what") == ["Hi.", " Wait \u2014 what"]


def test_first_segment_rule_returns_after_clear() -> None:
    segmenter = Segmenter()
    assert segmenter.push("Sure, ") == ["Sure,"]
    assert segmenter.push("well, ok") == []
    segmenter.clear()
    assert segmenter.push("Right, ") == ["Right,"]


def test_first_segment_rule_returns_after_flush() -> None:
    segmenter = Segmenter()
    assert segmenter.push("Sure, well, ") == ["Sure,"]
    assert segmenter.flush() == [" well, "]
    assert segmenter.push("Right, ") == ["Right,"]


def test_blank_segment_does_not_count_as_the_first_segment() -> None:
    """Regression: a whitespace-only cap cut must not use up the first-segment clause rule."""
    segmenter = Segmenter(max_chars=6)
    assert segmenter.push("       Sure, x") == ["      ", " Sure,"]
    assert segmenter.flush() == [" x"]


def test_punctuation_alone_never_forms_a_segment_from_push() -> None:
    assert segments("Hi. ... Right.") == ["Hi.", " ... Right."]
    assert segments("!!! Hello.") == ["!!! Hello."]
    assert segments(", hello, world") == [", hello,", " world"]


# --- cap ---------------------------------------------------------------------------------------


def test_cap_cuts_at_the_last_whitespace() -> None:
    text = "aaaa bbbb cccc dddd"
    assert segments(text, max_chars=10) == ["aaaa bbbb", " cccc dddd"]


def test_cap_cuts_a_giant_token_exactly() -> None:
    assert segments("x" * 25, max_chars=10) == ["x" * 10, "x" * 10, "x" * 5]


def test_cap_waits_for_the_character_after_the_cap() -> None:
    segmenter = Segmenter(max_chars=10)
    assert segmenter.push("x" * 10) == []
    assert segmenter.buffered_chars == 10
    assert segmenter.push("y") == ["x" * 10]


def test_cap_cut_on_whitespace_right_after_the_cap() -> None:
    assert segments("aaaaa bbbb cc", max_chars=10) == ["aaaaa bbbb", " cc"]


def test_text_after_a_cap_cut_is_scanned_again() -> None:
    """Regression: a sentence end that lay past the cap of the old segment must still cut
    once the cap cut moved the segment start forward."""
    assert segments("aa bbbbbbbb. c", max_chars=10) == ["aa", " bbbbbbbb.", " c"]


def test_closers_never_push_a_segment_past_the_cap() -> None:
    assert segments('abcd." x', max_chars=5) == ["abcd.", '" x']


def test_endless_sentence_is_cut_by_the_cap() -> None:
    segmenter = Segmenter(max_chars=300)
    out: list[str] = []
    for _ in range(200):
        out += segmenter.push("and then ")
    assert len(out) >= 5
    assert all(len(s) <= 300 for s in out)
    assert segmenter.buffered_chars <= 300


# --- flush, clear, buffered_chars --------------------------------------------------------------


def test_flush_returns_the_tail_and_never_an_empty_string() -> None:
    segmenter = Segmenter()
    assert segmenter.flush() == []
    assert segmenter.push("Hi. ") == ["Hi."]
    assert segmenter.flush() == [" "]
    assert segmenter.flush() == []
    assert segmenter.push("") == []
    assert segmenter.flush() == []


def test_flush_may_return_a_punctuation_only_tail() -> None:
    segmenter = Segmenter()
    assert segmenter.push("Hi. ...") == ["Hi."]
    assert segmenter.flush() == [" ..."]


def test_flush_cuts_after_an_abbreviation_at_the_end() -> None:
    segmenter = Segmenter()
    assert segmenter.push("Ask Dr.") == []
    assert segmenter.flush() == ["Ask Dr."]


def test_clear_drops_buffered_text() -> None:
    segmenter = Segmenter()
    assert segmenter.push("Hello wor") == []
    assert segmenter.buffered_chars == 9
    segmenter.clear()
    assert segmenter.buffered_chars == 0
    assert segmenter.push("Hi. ") == ["Hi."]
    assert segmenter.flush() == [" "]


def test_clear_forgets_a_pending_mark_run() -> None:
    """Regression: a "." left pending before clear() must not cut the next reply's text."""
    segmenter = Segmenter()
    assert segmenter.push("Hello.") == []
    segmenter.clear()
    assert segmenter.push(" next") == []
    assert segmenter.flush() == [" next"]


@pytest.mark.parametrize("options", [{"max_chars": 0}, {"clause_min_chars": -1}])
def test_invalid_options_are_rejected(options: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="must be >="):
        Segmenter(**options)


def test_one_million_single_character_pushes_complete() -> None:
    text = ("Hello there, Mr. Smith. Pi is 3.14\u2014ok? 你好\uff0c世界。 " * 25_000)[:1_000_000]
    segmenter = Segmenter()
    out: list[str] = []
    for ch in text:
        out += segmenter.push(ch)
    out += segmenter.flush()
    assert "".join(out) == text
    assert len(out) > 25_000


# --- properties --------------------------------------------------------------------------------


TOKENS = [
    ".", ",", ";", ":", "!", "?", "\u2026", "\u2014", "\u2013", "-", '"', "'", ")", "]",
    "\u2019", "\u201d", "*", "\u3002", "\uff0c", "\u3001", "\uff01", "\uff1f", "\u300d",
    "0", "1", "9", "a", "b", "Z", "x", " ", " ", " ", "\n", "\t", "\U0001f600", "中", "文",
    "Mr.", "Dr.", "e.g.", "U.S.", "J. ", "etc.", "3.14", "1,000", "12:30", "...", " - ",
    " -- ", "word", "Hello", "\n- ",
]  # fmt: skip

TEXT = st.lists(st.one_of(st.sampled_from(TOKENS), st.characters()), max_size=120).map("".join)
OPTIONS = st.fixed_dictionaries(
    {"clause_min_chars": st.integers(0, 50), "max_chars": st.integers(1, 60)}
)


@st.composite
def split_text(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A text and an arbitrary split of it into pieces (empty pieces included)."""
    text = draw(TEXT)
    points = sorted(draw(st.lists(st.integers(0, len(text)), max_size=len(text) + 2)))
    bounds = [0, *points, len(text)]
    return text, [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(deadline=None)
@given(split_text(), OPTIONS)
def test_property_nothing_is_lost_or_duplicated(
    case: tuple[str, list[str]], options: dict[str, int]
) -> None:
    text, pieces = case
    assert "".join(run(pieces, **options)) == text


@settings(deadline=None)
@given(split_text(), OPTIONS)
def test_property_segments_do_not_depend_on_the_split(
    case: tuple[str, list[str]], options: dict[str, int]
) -> None:
    text, pieces = case
    assert run(pieces, **options) == segments(text, **options)


@settings(deadline=None)
@given(split_text(), OPTIONS)
def test_property_no_segment_is_longer_than_the_cap_or_empty(
    case: tuple[str, list[str]], options: dict[str, int]
) -> None:
    _, pieces = case
    out = run(pieces, **options)
    assert all(0 < len(s) <= options["max_chars"] for s in out)


@settings(deadline=None)
@given(split_text(), OPTIONS)
def test_property_buffered_chars_tracks_what_is_held(
    case: tuple[str, list[str]], options: dict[str, int]
) -> None:
    _, pieces = case
    segmenter = Segmenter(**options)
    pushed = returned = 0
    for piece in pieces:
        pushed += len(piece)
        returned += sum(len(s) for s in segmenter.push(piece))
        assert segmenter.buffered_chars == pushed - returned
        assert segmenter.buffered_chars <= options["max_chars"]


def test_an_unassigned_code_point_is_not_cjk_after_an_ellipsis() -> None:
    """Found by the property below: Python's east_asian_width calls some unassigned code
    points wide, and "0…" then ended a sentence before U+0E5C with no space after it."""
    for text in ("0…\u0e5c", "0…\u0378"):
        assert Segmenter(clause_min_chars=0, max_chars=3).push(text) == []
    assert Segmenter(clause_min_chars=0, max_chars=30).push("请稍等…我来查") == ["请稍等…"]


# Marks after which a cut needs whitespace: a cut right after one of them, before anything
# else, can only be a cap cut.
NEEDS_SPACE = frozenset(".,;:!?\u2026\u203c\u2047\u2048\u2049-")


LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def _wide(ch: str) -> bool:
    """A character of a script written without spaces, as Unicode says: width W or F, and
    assigned (Python gives some unassigned code points width W)."""
    return unicodedata.category(ch) != "Cn" and unicodedata.east_asian_width(ch) in ("W", "F")


@settings(deadline=None)
@given(TEXT, OPTIONS)
# Found by the property: a CJK radical (U+2E80, width W) after an ellipsis.
@example("0…⺀", {"clause_min_chars": 0, "max_chars": 3})
@example("0\n- ", {"clause_min_chars": 0, "max_chars": 3})  # a cut before a list item's line
def test_property_push_cuts_only_at_legal_places(text: str, options: dict[str, int]) -> None:
    """Every cut from push() is before whitespace, after a CJK mark, closer or dash, after an
    ellipsis before a wide (CJK) character, after a line break (before a list item's line), or
    exactly at the cap: so "3.14" or "1,000" can only be split by a full segment."""
    segmenter = Segmenter(**options)
    out = segmenter.push(text)
    end = 0
    for segment in out:
        end += len(segment)
        assert end < len(text)  # push() keeps lookahead: it never cuts at the very end
        last = segment[-1]
        legal = (
            text[end].isspace()
            or len(segment) == options["max_chars"]
            or (last not in NEEDS_SPACE and (unicodedata.category(last)[0] == "P" or last == "`"))
            or (last == "\N{HORIZONTAL ELLIPSIS}" and _wide(text[end]))
            or last in LINE_BREAKS
        )
        assert legal, (segment, text[end:])
