"""The edge snapper that finds a card's outline (vision.geometry.snap_quads, used by vision.detect.card_outline)."""

import cv2
from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from vision import geometry
from vision.geometry import image_gradients, rect_corners, snap_quads


def _card_image(rng, cx=150.0, cy=150.0, w=90.0, h=126.0, a=0.3):
    img = (rng.random((300, 300)) * 60).astype(np.uint8)
    true = rect_corners(cx, cy, w, h, a)
    cv2.fillConvexPoly(img, np.rint(true).astype(np.int32), 210)
    return cv2.GaussianBlur(img, (0, 0), 1.0), true


def _corner_error(q, true):
    return float(np.abs(q - true).max())  # the same corner order: starts are near the truth


def test_snapper_finds_the_cards_edges_from_rough_starts():
    rng = np.random.default_rng(5)
    img, true = _card_image(rng)
    grad = image_gradients(img)
    starts = np.stack([rect_corners(150 + dx, 150 + dy, 90 * g, 126 * g, 0.3 + da)
                       for dx, dy, g, da in ((6, -4, 0.93, 0.12), (-5, 3, 1.06, -0.15), (2, 2, 1.0, 0.2))])
    assert max(_corner_error(q, true) for q in starts) > 8  # the starts are well off the card
    wide, ws = snap_quads(grad, starts, 0.12, max_turn=16.0, turn_step=4.0, step=2.0, samples=20)
    fine, fs = snap_quads(grad, wide, max_turn=3.0, turn_step=1.0, reach_px=3)
    assert np.isfinite(ws).all() and np.isfinite(fs).all()
    for q in fine:
        assert _corner_error(q, true) < 2.5  # 1-degree turns: ~2 px at a side's ends


def test_snapping_several_starts_at_once_is_snapping_each():
    rng = np.random.default_rng(9)
    for trial in range(20):
        img, true = _card_image(rng, w=rng.uniform(60, 110), h=rng.uniform(90, 150), a=rng.uniform(0, 3))
        grad = image_gradients(img)
        starts = [q + rng.normal(0, 4, (4, 2)).astype(np.float32) for q in (true, true, true)]
        starts.append((true - 150) * 0.5 + 150)  # half the size: no plausible fit
        for kw in ({"search": 0.12, "max_turn": 16.0, "turn_step": 4.0, "step": 2.0, "samples": 20},
                   {"max_turn": 3.0, "turn_step": 1.0, "reach_px": 3}):
            qs, ss = snap_quads(grad, np.stack(starts), **kw)
            for k, st in enumerate(starts):
                q1, s1 = snap_quads(grad, st[None], **kw)  # one start on its own
                q1, s1 = q1[0], float(s1[0])
                assert (s1 == -np.inf) == (ss[k] == -np.inf)
                assert np.allclose(q1, qs[k], atol=1e-3)
                if s1 > -np.inf:
                    assert abs(s1 - ss[k]) <= 1e-4 * max(1.0, abs(s1))


def test_an_implausible_fit_gives_back_the_start():
    rng = np.random.default_rng(2)
    img, true = _card_image(rng)
    grad = image_gradients(img)
    small = ((true - 150) * 0.45 + 150).astype(np.float32)  # a start far inside the card: no edge within reach
    q, s = snap_quads(grad, small[None], 0.12, max_turn=16.0, turn_step=4.0, step=2.0, samples=20)
    assert s[0] == -np.inf and np.array_equal(q[0], small)



