"""The phone page in a real browser: Debian's chromium + chromedriver, driven headless by selenium, talking to
127.0.0.1 only. Join by the QR URL, send a secret, see the reveal, reload and rejoin by the stored token, seat
reset. These tests FAIL (not skip) when chromium or chromedriver is missing: `scripts/system-deps.sh test`.

Set PIRATE_TABLE_SHOTS=<dir> to also save the phone page's screenshots there (docs/screenshots/)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from companion.table_server.demo import DemoSource
from companion.table_server.server import TableServer
from companion.table_server.thread import ServerThread

SEATS = ("Ann", "Bob", "Cy")
VOTES = ("bluffing", "not bluffing")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=390,844")


def _find(*names: str) -> str:
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    pytest.fail(f"{names[0]} is missing: install Debian's chromium and chromium-driver (scripts/system-deps.sh test)")


@pytest.fixture()
def browser():
    chromium = _find("chromium", "chromium-browser")
    driver_path = _find("chromedriver")
    os.environ["SE_OFFLINE"] = "true"  # selenium must not look for drivers on the internet
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="pt-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for f in FLAGS:
        opts.add_argument(f)
    opts.add_argument(f"--user-data-dir={profile}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # a phone's screen: 390 x 844 CSS pixels, touch
    opts.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844,
                                                                        "pixelRatio": 1, "touch": True}})
    drv = webdriver.Chrome(options=opts, service=Service(executable_path=driver_path))
    drv.set_page_load_timeout(30)
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _wait(drv, cond, timeout: float = 15.0):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(drv, timeout, poll_frequency=0.05).until(lambda d: cond(d))


def _text(drv, el_id: str) -> str:
    from selenium.webdriver.common.by import By

    el = drv.find_element(By.ID, el_id)
    return el.text if el.is_displayed() else ""


def _shot(drv, name: str) -> None:
    d = os.environ.get("PIRATE_TABLE_SHOTS")
    if d:
        Path(d).mkdir(parents=True, exist_ok=True)
        drv.save_screenshot(str(Path(d) / name))


def _read_qr(png: bytes) -> str:
    import cv2
    import numpy as np

    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_GRAYSCALE)
    # OpenCV's classic decoder misses about 2 % of these (valid) codes, 12 of 600 random tokens, which made this test
    # fail now and then; its ArUco-based decoder read all 600. A phone's camera app is the reader that matters; the
    # code must be read by one of the two, and its text is then used as the phone's URL
    text = cv2.QRCodeDetector().detectAndDecode(img)[0] or cv2.QRCodeDetectorAruco().detectAndDecode(img)[0]
    assert text, "the QR code could not be read"
    return text


def _no_page_errors(drv) -> None:
    bad = [e for e in drv.get_log("browser") if e["level"] == "SEVERE" and "/view" not in e["message"]]
    assert bad == [], bad  # e.g. a Content-Security-Policy violation or a script error


def test_join_answer_reveal_reload_rejoin_and_reset(browser):
    from selenium.webdriver.common.by import By

    src = DemoSource(SEATS, kind="vote", choices=VOTES, rounds=2, title="Bluff Pirate")
    st = ServerThread(lambda: TableServer(src, host="127.0.0.1"))
    srv = st.start()
    try:
        url = _read_qr(st.call(lambda: srv.qr_png("Ann")))  # what a phone camera reads off the tablet
        assert url == srv.url_for("Ann") and url.startswith("http://127.0.0.1:") and "#" in url
        # join by the QR URL: the token moves into localStorage and out of the address bar
        browser.get(url)
        _wait(browser, lambda d: _text(d, "seat") == "Ann" and _text(d, "conn") == "connected")
        assert browser.execute_script("return location.hash") == ""
        token = url.split("#", 1)[1]
        key = f"pirate-table:{srv.table_id}"
        assert browser.execute_script("return localStorage.getItem(arguments[0])", key) == token
        assert _text(browser, "score") == "0" and "Round 1 of 2" in _text(browser, "phase")
        _shot(browser, "phone-question.png")
        # send a secret
        browser.find_element(By.ID, "choice-1").click()
        _wait(browser, lambda d: _text(d, "mine") == "Your answer: not bluffing")
        assert "Waiting for Bob, Cy" in _text(browser, "waiting")
        assert not browser.find_element(By.ID, "reveal").is_displayed()
        _shot(browser, "phone-answered.png")
        st.call(lambda: srv.submit_from_tablet("Bob", "bluffing"))
        _wait(browser, lambda d: _text(d, "waiting") == "Waiting for Cy")
        assert not browser.find_element(By.ID, "reveal").is_displayed()
        st.call(lambda: srv.submit_from_tablet("Cy", "not bluffing"))
        # the reveal: all at once
        _wait(browser, lambda d: d.find_element(By.ID, "reveal").is_displayed())
        rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#answers tr")]
        assert rows == ["Ann not bluffing", "Bob bluffing", "Cy not bluffing"]
        _wait(browser, lambda d: "Round 2 of 2" in _text(d, "phase") and _text(d, "score") == "1")
        _shot(browser, "phone-revealed.png")
        # reload: the page rejoins by the stored token, the seat is kept
        browser.refresh()
        _wait(browser, lambda d: _text(d, "seat") == "Ann" and _text(d, "conn") == "connected")
        assert browser.find_element(By.ID, "choice-0").is_enabled()
        browser.find_element(By.ID, "choice-0").click()
        _wait(browser, lambda d: _text(d, "mine") == "Your answer: bluffing")
        assert st.call(lambda: srv.table.presence("Ann")) == "here"
        assert st.call(lambda: src.open_secret().own_answer("Ann")) == "bluffing"
        _no_page_errors(browser)
        # the tablet resets Ann's seat: the phone is told, forgets the token, and cannot come back with it
        st.call(lambda: srv.reset_seat("Ann"))
        _wait(browser, lambda d: d.find_element(By.ID, "join").is_displayed())
        assert "reset" in _text(browser, "join-why")
        assert browser.execute_script("return localStorage.getItem(arguments[0])", key) is None
        _shot(browser, "phone-reset.png")
        browser.get(url)  # the old QR code (old token) is refused
        _wait(browser, lambda d: d.find_element(By.ID, "join").is_displayed())
        assert "no longer valid" in _text(browser, "join-why")
        browser.get(srv.url_for("Ann"))  # the new QR code works, and the seat's answer survived the reset
        _wait(browser, lambda d: _text(d, "conn") == "connected" and _text(d, "mine") == "Your answer: bluffing")
    finally:
        st.stop()


def test_a_pirate_whist_bid_from_the_phone_page_against_the_real_game(browser, tmp_path):
    """A real Pirate Whist session (round 2: the scores of round 1 on the phone): Bob's phone shows his score,
    the round, the bid buttons 0..2; his bid goes into Whist's own SecretRound as its bid event; the last bid
    reveals them all at once."""
    from selenium.webdriver.common.by import By

    from companion.session import TableSession
    from companion.table_server.session_source import SessionSource

    sess = TableSession(["Ann", "Bob", "Cy", "Dee"], None, "pirate-whist", {"max_cards": 3, "first_dealer": "Dee"})
    sess.new_round()
    for p, b in (("Ann", 2), ("Bob", 1), ("Cy", 0), ("Dee", 1)):
        sess.apply({"e": "bid", "player": p, "bid": b})
    sess.apply({"e": "reveal"})
    sess.apply({"e": "counts", "won": {"Ann": 2, "Bob": 1, "Cy": 0, "Dee": 0}})
    sess.new_round()  # round 2: 2 cards, Ann deals, Bob leads

    def apply(action):
        sess.apply(action)
        sess.save(tmp_path / "s.json")

    st = ServerThread(lambda: TableServer(SessionSource(sess, apply), host="127.0.0.1"))
    srv = st.start()
    try:
        browser.get(srv.url_for("Bob"))
        _wait(browser, lambda d: _text(d, "seat") == "Bob" and _text(d, "conn") == "connected")
        assert _text(browser, "game") == "Pirate Whist" and _text(browser, "score") == "11"
        assert _text(browser, "phase") == "Round 2 of 5 (2 cards): secret bids"
        assert "how many of the 2 tricks" in _text(browser, "prompt")
        assert [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#choices button")] == ["0", "1", "2"]
        browser.find_element(By.ID, "choice-2").click()
        _wait(browser, lambda d: _text(d, "mine") == "Your answer: 2")
        assert "Waiting for Cy, Dee, Ann" in _text(browser, "waiting")
        assert not browser.find_element(By.ID, "reveal").is_displayed()
        _shot(browser, "phone-whist-bid.png")
        assert st.call(lambda: sess.model.round.events) == [{"e": "bid", "player": "Bob", "bid": 2}]
        for p, b in (("Cy", 0), ("Dee", 1), ("Ann", 0)):  # the others on the passed tablet
            st.call(lambda p=p, b=b: srv.submit_from_tablet(p, b))
        _wait(browser, lambda d: d.find_element(By.ID, "reveal").is_displayed())
        rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#answers tr")]
        assert rows == ["Bob 2", "Cy 0", "Dee 1", "Ann 0"]
        _wait(browser, lambda d: _text(d, "phase") == "Round 2 of 5 (2 cards): 3 bid for 2 tricks")
        assert st.call(lambda: sess.model.phase) == "play"
        _no_page_errors(browser)
    finally:
        st.stop()
