"""The turned look: a lone corner index (a fanned hand's, a trick pile's) whose detected box sits turned on the
printed index is read again from its box turned about its centre (``SuitedScanner._turned_look`` for the suited
decks, ``Scanner._fan_turned_look`` for the corner reader); the view surest to hold an upright index replaces the
first, never one less sure."""

import json
import math

import cv2
import numpy as np

import vision.detect as D
import vision.suited_reader as S
from vision.geometry import rect_corners
from font_lists import calibration_99


def _turned(q: np.ndarray, deg: float) -> np.ndarray:
    """The box ``q`` (TL, TR, BR, BL as read upright) turned ``deg`` degrees about its centre, written out here so
    that the test does not lean on the helper it checks (``vision.corner.turned_about_centre``)."""
    u, v = q[1] - q[0], q[3] - q[0]
    a = math.atan2(float(u[1]), float(u[0]))
    cx, cy = q.mean(0)
    return rect_corners(cx, cy, float(np.linalg.norm(u)), float(np.linalg.norm(v)), a + math.radians(deg))


def test_turned_about_centre_keeps_the_box_and_turns_it():
    from vision.corner import turned_about_centre

    q = rect_corners(50.0, 40.0, 12.0, 20.0, 0.3)
    t = turned_about_centre(q, 30)
    assert np.allclose(t, _turned(q, 30), atol=1e-4)
    assert np.allclose(t.mean(0), q.mean(0), atol=1e-4)
    assert abs(_angle_off(t, q) - 30) < 1e-3 and np.allclose(turned_about_centre(q, 0), q, atol=1e-4)


def _angle_off(q: np.ndarray, truth: np.ndarray) -> float:
    a = math.degrees(math.atan2(*(q[1] - q[0])[::-1]) - math.atan2(*(truth[1] - truth[0])[::-1]))
    return abs((a + 180) % 360 - 180)


def test_suited_turned_look_turns_a_skewed_index_box_back_and_reads_it():
    from companion.decks import get_deck
    from vision.synth.suited import make_deck_scene

    sc = S.SuitedScanner("standard52")
    d = get_deck("standard52")
    fixed = wrong = tried = 0
    for seed in range(3):
        s = make_deck_scene(5_000_000 + seed, "standard52", "fan", fonts=calibration_99())
        for c in s.cards:
            for q, vis in zip(c.index_quads, c.index_visible):
                if vis < 0.95:
                    continue
                skew = _turned(np.asarray(q, np.float32), 30)  # the detector's box 30 degrees off the printed index
                p, pn = sc.reader.read(s.image, [S.index_view(skew)])
                rd = sc._read("index", skew, p[0] / p[0].sum())
                reads = [rd]
                sc._turned_look(s.image, reads, [float(pn[0])])
                new = reads[0]
                tried += 1
                if new is rd:
                    continue  # sure already, or no turned view surer to hold an index
                assert _angle_off(new.corners, np.asarray(q)) < _angle_off(skew, np.asarray(q))
                _p2, pn2 = sc.reader.read(s.image, [S.index_view(new.corners)])
                assert pn2[0] < pn[0]  # never a view less sure to hold an upright index
                if new.code is not None:
                    if d.notation(new.card()) == c.card:
                        fixed += rd.code is None
                    else:
                        wrong += 1
    assert tried >= 8 and fixed >= 2 and wrong == 0


def test_suited_reports_carry_the_turned_look_chosen_on_calibration():
    for deck in S.DECKS:
        rep = json.loads((S.MODELS / f"{deck}_reader.json").read_text())
        assert isinstance(rep["thresholds"]["turned_look"], bool)
        with_t, th = rep["calibration_scenes_with_turned_look"], rep["thresholds"]
        # kept only where it read more calibration cards exactly than the looks chosen before it (the second look or
        # not, then the grown look); the face look is tried after it
        before = rep["calibration_scenes_with_second_look" if th["second_look"] else
                     "calibration_scenes_without_second_look"]
        if th["grown_look"]:
            before = rep["calibration_scenes_with_grown_look"]
        if "turned_look_rule" in rep:  # switched on later by a rule judged on fresh scenes (island54, session 88)
            assert th["turned_look"] is True and "kept" in rep["turned_look_session_88"]
            assert S.SuitedScanner(deck).turned_look
            continue
        assert th["turned_look"] == (with_t["exact"] > before["exact"])
        if not th.get("face_look"):
            assert th["turned_look"] == (rep["calibration_scenes"] == with_t)
        assert S.SuitedScanner(deck).turned_look == th["turned_look"]


def test_corner_reader_turned_look_turns_a_skewed_fanned_index_back():
    from vision.corner import index_region
    from vision.synth.scene import make_scene
    from vision.synth.surfaces import HELD_OUT_SURFACES

    assert D.FAN_TURNED
    sc = D.Scanner("ort", reader="corner")
    fixed = wrong = tried = turned = back = 0
    for seed in range(4):
        s = make_scene(9_305_000 + seed, "fan", HELD_OUT_SURFACES, fonts=calibration_99())
        gray = cv2.cvtColor(s.image, cv2.COLOR_BGR2GRAY)
        for c in s.cards:
            for q, vis in zip(c.index_quads, c.index_visible):
                if vis < 0.95:
                    continue
                q = np.asarray(q, np.float32)  # the scene's index box, in upright reading order (render_card)
                skew = _turned(q, 30)
                rd = sc.corner.read(gray, [index_region(skew)])[0]
                rd.quad, rd.first_none, before = skew, rd.p_none, (rd.conf, rd.rank, rd.letter)
                before_none = rd.p_none
                sc._fan_turned_look(gray, [rd])
                tried += 1
                if rd.quad is skew:
                    continue
                turned += 1
                toward = _angle_off(rd.quad, q) < _angle_off(skew, q)
                back += toward
                assert rd.first_none < before_none
                if rd.conf >= D.FAN_CORNER_MIN:
                    assert toward  # a read at the bar comes from a turn back toward upright
                    if (rd.rank, rd.letter) == (c.rank, c.letter):
                        fixed += before[0] < D.FAN_CORNER_MIN
                    else:
                        wrong += 1
    # a turn the look takes mostly heads back toward upright; where it does not, the index is one it cannot read
    # (the scene's own upright box is the truth here: 2 of the 27 tried turn away with the corner reader before
    # session 38 and with session 38's, all read under 0.5)
    assert tried >= 8 and fixed >= 2 and wrong == 0 and back >= 0.8 * turned
