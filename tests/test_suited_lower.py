"""Suited training cards whose letter rank is set small ("a" for A, "q" for Q): hand-lettered decks and faces whose
capitals are small letters (vision.suited_reader.LOWER_RANK_SHARE). Only the train split's single cards get them;
calibration views and every scene stay as their families draw them."""

from __future__ import annotations

import numpy as np
import pytest

import vision.decks.suited as ds
import vision.suited_reader as sr


def _spy(monkeypatch):
    seen = []
    orig = ds.render_suited

    def spy(rank_text, *a, **k):
        seen.append(rank_text)
        return orig(rank_text, *a, **k)

    monkeypatch.setattr(ds, "render_suited", spy)
    return seen


def _letters(seen):
    return [t for t in seen if t.isalpha()]


def test_train_cards_set_letter_ranks_small_at_their_share_and_never_a_number(monkeypatch):
    from vision.fonts import split_fonts

    if not split_fonts("train"):
        pytest.fail("no TrueType fonts installed (scripts/system-deps.sh train)")
    seen = _spy(monkeypatch)
    sr._suited_chunk((7100, 120, "train", "standard52", 0.5))
    letters = _letters(seen)
    small = [t for t in letters if t.islower()]
    assert len(letters) >= 20
    assert 0.2 * len(letters) <= len(small) <= 0.8 * len(letters)  # about half, where the face draws them
    assert set(small) <= {"a", "j", "q", "k"}
    assert {t for t in seen if not t.isalpha()} <= {str(n) for n in range(2, 11)}  # "10" and the digits as they were


def test_no_share_and_other_splits_draw_no_small_rank(monkeypatch):
    seen = _spy(monkeypatch)
    sr._suited_chunk((7200, 60, "train", "island54", 0.0))
    sr._suited_chunk((7300, 60, "calibration", "standard52", 1.0))  # a share asked of a calibration chunk: ignored
    monkeypatch.setattr(sr, "LOWER_RANK_SHARE", 1.0)
    sr._suited_chunk((7400, 60, "calibration", "island54"))
    assert len(_letters(seen)) >= 20 and not any(t.islower() for t in seen)


def test_the_share_takes_a_random_number_only_for_a_letter_rank():
    """A number card is the same card, drawn from the same random numbers, whatever the share: the share's draw is
    taken only where a rank is a letter (and at share 0 never: the views of earlier data seeds are made again as
    they were, checked against the code before the share by hash in session 47)."""
    from vision.decks.faces import faces_for
    from vision.fonts import split_fonts

    codes, faces, fonts = sr.deck_codes("standard52"), faces_for("standard52"), split_fonts("train")
    numbers = letters = 0
    for seed in range(40):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        ca = sr.drawn_card(a, codes, faces, fonts, lower_share=0.0)
        cb = sr.drawn_card(b, codes, faces, fonts, lower_share=1.0)
        if faces.face(codes.cards[ca[0] * len(codes.suits) + ca[1]], ca[2])[0].isalpha():
            letters += 1
            assert a.random() != b.random()  # the share's draw was taken at 1, not at 0
        else:
            numbers += 1
            assert np.array_equal(ca[5], cb[5]) and a.random() == b.random()
    assert numbers and letters


def test_a_face_without_the_small_letters_keeps_its_capitals(monkeypatch):
    import vision.fonts

    monkeypatch.setattr(vision.fonts, "draws_lower", lambda path, chars="": False)
    seen, styles = [], []
    orig = ds.render_suited

    def spy(rank_text, pips, court, symbol, ink, style, *a, **k):
        seen.append(rank_text)
        styles.append(style)
        return orig(rank_text, pips, court, symbol, ink, style, *a, **k)

    monkeypatch.setattr(ds, "render_suited", spy)
    sr._suited_chunk((7500, 200, "train", "standard52", 1.0))
    small = [s.font_path for t, s in zip(seen, styles) if t.isalpha() and t.islower()]
    assert small and all(p is None for p in small)  # only the Hershey faces, which draw every small letter
    assert any(t.isalpha() and t.isupper() and s.font_path for t, s in zip(seen, styles))


def test_a_small_rank_changes_the_index_and_nothing_else_on_a_number_card():
    from vision.decks.faces import faces_for

    faces = faces_for("standard52")
    st = ds.SuitedStyle(seed=3, centre="pips")
    card = next(c for c in sr.deck_codes("standard52").cards if faces.face(c, st)[0] == "A")  # an ace
    text, pips, court, symbol, ink = faces.face(card, st)
    assert text == "A" and pips == 1 and not court
    up, _ = ds.render_suited(text, pips, court, symbol, ink, st, 4.0)
    lo, _ = ds.render_suited("a", pips, court, symbol, ink, st, 4.0)
    diff = np.abs(up.astype(int) - lo.astype(int)).sum(2) > 30
    h = up.shape[0]
    assert diff[: h // 4].any() and diff[-h // 4:].any()  # both indices differ ...
    assert not diff[int(h * 0.3): int(h * 0.7)].any()  # ... and the big ace symbol in the middle does not
