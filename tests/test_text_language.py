"""The language from the text: a call naming neither voice nor language gets the voice of the
language its text is written in (Han: Mandarin, kana: Japanese, Cyrillic: Russian, ...), and text
a voice cannot speak is refused, not spelled out (issue 27, item 6)."""

from __future__ import annotations

import io
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import soundfile
from voxlite.client import AsyncClient, AudioFormat, Summary
from voxlite.service.call.opening import opening_text
from voxlite.service.call.textlang import (
    HAN,
    HANGUL,
    KANA,
    script_of,
    settled,
    text_language,
    text_script,
    undecided,
    unreadable,
)
from voxlite.tts.v1 import tts_pb2 as pb
from voxlite.tts.v1 import tts_pb2_grpc

from .helpers import (
    CLI,
    Duplex,
    ServerThread,
    add_voice,
    base_config,
    environment,
    kinds,
    voxlite,
)
from .whisper import judge

CHINESE = "你好，今天天气很好。"
JAPANESE = "こんにちは。"
ENGLISH = "Hello, the weather is fine today."


# -- the rule ----------------------------------------------------------------------------------


def test_the_script_tells_the_language() -> None:
    assert text_language(CHINESE) == "zh"
    assert text_language(JAPANESE) == "ja"
    assert text_language("東京へ行きます。") == "ja"  # Han with any kana is Japanese
    assert text_language("カタカナ") == "ja"
    assert text_language("ｶﾀｶﾅ") == "ja"  # halfwidth katakana
    assert text_language(ENGLISH) is None
    assert text_language("。，！？「」") is None  # CJK punctuation alone says nothing
    assert text_language("我用iPhone拍照。") == "zh"
    assert script_of("ー") is KANA
    assert script_of("中") is HAN
    assert script_of("a") is None


def test_han_text_without_kana_is_japanese_only_when_it_says_so() -> None:
    """Japan's own kanji forms (気, 駅) and 々 are Japanese; China's (们, 这) and the full-width
    comma Chinese; the rest (本日, 東京) both, and Mandarin is picked."""
    assert text_language("気温") == text_language("様々") == "ja"
    # Bug: 々 and 〆 alone were no script at all: the English voice read their code points.
    assert text_language("々") == text_language("〆") == "ja"
    assert text_language("我们") == text_language("本日，") == "zh"
    assert text_language("本日") == text_language("東京都") == "zh"
    assert text_language("台北現在，請稍候") == "zh"  # traditional Chinese, not Japanese
    # Cut at 、, Han alone leaves it open until a kana, a telling character, or a few more.
    for text in (
        "本日、",
        "本日、雨",
        "OK，",
        "OK、承知",
        "OK, ",
        "3, ",
        "本日。",
        "了解！",
        "以上。本",
    ):
        assert undecided(text), text
    for text in ("本日、雨が", "好的，", "北京、上海、广州都有分店", "Sure, I", "OK，我"):
        assert not undecided(text), text
    # Bug: a Japanese reply whose first sentence is kanji alone ("了解。") got the Mandarin
    # voice, which then refused the rest of it (its kana).
    for text in ("了解！少々", "好的！我来帮", "明白。明天见。", "非常感谢您的耐心等待。"):
        assert not undecided(text), text
    assert text_language(settled("了解！少々お待ちください。", "了解！")) == "ja"
    assert text_language(settled("了解！请稍等。", "了解！")) == "zh"
    assert settled("Sure, I can help.", "Sure,") == "Sure, I"
    assert settled("本日、雨が降ります。", "本日、") == "本日、雨が"
    assert settled("好的，我来查。", "好的，") == "好的，"


def test_a_voice_reads_only_the_scripts_of_its_language() -> None:
    assert unreadable(CHINESE, "en-US") == ("你", HAN)
    assert unreadable("Say 東京 twice.", "en-US") == ("東", HAN)
    assert unreadable(CHINESE, "zh-CN") is None
    assert unreadable("東京へ行きます。", "ja-JP") is None
    assert unreadable("東京へ行きます。", "zh-CN") == ("へ", KANA)
    assert unreadable(ENGLISH, "en-US") is None


