"""Suited training cards whose A is set as a one-storey small a (U+0251, vision.suited_reader.ALPHA_SHARE, session
87): faces whose capitals are small letters draw A so, and the committed reader read them as Q. Only the train
split's single cards whose A is set small get it, in a face whose font file draws the glyph; at share 0 no random
number is drawn for it, so earlier data seeds make the same views."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import vision.decks.suited as ds
import vision.suited_reader as sr

ROOT = Path(__file__).resolve().parent.parent


def _spy(monkeypatch):
    seen = []
    orig = ds.render_suited

    def spy(rank_text, pips, court, symbol, ink, style, *a, **k):
        seen.append((rank_text, style))
        return orig(rank_text, pips, court, symbol, ink, style, *a, **k)

    monkeypatch.setattr(ds, "render_suited", spy)
    return seen


def _train_fonts():
    from vision.fonts import split_fonts

    fonts = split_fonts("train")
    if not fonts:
        pytest.fail("no TrueType fonts installed (scripts/system-deps.sh train)")
    return fonts


def test_every_small_a_is_one_storey_at_share_1_where_the_face_draws_it(monkeypatch):
    from vision.fonts import draws_lower

    _train_fonts()
    seen = _spy(monkeypatch)
    sr._suited_chunk((8700, 300, "train", "standard52", 1.0, (12,), 0.5, 0.0, None, 1.0))  # A: rank index 12
    alpha = [s for t, s in seen if t == sr.ALPHA]
    plain = [s for t, s in seen if t == "a"]
    assert len(alpha) >= 5  # the train split has faces that draw it
    assert all(s.font_path is not None and draws_lower(s.font_path, sr.ALPHA) for s in alpha)
    assert plain and all(s.font_path is None or not draws_lower(s.font_path, sr.ALPHA) for s in plain)
    assert not any(t == "A" and s.font_path and draws_lower(s.font_path, "a") for t, s in seen)  # all set small
    assert {t for t, _s in seen if t.isalpha()} <= {"a", sr.ALPHA, "j", "q", "k", "J", "Q", "K", "A"}


def test_no_alpha_without_a_share_nor_in_other_splits(monkeypatch):
    _train_fonts()
    seen = _spy(monkeypatch)
    sr._suited_chunk((8710, 150, "train", "standard52", 1.0, (12,), 0.5))  # ALPHA_SHARE: 0
    sr._suited_chunk((8720, 60, "calibration", "standard52", 1.0, (12,), 0.5, 0.0, None, 1.0))  # ignored there
    monkeypatch.setattr(sr, "ALPHA_SHARE", 1.0)
    sr._suited_chunk((8730, 60, "calibration", "island54"))
    assert sum(t in ("a", "A") for t, _s in seen) >= 20
    assert not any(t == sr.ALPHA for t, _s in seen)


def test_the_module_share_reaches_a_chunk_given_none(monkeypatch):
    _train_fonts()
    seen = _spy(monkeypatch)
    monkeypatch.setattr(sr, "ALPHA_SHARE", 1.0)  # what vision.suited_gpu's workers are given (WORKER_SETTINGS)
    monkeypatch.setattr(sr, "LOWER_RANK_SHARE", 1.0)
    sr._suited_chunk((8700, 300, "train", "standard52"))
    assert any(t == sr.ALPHA for t, _s in seen)
    import vision.suited_gpu as sg

    assert "ALPHA_SHARE" in sg.WORKER_SETTINGS["vision.suited_reader"]  # set before a GPU run's pool, carried to it
    assert sr.ALPHA in sg.CHARS  # and its fonts are packed with the glyph


def test_share_0_makes_the_same_views_as_before_the_option():
    _train_fonts()
    base = (8740, 40, "train", "standard52", 1.0, (12,), 0.5, 0.0)
    a, b = sr._suited_chunk(base), sr._suited_chunk((*base, None, 0.0))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    c = sr._suited_chunk((*base, None, 1.0))
    assert not np.array_equal(a[0], c[0])  # the share changes some view (and the test can tell)


def test_the_share_changes_only_small_a_cards(monkeypatch):
    """Any other card is the same card, drawn from the same random numbers, whatever the share; a small A is set
    one-storey exactly where its face draws the glyph."""
    from vision.decks.faces import faces_for
    from vision.fonts import draws_lower

    codes, faces, fonts = sr.deck_codes("standard52"), faces_for("standard52"), _train_fonts()
    seen = _spy(monkeypatch)
    small_a = alpha = others = 0
    for seed in range(80):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        ca = sr.drawn_card(a, codes, faces, fonts, lower_share=1.0, focus=(12,), focus_share=0.5)
        cb = sr.drawn_card(b, codes, faces, fonts, lower_share=1.0, focus=(12,), focus_share=0.5, alpha_share=1.0)
        text_b, style_b = seen[-1]
        text = faces.face(codes.cards[ca[0] * len(codes.suits) + ca[1]], ca[2])[0]
        assert (ca[0], ca[1], ca[2]) == (cb[0], cb[1], cb[2])  # the card and its face style come first
        if text == "A" and sr.small_rank(ca[2], "A"):
            small_a += 1
            one_storey = ca[2].font_path is not None and draws_lower(ca[2].font_path, sr.ALPHA)
            assert text_b == (sr.ALPHA if one_storey else "a")
            alpha += one_storey
        else:
            others += 1
            assert text_b != sr.ALPHA
            assert np.array_equal(ca[5], cb[5]) and a.random() == b.random()
    assert alpha and small_a > alpha and others


def test_the_recipe_options_refuse_nonsense_in_one_line(tmp_path):
    for mod, args in (("vision.suited_reader", ["--deck", "standard52", "--smoke", "--out", str(tmp_path / "m"),
                                                "--work", str(tmp_path / "w")]),
                      ("vision.suited_gpu", ["train", str(tmp_path / "pack"), str(tmp_path / "m"), "--deck",
                                             "standard52"])):
        for bad in ("1.5", "nan", "-0.1", "\u0661"):
            r = subprocess.run([sys.executable, "-m", mod, *args, "--alpha-share", bad], cwd=ROOT,
                               capture_output=True, text=True, timeout=120)
            assert r.returncode == 2, (mod, bad, r.stderr)
            assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r.stderr
            assert r.stderr.startswith("pirate-table: error: "), r.stderr
            assert "--alpha-share" in r.stderr, r.stderr
        assert not (tmp_path / "m").exists() and not (tmp_path / "w").exists()
