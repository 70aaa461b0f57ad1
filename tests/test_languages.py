"""Languages: a request may name a language instead of a voice; ListVoices says who speaks what."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from voxlite.client import Client
from voxlite.service.engines.engine import canonical
from voxlite.service.settings.config import config_from_args
from voxlite.tts.v1 import tts_pb2 as pb

from .helpers import ServerThread, add_voice, base_config, config_error


@pytest.fixture(scope="module")
def multilingual(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerThread]:
    folder = tmp_path_factory.mktemp("voices")
    add_voice(folder, "de_DE-copy-medium", "de_DE")
    add_voice(folder, "en_GB-copy-medium", "en_GB")
    add_voice(folder, "en_US-zz-medium", "en_US")
    add_voice(folder, "pt_BR-a-medium", "pt_BR")
    add_voice(folder, "pt_BR-b-medium", "pt_BR")
    defaults = (("en-GB", "en_GB-copy-medium"), ("pt-BR", "pt_BR-b-medium"))
    config = base_config(cache_dir, folder, language_voices=defaults, phrase_cache_mb=0)
    srv = ServerThread(config)
    yield srv
    srv.close()


def voice_of(srv: ServerThread, voice: str = "", language: str = "") -> str:
    with srv.channel() as channel:
        config = pb.SynthesisConfig(voice=voice, language=language)
        request = pb.SynthesizeRequest(text="Hello.", config=config)
        first = next(iter(srv.stub(channel).Synthesize(request, timeout=30)))
        return str(first.format.voice)


def error_of(srv: ServerThread, voice: str = "", language: str = "") -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        voice_of(srv, voice, language)
    return info.value


def test_a_language_without_a_voice_gets_that_languages_default(
    multilingual: ServerThread,
) -> None:
    assert voice_of(multilingual, language="de") == "de_DE-copy-medium"
    assert voice_of(multilingual, language="de-DE") == "de_DE-copy-medium"
    assert voice_of(multilingual, language="de_de") == "de_DE-copy-medium"
    # The server's default speaks en-US: it is the default for en and en-US...
    assert voice_of(multilingual, language="en") == "en_US-joe-medium"
    assert voice_of(multilingual, language="en-US") == "en_US-joe-medium"
    # ...and --language-voices names en-GB's.
    assert voice_of(multilingual, language="en-GB") == "en_GB-copy-medium"
    assert voice_of(multilingual) == "en_US-joe-medium"
    # Bug: "zh" got the first zh-CN voice by name, not zh-CN's default. A range wider than
    # the default's ("pt" for "pt-BR") gets that default.
    assert voice_of(multilingual, language="pt") == "pt_BR-b-medium"
    assert voice_of(multilingual, language="pt-BR") == "pt_BR-b-medium"


def test_script_subtags_and_three_letter_codes_name_the_same_languages(
    multilingual: ServerThread,
) -> None:
    """Bug: "zh-Hans", "cmn" and "en-Latn-US", as platforms and clients write them, were
    NOT_FOUND: no voice's tag has a script, and ISO 639-3 names Mandarin cmn."""
    assert voice_of(multilingual, language="en-Latn-US") == "en_US-joe-medium"
    assert voice_of(multilingual, language="eng") == "en_US-joe-medium"
    assert voice_of(multilingual, language="deu-DE") == "de_DE-copy-medium"
    assert voice_of(multilingual, language="por-Latn-BR") == "pt_BR-b-medium"
    with multilingual.channel() as channel:
        listed = multilingual.stub(channel).ListVoices(
            pb.ListVoicesRequest(language="en-Latn"), timeout=10
        )
        assert {v.language for v in listed.voices} == {"en-US", "en-GB"}
    assert canonical("cmn-Hans-CN") == canonical("zh-cmn-Hans-CN") == "zh-cn"
    assert canonical("zh-Hant-TW") == "zh-tw"
    assert canonical("yue-HK") == "yue-hk"  # Cantonese is not Mandarin


