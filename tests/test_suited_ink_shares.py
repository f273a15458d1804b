"""The share of suited training cards in another suit's ink (``--other-suit-share``, session 75): the train split's
single cards only; without it the very views of the recipe before it; with it, the views session 75's kept
standard52 round was trained on (INK_SHARES set in its process)."""

from __future__ import annotations

import numpy as np
import pytest

import vision.suited_reader as sr


def _needs_fonts():
    from vision.fonts import split_fonts

    if not split_fonts("train"):
        pytest.fail("no TrueType fonts installed (scripts/system-deps.sh train)")


def _same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b))


def test_the_shares_sum_to_one_and_a_bad_share_is_refused():
    assert sr.ink_shares(0.15) == sr.INK_SHARES
    assert sr.ink_shares(0.05) == (0.65, 0.20, 0.05, 0.10)
    assert abs(sum(sr.ink_shares(0.7)) - 1) < 1e-9 and sr.ink_shares(0.7)[0] == 0
    for bad in (-0.01, 0.71, float("nan"), "0.1"):
        with pytest.raises(ValueError):
            sr.ink_shares(bad)


def test_no_share_makes_the_views_of_before_and_a_share_those_of_the_module_setting(monkeypatch):
    _needs_fonts()
    base = (75_100, 30, "train", "standard52", 0.1, (), 0.0, 0.0)
    plain = sr._suited_chunk(base)
    assert _same(plain, sr._suited_chunk((*base, 0.15)))  # the default mix, named
    less = sr._suited_chunk((*base, 0.05))
    assert not _same(plain, less)
    monkeypatch.setattr(sr, "INK_SHARES", (0.65, 0.20, 0.05, 0.10))  # how session 75's run made its views
    assert _same(less, sr._suited_chunk(base))


def test_the_share_is_the_train_splits_only():
    _needs_fonts()
    base = (75_200, 20, "calibration", "standard52", 0.0, (), 0.0, 0.0)
    assert _same(sr._suited_chunk(base), sr._suited_chunk((*base, 0.0)))


def test_the_shares_given_are_the_ones_drawn():
    """All print: every card keeps its printed ink; all another suit's: none does (palette 1 has four inks)."""
    from vision.decks.faces import faces_for
    from vision.decks.suited import SuitedStyle

    faces = faces_for("standard52")
    style = SuitedStyle(palette=1)
    printed = (20.0, 20.0, 20.0)  # palette 1's spade
    rng = np.random.default_rng(75)
    assert all(sr._ink(rng, faces, style, printed, (1.0, 0.0, 0.0, 0.0)) == (printed, False) for _ in range(50))
    others = [sr._ink(rng, faces, style, printed, (0.0, 0.0, 1.0, 0.0)) for _ in range(50)]
    assert all(not grey and max(abs(x - y) for x, y in zip(ink, printed)) > 30 for ink, grey in others)


@pytest.mark.parametrize("option,bad", [("--other-suit-share", b) for b in ("-0.1", "0.8", "nan", "\u0660.1", "some")]
                         + [("--suit-weight", b) for b in ("0", "-1", "8.5", "nan", "\u0661", "heavy")])
def test_the_recipe_refuses_a_bad_share_in_one_line_and_writes_nothing(tmp_path, capsys, option, bad):
    """(and a bad suit weight, session 92's ``--suit-weight``: more than 0, at most 8)"""
    out = tmp_path / "out"
    try:
        rc = sr.main(["--deck", "standard52", option, bad, "--out", str(out), "--work", str(tmp_path / "w")])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("pirate-table: error: ") and option in err[0]
    assert not out.exists() and not (tmp_path / "w").exists()


def test_the_recipe_records_its_share(tmp_path):
    """(and the suit head's loss weight, session 92's ``--suit-weight``: one smoke run for both)"""
    import json

    rc = sr.main(["--deck", "standard52", "--smoke", "--other-suit-share", "0.05", "--suit-weight", "2",
                  "--out", str(tmp_path / "out"), "--work", str(tmp_path / "w")])
    rec = json.loads((tmp_path / "out" / "standard52_reader.json").read_text())["recipe"]
    assert rc == 0 and rec["other_suit_share"] == 0.05 and rec["suit_weight"] == 2
