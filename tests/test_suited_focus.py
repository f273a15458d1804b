"""Suited training cards drawn more often from ranks a reader confuses (``--focus-ranks``, session 55): the train
split's single cards only, and with no focus the views are made from the same random numbers as before."""

from __future__ import annotations

import numpy as np
import pytest

import vision.decks.suited as ds
import vision.suited_reader as sr


def _ranks_drawn(monkeypatch, args):
    seen = []
    orig = ds.render_suited
    monkeypatch.setattr(ds, "render_suited", lambda rank_text, *a, **k: seen.append(rank_text) or orig(rank_text, *a, **k))
    sr._suited_chunk(args)
    return seen


def test_focus_ranks_are_read_from_the_deck_and_bad_lists_refused():
    assert sr.focus_ranks("standard52", "Q,9,J,A") == (10, 7, 9, 12)
    assert sr.focus_ranks("island54", "Q,K") == (7, 8)
    for bad in ("", "Q,,9", "Q,Q", "1", "q", "Q,\u0669", "10 ", "K\n"):
        with pytest.raises(ValueError):
            sr.focus_ranks("standard52", bad)


def test_a_full_share_draws_only_the_focus_ranks_and_only_for_the_train_split(monkeypatch):
    from vision.fonts import split_fonts

    if not split_fonts("train"):
        pytest.fail("no TrueType fonts installed (scripts/system-deps.sh train)")
    focus = sr.focus_ranks("standard52", "Q,9")
    seen = _ranks_drawn(monkeypatch, (7500, 40, "train", "standard52", 0.0, focus, 1.0))
    assert len(seen) == 40 and set(seen) == {"Q", "9"}
    seen = _ranks_drawn(monkeypatch, (7500, 40, "calibration", "standard52", 0.0, focus, 1.0))  # ignored there
    assert len(set(seen)) > 2


def test_no_focus_takes_no_random_number():
    """At share 0 a card is drawn from the same random numbers as before the option (earlier data seeds' views are
    made again as they were)."""
    from vision.decks.faces import faces_for
    from vision.fonts import split_fonts

    codes, faces, fonts = sr.deck_codes("standard52"), faces_for("standard52"), split_fonts("train")
    for seed in range(10):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        ca = sr.drawn_card(a, codes, faces, fonts)
        cb = sr.drawn_card(b, codes, faces, fonts, focus=(10,), focus_share=0.0)
        assert ca[:2] == cb[:2] and np.array_equal(ca[5], cb[5]) and a.random() == b.random()


@pytest.mark.parametrize("argv, says", [
    (["--focus-ranks", "Q,1"], "--focus-ranks: '1': not a rank of standard52"),
    (["--focus-ranks", "Q,Q"], "--focus-ranks: 'Q,Q': a rank named twice"),
    (["--focus-ranks", ""], "--focus-ranks: '': not a rank"),
    (["--focus-ranks", "Q", "--focus-share", "0"], "--focus-share"),
    (["--focus-ranks", "Q", "--focus-share", "nan"], "--focus-share"),
    (["--focus-share", "0.3"], "--focus-share: needs --focus-ranks"),
])
def test_the_recipe_refuses_a_bad_focus_in_one_line_and_writes_nothing(tmp_path, capsys, argv, says):
    out = tmp_path / "out"
    try:
        rc = sr.main(["--deck", "standard52", "--out", str(out), "--work", str(tmp_path / "w"), *argv])
    except SystemExit as e:  # the argument parser's own refusal (one line, exit 2)
        rc = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("pirate-table: error: ") and says in err[0]
    assert not out.exists() and not (tmp_path / "w").exists()


def test_the_recipe_records_its_focus(tmp_path):
    """A smoke run of the recipe with a focus writes the ranks and share into the reader's recipe record."""
    import json

    rc = sr.main(["--deck", "standard52", "--smoke", "--focus-ranks", "Q,9", "--focus-share", "0.5",
                  "--out", str(tmp_path / "out"), "--work", str(tmp_path / "w")])
    rec = json.loads((tmp_path / "out" / "standard52_reader.json").read_text())["recipe"]
    assert rc == 0 and rec["focus_ranks"] == ["Q", "9"] and rec["focus_share"] == 0.5
