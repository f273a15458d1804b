"""The app's guided deck enrollment (Settings > "Teach the camera your deck", companion/ui/screens/enroll.py)
driven by real touches under Xvfb with the simulated row camera: nine photos, one of them first laid out wrong
(seven cards) and retaken; the deck is enrolled off the UI thread, shows in `pirate-table deck list`, and is
removed with a confirmation. A cancelled run leaves nothing behind. FAILS (not skips) without a display.
PIRATE_TABLE_SHOTS=<dir> also writes the screenshots there (docs/screenshots/enroll-*.png)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.ui

if not os.environ.get("DISPLAY"):  # fail, never skip: make test runs these under xvfb-run
    pytest.fail("needs a display: run under xvfb-run (make test does)", pytrace=False)

from ui_driver import find, labels, pump, screen, start_app, tap, wait_until  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    a = start_app(tmp_path_factory.mktemp("kivy_home"), data)
    a.config.set("table", "camera", "simulated")
    a.test_data_dir = data
    a.shots = Path(os.environ.get("PIRATE_TABLE_SHOTS") or tmp_path_factory.mktemp("shots"))
    yield a
    a.stop()


def shot(app, name):
    from kivy.core.window import Window

    pump(4)
    app.shots.mkdir(parents=True, exist_ok=True)
    fn = Window.screenshot(name=str(app.shots / name))
    os.replace(fn, app.shots / name)
    assert (app.shots / name).stat().st_size > 10_000


def deck_list(app):
    env = dict(os.environ, PIRATE_TABLE_DATA=str(app.test_data_dir))
    r = subprocess.run([sys.executable, "-m", "companion", "deck", "list"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def open_enroll(app):
    tap(app.root_widget.ids.nav_settings)
    assert screen(app).name == "settings"
    tap(find(screen(app), text="Teach the camera your deck"))
    assert screen(app).name == "enroll"
    return screen(app)


def fresh_frames(cs, n=2, timeout=10):
    """Wait until the camera has read n frames after now (the row laid out is in the photo)."""
    start = cs.frames
    assert wait_until(lambda: cs.frames >= start + n, timeout), "no frames from the simulated camera"


def take(app, es):
    tap(es.ids.take)
    assert wait_until(lambda: es.ids.check_note.text.startswith(("Found", "Could not")), 120), es.ids.check_note.text
    return es.ids.check_note.text


def test_cancel_leaves_nothing(app):
    es = open_enroll(app)
    assert "No deck taught yet." in labels(es)
    es.ids.deck_name.text = "Bad Name!"
    tap(es.ids.start)
    assert es.ids.steps.current == "setup" and "not a deck name" in es.ids.setup_note.text
    es.ids.deck_name.text = "pirates-bluff"
    tap(es.ids.start)
    assert es.ids.steps.current == "setup" and "built-in deck" in es.ids.setup_note.text
    es.ids.deck_name.text = "halfway"
    tap(es.ids.start)
    assert es.ids.steps.current == "photos"
    folder = es.folder
    fresh_frames(es.cam)
    assert take(app, es).startswith("Found 8 cards")
    tap(es.ids.use)
    assert (folder / "0.jpg").is_file() and es.ids.step_title.text == "Photo 2 of 9: rank 1"
    tap(es.ids.cancel)
    assert es.ids.steps.current == "setup" and "nothing was saved" in es.ids.setup_note.text
    assert not folder.exists() and es.cam is None
    assert not (app.test_data_dir / "decks" / "halfway").exists()
    assert "halfway" not in deck_list(app)


def test_nine_photos_one_retake_enroll_list_remove(app):
    es = open_enroll(app)
    es.ids.deck_name.text = "kitchen-deck"
    shot(app, "enroll-setup.png")
    tap(es.ids.start)
    assert es.ids.steps.current == "photos"
    cs, folder = es.cam, es.folder
    assert cs.simulated is not None and cs.source == "simulated"
    for r in range(9):
        want = "Photo 1 of 9: the wilds (rank 0)" if r == 0 else f"Photo {r + 1} of 9: rank {r}"
        assert es.ids.step_title.text == want
        assert "letters A to H from left to right" in es.ids.instruction.text
        assert es.ids.use.disabled  # nothing to use before a photo is checked
        if r == 3:  # the player forgets a card: the check says so, "Use it" stays off, retake
            cs.simulated.lay_out(3, n=7)
            fresh_frames(cs)
            assert take(app, es) == "Found 7 cards: lay out all eight, a little apart, and retake."
            assert es.ids.use.disabled and not es.ids.retake.disabled
            shot(app, "enroll-retake.png")
            tap(es.ids.retake)
            assert not es.ids.take.disabled and es.ids.use.disabled
            cs.simulated.lay_out(3)
        fresh_frames(cs)
        if r == 0:
            shot(app, "enroll-live.png")
        note = take(app, es)
        assert note.startswith("Found 8 cards"), (r, note)
        if r == 8:
            shot(app, "enroll-photo.png")
        tap(es.ids.use)
    assert sorted(p.name for p in folder.iterdir()) == [f"{r}.jpg" for r in range(9)] or not folder.exists()
    # enroll runs off the UI thread: the app keeps drawing frames meanwhile
    assert es.busy and es.ids.step_title.text == "Teaching the camera deck kitchen-deck..."
    t0 = time.monotonic()
    frames = 0
    while es.busy and time.monotonic() - t0 < 500:
        pump()
        frames += 1
        time.sleep(0.02)
    assert not es.busy, "enroll did not finish"
    assert frames > 20  # the UI stayed live
    assert es.ids.steps.current == "done" and es.ids.done_title.text == "Deck kitchen-deck enrolled", \
        es.ids.done_text.text
    meta = es.result
    assert meta["name"] == "kitchen-deck" and meta["base"] == "pirates-bluff"
    assert f"rank {100 * meta['check_rank_accuracy']:.1f} %" in es.ids.done_text.text
    assert meta["check_rank_accuracy"] >= 0.95 and meta["check_letter_accuracy"] >= 0.95
    assert not folder.exists()  # the photos are gone, the profile is in place
    assert (app.test_data_dir / "decks" / "kitchen-deck" / "profile.npz").is_file()
    shot(app, "enroll-done.png")
    out = deck_list(app)
    assert out.startswith("kitchen-deck\tpirates-bluff"), out

    tap(es.ids.done)
    assert es.ids.steps.current == "setup"
    # the camera reads the taught deck from now on (kept in the app's settings); the scanner has its profile
    assert app.camera_deck() == "*printed" and find(es, tag="use:*printed").text == "In use"
    tap(find(es, tag="use:kitchen-deck"))
    assert app.camera_deck() == "kitchen-deck" == app.config.get("table", "camera_deck")
    assert find(es, tag="use:kitchen-deck").text == "In use" and find(es, tag="use:*printed").text == "Use"
    assert "The camera reads: deck kitchen-deck." in es.ids.setup_note.text
    shot(app, "enroll-use.png")
    from companion.ui.camservice import scanner_for

    sc = scanner_for("kitchen-deck")
    assert sc.mode == "corner" and sc.corner.profile is not None and sc.corner.profile.name == "kitchen-deck"
    tap(find(es, tag="remove:kitchen-deck"))
    shot(app, "enroll-remove.png")
    tap(find(es, tag="keep:kitchen-deck"))  # not removed
    assert (app.test_data_dir / "decks" / "kitchen-deck").is_dir()
    tap(find(es, tag="remove:kitchen-deck"))
    tap(find(es, tag="confirm:kitchen-deck"))
    assert not (app.test_data_dir / "decks" / "kitchen-deck").exists()
    assert "Deck kitchen-deck removed. The camera reads our printed deck again." in es.ids.setup_note.text
    assert "No deck taught yet." in labels(es) and app.camera_deck() == "*printed"
    import pytest

    with pytest.raises(RuntimeError, match="no deck named 'kitchen-deck'"):
        scanner_for("kitchen-deck")
    assert "kitchen-deck" not in deck_list(app)


def test_failed_enroll_says_its_line_and_leaves_nothing(app):
    """The name is taken by another enrollment while the photos are taken: enroll refuses with its one line, the
    screen says it, the other deck and the decks folder are as they were, the photos are gone."""
    es = open_enroll(app)
    es.ids.deck_name.text = "racing"
    tap(es.ids.start)
    cs, folder = es.cam, es.folder
    for r in range(9):
        fresh_frames(cs)
        assert take(app, es).startswith("Found 8 cards")
        if r == 8:  # someone else enrolls a deck of that name meanwhile
            other = app.test_data_dir / "decks" / "racing"
            other.mkdir(parents=True)
            (other / "deck.json").write_text('{"base": "pirates-bluff"}\n')
            before = sorted(p.name for p in (app.test_data_dir / "decks").iterdir())
        tap(es.ids.use)
    assert wait_until(lambda: not es.busy, 120)
    assert es.ids.steps.current == "done" and es.ids.done_title.text == "Not enrolled"
    line = es.ids.done_text.text.splitlines()[0]
    assert line == "NAME: a deck named 'racing' is already enrolled (remove it first: `pirate-table deck remove racing`)"
    assert app.status_error and app.status_text == line
    assert es.result is None and not folder.exists()
    assert sorted(p.name for p in (app.test_data_dir / "decks").iterdir()) == before
    assert (other / "deck.json").read_text() == '{"base": "pirates-bluff"}\n'
    tap(es.ids.done)
    tap(find(es, tag="remove:racing"))
    tap(find(es, tag="confirm:racing"))
    assert not other.exists()
