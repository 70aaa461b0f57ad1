"""The page at / played in Debian's chromium, headless, through chromium-driver; and OpenAI's
voice names in Mandarin and Japanese."""

from __future__ import annotations

import base64
import http.server
import re
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import openai
import pytest
from selenium import webdriver
from selenium.common.exceptions import SessionNotCreatedException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from .helpers import (
    LONG_TEXT,
    ServerThread,
    base_config,
    held_workers,
    http_url,
    only_session,
    speech_fraction,
    wait_until,
)

pytestmark = pytest.mark.slow
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FIRST = "Sure, I can help with that."
MANDARIN = "您好。请问有什么可以帮您。"
JAPANESE = "こんにちは。今日はいい天気ですね。"


class _AppPage(http.server.BaseHTTPRequestHandler):
    """A web app's page on an origin of its own, as a browser app calling the API has."""

    def do_GET(self) -> None:
        page = b"<!doctype html><title>an app of another origin</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def app_origins() -> Iterator[tuple[str, str]]:
    """Two web apps' origins: the server's --cors-origins lists the first."""
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AppPage) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    listed, unlisted = (f"http://127.0.0.1:{server.server_address[1]}" for server in servers)
    yield listed, unlisted
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def srv(
    cache_dir: Path, tmp_path_factory: pytest.TempPathFactory, app_origins: tuple[str, str]
) -> Iterator[ServerThread]:
    config = base_config(
        cache_dir,
        tmp_path_factory.mktemp("voices"),
        engines=("piper", "kokoro"),
        http_port=0,
        cors_origins=app_origins[:1],
    )
    server = ServerThread(config)
    yield server
    server.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    """Debian's chromium, headless; the driver's path given, so that Selenium fetches none.
    A profile of its own, and up to three starts: on a loaded machine chromium can exit before
    it writes DevToolsActivePort, which would fail every test of the page (its start is not
    what they test)."""
    for attempt in range(3):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        profile = tmp_path_factory.mktemp("chromium")
        for argument in (
            "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
            f"--user-data-dir={profile}",
        ):  # fmt: skip
            options.add_argument(argument)
        try:
            driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
            break
        except SessionNotCreatedException:
            if attempt == 2:
                raise
    yield driver
    driver.quit()


@pytest.fixture
def client(srv: ServerThread) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(api_key="unused", base_url=http_url(srv, "/v1"), max_retries=0) as sdk:
        yield sdk


def state(driver: webdriver.Chrome) -> dict[str, Any]:
    """What the page says it is doing (window.voxlite)."""
    value: dict[str, Any] = driver.execute_script("return window.voxlite")
    return value


def wait_page(
    driver: webdriver.Chrome, condition: Callable[[dict[str, Any]], bool], timeout: float = 90
) -> dict[str, Any]:
    """Poll the page's state until `condition` holds (or it reports an error)."""
    deadline = time.monotonic() + timeout
    while True:
        now = state(driver)
        assert now["error"] is None, now["error"]
        if condition(now):
            return now
        assert time.monotonic() < deadline, f"the page never got there: {now}"
        time.sleep(0.02)


def open_page(driver: webdriver.Chrome, srv: ServerThread, language: str) -> None:
    driver.get(http_url(srv, "/"))
    wait_until(lambda: bool(driver.execute_script("return voices.length")))
    Select(driver.find_element(By.ID, "language")).select_by_value(language)


def heard(now: dict[str, Any]) -> bool:
    return now["state"] in ("playing", "finished")


@pytest.mark.parametrize(
    ("language", "voice"), [("en-US", "en_US-joe-medium"), ("zh-CN", "zf_xiaoxiao")]
)
def test_the_page_plays_each_language_as_it_streams(
    browser: webdriver.Chrome, srv: ServerThread, language: str, voice: str
) -> None:
    """The page's analyser, between the audio and the speakers, hears sound: the voice really
    played, in English and in Mandarin (the language's default voice is chosen)."""
    open_page(browser, srv, language)
    assert (
        Select(browser.find_element(By.ID, "voice")).first_selected_option.get_attribute("value")
        == voice
    )
    browser.find_element(By.ID, "speak").click()
    played = wait_page(browser, heard)
    assert played["firstAudioMs"] is not None
    assert played["firstHeardMs"] >= played["firstAudioMs"]
    assert "first audio after" in browser.find_element(By.ID, "status").text
    wait_page(browser, lambda now: now["state"] == "finished")


def test_the_page_plays_audio_before_the_rest_is_synthesized(
    browser: webdriver.Chrome, srv: ServerThread, client: openai.OpenAI
) -> None:
    """Order, not time: the reply's first sentence is in the phrase cache and every model worker
    is held, yet the page plays sound, while the server's session for the reply has not
    synthesized the rest and the page's download has not ended."""
    client.audio.speech.create(model="tts-1", voice="en_US-joe-medium", input=FIRST).read()
    open_page(browser, srv, "en-US")
    text = browser.find_element(By.ID, "text")
    text.clear()
    text.send_keys(f"{FIRST} {LONG_TEXT}")
    with held_workers(srv):
        browser.find_element(By.ID, "speak").click()
        played = wait_page(browser, heard)
        assert not played["done"]
        assert played["heardBeforeDone"]
        assert not only_session(srv).finished
        browser.find_element(By.ID, "stop").click()  # the server's work for it ends
    wait_until(lambda: srv.server.admission.active == 0)


