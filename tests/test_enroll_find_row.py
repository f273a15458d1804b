"""How enrollment counts the cards of a photo (vision.enroll.find_row): a card cut by the photo's edge and a lamp's
glare are not cards to teach, and a row one card short is counted short on every frame of a camera's noise."""

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not (ROOT / "models" / "corner_reader.onnx").exists(), reason="no corner reader model")


@pytest.fixture(scope="module")
def scanner():
    from vision.detect import MODELS, Scanner

    return Scanner("ort", MODELS, reader="corner", threads=1)


@pytest.fixture(scope="module")
def style():
    from companion.ui.camservice import demo_deck_style

    return demo_deck_style("pirates-bluff")


def test_tilt_folds_every_side_of_a_rectangle_to_one_angle():
    from vision.enroll import _tilt

    sq = np.array([[0, 0], [10, 0], [10, 14], [0, 14]], np.float32)
    for k in range(4):
        assert _tilt(np.roll(sq, k, axis=0)) == pytest.approx(0.0, abs=1e-6)
    c, s = np.cos(np.radians(30)), np.sin(np.radians(30))
    turned = sq @ np.array([[c, s], [-s, c]], np.float32)
    assert all(_tilt(np.roll(turned, k, axis=0)) == pytest.approx(30.0, abs=1e-4) for k in range(4))
    diamond = np.array([[50, 0], [100, 50], [50, 100], [0, 50]], np.float32)
    assert abs(_tilt(diamond)) == pytest.approx(45.0, abs=1e-6)


def test_a_card_cut_by_the_photos_edge_is_not_counted(scanner, style):
    from companion.errors import PirateTableError
    from vision.enroll import _row_cards, find_row
    from vision.synth.rows import row_photo

    img = row_photo(style, 2, 0)
    whole = find_row(scanner, img)
    assert len(whole) == 8
    right = max(float(q[:, 0].max()) for q in whole)
    cut = np.ascontiguousarray(img[:, : int(right) - 30])  # the eighth card's right 30 px are outside the photo
    quads = find_row(scanner, cut)
    assert len(quads) == 7
    assert all(float(q[:, 0].max()) < right - 100 for q in quads)  # the seven whole cards, the cut one dropped

    with pytest.raises(PirateTableError) as e:  # deck enroll's refusal says how the photo should lie
        _row_cards(scanner, cut, "2.jpg")
    assert str(e.value) == "2.jpg: found 7 cards, expected 8 (one row of A to H, upright, apart, all in the photo)"


def test_a_lamps_glare_is_not_a_card(scanner, style):
    """row_photo seed 46 lays the row under a lamp whose bright spot the detector outlines as a diamond."""
    from vision.enroll import _tilt, find_row
    from vision.synth.rows import row_photo

    quads = find_row(scanner, row_photo(style, 6, 46))
    assert len(quads) == 8
    assert all(abs(_tilt(q)) < 10 for q in quads)


def test_a_row_one_short_is_short_on_every_noisy_frame(scanner):
    """The Enroll screen's simulated camera (fresh sensor noise each frame): the 7-card row at the frame's right edge
    once counted 8 in 9 of 60 frames (a faint find on the cloth at the edge)."""
    from collections import Counter

    from companion.ui.camservice import SimulatedRowCamera
    from vision.enroll import find_row

    cam = SimulatedRowCamera(0, base="pirates-bluff")
    cam.period = 0
    cam.lay_out(3, n=7)
    assert Counter(len(find_row(scanner, cam.read()[1])) for _ in range(30)) == Counter({7: 30})
    cam.lay_out(3)
    assert Counter(len(find_row(scanner, cam.read()[1])) for _ in range(10)) == Counter({8: 10})