def test_other_scripts_are_told_and_read_only_by_their_languages() -> None:
    """Bug: Arabic to the English voice was read out as "Arabic letter" ten times, Thai as
    "Thai letter", Cyrillic letter by letter; Hangul to a Mandarin voice gave OK and no audio."""
    arabic, russian, greek, korean = "مرحبا بالعالم", "Привет, мир.", "Γειά σου κόσμε", "안녕하세요"
    for text, language, name in (
        (arabic, "ar", "Arabic"),
        (russian, "ru", "Cyrillic"),
        (greek, "el", "Greek"),
        ("สวัสดีครับ", "th", "Thai"),
        ("नमस्ते", "hi", "Devanagari"),
        (korean, "ko", "Hangul (Korean)"),
    ):
        assert text_language(text) == language, text
        found = unreadable(text, "en-US")
        assert found is not None, text
        assert found[0] == text[0]
        assert found[1].name == name
        assert unreadable(text, f"{language}-XX") is None
    assert text_language("漢字 한국어") == "ko"  # Korean may write Han among its Hangul
    assert unreadable(korean, "zh-CN") == ("안", HANGUL)
    assert unreadable(korean, "ja-JP") == ("안", HANGUL)
    assert unreadable(russian, "uk-UA") is None  # every language that writes Cyrillic reads it
    assert unreadable(russian, "en-US") is not None
    assert text_script("ﾊﾝｸﾞﾙ 한") is KANA  # halfwidth kana: Japanese before Hangul
    assert script_of("ﾡ") is HANGUL  # HALFWIDTH HANGUL LETTER
    # Latin in any form, digits, symbols and emoji are every voice's.
    for text in ("ＡＢＣ ｘ² 5 µs, 2 Ω", "café naïve Ångström", "😀 ✓ → ¥ §"):
        assert text_language(text) is None, text
        assert unreadable(text, "en-US") is None, text
        assert unreadable(text, "zh-CN") is None, text


def test_a_greek_letter_alone_is_a_symbol_a_greek_word_is_greek() -> None:
    """α, π and Δ in English or Chinese text are named by any voice; a Greek word is Greek."""
    for text in ("The α version costs π dollars.", "ΔT = 5 K", "β受体阻滞剂"):
        assert text_language(text) == ("zh" if "受" in text else None), text
        assert unreadable(text, "en-US" if "受" not in text else "zh-CN") is None, text
    assert unreadable("The αβ pair", "en-US") == ("α", script_of("α"))
    assert text_language("Καλημέρα") == "el"


# -- an English-only server ---------------------------------------------------------------------


def synthesize(stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str, **config: Any) -> list[Any]:
    request = pb.SynthesizeRequest(text=text, config=pb.SynthesisConfig(**config))
    return list(stub.Synthesize(request, timeout=120))


