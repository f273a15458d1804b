"""A camera closer to the cards than a tablet over the table (a phone photo): the detector sees the frame shrunk
until its cards are the size it was trained on (``Detector.at_table_scale``)."""

import cv2
import numpy as np

import vision.detect as D
from vision.bench import _inside
from vision.detect import Detector, Scanner, letterbox, same_place
from vision.synth.scene import make_scene
from vision.synth.surfaces import HELD_OUT_SURFACES

from closeups import one_card_close_up
from font_lists import calibration_99, held_out_99


def _closeup(seed: int, z: float):
    """A held-out-font starting row, its middle 1/z cut out and blown up to 1280 x 720 (a closer camera): the
    image and the cards that lie whole in it (card, quad in the image)."""
    s = make_scene(seed, "start", HELD_OUT_SURFACES, fonts=held_out_99())
    cw, ch = int(1280 / z), int(720 / z)
    x0, y0 = (1280 - cw) // 2, (720 - ch) // 2
    img = cv2.resize(np.ascontiguousarray(s.image[y0:y0 + ch, x0:x0 + cw]), (1280, 720), interpolation=cv2.INTER_CUBIC)
    cards = [(c, (c.quad - np.array([x0, y0])) * z) for c in s.cards]
    return img, [(c, q) for c, q in cards if c.card_visible >= 0.97 and q.min() > 5 and q[:, 0].max() < 1275
                 and q[:, 1].max() < 715]


def _median_index(det, dets, img, zoom=1.0):
    _canvas, s = letterbox(img, det.size, zoom)
    return float(np.median([max(d[4], d[5]) * s for d in dets if d[0] == 1 and d[1] >= 0.5]))


def test_letterbox_zoom_shrinks_the_frame_and_boxes_come_back_in_frame_pixels():
    img = np.full((720, 1280, 3), 200, np.uint8)
    c1, s1 = letterbox(img, (640, 384))
    c2, s2 = letterbox(img, (640, 384), 2.0)
    assert c1.shape == c2.shape == (384, 640, 3) and abs(s2 - s1 / 2) < 1e-9
    assert (c2[:180, :320] == 200).all() and (c2[181:, :] == 114).all() and (c2[:, 321:] == 114).all()


def test_a_close_up_frame_is_detected_again_shrunk_to_the_trained_card_size():
    det = Detector(D.MODELS / "card_det.onnx", "ort", 2)
    img, cards = _closeup(9, 2.0)
    plain = det(img)
    m = _median_index(det, plain, img)
    assert m > D.ZOOM_FROM * D.INDEX_PX  # the cards are larger than the rendered scenes' ...
    zoom = m / D.INDEX_PX
    second = det(img, 0.25, zoom)
    assert abs(_median_index(det, second, img, zoom) / D.INDEX_PX - 1) < 0.2  # ... and come out near their size
    again = det.at_table_scale(img)
    assert any(d not in plain for d in again)  # the second pass counts
    # the two passes pooled: every box is one of theirs, no two at one place, and a box left out has a surer one
    # at its place
    assert all(d in plain or d in second for d in again)
    assert not any(same_place(a, b) for i, a in enumerate(again) for b in again[i + 1:])
    for d in plain + second:
        assert d in again or any(same_place(o, d) and o[1] >= d[1] for o in again)
    # each whole card of the frame has a detected card box centred on it, in frame pixels
    found = [d for d in again if d[0] == 0 and d[1] >= 0.4]
    assert cards
    for _c, q in cards:
        assert any(_inside(q, np.array(d[2:4])) for d in found)


def test_a_frame_from_over_the_table_is_detected_once():
    det = Detector(D.MODELS / "card_det.onnx", "ort", 2)
    s = make_scene(3, "start", HELD_OUT_SURFACES, fonts=held_out_99())
    assert det.at_table_scale(s.image) == det(s.image)


def test_close_ups_read_more_cards_with_the_second_look_and_none_wrongly(monkeypatch):
    sc = Scanner("ort", reader="corner")
    tally = {}
    for zoom_from in (float("inf"), D.ZOOM_FROM):
        monkeypatch.setattr(D, "ZOOM_FROM", zoom_from)
        right = wrong = 0
        for seed in range(24):
            img, cards = _closeup(seed, 1.6)
            reads = [p for p in sc.scan(img)[0] if p.kind == "card" and p.code is not None]
            for c, q in cards:
                for p in [p for p in reads if _inside(q, p.center)][:1]:
                    k = int(p.probs.argmax())
                    right += k == c.rank * 8 + "ABCDEFGH".index(c.letter)
                    wrong += k != c.rank * 8 + "ABCDEFGH".index(c.letter)
        tally[zoom_from] = (right, wrong)
    assert tally[D.ZOOM_FROM][1] == 0 and tally[float("inf")][1] == 0
    assert tally[D.ZOOM_FROM][0] > tally[float("inf")][0], tally


def _single_card(seed: int):
    """One card of a calibration-font starting row, blown up to fill the frame: the image, the card, the scene."""
    s = make_scene(seed, "start", fonts=calibration_99())
    return one_card_close_up(s), s.cards[0], s


def test_the_look_out_pass_runs_only_where_the_first_pass_found_no_index():
    det = Detector(D.MODELS / "card_det.onnx", "ort", 2)
    s = make_scene(3, "start", HELD_OUT_SURFACES, fonts=held_out_99())
    assert det.at_table_scale(s.image, nothing_found=D.LOOK_OUT) == det(s.image)  # indices found: one pass
    img, _c, _s = _single_card(9_300_000)
    plain = det(img)
    assert not any(d[0] == 1 and d[1] >= 0.5 for d in plain)  # a card this close: no index found
    looked = det.at_table_scale(img, nothing_found=D.LOOK_OUT)
    more = [d for z in D.LOOK_OUT for d in det(img, 0.25, z)]
    assert any(d[0] == 1 and d[1] >= 0.5 for d in looked)
    assert all(d in plain or d in more for d in looked)
    assert not any(same_place(a, b) for i, a in enumerate(looked) for b in looked[i + 1:])
    assert det.at_table_scale(img) == plain  # without zooms to look out with, nothing more


def test_a_single_card_photographed_close_up_is_read_by_looking_out():
    """A phone held over one card: the detector's first pass finds nothing on most of these, and the card is not
    read; the look-out pass (``Scanner.look_out``) finds and reads it, and names no card wrongly."""
    sc = Scanner("ort", reader="corner")
    assert sc.look_out == D.LOOK_OUT
    tally = {}
    for look_out in ((), D.LOOK_OUT):
        sc.look_out = look_out
        right = 0
        for seed in range(9_300_000, 9_300_010):
            img, c, s = _single_card(seed)
            named = [(p.rank, p.letter) for p in sc.scan(img)[0] if p.kind == "card" and p.code is not None]
            right += (c.rank, c.letter) in named
            assert set(named) <= {(g.rank, g.letter) for g in s.cards}  # no card that is not there
        tally[look_out] = right
    assert tally[D.LOOK_OUT] >= tally[()] + 4, tally
