"""The corner reader's training cards drawn more often from ranks and letters it confuses (``--focus-ranks``,
``--focus-letters``, session 61): the train split only, and with no focus the cards are made from the same random
numbers as before (earlier data seeds' crops are made again as they were)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import vision.corner as vc


def _train_fonts():
    from vision.fonts import split_fonts

    fonts = split_fonts("train")
    if not fonts:
        pytest.fail("no TrueType fonts installed (scripts/system-deps.sh train)")
    return fonts


def test_focus_lists_are_read_and_bad_ones_refused():
    assert vc.focus_codes("0,8,3,2", "A,H") == ((0, 8, 3, 2), (0, 7))
    assert vc.focus_codes(None, "H") == ((), (7,))
    assert vc.focus_codes("5", None) == ((5,), ())
    for ranks, letters in [("9", None), ("0,,8", None), ("", None), ("0,0", None), ("\u0660", None), (None, "a"),
                           (None, "A,A"), (None, "I"), (None, "A "), ("1\n", None)]:
        with pytest.raises(ValueError):
            vc.focus_codes(ranks, letters)


def test_no_focus_takes_no_random_number():
    fonts = _train_fonts()
    for seed in range(6):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        x = vc._card_sample(a, fonts)
        y = vc._card_sample(b, fonts, focus=((), ()), focus_share=0.3)
        assert x[2:] == y[2:] and np.array_equal(x[0], y[0]) and a.random() == b.random()


def test_a_full_share_draws_only_the_focus_and_only_for_the_train_split(monkeypatch):
    _train_fonts()
    monkeypatch.setattr(vc, "FOCUS_RANKS", (0, 8))
    monkeypatch.setattr(vc, "FOCUS_LETTERS", (7,))
    monkeypatch.setattr(vc, "FOCUS_SHARE", 1.0)
    _C, R, L = vc._crops_chunk((4242, 12, "train", False))
    upright = R != 9  # each card's two upright corners carry its code; the two turned ones read "no index"
    assert set(R[upright]) <= {0, 8} and set(L[upright]) == {7}
    _C, R, L = vc._crops_chunk((4242, 12, "calibration", False))  # the calibration split is never focused
    assert len(set(R[R != 9])) > 2


@pytest.mark.parametrize("argv, says", [
    (["--focus-ranks", "0,9"], "--focus-ranks: '9': not a rank (0-8)"),
    (["--focus-letters", "A,A"], "--focus-letters: 'A,A': named twice"),
    (["--focus-ranks", "0,8", "--focus-letters", "A,I"], "--focus-letters: 'I': not a letter (A-H)"),
    (["--focus-share", "0.3"], "--focus-share: needs --focus-ranks or --focus-letters"),
    (["--focus-ranks", "0", "--focus-share", "0"], "--focus-share"),
    (["--focus-ranks", "0", "--focus-share", "nan"], "--focus-share"),
])
def test_the_train_command_refuses_a_bad_focus_in_one_line_and_writes_nothing(tmp_path, capsys, argv, says):
    from vision.corner_gpu import main

    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "fonts.json").write_text("[]")
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as e:
        main(["train", str(tmp_path / "pack"), str(out), "--device", "cpu", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and err[0].startswith("pirate-table: error: ") and says in err[0], err
    assert not out.exists()
