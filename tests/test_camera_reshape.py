"""Training cards whose glyphs are redrawn at random (``vision.decks.render.reshaped``): type designs no font file
draws (bent strokes, heavier or lighter weights, pixel and dot-matrix faces). Only the train split's cards get them,
a glyph keeps its strokes and holes, and no share draws nothing more."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.decks.render import FaceStyle, _dots, _shape_count, render_card, reshaped


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
        if cv2.connectedComponents((out > 127).astype(np.uint8))[0] > 8:  # the dot-matrix look: its grid was checked as the pixel look (next test)
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


def test_a_reshaped_face_differs_only_in_its_two_index_corners():
    st = FaceStyle(seed=5)
    a, qa = render_card(3, "G", st, 4.0)
    b, qb = render_card(3, "G", FaceStyle(seed=5, reshape=True), 4.0)
    assert a.shape == b.shape
    diff = np.abs(a.astype(int) - b.astype(int)).sum(2) > 30
    assert diff.any()
    h = a.shape[0]
    assert not diff[int(h * 0.35):int(h * 0.65), :].any()
    assert diff[: h // 3].any() and diff[-h // 3:].any()


def test_calibration_crops_are_never_reshaped(monkeypatch):
    import vision.corner as vc
    import vision.decks.render as rd

    def refuse(tile, rng):
        raise AssertionError("a calibration card was reshaped")

    monkeypatch.setattr(rd, "reshaped", refuse)
    monkeypatch.setattr(vc, "RESHAPE_SHARE", 1.0)
    C, R, L = vc._crops_chunk((2000, 3, "calibration", False))
    assert len(C) == 12


def test_train_crops_are_reshaped_at_their_share_and_no_share_draws_nothing_more(monkeypatch):
    import vision.corner as vc
    import vision.decks.render as rd
    from vision.fonts import split_fonts

    seen = []
    orig = rd.render_card

    def spy(rank, letter, style, ppm):
        seen.append(style.reshape)
        return orig(rank, letter, style, ppm)

    monkeypatch.setattr(rd, "render_card", spy)
    monkeypatch.setattr(vc, "RESHAPE_SHARE", 0.5)
    vc._crops_chunk((7000, 40, "train", False))
    assert 10 <= sum(seen) <= 30  # about half
    seen.clear()
    fonts = split_fonts("train")
    a = vc._card_sample(np.random.default_rng(1), fonts, lower_share=0.1)
    b = vc._card_sample(np.random.default_rng(1), fonts, lower_share=0.1, reshape_share=0.0)
    assert seen == [False, False] and np.array_equal(a[0], b[0])  # no share: the same card as before


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
