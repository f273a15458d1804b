"""Teach the camera a suited deck (issue #21): an Island Deck and a standard deck drawn in a font family of the
held-out split with a face style of their own, photographed a suit per photo (vision.synth.rows.suit_photo),
enrolled through the CLI, then scenes of that deck read with its profile (`scan --deck NAME`); the refusals of
wrong photos leave nothing behind. The styles are ones whose photos the decks' detector finds whole (it finds
every card of all the suit photos for 7 of 11 random Island styles and 4 of 11 standard ones: the detector, not
the enrollment, is what fails on the others, and enroll then refuses the photo in one line)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from test_camera_enroll import _cli, _refused  # the same CLI runner and one-line refusal check


def _style(deck: str, seed: int):
    from companion.decks import get_deck
    from vision.decks.faces import faces_for
    from vision.fonts import split_fonts

    fonts = [(f, files) for f, files in split_fonts("held_out") if f in ("Go", "Karla")]
    assert fonts, "the held-out families Go / Karla are not installed here"
    return faces_for(get_deck(deck)).random_style(np.random.default_rng(seed), fonts)


def _photos(folder: Path, deck: str, style, seed=0, short: str | None = None) -> Path:
    from vision.enroll import photo_layout
    from vision.synth.rows import suit_photo

    folder.mkdir(parents=True, exist_ok=True)
    for i, (f, cards) in enumerate(photo_layout(deck)):
        suit = cards[0].suit
        n = len(cards) - 1 if suit == short else None
        cv2.imwrite(str(folder / f), suit_photo(deck, style, suit, seed + i, n=n), [cv2.IMWRITE_JPEG_QUALITY, 92])
    return folder


# floors: what the committed readers clear with margin (2026-11-24 evening: island54 taught 28/33 exact, untaught
# 26/33; standard52 taught 4/26, untaught 4/26 -- the standard reader abstains on most cards at its 0.999 bar, and
# teaching does not change that yet: far from the target, see MODEL_CARD. 2026-11-24 late, with the grown
# look and the card bar 0.99: standard52 taught 5/26, untaught 4/26, none wrong)
# 2026-11-26 (session 33): with the decks detector fine-tuned on suited scenes the untaught standard52 reader read
# more of these cards (8/26) than the taught profile (6/26 with the agree rule), and named one KC as KS at 0.9995:
# the case was a strict xfail. 2026-11-26 (session 34), with the suited decks' own detector (card_det_suited, chosen
# on calibration scenes): taught 6/26, untaught 5/26, none wrong; the floor 0.15 asked for 4 of 26.
# 2026-11-29 (session 63), with the readers of sessions 45-55 and the face look for taught decks: island54 taught
# 33/33, untaught 32/33; standard52 taught 13/26, untaught 10/26 (the same without the face look); none wrong. The
# floors now ask for 30 of 33 and 11 of 26.
@pytest.mark.parametrize("deck,seed,floor", [("island54", 2, 0.9), ("standard52", 8, 0.4)])
def test_enroll_a_suited_deck_and_read_it(tmp_path, deck, seed, floor):
    from companion.decks import get_deck
    from vision.synth.suited import seat_scene
    from vision.synth.surfaces import HELD_OUT_SURFACES

    data = tmp_path / "data"
    style = _style(deck, seed)
    # a photo with a card missing: refused in one line, nothing written
    bad = _photos(tmp_path / "bad", deck, style, short=get_deck(deck).cards[0].suit)
    res = _cli(["deck", "enroll", "mine", "--base", deck, "--rows", str(bad)], data)
    _refused(res, "found")
    assert "expected" in res.stderr and not (data / "decks" / "mine").exists()
    rows = _photos(tmp_path / "rows", deck, style)
    res = _cli(["deck", "enroll", "mine", "--base", deck.replace("54", "").replace("52", ""), "--rows", str(rows)],
               data)  # the alias (island, standard) is accepted
    assert res.returncode == 0, res.stderr
    meta = json.loads((data / "decks" / "mine" / "deck.json").read_text())
    assert meta["base"] == deck and meta["cards"] == len(get_deck(deck).cards) and meta["cpu_s"] <= 120, meta
    listed = json.loads(_cli(["deck", "list", "--json"], data).stdout)
    assert listed == [dict(listed[0], name="mine", base=deck, current=True)]
    d = get_deck(deck)
    rng = np.random.default_rng(seed)
    exact = {"mine": 0, deck: 0}
    wrong = {"mine": 0, deck: 0}
    total = 0
    for k in range(6):
        n = int(rng.integers(3, 7))
        cards = [d.notation(d.cards[i]) for i in rng.choice(len(d.cards), n, replace=False)]
        sc = seat_scene(9_300_000 + k, deck, [[c] for c in cards], surfaces=HELD_OUT_SURFACES, style=style)
        img = tmp_path / f"s{k}.jpg"
        cv2.imwrite(str(img), sc.image)
        total += len(sc.cards)
        for name in exact:  # the taught deck, and the deck's reader untaught, on the same frames
            res = _cli(["scan", str(img), "--deck", name, "--json"], data)
            assert res.returncode == 0, res.stderr
            out = json.loads(res.stdout)
            for g in sc.cards:
                hits = [c for c in out["cards"] if c["kind"] == "card" and
                        cv2.pointPolygonTest(g.quad.reshape(-1, 1, 2), tuple(np.mean(c["corners"], 0)), False) >= 0]
                if hits and hits[0]["card"] == g.card:
                    exact[name] += 1
                elif hits and hits[0]["card"] is not None:
                    wrong[name] += 1
    print(f"{deck} taught: {exact['mine']}/{total} exact, {wrong['mine']} wrong; untaught: {exact[deck]}/{total}, "
          f"{wrong[deck]} wrong")
    assert wrong["mine"] == 0
    assert exact["mine"] >= exact[deck] and exact["mine"] >= floor * total, (exact, total)
    assert _cli(["deck", "remove", "mine"], data).returncode == 0


def test_a_taught_view_is_sure_only_where_the_profile_and_the_deck_reader_name_the_same_card():
    """``SuitedReader.read`` with a profile: where the profile's heads and the deck's own reader name different
    cards the view is unsure (their mean); where they agree the surer of the two speaks."""
    import vision.suited_reader as sr
    from vision.synth.suited import make_deck_scene
    from vision.suited_reader import SuitedReader, index_view

    class FlipSuit:  # a profile whose heads push every view to the next suit, surely
        def heads(self, feat, zr, zl):
            return zr, np.roll(zl, 1, axis=1) * 4.0

    sc = make_deck_scene(11, "standard52", "start")
    views = [index_view(q) for c in sc.cards for q in c.index_quads]
    base = SuitedReader("standard52")
    taught = SuitedReader("standard52", profile=FlipSuit())
    pb, _ = base.read(sc.image, views)
    pa, _ = taught.read(sc.image, views)
    sr.TAUGHT_RULE = "profile"
    try:
        pp, _ = taught.read(sc.image, views)
    finally:
        sr.TAUGHT_RULE = "agree"
    sure = pb.max(1) >= 0.99
    assert sure.sum() >= 3  # the deck's reader is sure of several indices
    differ = pp.argmax(1) != pb.argmax(1)
    assert differ[sure].all()  # the flipped profile names another card on each of them
    assert np.allclose(pa[differ], 0.5 * (pp[differ] + pb[differ]), atol=1e-6)
    assert (pa[sure].max(1) <= 0.51).all()  # ... so those views are unsure, not surely wrong
    same = ~differ
    assert np.allclose(pa[same], np.where((pp[same].max(1) >= pb[same].max(1))[:, None], pp[same], pb[same]))


def test_a_taught_deck_is_read_at_its_own_card_bar_where_the_reader_has_one():
    """The suited readers' reports carry ``taught_card`` (session 63, chosen on decks taught in calibration families):
    a scanner with a profile names a whole card at that bar; the untaught scanner keeps the reader's own. Every other
    bar is the reader's either way."""
    import json
    from pathlib import Path

    from vision.suited_reader import BAR_KINDS, SuitedScanner

    class Same:  # a profile whose heads change nothing
        def heads(self, feat, zr, zl):
            return zr, zl

    models = Path(__file__).resolve().parents[1] / "models"
    for deck in ("standard52", "island54"):
        th = json.loads((models / f"{deck}_reader.json").read_text())["thresholds"]
        untaught, taught = SuitedScanner(deck), SuitedScanner(deck, profile=Same())
        assert untaught.card_min == th["card"]
        assert taught.card_min == th.get("taught_card", th["card"])
        for kind in BAR_KINDS:
            if kind != "card":
                assert getattr(taught, f"{kind}_min") == getattr(untaught, f"{kind}_min") == th[kind]
        assert taught.far_bars is None  # a taught deck is read at its near bars in every frame
    assert json.loads((models / "standard52_reader.json").read_text())["thresholds"]["taught_card"] == 0.98
    assert "taught_card" not in json.loads((models / "island54_reader.json").read_text())["thresholds"]
