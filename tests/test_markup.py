"""Markdown around a language model's words is not read out: "**Sure!**" is "Sure!", not
"asterisk asterisk sure exclamation asterisk asterisk" (espeak-ng names each mark)."""

from __future__ import annotations

from typing import Any

import grpc
import numpy as np
import pytest
from voxlite.service.call.markup import spoken
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from .helpers import Duplex

# Largest difference, in 16-bit units, between two decodes of the same speech (measured: 0 or 1).
_ROUNDING = 4


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("**Sure!** Here are the steps:", "Sure! Here are the steps:"),
        ("2. Tap *Settings*, then ***Save***.", "2. Tap Settings, then Save."),
        ("## Welcome\nVisit `example.com` today.", "Welcome\nVisit example.com today."),
        ("See [the docs](https://example.com/a?b=1).", "See the docs."),
        ("* first item", " first item"),
        ("**好的。**请稍等。", "好的。请稍等。"),
        # Asterisks that are not Markdown stay: arithmetic and a phone's star key.
        ("Press *69, or 2 * 3 = 6 and 5*3 = 15.", "Press *69, or 2 * 3 = 6 and 5*3 = 15."),
        ("*を押してください。请按*号键。", "*を押してください。请按*号键。"),
        ("Item #3 is in C#.", "Item #3 is in C#."),
        # Bug: strikethrough's tildes were read ("tilde tilde"), and a table's cells ran
        # together with no pause.
        ("Now ~~$20~~ $15.", "Now $20 $15."),
        ("| Plan | Price |\n|---|:---:|\n| Basic | $10 |", "Plan, Price\n\nBasic, $10"),
        ("| 套餐 | 价格 |", "套餐, 价格"),
        ("Use a | b, or x || y.", "Use a | b, or x || y."),
    ],
)
def test_markdown_marks_are_taken_out(text: str, said: str) -> None:
    assert spoken(text) == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('<speak>Hello<break time="500ms"/>world</speak>', " Hello world"),
        ("Tap <b>Save</b>.", "Tap  Save."),
        ("<p class='note'>你好</p>", " 你好"),
        ("Fish &amp; chips, &lt;3 &#39;em", "Fish & chips, <3 'em"),
        # No tags: comparisons, and an ampersand that starts no reference.
        ("A < B and C > D, x<3 and y>2.", "A < B and C > D, x<3 and y>2."),
        ("AT&T and R&D.", "AT&T and R&D."),
    ],
)
def test_tags_are_taken_out_and_references_read(text: str, said: str) -> None:
    """Bug: "<speak>Hello <break time="500ms"/> world</speak>" was read as "speak hello break
    time equals five hundred ms slash world slash speak"."""
    assert spoken(text) == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Sure! 😊 Happy to help 👍.", "Sure!  Happy to help ."),
        ("Check ✅ done, I ❤️ it.", "Check  done, I  it."),
        ("Press 1️⃣ now.", "Press 1 now."),
        ("👍🏽 好的😊", " 好的"),
        ("© 2026, 5°C, → next.", "© 2026, 5°C, → next."),
    ],
)
def test_emoji_are_taken_out(text: str, said: str) -> None:
    """Bug: the English voice said "Sure! smiling face with smiling eyes happy to help thumbs
    up"."""
    assert spoken(text) == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # Bug: every voice said them sign by sign ("colon D", "less than three", 小于三).
        ("Thanks :) see you", "Thanks  see you"),
        ("Thanks:-) see you", "Thanks see you"),
        ("Great :D, haha xD ;)", "Great , haha  "),
        ("Love it <3 <3!", "Love it  !"),
        ("好的:) 谢谢^^", "好的 谢谢"),
        # Chinese and Japanese put no space before a face: "爱你<3" was 爱你小于三, "xD" 哲.
        ("爱你<3 哈哈xD", "爱你 哈哈"),
        ("ありがとう:D", "ありがとう"),
        # Bug: "thanks~" was "thanks tilde"; a range keeps its sign.
        ("Okay~ thanks~!", "Okay thanks!"),
        ("好的~", "好的"),
        ("ありがとう〜", "ありがとう"),
        ("See you 5~6pm, 10時〜12時, 東京〜大阪, ~5 minutes.", None),
        # Not faces: a comparison, a ratio, a time, a formula, a colon before a letter.
        ("Delivery in <3 days, if x <3.", None),
        ("Ratio 1:3 at 10:30, f(x)=(y+1), Team A:D, Note: D, options:(a) or (b).", None),
        ("温度<3度, <3, 型号A:D。", None),
    ],
)
def test_emoticons_and_a_tilde_of_tone_are_taken_out(text: str, said: str | None) -> None:
    assert spoken(text) == (text if said is None else said)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Rated 4.8★ by users, 5 ⭐ service.", "Rated 4.8★ by users, 5 ⭐ service."),
        ("Reviews: ★★★★☆ and ⭐️⭐️⭐️⭐️⭐️", "Reviews: ★★★★☆ and ⭐⭐⭐⭐⭐"),
        # decoration: a star alone, a long row
        ("★ New ★ ⭐ Great ★★★★★★★★", " New   Great "),
    ],
)
def test_the_stars_of_a_rating_stay_for_the_voice(text: str, said: str) -> None:
    """Bug: a rating's stars went with the emoji: "4.8★" was heard as "4.8", "★★★★☆" as
    nothing. Each voice says them (4.8 stars, 四星, 4 de 5 estrellas)."""
    assert spoken(text) == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Room \uff11\uff12, \uff28\uff45\uff4c\uff4c\uff4f.", "Room 12, Hello."),
        ("\U0001d407\U0001d41e\U0001d425\U0001d425\U0001d428 \U0001d7cf\U0001d7d0", "Hello 12"),
        ("价格\u0663元\uff0c\u0967\u0968个", "价格3元\uff0c12个"),
        ("\u2460首先\uff0c\u2461其次", "1首先\uff0c2其次"),
        ("\u2474 a \u2488 b \u24b6 \u3251", "(1) a 1 b A 21"),
        ("5\u2103, 41\u2109", "5°C, 41°F"),
        # Signs and fractions are no letters or digits: the voices read them as they are.
        ("m\u00b2, \u00bd, \u2122, \uff0c", "m\u00b2, \u00bd, \u2122, \uff0c"),
    ],
)
def test_other_forms_of_letters_and_digits_are_read_as_the_plain_ones(text: str, said: str) -> None:
    """Bug: the English voice read full-width "Hello." as code points and dropped the
    full-width 12 of "Room 12."; an Arabic-Indic 3 in "价格3元" failed the Mandarin voice with
    UNKNOWN; the English and Romance voices said nothing for ℃ ("It is 5℃" was "It is five")."""
    assert spoken(text) == said


