"""Training cards whose glyphs are redrawn at random (``vision.decks.render.reshaped``): type designs no font file
draws (bent strokes, heavier or lighter weights, pixel and dot-matrix faces). Only the train split's cards get them,
a glyph keeps its strokes and holes, and no share draws nothing more."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.decks.render import _dots, _shape_count, reshaped


def _glyph_tile(text: str) -> np.ndarray:
    tile = np.zeros((120, 100), np.uint8)
    cv2.putText(tile, text, (14, 100), cv2.FONT_HERSHEY_SIMPLEX, 3.0, 255, 9, cv2.LINE_AA)
    return tile


@pytest.mark.parametrize("text", ["8", "4", "A", "g", "0", "H"])
def test_a_reshaped_glyph_keeps_its_strokes_and_holes_and_changes_its_shape(text):
    tile = _glyph_tile(text)
    shape = _shape_count(tile)
    changed = dotted = 0
    for seed in range(40):
        out = reshaped(tile, np.random.default_rng(seed))
        # the dot-matrix look: its grid is what was checked, drawn as square pixels (dots: the next test)
        if cv2.connectedComponents((out > 127).astype(np.uint8))[0] > 8:
            dotted += 1
            continue
        assert _shape_count(out) == shape, (text, seed)
        a = cv2.resize(out[10:-10, 10:-10], tile.shape[::-1])
        changed += int(np.abs(a.astype(int) - tile.astype(int)).mean() > 2)
    assert dotted <= 8
    assert changed >= 25  # nearly every other draw is another design


def test_a_dot_matrix_glyph_has_one_dot_per_cell_that_is_on():
    on = np.zeros((9, 6), np.uint8)
    on[1:8, 1] = on[1, 1:5] = on[4, 1:4] = 1  # an F on the grid
    for radius in (0.3, 0.5):
        d = _dots(on, 8, radius)
        assert d.shape == (72, 48)
        n, _lab = cv2.connectedComponents((d > 127).astype(np.uint8))
        assert n - 1 == on.sum()
        assert not d[:8].any() and not d[:, :8].any()  # nothing where the grid is off


def test_the_shape_count_sees_a_filled_hole_and_a_broken_stroke():
    o = np.zeros((120, 100), np.uint8)
    cv2.ellipse(o, (50, 60), (30, 42), 0, 0, 360, 255, 9)  # an O: one stroke round one hole
    assert _shape_count(o) == (1, 1)
    filled = cv2.dilate(o, np.ones((41, 41), np.uint8))
    assert _shape_count(filled) == (1, 0)
    broken = o.copy()
    broken[:, 45:60] = 0
    assert _shape_count(broken)[0] == 2


def test_calibration_crops_are_never_reshaped(monkeypatch):
    import vision.corner as vc
    import vision.decks.render as rd

    def refuse(tile, rng):
        raise AssertionError("a calibration card was reshaped")

    monkeypatch.setattr(rd, "reshaped", refuse)
    monkeypatch.setattr(vc, "RESHAPE_SHARE", 1.0)
    C, R, L = vc._crops_chunk((2000, 3, "calibration", False))
    assert len(C) == 12


def test_suited_ranks_are_reshaped_in_train_cards_only_and_no_share_draws_nothing_more(monkeypatch):
    import vision.decks.render as rd
    import vision.suited_reader as sr
    from vision.decks.faces import faces_for
    from vision.fonts import split_fonts

    calls = []
    orig = rd.reshaped

    def spy(tile, rng):
        calls.append(tile.shape)
        return orig(tile, rng)

    monkeypatch.setattr(rd, "reshaped", spy)
    sr._suited_chunk((3000, 4, "calibration", "standard52", 0.0, (), 0.0, 1.0))
    assert calls == []  # calibration views stay as their families draw them
    sr._suited_chunk((3000, 4, "train", "standard52", 0.0, (), 0.0, 1.0))
    assert len(calls) >= 4  # every train card's rank (and its big middle rank, where it has one)
    calls.clear()
    codes, faces, fonts = sr.deck_codes("standard52"), faces_for("standard52"), split_fonts("train")
    a = sr.drawn_card(np.random.default_rng(4), codes, faces, fonts)
    b = sr.drawn_card(np.random.default_rng(4), codes, faces, fonts, reshape_share=0.0)
    assert calls == [] and np.array_equal(a[5], b[5])