def test_a_language_nobody_speaks_is_not_found_and_lists_the_languages(
    multilingual: ServerThread,
) -> None:
    error = error_of(multilingual, language="ko-KR")
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert "no voice speaks language 'ko-KR'" in error.details()
    assert "de-DE, en-GB, en-US" in error.details()


def test_a_voice_that_does_not_speak_the_language_is_not_found(
    multilingual: ServerThread,
) -> None:
    error = error_of(multilingual, voice="en_US-joe-medium", language="de")
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert "speaks en-US, not de" in error.details()
    assert voice_of(multilingual, voice="de_DE-copy-medium", language="de") == "de_DE-copy-medium"


def test_voices_after_serving_are_listed_as_loading_until_they_are_in(
    cache_dir: Path, tmp_path: Path
) -> None:
    """SERVING comes once the voices a request naming none gets are in; the others load just
    after. Meanwhile ListVoices names them in `loading`, and a call naming one is told to retry."""
    add_voice(tmp_path, "de_DE-copy-medium", "de_DE")
    srv = ServerThread(base_config(cache_dir, tmp_path), hold_rest=True)
    try:
        with srv.channel() as channel:
            listed = srv.stub(channel).ListVoices(pb.ListVoicesRequest(), timeout=10)
            assert list(listed.loading) == ["de_DE-copy-medium"]
            assert [v.name for v in listed.voices] == ["en_US-joe-medium"]
            with Client(srv.address) as client:
                assert client.voices(timeout=10).loading == ("de_DE-copy-medium",)
            early = error_of(srv, voice="de_DE-copy-medium")
            assert early.code() == grpc.StatusCode.UNAVAILABLE
            assert "voice 'de_DE-copy-medium' is still loading: retry" in str(early.details())
            assert voice_of(srv) == "en_US-joe-medium"
            srv.release_rest()
            listed = srv.stub(channel).ListVoices(pb.ListVoicesRequest(), timeout=10)
            assert list(listed.loading) == []
            assert voice_of(srv, voice="de_DE-copy-medium") == "de_DE-copy-medium"
    finally:
        srv.close()


def test_list_voices_says_who_speaks_what(multilingual: ServerThread) -> None:
    with multilingual.channel() as channel:
        listed = multilingual.stub(channel).ListVoices(pb.ListVoicesRequest(), timeout=10)
        english = multilingual.stub(channel).ListVoices(
            pb.ListVoicesRequest(language="en"), timeout=10
        )
    voices = {v.name: v for v in listed.voices}
    assert voices["en_US-joe-medium"].default
    assert voices["en_US-joe-medium"].language_default
    assert not voices["en_US-zz-medium"].language_default
    assert voices["en_GB-copy-medium"].language_default
    assert voices["de_DE-copy-medium"].language == "de-DE"
    assert all(v.family == "piper" and v.word_timestamps for v in listed.voices)
    assert sorted(v.name for v in english.voices) == [
        "en_GB-copy-medium",
        "en_US-joe-medium",
        "en_US-zz-medium",
    ]


def test_language_voices_are_language_voice_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    config = config_from_args(["--language-voices", "zh=zf_xiaoxiao, ja-JP=jf_alpha"], {})
    assert config.language_voices == (("zh", "zf_xiaoxiao"), ("ja-JP", "jf_alpha"))
    line = config_error(capsys, "--language-voices", "zf_xiaoxiao")
    assert "--language-voices must be LANGUAGE=VOICE pairs" in line
    assert line.endswith("(zh=zf_xiaoxiao), got zf_xiaoxiao")  # the value once
    line = config_error(capsys, VOXLITE_LANGUAGE_VOICES="zh=x,=y")
    assert "VOXLITE_LANGUAGE_VOICES" in line
    assert "not '=y', got zh=x,=y" in line  # the pair at fault, in the whole