def _snap_one_by_loops(grad, quad, search=0.08, max_turn=4.0, turn_step=1.0, step=1.0, samples=28, reach_px=None):
    """snap_quads' documented rule for one quad, written point by point: each side is tried at every turn and
    every offset along its normal, scored by the gradient across the line at ``samples`` points (-mean - 0.5 sd:
    the paper is brighter inside); each side keeps its best line and neighbouring lines are intersected."""
    gx, gy = grad[..., 0].astype(np.float64), grad[..., 1].astype(np.float64)
    h, w = gx.shape
    quad = quad.astype(np.float64)
    ctr = quad.mean(0)
    short = min(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[3] - quad[0]))
    R = reach_px if reach_px is not None else max(3, round(search * short))
    offs = np.arange(-R, R + step / 2, step)
    turns = np.radians(np.arange(-max_turn, max_turn + turn_step / 2, turn_step))
    lines = []
    for i in range(4):
        p, q = quad[i], quad[(i + 1) % 4]
        mid, L = (p + q) / 2, np.linalg.norm(q - p)
        t0 = (q - p) / L
        out = 1.0 if np.dot(mid - ctr, [t0[1], -t0[0]]) >= 0 else -1.0  # the normal points out of the card
        best = (-np.inf, None, None)
        for a in turns:
            t = np.array([t0[0] * np.cos(a) - t0[1] * np.sin(a), t0[0] * np.sin(a) + t0[1] * np.cos(a)])
            n = out * np.array([t[1], -t[0]])
            for o in offs:
                g = []
                for s in np.linspace(-0.35, 0.35, samples):
                    x, y = mid + s * L * t + o * n
                    xi, yi = min(max(int(np.rint(x)), 0), w - 1), min(max(int(np.rint(y)), 0), h - 1)
                    g.append(gx[yi, xi] * n[0] + gy[yi, xi] * n[1])
                score = -np.mean(g) - 0.5 * np.std(g)
                if score > best[0]:
                    best = (score, mid + o * n, t)
        lines.append(best)
    corners = []
    for i in range(4):
        (_, p1, d1), (_, p2, d2) = lines[i - 1], lines[i]
        k = np.linalg.solve(np.array([d1, -d2]).T, p2 - p1)[0]
        corners.append(p1 + k * d1)
    return np.array(corners), float(np.mean([b[0] for b in lines]))


def test_the_vectorised_snapper_is_its_rule_written_point_by_point():
    rng = np.random.default_rng(11)
    for trial in range(4):
        img, true = _card_image(rng, w=rng.uniform(60, 100), h=rng.uniform(90, 140), a=rng.uniform(0, 3))
        grad = image_gradients(img)
        start = true + rng.normal(0, 3, (4, 2)).astype(np.float32)
        for kw in ({"search": 0.12, "max_turn": 16.0, "turn_step": 4.0, "step": 2.0, "samples": 20},
                   {"max_turn": 3.0, "turn_step": 1.0, "reach_px": 3}):
            q, sc = snap_quads(grad, start[None], **kw)
            ref, ref_sc = _snap_one_by_loops(grad, start, **kw)
            assert np.isfinite(sc[0])
            assert np.allclose(q[0], ref, atol=0.05), (trial, kw, q[0], ref)
            assert abs(float(sc[0]) - ref_sc) <= 1e-3 * max(1.0, abs(ref_sc))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12), st.sampled_from([(56, 42, 3), (56, 42), (48, 24), (3, 5), (1, 1)]), st.integers(0, 2**32 - 1),
       st.sampled_from([256, 40, 3, 1]))
def test_stretch_range_is_numpys_percentile_bit_for_bit(n, shape, seed, levels):
    """The readers' contrast stretch counts each uint8 crop's pixels in a histogram instead of sorting them: the
    same 2nd and 98th percentiles as numpy's (linear interpolation), to the last bit, for crops of few or many
    grey levels; any other dtype goes to numpy itself."""
    from vision.geometry import stretch_range

    rng = np.random.default_rng(seed)
    crops = (rng.integers(0, levels, (n, *shape)) * (255 // max(levels - 1, 1))).astype(np.uint8)
    ref = np.percentile(crops.astype(np.float32), [2, 98], axis=tuple(range(1, crops.ndim)))
    got = stretch_range(crops)
    assert got.dtype == ref.dtype and got.shape == ref.shape == (2, n)
    assert np.array_equal(got, ref)
    assert np.array_equal(stretch_range(crops, (10, 50, 90)),
                          np.percentile(crops.astype(np.float32), [10, 50, 90], axis=tuple(range(1, crops.ndim))))
    assert np.array_equal(stretch_range(crops.astype(np.float32)), ref)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40), st.integers(1, 9), st.sampled_from([(56, 42, 3), (56, 42), (3, 5)]), st.integers(0, 2**32 - 1))
