"""Training cards whose letter is a small letter ("a" for A): hand-lettered decks and faces whose capitals are
small letters; and (session 57) the same checks for reshaped glyphs (``vision.decks.render.reshaped``). Only the
train split's cards get them; calibration crops stay as their families draw them."""

from __future__ import annotations

import numpy as np
import pytest

from vision.decks.render import FaceStyle, render_card


@pytest.mark.parametrize("field", ["lower_letter", "reshape"])
def test_a_lower_letter_or_reshaped_face_differs_in_its_index_and_nothing_else(field):
    st = FaceStyle(seed=3)
    up, _ = render_card(2, "B", st, 4.0)
    lo, _ = render_card(2, "B", FaceStyle(seed=3, **{field: True}), 4.0)
    assert up.shape == lo.shape
    diff = np.abs(up.astype(int) - lo.astype(int)).sum(2) > 30
    assert diff.any()  # the letter differs ...
    h = up.shape[0]
    assert not diff[int(h * 0.35):int(h * 0.65), :].any()  # ... only in the two index corners
    assert diff[: h // 3].any() and diff[-h // 3:].any()


def test_calibration_crops_never_get_small_letters(monkeypatch):
    import vision.corner as vc
    import vision.fonts

    def refuse(path):
        raise AssertionError("a calibration card asked for small letters")

    monkeypatch.setattr(vision.fonts, "draws_lower", refuse)
    C, R, L = vc._crops_chunk((2000, 3, "calibration", False))
    assert len(C) == 12


@pytest.mark.parametrize("share, field", [("LOWER_SHARE", "lower_letter"), ("RESHAPE_SHARE", "reshape")])
def test_train_crops_get_small_letters_or_reshaped_glyphs_at_their_share(monkeypatch, share, field):
    """Small letters (``LOWER_SHARE``) and reshaped glyphs (``RESHAPE_SHARE``, ``vision.decks.render.reshaped``)."""
    import vision.corner as vc
    import vision.decks.render as rd
    from vision.fonts import split_fonts

    if not split_fonts("train"):
        pytest.fail("no TrueType fonts installed (scripts/system-deps.sh train)")
    seen = []
    orig = rd.render_card

    def spy(rank, letter, style, ppm):
        seen.append(getattr(style, field))
        return orig(rank, letter, style, ppm)

    monkeypatch.setattr(rd, "render_card", spy)
    monkeypatch.setattr(vc, share, 0.5)
    vc._crops_chunk((7000, 40, "train", False))
    assert 8 <= sum(seen) <= 32  # about half (small letters: where the face draws them)
    seen.clear()
    a = vc._card_sample(np.random.default_rng(1), split_fonts("train"))
    b = vc._card_sample(np.random.default_rng(1), split_fonts("train"), lower_share=0.0, reshape_share=0.0)
    assert seen == [False, False] and np.array_equal(a[0], b[0])  # no share: the same card as before