def test_control_characters_and_invisible_marks_are_not_read_or_echoed(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    """Bug: NUL, BEL, a right-to-left override went to the voice and came back in the
    Timestamps' text."""
    assert spoken("a\x00b\x07c \u202eevil\u202c so\u00adft\ufeff.\n") == "a b c evil soft.\n"
    config = pb.SynthesisConfig(enable_word_timestamps=True)
    request = pb.SynthesizeRequest(text="Hello\x07 \u202ethere\u202c.", config=config)
    responses = list(stub.Synthesize(request, timeout=60))
    stamps = [r.timestamps for r in responses if r.WhichOneof("response") == "timestamps"]
    assert [s.text for s in stamps] == ["Hello  there."]
    assert [w.word for s in stamps for w in s.words] == ["Hello", "there"]


@pytest.mark.parametrize("text", ["^", "^ ^ ^"])
def test_a_text_the_voice_says_nothing_of_is_refused(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str
) -> None:
    """Bug: "^" alone was answered OK with no audio (a 44-byte WAV from the client)."""
    with pytest.raises(grpc.RpcError) as caught:
        list(stub.Synthesize(pb.SynthesizeRequest(text=text), timeout=60))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"says nothing for the text '{text}'" in (caught.value.details() or "")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Visit https://www.example.com/help.", "Visit www.example.com/help."),
        ("请访问https://www.qq.com。", "请访问www.qq.com。"),
        ("(see:http://x.io)", "(see:x.io)"),
        ("A scheme alone: https:// and ftp://x.io.", "A scheme alone: https:// and ftp://x.io."),
    ],
)
def test_a_web_addresss_scheme_is_not_read(text: str, said: str) -> None:
    """Bug: every voice spelled "https://" ("H T T P S colon slash slash", or フップス)."""
    assert spoken(text) == said