def test_a_training_set_normalized_block_by_block_is_the_same_to_the_bit(n, block, shape, seed):
    """vision.corner.normalize works a set larger than NORMALIZE_BLOCK crops block by block (a training set of
    356,000 colour views took 24 GB at once and was killed): the same float32 array, shape and layout as at once."""
    import vision.corner as vc

    rng = np.random.default_rng(seed)
    crops = rng.integers(0, 256, (n, *shape)).astype(np.uint8)
    whole = vc.normalize(crops)
    assert whole.shape == (n, 3 if len(shape) == 3 else 1, *shape[:2]) and whole.dtype == np.float32
    before = vc.NORMALIZE_BLOCK
    try:
        vc.NORMALIZE_BLOCK = block
        assert np.array_equal(vc.normalize(crops), whole)
    finally:
        vc.NORMALIZE_BLOCK = before


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 40), st.sampled_from([(56, 42, 3), (56, 42), (3, 5), (1, 1, 3)]), st.integers(0, 2**32 - 1),
       st.sampled_from([256, 12, 2, 1]))
def test_uint8_crops_are_normalized_by_a_table_to_the_same_bits_as_pixel_by_pixel(n, shape, seed, levels):
    """A uint8 crop's 256 possible results are worked out once and looked up (cv2.LUT); the float path works every
    pixel: the same float32 numbers, shape and channel order, for crops of many or few grey levels (a flat crop
    too)."""
    import vision.corner as vc

    rng = np.random.default_rng(seed)
    crops = (rng.integers(0, levels, (n, *shape)) * (255 // max(levels - 1, 1))).astype(np.uint8)
    got = vc.normalize(crops)
    ref = vc.normalize(crops.astype(np.float32))  # pixel by pixel
    assert got.dtype == ref.dtype == np.float32 and got.shape == ref.shape
    assert np.array_equal(got, ref)
    assert got.flags.c_contiguous


def test_a_frames_cards_outlined_at_once_are_each_outlined_alone():
    """vision.detect.card_outlines snaps every card of a frame in one pass over one window of gradients; each card
    keeps its own window (snap_quads' ``within``), so every outline is card_outline's for that card alone, to the
    last bit: cards near the frame's edges, touching cards, a square-looking card (extra starting angles) and
    cards with index hints."""
    from vision.detect import card_outline, card_outlines

    rng = np.random.default_rng(21)
    for trial in range(6):
        img = (rng.random((420, 640)) * 60).astype(np.uint8)
        boxes, hints = [], []
        for k in range(5):
            cx, cy = rng.uniform(20, 620), rng.uniform(20, 400)  # some cards run off the frame
            w, h = rng.uniform(50, 90), rng.uniform(70, 130)
            if k == 4:
                h = w * 1.1  # looks square
            a = rng.uniform(0, np.pi)
            cv2.fillConvexPoly(img, np.rint(rect_corners(cx, cy, w, h, a)).astype(np.int32), int(rng.integers(150, 250)))
            boxes.append((cx + rng.normal(0, 3), cy + rng.normal(0, 3), w * rng.uniform(0.93, 1.07),
                          h * rng.uniform(0.93, 1.07), a + rng.normal(0, 0.1)))
            hints.append([rect_corners(cx, cy, 0.2 * w, 0.3 * h, a + 0.3)] if k % 2 else [])
        img = cv2.GaussianBlur(img, (0, 0), 1.0)
        many = card_outlines(img, boxes, hints)
        assert len(many) == len(boxes)
        for box, hs, q in zip(boxes, hints, many):
            assert np.array_equal(q, card_outline(img, box, hs)), trial
    assert card_outlines(img, [], []) == []


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(3, 90), st.integers(3, 90), st.integers(0, 7), st.integers(0, 7))
def test_the_gradients_are_the_float_sobel_of_the_blurred_image_exactly(seed, h, w, y0, x0):
    # spatialGradient's int16 numbers against the float Sobel on the same blurred uint8 image, on whole images and
    # on windows of a larger one (the detector takes the gradients of a window of the frame)
    big = np.random.default_rng(seed).integers(0, 256, (h + 8, w + 8), dtype=np.uint8)
    img = big[y0:y0 + h, x0:x0 + w]
    b = cv2.GaussianBlur(img, (3, 3), 0).astype(np.float32)
    grad = image_gradients(img)
    assert grad.dtype == np.int16 and grad.shape == (h, w, 2)
    assert np.array_equal(grad[..., 0].astype(np.float32), cv2.Sobel(b, cv2.CV_32F, 1, 0, ksize=3))
    assert np.array_equal(grad[..., 1].astype(np.float32), cv2.Sobel(b, cv2.CV_32F, 0, 1, ksize=3))


def test_the_snapper_takes_only_the_int16_gradient_pairs():
    rng = np.random.default_rng(4)
    img, true = _card_image(rng)
    grad = image_gradients(img)
    with pytest.raises(ValueError, match="int16"):
        snap_quads(grad.astype(np.float32), true[None])
    with pytest.raises(ValueError, match="int16"):
        snap_quads(grad[..., 0], true[None])


def test_a_box_running_on_past_its_card_is_snapped_from_a_cards_length_too():
    """The detector's box of a card whose short edge hardly shows runs on past the card, further than the snap's
    search reaches (session 73: about 7 % of the whole cards of calibration start scenes outlined 15 px or more off).
    With ``long_box`` (ratio, aspect), a box longer than ``ratio`` times its short side is also started as a card
    ``aspect`` times as long as it is wide, centred and flush with either end of the box: the card's outline is
    found. A box that looks like a card gets no more starts, so its outline is the same to the bit."""
    from vision.detect import card_outlines
    from vision.suited_reader import LONG_BOX

    rng = np.random.default_rng(73)
    for trial, (a, end) in enumerate(((0.3, 1), (1.2, -1), (2.5, 1), (-0.7, -1))):
        img = (rng.random((500, 500)) * 60).astype(np.uint8)
        true = rect_corners(250, 250, 90, 126, a)
        cv2.fillConvexPoly(img, np.rint(true).astype(np.int32), 210)
        img = cv2.GaussianBlur(img, (0, 0), 1.0)
        up = np.array([-np.sin(a), np.cos(a)])
        cx, cy = np.array([250, 250]) + end * 0.125 * 126 * up  # the box runs on 25 % past one end of the card
        box = (float(cx), float(cy), 90.0, 126 * 1.25, a)
        assert 126 * 1.25 > LONG_BOX[0] * 90
        plain = card_outlines(img, [box], [[]])[0]
        fixed = card_outlines(img, [box], [[]], long_box=LONG_BOX)[0]
        err = lambda q: min(float(np.abs(np.roll(q, k, 0) - true).max()) for k in range(4))
        assert err(plain) > 15, trial  # out of the snap's reach
        assert err(fixed) < 3, trial
        card_like = (250.0, 250.0, 92.0, 130.0, a + 0.05)
        assert np.array_equal(card_outlines(img, [card_like], [[]])[0],
                              card_outlines(img, [card_like], [[]], long_box=LONG_BOX)[0])


def test_the_snapper_gives_each_fits_side_scores_on_request():
    """``sides=True``: each fit's four sides' scores (side i from corner i to corner i + 1), whose mean is the fit's
    score; the fits themselves are the same as without."""
    rng = np.random.default_rng(11)
    img, true = _card_image(rng)
    grad = image_gradients(img)
    starts = np.stack([true + rng.normal(0, 3, true.shape).astype(np.float32) for _ in range(5)])
    q, s = snap_quads(grad, starts)
    q2, s2, side = snap_quads(grad, starts, sides=True)
    assert np.array_equal(q, q2) and np.array_equal(s, s2) and side.shape == (5, 4)
    ok = s > -np.inf
    assert ok.any()
    assert np.allclose(side[ok].mean(1), s[ok], rtol=1e-5)


def test_long_starts_go_only_where_a_short_edge_is_weak(monkeypatch):
    """``weak_edge`` (session 74): the long starts are snapped only for a long box whose chosen fit's weaker short
    side scores under ``weak_edge`` times its long sides' mean, and replace the fit only if they score higher. A card
    whose far end hardly shows against a pale cloth (its box runs on past it) is found; so is a card whose box runs on
    past a strong end (the plain fit's side there stands on nothing); a long box whose fit is strong all round is
    left as it is, to the bit, and its long starts are not even snapped."""
    from vision.detect import card_outlines
    from vision.suited_reader import LONG_BOX, WEAK_EDGE

    rng = np.random.default_rng(74)
    err = lambda q, true: min(float(np.abs(np.roll(q, k, 0) - true).max()) for k in range(4))
    for trial, (a, end) in enumerate(((0.3, 1), (1.2, -1), (2.5, 1), (-0.7, -1))):
        up = np.array([-np.sin(a), np.cos(a)])
        for pale in (True, False):
            img = (rng.random((500, 500)) * 60).astype(np.uint8)
            if pale:  # the cloth past the card's far end is pale: that end hardly shows
                yy, xx = np.mgrid[0:500, 0:500]
                beyond = ((xx - 250) * up[0] + (yy - 250) * up[1]) * end > 63
                img[beyond] = (170 + rng.random(int(beyond.sum())) * 20).astype(np.uint8)
            true = rect_corners(250, 250, 90, 126, a)
            cv2.fillConvexPoly(img, np.rint(true).astype(np.int32), 210)
            img = cv2.GaussianBlur(img, (0, 0), 1.0)
            cx, cy = np.array([250, 250]) + end * 0.125 * 126 * up  # the box runs on 25 % past that end
            box = (float(cx), float(cy), 90.0, 126 * 1.25, a)
            plain = card_outlines(img, [box], [[]])[0]
            fixed = card_outlines(img, [box], [[]], long_box=LONG_BOX, weak_edge=WEAK_EDGE)[0]
            assert err(plain, true) > 15, (trial, pale)
            assert err(fixed, true) < 3, (trial, pale)
            img0, box0 = img, box
        # a long card (as long as a long box), its edges strong all round and its box on it: no long starts
        img = (rng.random((500, 500)) * 60).astype(np.uint8)
        true = rect_corners(250, 250, 90, 160, a)
        cv2.fillConvexPoly(img, np.rint(true).astype(np.int32), 210)
        img = cv2.GaussianBlur(img, (0, 0), 1.0)
        box = (250.0, 250.0, 90.0, 160.0, a + 0.03)
        assert 160 > LONG_BOX[0] * 90
        plain = card_outlines(img, [box], [[]])[0]
        assert err(plain, true) < 3, trial
        calls = []
        with monkeypatch.context() as m:
            m.setattr(geometry, "snap_quads", lambda *a, **k: calls.append(len(a[1])) or snap_quads(*a, **k))
            gated = card_outlines(img, [box], [[]], long_box=LONG_BOX, weak_edge=WEAK_EDGE)[0]
            assert len(calls) == 2, trial  # the wide and the fine pass of the plain starts, and no more
            calls.clear()
            card_outlines(img0, [box0], [[]], long_box=LONG_BOX, weak_edge=WEAK_EDGE)  # a box past its card's end
            assert len(calls) == 4, trial  # ... and its long starts' wide and fine passes
        assert np.array_equal(plain, gated)


def test_long_starts_are_switched_as_their_rules_kept_them():
    """Rule V (session 73, long starts for every long box) passed on fresh calibration scenes and held-out blocks,
    but was left off for its cost (the outline step 45-70 % longer). Rule W (session 74, long starts only where a short
    edge is weak) was kept instead. Rule Y (session 85, when frames had become fast enough): rule V in place of W for a
    deck whose judge on fresh calibration scenes read more cards exactly with confident mistakes at most
    floor(gain / 20) more, whose scan took at most 40 ms and 1.10 times as long, and whose held-out blocks did not
    withdraw it (``long_box`` on, ``long_box_weak_edge`` off). Rules X and Y were judged on the decks' own faces: a
    taught deck goes without long starts (``taught_long_box_weak_edge`` was judged and not kept; ``taught_long_box``
    was not judged)."""
    import json
    from pathlib import Path

    from vision.suited_reader import LONG_BOX, SuitedScanner

    class Same:  # a profile whose heads change nothing
        def heads(self, feat, zr, zl):
            return zr, zl

    def passed(rec, cand: str, speed_key: str, speed_max: float, ms_max: float | None = None) -> bool:
        judged = rec["judge"]
        gain = sum(judged[s][cand]["exact"] - judged[s]["committed"]["exact"] for s in ("near", "far"))
        more_wrong = sum(judged[s][cand]["wrong_confident"] - judged[s]["committed"]["wrong_confident"]
                         for s in ("near", "far"))
        speed = rec[speed_key]
        blocks = rec["held_out_blocks"]
        return (gain > 0 and more_wrong <= gain // 20 and speed["ratio"] <= speed_max
                and (ms_max is None or speed["long_box_ms"] <= ms_max)
                and blocks["exact_gain"] > 0 and blocks["more_wrong"] <= blocks["exact_gain"] // 20)

    models = Path(__file__).resolve().parents[1] / "models"
    for deck in ("standard52", "island54"):
        rep = json.loads((models / f"{deck}_reader.json").read_text())
        assert "NOT switched on" in rep["long_box_session_73"]["status"]
        w = rep["long_box_weak_edge_session_74"]
        assert passed(w, "weak_edge", "speed_calibration_timing_frames", 1.15) and w["status"].startswith("kept")
        y = rep["long_box_session_85"]
        kept = passed(y, "long_box", "speed_calibration_frames", 1.10, 40.0)
        if deck == "standard52":  # no more edje-train mistakes, strict or resolved
            e = y["judge"]["edje_train"]
            kept = kept and e["long_box"]["wrong_confident"] <= e["committed"]["wrong_confident"] and \
                e["long_box"]["resolved_wrong"] <= e["committed"]["resolved_wrong"]
            b = y["real_photos"]["bidly_scanned_whole"]
            assert b["long_box"]["resolved_wrong"] <= b["committed"]["resolved_wrong"]
        assert kept and y["status"].startswith("kept")
        assert rep["thresholds"]["long_box"] is kept and rep["thresholds"]["long_box_weak_edge"] is (not kept)
        sc = SuitedScanner(deck, threads=1)
        assert sc.long_box == LONG_BOX and sc.weak_edge is None
        x = rep["taught_long_box_weak_edge_session_74"]["judge"]
        taught = x["on"]["exact"] > x["off"]["exact"] and x["on"]["wrong"] <= x["off"]["wrong"]
        assert rep["thresholds"].get("taught_long_box_weak_edge", False) is taught is False
        assert "taught_long_box" not in rep["thresholds"]
        taught_sc = SuitedScanner(deck, threads=1, profile=Same())
        assert taught_sc.weak_edge is None and taught_sc.long_box is None