def refusal(stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str, **config: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        synthesize(stub, text, **config)
    return info.value


@pytest.mark.parametrize("config", [{"voice": "en_US-joe-medium"}, {"language": "en"}])
def test_chinese_text_to_the_english_voice_is_refused_naming_the_fields(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, config: dict[str, str]
) -> None:
    """Bug: Chinese text with voice en_US-joe-medium was read out as "Chinese letter" seven
    times, with status OK."""
    error = refusal(stub, CHINESE, **config)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = error.details() or ""
    assert "Han characters" in details
    assert "en_US-joe-medium" in details
    # This server has no voice that reads Han: naming one would only be NOT_FOUND.
    assert "no voice of this server speaks it" in details
    assert "(en-US)" in details


@pytest.mark.parametrize(
    ("text", "script"),
    [("مرحبا بالعالم", "Arabic"), ("Привет, мир.", "Cyrillic"), ("สวัสดีครับ", "Thai")],
)
def test_text_in_other_scripts_to_the_english_voice_is_refused_not_spelled_out(
    stub: tts_pb2_grpc.TextToSpeechServiceStub, text: str, script: str
) -> None:
    error = refusal(stub, text, voice="en_US-joe-medium")
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = error.details() or ""
    assert f"the text has {script}" in details
    assert "no voice of this server speaks it" in details


def test_hangul_with_no_voice_on_an_english_only_server_says_no_voice_speaks_korean(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    error = refusal(stub, "안녕하세요.")
    assert error.code() == grpc.StatusCode.NOT_FOUND
    details = error.details() or ""
    assert "here 'ko' for its Hangul (Korean): no voice speaks" in details
    assert "en-US" in details


def test_chinese_text_with_no_voice_on_an_english_only_server_says_no_voice_speaks_it(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    """The same status as asking for language zh: the server has no Mandarin voice."""
    error = refusal(stub, CHINESE)
    assert error.code() == grpc.StatusCode.NOT_FOUND
    details = error.details() or ""
    assert "Han characters" in details
    assert "'zh'" in details
    assert "en-US" in details


def test_english_text_with_no_voice_stays_english(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    responses = synthesize(stub, ENGLISH)
    assert responses[0].format.voice == "en_US-joe-medium"
    assert kinds(responses)[-1] == "summary"


def test_a_stream_piece_the_voice_cannot_speak_ends_the_stream_with_invalid_argument(
    stub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    call = Duplex(stub, timeout=60)
    call.config(voice="en_US-joe-medium")
    call.send(text="Hello there. ")
    call.send(text=CHINESE)
    call.close()
    with pytest.raises(grpc.RpcError) as info:
        call.rest()
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Han characters" in (info.value.details() or "")


def test_text_with_nothing_to_speak_is_refused(stub: tts_pb2_grpc.TextToSpeechServiceStub) -> None:
    """Bug: "，。！？" (or zero-width spaces) gave status OK and no audio: the proto says a text
    must hold something speakable. A symbol or a digit is something: the voice names it."""
    for text in ("，。！？", "...", "\u200b\u200b", "\ue000"):
        error = refusal(stub, text)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "text has nothing to speak" in (error.details() or "")
    for text in ("42.", "$"):
        responses = synthesize(stub, text)
        assert kinds(responses)[-1] == "summary"


# -- a stream's voice waiting for its first sentence (a Piper copy stands in for Mandarin) ----


@pytest.fixture(scope="module")
def two_languages(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerThread]:
    folder = tmp_path_factory.mktemp("voices")
    add_voice(folder, "zh_CN-copy-medium", "zh_CN")
    add_voice(folder, "ru_RU-copy-medium", "ru_RU")
    srv = ServerThread(base_config(cache_dir, folder, max_text_chars=50, phrase_cache_mb=0))
    yield srv
    srv.close()


def test_a_stream_with_no_voice_gets_the_voice_of_its_first_sentence(
    two_languages: ServerThread,
) -> None:
    with two_languages.channel() as channel:
        stub = two_languages.stub(channel)
        # The character after a sentence's mark settles the cut: then the segment is complete.
        for text, voice in (("你好。今天", "zh_CN-copy-medium"), ("Hello. ", "en_US-joe-medium")):
            call = Duplex(stub, timeout=60)
            call.config()
            call.send(text=text)
            first = call.next()
            assert first.WhichOneof("response") == "format"
            assert first.format.voice == voice
            call.close()
            assert kinds(call.rest())[-1] == "summary"


def test_text_in_a_script_whose_voice_is_dropped_in_gets_that_voice(
    two_languages: ServerThread,
) -> None:
    """A Piper voice of another script's language, dropped into the voices folder, speaks text
    in that script sent with no language; naming the English voice is refused, saying which
    language to name."""
    with two_languages.channel() as channel:
        stub = two_languages.stub(channel)
        responses = synthesize(stub, "Привет, мир.")
        assert responses[0].format.voice == "ru_RU-copy-medium"
        assert kinds(responses)[-1] == "summary"
        call = Duplex(stub, timeout=60)
        call.config()
        call.send(text="Привет. ")
        assert call.next().format.voice == "ru_RU-copy-medium"
        call.close()
        assert kinds(call.rest())[-1] == "summary"
        error = refusal(stub, "Привет, мир.", voice="en_US-joe-medium")
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "set language to 'ru' or voice" in (error.details() or "")
        error = refusal(stub, CHINESE, language="en")
        assert "set language to 'zh' or voice" in (error.details() or "")


def test_a_bad_config_is_refused_before_any_text_while_the_voice_waits(
    two_languages: ServerThread,
) -> None:
    with two_languages.channel() as channel:
        call = Duplex(two_languages.stub(channel), timeout=60)
        call.config(speaking_rate=100.0)
        with pytest.raises(grpc.RpcError) as info:
            call.next()  # no text was sent: the stream is not closed either
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "speaking_rate" in (info.value.details() or "")
        call.close()


def test_blank_text_before_the_first_sentence_is_bounded(two_languages: ServerThread) -> None:
    """Blank text completes no segment: without a bound the requests kept to replay would grow
    until the idle timeout."""
    with two_languages.channel() as channel:
        call = Duplex(two_languages.stub(channel), timeout=60)
        call.config()
        for _ in range(60):
            call.send(text=" ")
        with pytest.raises(grpc.RpcError) as info:
            call.next()
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        details = info.value.details() or ""
        assert "with no sentence end before its first sentence, over the limit of 50" in details
        call.close()


def test_a_text_piece_over_the_limit_is_refused_alike_before_the_voice_is_picked(
    two_languages: ServerThread,
) -> None:
    """Bug: one piece over --max-text-chars, sent before the first sentence picked the voice,
    was RESOURCE_EXHAUSTED telling the caller to send text (which it had just done), where a
    stream with a voice gets INVALID_ARGUMENT saying to send smaller pieces."""
    with two_languages.channel() as channel:
        call = Duplex(two_languages.stub(channel), timeout=60)
        call.config()
        call.send(text="word " * 12)
        with pytest.raises(grpc.RpcError) as info:
            call.next()
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "a text piece of 60 characters is over the limit of 50" in (
            info.value.details() or ""
        )
        call.close()


def test_a_clear_before_the_voice_is_picked_drops_the_text_before_it(
    two_languages: ServerThread,
) -> None:
    """Bug: "你好", clear, "Hello there." got the English voice, then INVALID_ARGUMENT for the
    cleared 你好 (replayed to it), and no clear_done."""
    with two_languages.channel() as channel:
        call = Duplex(two_languages.stub(channel), timeout=60)
        call.config()
        call.send(text="你好")
        call.send(clear=pb.Clear(id=1))
        call.send(text="Hello there. ")
        call.send(flush=pb.Flush(id=2))
        first = call.next()
        assert first.format.voice == "en_US-joe-medium"
        assert call.until("clear_done").clear_done.id == 1
        assert call.until("flush_done").flush_done.id == 2
        call.close()
        responses = call.received + call.rest()
        assert kinds(responses)[-1] == "summary"
        assert responses[-1].summary.segments == 1


def test_emoji_alone_before_the_first_sentence_picks_no_voice(two_languages: ServerThread) -> None:
    """Bug: an emoji flushed before the first sentence picked the server's default voice, and
    the Chinese after it was refused: a segment with no words tells no language."""
    with two_languages.channel() as channel:
        call = Duplex(two_languages.stub(channel), timeout=60)
        call.config()
        call.send(text="😊 ")
        call.send(flush=pb.Flush(id=1))
        call.send(text="你好。今天")
        first = call.next()
        assert first.format.voice == "zh_CN-copy-medium"
        assert call.until("flush_done").flush_done.id == 1
        call.close()
        assert kinds(call.rest())[-1] == "summary"


@pytest.mark.asyncio
async def test_an_async_stream_with_no_voice_gets_the_voice_of_its_text(
    two_languages: ServerThread,
) -> None:
    """Bug: AsyncClient.stream() with neither voice nor language sent no text until the server
    answered its config, and the server answers such a config only once text has picked the
    voice: nothing came for 300 s, and both plugins, built with their defaults, said nothing."""
    async with AsyncClient(two_languages.address) as client, client.stream() as session:
        await session.send("你好。")
        await session.send("今天天气很好。")
        await session.close()
        events = [event async for event in session]
    assert isinstance(events[0], AudioFormat)
    assert events[0].voice == "zh_CN-copy-medium"
    assert isinstance(events[-1], Summary)
    assert events[-1].audio_duration_ms > 0


def test_the_opening_of_a_whole_text_is_its_first_segment_with_words() -> None:
    assert opening_text("👍。你好。Hi.", ["👍。", "你好。", "Hi."]) == "👍。你好。"
    assert opening_text("Hello. 你好。", ["Hello.", " 你好。"]) == "Hello."
    assert opening_text("😊", ["😊"]) == ""
    assert opening_text("", []) == ""


# -- with Mandarin and Japanese voices ----------------------------------------------------------


@pytest.fixture
def kstub(kokoro_server: ServerThread) -> Iterator[tts_pb2_grpc.TextToSpeechServiceStub]:
    with kokoro_server.channel() as channel:
        yield kokoro_server.stub(channel)


def ogg_audio(responses: list[Any]) -> tuple[Any, int]:
    data = b"".join(r.audio.audio for r in responses if r.WhichOneof("response") == "audio")
    samples, rate = soundfile.read(io.BytesIO(data), dtype="float32")
    return samples, rate


@pytest.mark.slow
def test_chinese_text_with_no_language_is_spoken_in_mandarin(
    kstub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    """Bug: 你好，今天天气很好。 with no language was spoken by the English voice."""
    responses = synthesize(kstub, CHINESE)
    assert responses[0].format.voice == "zf_xiaoxiao"
    audio, rate = ogg_audio(responses)
    assert judge().cer(audio, rate, "zh", CHINESE) <= 0.15


@pytest.mark.slow
def test_kana_with_no_language_is_spoken_in_japanese_and_english_stays_english(
    kstub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    assert synthesize(kstub, JAPANESE)[0].format.voice == "jf_alpha"
    assert synthesize(kstub, "東京へ行きます。")[0].format.voice == "jf_alpha"
    assert synthesize(kstub, ENGLISH)[0].format.voice == "en_US-joe-medium"
    # The first segment decides: the Chinese sentence after an English one is refused by the
    # English voice, not spelled out.
    error = refusal(kstub, "Hello. " + CHINESE)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    # ... saying why that voice, not to leave voice and language empty: they are.
    details = error.details() or ""
    assert "picked by the script of the text's first sentence; set language to 'zh'" in details
    assert "leave both" not in details


@pytest.mark.slow
def test_japanese_that_starts_with_kanji_alone_is_spoken_in_japanese(
    kstub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    """Bug: 現在、混み合っております。 with no language went to the Mandarin voice (its first
    segment, 現在、, has no kana), which then refused the kana, and the message said to leave
    voice and language empty: they were. "OK、承知しました。" went to the English voice. A
    stream's voice waits for the kana; a Chinese one does not wait for more than its first
    clause. 了解！少々お待ちください。 went to the Mandarin voice too."""
    assert synthesize(kstub, "現在、混み合っております。")[0].format.voice == "jf_alpha"
    # A Latin word before a mark only Chinese and Japanese write: the words after it tell.
    assert synthesize(kstub, "OK、承知しました。")[0].format.voice == "jf_alpha"
    assert synthesize(kstub, "OK，我明白了。")[0].format.voice == "zf_xiaoxiao"
    # ... and before a comma any script writes (it went to the English voice, which refused
    # the rest): the first letter after it tells.
    assert synthesize(kstub, "OK, 我们开始吧。")[0].format.voice == "zf_xiaoxiao"
    assert synthesize(kstub, "3, 2, 1, スタートです。")[0].format.voice == "jf_alpha"
    # A short first sentence of kanji alone waits for the next one (了解 went to Mandarin).
    assert synthesize(kstub, "了解！少々お待ちください。")[0].format.voice == "jf_alpha"
    for pieces, voice in (
        (("本日", "、", "雨", "が降ります。"), "jf_alpha"),
        (("了解", "！", "少々", "お待ち", "ください。"), "jf_alpha"),
        (("好的", "！", "我来", "帮您查一下。"), "zf_xiaoxiao"),
    ):
        call = Duplex(kstub, timeout=120)
        call.config()
        for piece in pieces:
            call.send(text=piece)
        assert call.next().format.voice == voice, pieces
        call.close()
        assert kinds(call.rest())[-1] == "summary"
    # A caller that stops there is not stalled: the segment's own script decides.
    call = Duplex(kstub, timeout=120)
    call.config()
    call.send(text="本日、雨")  # the first segment, 本日、, completes at 雨
    assert call.next().format.voice == "zf_xiaoxiao"
    call.close()
    assert kinds(call.rest())[-1] == "summary"
    call = Duplex(kstub, timeout=120)
    call.config()
    call.send(text="好的，我")  # the first clause and one character: nothing else comes
    assert call.next().format.voice == "zf_xiaoxiao"
    call.close()
    assert kinds(call.rest())[-1] == "summary"


@pytest.mark.slow
def test_hangul_to_a_kokoro_voice_is_refused_not_dropped(
    kstub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    """Bug: 안녕하세요 with language zh (or ja) gave status OK and no audio at all."""
    for config in ({"language": "zh"}, {"voice": "jf_alpha"}):
        error = refusal(kstub, "안녕하세요.", **config)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        details = error.details() or ""
        assert "the text has Hangul (Korean) ('안')" in details
        assert "no voice of this server speaks it" in details


@pytest.mark.slow
def test_a_han_character_mandarin_cannot_read_is_refused_naming_it(
    kstub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    """Bug: 你好㐂世界。 (㐂 has no Mandarin reading) ended Synthesize with UNKNOWN, "Unexpected
    <class 'ValueError'>", and a traceback in the server's log. A stream's piece is refused
    as it arrives; the Japanese voice takes the text (OpenJTalk leaves out what it lacks)."""
    error = refusal(kstub, "你好㐂世界。")
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = error.details() or ""
    assert "'㐂' (U+3402), which voice 'zf_xiaoxiao' has no reading for" in details
    call = Duplex(kstub, timeout=60)
    call.config(language="zh")
    call.send(text="你好，")
    call.send(text="㐂世界。")
    call.close()
    with pytest.raises(grpc.RpcError) as info:
        call.rest()
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "U+3402" in (info.value.details() or "")
    assert kinds(synthesize(kstub, "㐂です。", language="ja"))[-1] == "summary"


@pytest.mark.slow
def test_a_stream_with_no_language_gets_its_voice_and_format_from_its_first_sentence(
    kstub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    """The format waits for the first segment; a clear before it lets the next text decide,
    and its clear_done still comes (after the format)."""
    call = Duplex(kstub, timeout=120)
    call.config()
    call.send(text="Hello")  # no segment yet...
    call.send(clear=pb.Clear(id=1))  # ...and dropped
    for piece in ("你好，", "今天", "天气很好。"):
        call.send(text=piece)
    call.send(flush=pb.Flush(id=2))
    first = call.next()
    assert first.WhichOneof("response") == "format"
    assert first.format.voice == "zf_xiaoxiao"
    assert call.until("clear_done").clear_done.id == 1
    assert call.until("flush_done").flush_done.id == 2
    call.close()
    responses = call.received + call.rest()
    assert kinds(responses)[-1] == "summary"
    audio, rate = ogg_audio(responses)
    assert judge().cer(audio, rate, "zh", CHINESE) <= 0.15


@pytest.mark.slow
def test_a_stream_half_closed_before_a_sentence_end_decides_at_the_half_close(
    kstub: tts_pb2_grpc.TextToSpeechServiceStub,
) -> None:
    requests = [
        pb.StreamingSynthesizeRequest(config=pb.SynthesisConfig()),
        pb.StreamingSynthesizeRequest(text="こんにちは"),
    ]
    responses = list(kstub.StreamingSynthesize(iter(requests), timeout=120))
    assert responses[0].format.voice == "jf_alpha"
    assert "audio" in kinds(responses)
    assert kinds(responses)[-1] == "summary"


@pytest.mark.slow
def test_the_cli_speaks_chinese_in_mandarin_with_no_language(
    kokoro_server: ServerThread, tmp_path: Path
) -> None:
    """`voxlite speak "你好，今天天气很好。"` and `speak -`, with no --language."""
    path = tmp_path / "a.opus"
    result = voxlite("speak", "-o", str(path), CHINESE, "--server", kokoro_server.address)
    assert result.returncode == 0, result.stderr
    audio, rate = soundfile.read(path, dtype="float32")
    assert judge().cer(audio, rate, "zh", CHINESE) <= 0.15
    piped = tmp_path / "b.opus"
    result = subprocess.run(
        [*CLI, "speak", "-o", str(piped), "-", "--server", kokoro_server.address],
        input=CHINESE + "\n",
        capture_output=True,
        text=True,
        env=environment(),
        timeout=90,
    )
    assert result.returncode == 0, result.stderr
    audio, rate = soundfile.read(piped, dtype="float32")
    assert judge().cer(audio, rate, "zh", CHINESE) <= 0.15