def test_speak_again_while_playing_then_stop(browser: webdriver.Chrome, srv: ServerThread) -> None:
    """Bug: Speak pressed while a reply played left the first reply's watcher running: it read
    the new reply's state before its first audio and threw (null.toFixed), the status stayed
    on "asking…"; after Stop the page still said "playing"; an empty speed was sent as 0."""
    open_page(browser, srv, "en-US")
    text = browser.find_element(By.ID, "text")
    text.clear()
    text.send_keys(LONG_TEXT)
    browser.find_element(By.ID, "speak").click()
    wait_page(browser, heard)
    browser.find_element(By.ID, "speed").clear()
    browser.find_element(By.ID, "speak").click()  # while the first reply plays
    again = wait_page(browser, lambda now: now["state"] == "playing" and now["firstHeardMs"])
    assert again["firstHeardMs"] >= again["firstAudioMs"]
    assert "speech heard after" in browser.find_element(By.ID, "status").text
    browser.find_element(By.ID, "stop").click()
    assert wait_page(browser, lambda now: now["state"] == "stopped")
    assert browser.find_element(By.ID, "status").text == "stopped"
    wait_until(lambda: srv.server.admission.active == 0)


def test_the_page_shows_the_servers_error(browser: webdriver.Chrome, srv: ServerThread) -> None:
    open_page(browser, srv, "en-US")
    speed = browser.find_element(By.ID, "speed")
    speed.clear()
    speed.send_keys("9")
    browser.find_element(By.ID, "speak").click()
    wait_until(lambda: state(browser)["state"] == "error")
    assert "speed must be between 0.25 and 4" in browser.find_element(By.ID, "status").text


def test_the_page_has_nothing_from_outside(srv: ServerThread) -> None:
    """One file, no address outside it, and a policy that lets the browser load nothing else."""
    with urllib.request.urlopen(http_url(srv, "/"), timeout=30) as response:
        policy = response.headers["Content-Security-Policy"]
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        page = response.read().decode()
    assert policy.startswith("default-src 'none';")
    assert "connect-src 'self'" in policy
    assert not re.search(r"https?://|\b(src|href)\s*=", page)


FETCH = """
const [url, input, done] = arguments;
fetch(url, {method: "POST", headers: {"Content-Type": "application/json"},
            body: JSON.stringify({input: input, voice: "alloy", response_format: "pcm"})})
  .then(async (reply) => {
    const bytes = new Uint8Array(await reply.arrayBuffer());
    let text = "";
    for (const byte of bytes) text += String.fromCharCode(byte);
    done({status: reply.status, voice: reply.headers.get("X-Voxlite-Voice"), pcm: btoa(text)});
  })
  .catch((error) => done({error: String(error)}));
"""
"""A page's own call: JSON, so the browser asks the server first (a CORS preflight)."""


def test_a_page_of_a_cors_origin_hears_the_api_and_another_origins_page_cannot(
    browser: webdriver.Chrome, srv: ServerThread, app_origins: tuple[str, str]
) -> None:
    """chromium decides, as it does for a web app: the page of the listed origin reads the
    Mandarin reply and its voice header; the page of another origin gets nothing."""
    listed, unlisted = app_origins
    browser.set_script_timeout(120)
    browser.get(f"{listed}/")
    answer = browser.execute_async_script(FETCH, http_url(srv, "/v1/audio/speech"), MANDARIN)
    assert "error" not in answer, answer
    assert (answer["status"], answer["voice"]) == (200, "zf_xiaoxiao")
    assert speech_fraction(base64.b64decode(answer["pcm"]), 24000) > 0.2
    browser.get(f"{unlisted}/")
    answer = browser.execute_async_script(FETCH, http_url(srv, "/v1/audio/speech"), MANDARIN)
    assert answer == {"error": "TypeError: Failed to fetch"}


@pytest.mark.parametrize(
    ("fields", "voice"),
    [
        ({"voice": "alloy", "input": MANDARIN}, "zf_xiaoxiao"),  # the script says Mandarin
        ({"voice": "nova", "input": JAPANESE}, "jf_alpha"),  # kana: Japanese
        ({"voice": "onyx", "input": JAPANESE, "extra_body": {"language": "ja"}}, "jf_alpha"),
        ({"voice": "zm_yunxi", "input": MANDARIN}, "zm_yunxi"),
    ],
)
def test_openai_voice_names_get_the_default_voice_of_the_language(
    client: openai.OpenAI, fields: dict[str, Any], voice: str
) -> None:
    with client.audio.speech.with_streaming_response.create(
        model="tts-1", response_format="pcm", **fields
    ) as response:
        assert response.headers["x-voxlite-voice"] == voice
        audio = response.read()
    assert speech_fraction(audio, 24000) > 0.2
    assert np.frombuffer(audio, "<i2").size / 24000 > 0.5
