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


def has_button(root, tag):
    from kivy.uix.button import Button

    return any(isinstance(w, Button) and getattr(w, "tag", None) == tag for w in root.walk(restrict=True))


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
            assert take(app, es) == ("Found 7 cards: lay out all eight, a little apart and all in the picture, "
                                     "and retake.")
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
    from companion.ui.camservice import scanner_for

    sc = scanner_for("kitchen-deck")
    assert sc.mode == "corner" and sc.corner.profile is not None and sc.corner.profile.name == "kitchen-deck"
    # the camera service tells the game's hold that it reads a taught deck (its note then says what helps there)
    import threading

    from companion.tablecam import ScanRequest
    from companion.ui.camservice import CameraService, taught_choice

    assert not taught_choice("pirates72", "*printed") and not taught_choice("pirates72", None)
    req = ScanRequest("pirates72", ("Ann", "Ben", "Cy"))
    got, done = [], threading.Event()
    cs = CameraService("simulated", req, lambda f: f(), lambda *a: None, lambda r: (got.append(r), done.set()),
                       lambda e: (got.append(e), done.set()), seed=7, deck="kitchen-deck")
    cs.start()
    assert done.wait(120), "no reading in 120 s"
    cs.stop()
    assert not isinstance(got[0], str), got[0]
    assert cs.request.taught and not req.taught and taught_choice("pirates72", "kitchen-deck")
    # Teach again (the unsure-taught-deck note's advice): nine new photos of the same deck; the name is the deck's, the
    # profile is replaced at the end, and the camera goes on reading it
    shot(app, "enroll-use.png")
    profile = (app.test_data_dir / "decks" / "kitchen-deck" / "profile.npz").read_bytes()
    es.ids.deck_name.text = ""
    tap(find(es, tag="again:kitchen-deck"))
    assert es.ids.steps.current == "photos" and es.again and es.deck == "kitchen-deck"
    assert es.ids.cancel.text == "Cancel (the deck stays as it was)"
    cs = es.cam
    for r in range(9):
        assert es.ids.step_title.text.startswith(f"Photo {r + 1} of 9")
        fresh_frames(cs)
        assert take(app, es).startswith("Found 8 cards")
        if r == 8:
            assert es.ids.use.text == "Use it: teach the deck again"
            shot(app, "enroll-again-photo.png")
        tap(es.ids.use)
    assert es.busy and es.ids.step_title.text == "Teaching the camera deck kitchen-deck again..."
    assert wait_until(lambda: not es.busy, 500), "teaching again did not finish"
    assert es.ids.done_title.text == "Deck kitchen-deck taught again", es.ids.done_text.text
    assert "wherever it is in use" in es.ids.done_text.text and es.result["again"] is True
    assert (app.test_data_dir / "decks" / "kitchen-deck" / "profile.npz").read_bytes() != profile
    tap(es.ids.done)
    assert app.camera_deck() == "kitchen-deck" and find(es, tag="use:kitchen-deck").text == "In use"
    assert deck_list(app).count("kitchen-deck") == 1
    # Teach again, cancelled at the first photo: the deck stays as it was taught
    profile = (app.test_data_dir / "decks" / "kitchen-deck" / "profile.npz").read_bytes()
    tap(find(es, tag="again:kitchen-deck"))
    assert es.ids.steps.current == "photos"
    tap(es.ids.cancel)
    assert es.ids.setup_note.text == "Cancelled: deck kitchen-deck stays as it was taught."
    assert (app.test_data_dir / "decks" / "kitchen-deck" / "profile.npz").read_bytes() == profile
    es.ids.deck_name.text = "another"
    tap(es.ids.start)
    assert not es.again and es.ids.cancel.text == "Cancel (nothing is saved)"
    tap(es.ids.cancel)
    assert "nothing was saved" in es.ids.setup_note.text and not (app.test_data_dir / "decks" / "another").exists()
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
    assert line == ("NAME: a deck named 'racing' is already enrolled (teach it again with --again, or remove it first: "
                    "`pirate-table deck remove racing`)")
    assert app.status_error and app.status_text == line
    assert es.result is None and not folder.exists()
    assert sorted(p.name for p in (app.test_data_dir / "decks").iterdir()) == before
    assert (other / "deck.json").read_text() == '{"base": "pirates-bluff"}\n'
    tap(es.ids.done)
    tap(find(es, tag="remove:racing"))
    tap(find(es, tag="confirm:racing"))
    assert not other.exists()