def _pcm(responses: Any) -> bytes:
    return b"".join(r.audio.audio for r in responses if r.WhichOneof("response") == "audio")


def assert_same_speech(said: bytes, plain: bytes) -> None:
    """The same words, sample for sample, to within rounding: a run that finds the other worker
    free decodes on two threads, which sums in another order (a few units in the last bits of
    a sample). A mark read out would add words: seconds of audio."""
    assert len(said) == len(plain)
    difference = np.abs(
        np.frombuffer(said, dtype="<i2").astype(np.int32)
        - np.frombuffer(plain, dtype="<i2").astype(np.int32)
    )
    assert int(difference.max(initial=0)) <= _ROUNDING


_NOISELESS = pb.SynthesisConfig(
    noise_scale=0.0, noise_w=0.0, audio=pb.AudioConfig(encoding=pb.AUDIO_ENCODING_PCM_S16LE)
)


def _noiseless(stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str) -> bytes:
    """`text` through Synthesize without noise: the same words give the same samples."""
    request = pb.SynthesizeRequest(text=text, config=_NOISELESS)
    return _pcm(stub.Synthesize(request, timeout=60))


def test_a_reply_in_markdown_sounds_as_the_plain_text_does(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    """Bug: the English voice said "asterisk asterisk sure exclamation asterisk asterisk here
    are the steps ... tap asterisk settings asterisk" (Whisper base).
    Synthesize and a stream fed token by token both speak the plain text, sample for sample to
    within rounding (no noise)."""
    plain = _noiseless(stub, "Sure! Here are the steps. Tap Settings.")
    assert plain
    assert_same_speech(_noiseless(stub, "**Sure!** Here are the steps. Tap *Settings*."), plain)
    call = Duplex(stub, timeout=60)
    call.send(config=_NOISELESS)
    for token in ("**", "Sure", "!**", " Here are", " the steps.", " Tap *", "Settings", "*."):
        call.send(text=token)
    call.close()
    assert_same_speech(_pcm(call.rest()), plain)


def test_ssml_sounds_as_its_plain_text_does(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> None:
    """SSML's tags and emoji are not read out (nor interpreted): the words alone."""
    plain = _noiseless(stub, "Sure. Tap Settings.")
    assert plain
    ssml = '<speak>Sure. <break time="300ms"/> Tap <emphasis>Settings</emphasis>.</speak>'
    assert_same_speech(_noiseless(stub, ssml), plain)
    assert_same_speech(_noiseless(stub, "Sure. 😊 Tap Settings 👍."), plain)


def test_a_rating_in_stars_sounds_as_its_words_do(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    """Bug: the stars went with the emoji, so "Rated 4.8★" was heard as "Rated 4.8"."""
    words = _noiseless(stub, "Rated 4.8 stars, 4 out of 5 stars.")
    assert words
    assert_same_speech(_noiseless(stub, "Rated 4.8★, ★★★★☆."), words)


def test_emoticons_sound_as_the_words_alone(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> None:
    """Bug: the English voice said "great colon D see you okay tilde love it less than three"."""
    plain = _noiseless(stub, "Great, see you. Okay. Love it")
    assert plain
    assert_same_speech(_noiseless(stub, "Great :D, see you :). Okay~. Love it <3"), plain)


@pytest.mark.parametrize("text", ["<speak></speak>", "👍😊", ":) <3", "^^"])
def test_only_tags_or_emoji_is_nothing_to_speak(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        list(stub.Synthesize(pb.SynthesizeRequest(text=text), timeout=60))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "text has nothing to speak" in (caught.value.details() or "")
