"""Deck renderer and the printable deck PDF (fpdf2; round trips in test_print_decks.py)."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from vision.decks.render import CARD_SIZES_MM, PRINT_STYLE, random_style, render_card

ROOT = Path(__file__).resolve().parent.parent


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), rank=st.integers(0, 8), letter=st.sampled_from("ABCDEFGH"))
def test_index_quads_sit_in_opposite_corners(seed, rank, letter):
    style = random_style(np.random.default_rng(seed))
    img, (q1, q2) = render_card(rank, letter, style, 4.0)
    h, w = img.shape[:2]
    wmm, hmm = CARD_SIZES_MM[style.size]
    assert abs(w - wmm * 4) <= 1 and abs(h - hmm * 4) <= 1
    # top-left index in the top-left quarter, the other its 180-degree turn
    assert q1[:, 0].max() < w / 2 and q1[:, 1].max() < h / 2
    assert np.allclose(q2, np.array([w, h]) - q1)
    # the index quad holds ink (the rank/letter), darker than the paper around the card centre edge
    x0, y0 = q1.min(0).astype(int)
    x1, y1 = q1.max(0).astype(int)
    assert img[max(y0, 0) : y1, max(x0, 0) : x1].min() < 150


def test_same_style_same_pixels_and_cards_differ():
    a, _ = render_card(3, "C", PRINT_STYLE)
    b, _ = render_card(3, "C", PRINT_STYLE)
    c, _ = render_card(3, "D", PRINT_STYLE)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_print_deck_writes_a_72_card_pdf(tmp_path):
    """The old form (`--deck pirates-bluff -o`) still works; the page-by-page checks are in test_print_decks.py."""
    out = tmp_path / "deck.pdf"
    r = subprocess.run([sys.executable, "-m", "companion", "print-deck", "--deck", "pirates-bluff", "-o", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "72 cards" in r.stdout and "8 pages" in r.stdout
    data = out.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    assert len(re.findall(rb"/Type\s*/Page\b", data)) == 8
    assert [p.name for p in tmp_path.iterdir()] == ["deck.pdf"]  # no temporary file left beside it


def test_print_deck_bad_folder_is_a_clean_error(tmp_path):
    r = subprocess.run([sys.executable, "-m", "companion", "print-deck", "-o", str(tmp_path / "no" / "deck.pdf")],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.startswith("pirate-table: error:") and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "no").exists()