def test_island_deck_six_suit_photos_enroll_use_in_play_remove(app):
    """The Island Deck taught from six photos, one per suit (vision.enroll.photo_layout): one photo first laid out
    a card short and retaken; the taught deck is chosen for the Island Deck only (Pirate's Bluff keeps its own
    choice), the game's camera reads with its profile, and removing it puts the Island Deck back on the untaught
    reader."""
    from companion.decks import get_deck
    from companion.tablecam import ScanRequest
    from companion.ui.camservice import demo_deck_style, scanner_for_request
    from vision.enroll import photo_layout

    es = open_enroll(app)
    es.ids.base.text = "Island Deck (Powderkeg, 54)"
    assert es.ids.intro.text.startswith("Six photos, one per suit: the nine cards of that suit, A 2 3 4 5 6 7 Q K")
    assert es.ids.start.text == "Start: take the six photos"
    assert es.ids.reads_title.text == "The camera reads (Island Deck)"
    assert find(es, tag="use:*any").text == "In use" and not has_button(es, "use:*printed")
    es.ids.deck_name.text = "harbour"
    shot(app, "enroll-island-setup.png")
    tap(es.ids.start)
    assert es.ids.steps.current == "photos"
    cs, folder = es.cam, es.folder
    assert cs.base == "island54" and cs.simulated.base_deck == "island54"
    layout = photo_layout("island54")
    for i, (f, cards) in enumerate(layout):
        suit = cards[0].suit
        assert es.ids.step_title.text == f"Photo {i + 1} of 6: the {suit}"
        assert es.ids.instruction.text.startswith(f"Lay out the nine {suit}, A 2 3 4 5 6 7 Q K from left to right")
        if i == 2:  # a card short: the check says so, retake
            cs.simulated.lay_out(2, n=8)
            fresh_frames(cs)
            assert take(app, es) == ("Found 8 cards: lay out all nine, a little apart and all in the picture, "
                                     "and retake.")
            assert es.ids.use.disabled
            tap(es.ids.retake)
            cs.simulated.lay_out(2)
        fresh_frames(cs)
        note = take(app, es)
        assert note.startswith("Found 9 cards, each marked"), (i, note)
        if i == 0:
            shot(app, "enroll-island-photo.png")
        tap(es.ids.use)
    assert es.busy
    assert wait_until(lambda: not es.busy, 500), "enroll did not finish"
    assert es.ids.done_title.text == "Deck harbour enrolled", es.ids.done_text.text
    meta = es.result
    assert meta["base"] == "island54" and meta["cards"] == 54
    assert meta["check_rank_accuracy"] >= 0.95 and meta["check_letter_accuracy"] >= 0.95, meta
    assert "suit" in es.ids.done_text.text and not folder.exists()
    assert deck_list(app).startswith("harbour\tisland54"), deck_list(app)
    tap(es.ids.done)
    tap(find(es, tag="use:harbour"))
    assert app.camera_deck("island54") == "harbour" and app.camera_deck() == "*printed"
    assert find(es, tag="use:harbour").text == "In use"
    shot(app, "enroll-island-use.png")
    # the Pirate's Bluff page does not list it, and says there is one more
    es.ids.base.text = "Pirate's Bluff deck (72)"
    assert not has_button(es, "use:harbour") and any("1 more taught (Island Deck)" in t for t in labels(es))
    es.ids.base.text = "Island Deck (Powderkeg, 54)"
    # the game's camera reads the Island Deck with the taught profile; nothing it reads is wrong
    req = ScanRequest("island54", ("Ann", "Ben", "Cy"), demo=(("A:anchors",), ("Q:boats",), ("5:crabs",)))
    sc = scanner_for_request(req, app.camera_deck("island54"))
    assert sc.profile is not None and sc.profile.name == "harbour"
    from vision.synth.suited import seat_scene
    from vision.synth.surfaces import HELD_OUT_SURFACES

    d = get_deck("island54")
    scene = seat_scene(4242, "island54", [list(c) for c in req.demo], surfaces=HELD_OUT_SURFACES,
                       style=demo_deck_style("island54"))
    reads, _ = sc.scan(scene.image)
    truth = {c.card for c in scene.cards}
    got = [d.notation(r.card()) for r in reads if r.code is not None]
    assert got and set(got) <= truth, (got, truth)
    with pytest.raises(RuntimeError, match="taught on the Island Deck, not the Standard 52-card deck"):
        scanner_for_request(ScanRequest("standard52", ("Ann", "Ben")), "harbour")
    tap(find(es, tag="remove:harbour"))
    tap(find(es, tag="confirm:harbour"))
    assert "Deck harbour removed. The camera reads: any Island Deck, untaught" in es.ids.setup_note.text
    assert app.camera_deck("island54") == "*any"
    assert "harbour" not in deck_list(app)
