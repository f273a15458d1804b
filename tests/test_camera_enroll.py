"""Deck enrollment end to end (`pirate-table deck enroll / list / remove`, `scan --deck NAME`) and its refusals.

A deck is rendered in a font family of the HELD-OUT split (no model or threshold ever saw it) with an index
layout outside the training ranges (bigger, further from the edge); its nine row photos are written, the deck is
enrolled through the CLI, and synthetic scenes of that deck are scanned with the profile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not (ROOT / "models" / "corner_reader.onnx").exists(), reason="no corner reader model")


def _deck_style():
    """The Enroll screen's simulated deck (``demo_deck_style``): the held-out family Anonymous Pro (DejaVu Sans until
    session 99, a calibration family since) in an index layout of its own."""
    from companion.ui.camservice import demo_deck_style
    from vision.fonts import split_fonts

    style = demo_deck_style("pirates-bluff")
    held_out = {f for _fam, files in split_fonts("held_out") for f in files}
    assert "Anonymous Pro" in str(style.font_path) and style.font_path in held_out, style.font_path
    return style


def _cli(args, data, **kw):
    env = dict(os.environ, PIRATE_TABLE_DATA=str(data))
    return subprocess.run([sys.executable, "-m", "companion", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600, **kw)


def _rows(folder: Path, style, seed=0) -> Path:
    from vision.synth.rows import row_photo

    folder.mkdir(parents=True, exist_ok=True)
    for r in range(9):
        cv2.imwrite(str(folder / f"{r}.jpg"), row_photo(style, r, seed + r), [cv2.IMWRITE_JPEG_QUALITY, 92])
    return folder


def _refused(res, place: str):
    assert res.returncode == 2, res.stderr
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pirate-table: error: ") and place in lines[0], res.stderr


@pytest.fixture(scope="module")
def enrolled(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    rows = _rows(tmp_path_factory.mktemp("rows") / "mydeck", _deck_style())
    res = _cli(["deck", "enroll", "mydeck", "--base", "pirates-bluff", "--rows", str(rows)], data)
    assert res.returncode == 0, res.stderr
    return data, rows


def test_enroll_refusals_leave_nothing_behind(enrolled, tmp_path):
    from vision.synth.rows import row_photo

    data, rows = enrolled
    before = sorted(p.name for p in (data / "decks").iterdir())
    style = _deck_style()

    def fresh(name):
        d = tmp_path / name
        d.mkdir()
        for r in range(9):
            (d / f"{r}.jpg").write_bytes((rows / f"{r}.jpg").read_bytes())
        return d

    # a duplicate name
    _refused(_cli(["deck", "enroll", "mydeck", "--base", "pirates-bluff", "--rows", str(rows)], data), "NAME")
    # a bad name, an unknown base
    _refused(_cli(["deck", "enroll", "My Deck!", "--base", "pirates-bluff", "--rows", str(rows)], data), "NAME")
    _refused(_cli(["deck", "enroll", "other", "--base", "poker", "--rows", str(rows)], data), "--base")
    # 7 and 9 cards in a photo
    d = fresh("seven")
    cv2.imwrite(str(d / "3.jpg"), row_photo(style, 3, 5, n=7))
    _refused(_cli(["deck", "enroll", "other", "--base", "pirates-bluff", "--rows", str(d)], data), "3.jpg: found 7 cards")
    d = fresh("nine")
    cv2.imwrite(str(d / "5.jpg"), row_photo(style, 5, 6, n=9, letters="ABCDEFGHA"))
    _refused(_cli(["deck", "enroll", "other", "--base", "pirates-bluff", "--rows", str(d)], data), "5.jpg: found 9 cards")
    # an unreadable file
    d = fresh("broken")
    (d / "6.jpg").write_bytes(b"not a jpeg at all")
    _refused(_cli(["deck", "enroll", "other", "--base", "pirates-bluff", "--rows", str(d)], data), "6.jpg: cannot read image")
    # wrong names: a missing photo, an extra one
    d = fresh("missing")
    (d / "8.jpg").rename(d / "eight.jpg")
    _refused(_cli(["deck", "enroll", "other", "--base", "pirates-bluff", "--rows", str(d)], data), "eight.jpg")
    (d / "eight.jpg").unlink()
    _refused(_cli(["deck", "enroll", "other", "--base", "pirates-bluff", "--rows", str(d)], data), "8.jpg: missing")
    _refused(_cli(["deck", "enroll", "other", "--base", "pirates-bluff", "--rows", str(tmp_path / "nope")], data), "--rows")
    _refused(_cli(["deck", "remove", "ghost"], data), "NAME")
    # nothing half-written: the decks folder is as it was (no "other", no temporary folder)
    assert sorted(p.name for p in (data / "decks").iterdir()) == before


def test_teach_an_enrolled_deck_again(enrolled, tmp_path):
    """`deck enroll NAME --again` (the Enroll screen's "Teach again"): new photos of the same deck replace its profile
    once the new one is built. Refused in one line with nothing changed: a deck not enrolled, another base deck, a bad
    photo. Runs before the scan test, which then reads with the profile taught again."""
    from vision.synth.rows import row_photo

    data, rows = enrolled
    deck = data / "decks" / "mydeck"
    before = sorted(p.name for p in (data / "decks").iterdir())
    profile, meta = (deck / "profile.npz").read_bytes(), (deck / "deck.json").read_text()
    again = ["deck", "enroll", "mydeck", "--base", "pirates-bluff", "--again", "--rows"]
    _refused(_cli(["deck", "enroll", "ghost", "--base", "pirates-bluff", "--again", "--rows", str(rows)], data),
             "NAME: no deck named 'ghost' to teach again")
    _refused(_cli(["deck", "enroll", "mydeck", "--base", "standard52", "--again", "--rows", str(rows)], data),
             "--base: deck 'mydeck' was taught on pirates-bluff, not standard52")
    bad = tmp_path / "bad"
    bad.mkdir()
    for r in range(9):
        (bad / f"{r}.jpg").write_bytes((rows / f"{r}.jpg").read_bytes())
    cv2.imwrite(str(bad / "4.jpg"), row_photo(_deck_style(), 4, 9, n=7))
    _refused(_cli(again + [str(bad)], data), "4.jpg: found 7 cards")
    assert (deck / "profile.npz").read_bytes() == profile and (deck / "deck.json").read_text() == meta
    assert sorted(p.name for p in (data / "decks").iterdir()) == before
    # new photos (other seeds: other light and tilt): taught again, the profile replaced, nothing else left behind
    new = _rows(tmp_path / "new", _deck_style(), seed=40)
    res = _cli(again + [str(new)], data)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("taught again deck mydeck (pirates-bluff, 72 cards"), res.stdout
    assert (deck / "profile.npz").read_bytes() != profile
    m = json.loads((deck / "deck.json").read_text())
    assert m["again"] is True and m["name"] == "mydeck" and m["cpu_s"] <= 120
    assert sorted(p.name for p in (data / "decks").iterdir()) == before
    listed = json.loads(_cli(["deck", "list", "--json"], data).stdout)
    assert [(d["name"], d["current"]) for d in listed] == [("mydeck", True)]


def test_enroll_list_scan_remove(enrolled, tmp_path):  # runs after the refusals: it removes the deck
    from vision.synth.scene import make_scene
    from vision.synth.surfaces import HELD_OUT_SURFACES

    data, _rows_dir = enrolled
    meta = json.loads((data / "decks" / "mydeck" / "deck.json").read_text())
    assert meta["cpu_s"] <= 120, meta  # <= 2 min of CPU
    listed = json.loads(_cli(["deck", "list", "--json"], data).stdout)
    assert [d["name"] for d in listed] == ["mydeck"]
    # scenes of the enrolled deck, read with its profile
    style = _deck_style()
    exact = wrong = total = 0
    for k in range(6):
        sc = make_scene(8_100_000 + k, "start", HELD_OUT_SURFACES, deck_style=style)
        img = tmp_path / f"s{k}.jpg"
        cv2.imwrite(str(img), sc.image)
        res = _cli(["scan", str(img), "--deck", "mydeck", "--json", "--first-bidder"], data)
        assert res.returncode == 0, res.stderr
        out = json.loads(res.stdout)
        assert out["deck"] == "mydeck"
        for g in (c for c in sc.cards if c.card_visible >= 0.97):
            total += 1
            hits = [c for c in out["cards"] if c["kind"] == "card"
                    and cv2.pointPolygonTest(g.quad.reshape(-1, 1, 2), tuple(np.mean(c["corners"], 0)), False) >= 0]
            if hits and hits[0]["card"] == g.code:
                exact += 1
            elif hits and hits[0]["card"] is not None:
                wrong += 1
        fb = out["first_bidder"]
        if "position" in fb:  # named: by the lowest card, or by its rank alone
            from companion.decks.pirates72 import PBCard

            gmin = min((c for c in sc.cards if c.card_visible >= 0.97), key=lambda g: PBCard(g.rank, g.letter))
            assert fb["card"] in (gmin.code, None) and fb["rank"] == gmin.rank and fb["letter"] in (gmin.letter, None)
    assert wrong == 0
    assert exact >= 0.9 * total, (exact, total)
    # a profile taught to an earlier corner reader (other pooled features) is never used: refused in one line,
    # listed as to be taught again
    import shutil

    old = data / "decks" / "olddeck"
    shutil.copytree(data / "decks" / "mydeck", old)
    m = json.loads((old / "deck.json").read_text())
    m["reader"] = "0" * 16
    (old / "deck.json").write_text(json.dumps(m))
    _refused(_cli(["scan", str(tmp_path / "s0.jpg"), "--deck", "olddeck", "--json"], data), "--deck olddeck: taught to an earlier")
    listed = {d["name"]: d["current"] for d in json.loads(_cli(["deck", "list", "--json"], data).stdout)}
    assert listed == {"mydeck": True, "olddeck": False}
    assert _cli(["deck", "list"], data).stdout.splitlines()[1].endswith(
        "\tteach again: taught to an earlier camera reader (`pirate-table deck enroll olddeck --base pirates-bluff "
        "--rows DIR --again`)")
    assert _cli(["deck", "remove", "olddeck"], data).returncode == 0
    res = _cli(["deck", "remove", "mydeck"], data)
    assert res.returncode == 0
    assert json.loads(_cli(["deck", "list", "--json"], data).stdout) == []
    # an unknown deck is refused on scan
    _refused(_cli(["scan", str(tmp_path / "s0.jpg"), "--deck", "mydeck", "--json"], data), "--deck")
