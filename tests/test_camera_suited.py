"""The suited decks' camera models (island54, standard52): training smoke, scans of rendered scenes in held-out
type designs with the committed models, the JSON of `scan`, and refusals in one line."""

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from font_lists import held_out_99

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
SUITED = ("island54", "standard52")


def _run(*args, timeout=300):
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------- training smoke
@pytest.mark.slow
@pytest.mark.parametrize("deck,alias,n_rank,n_suit", [("island54", "island", 10, 6), ("standard52", "standard", 14, 4)])
def test_training_smoke_writes_a_reader_with_the_decks_heads(tmp_path, deck, alias, n_rank, n_suit):
    out = tmp_path / "m"
    r = _run("-m", "vision.suited_reader", "--deck", alias, "--smoke", "--threads", "1", "--out", str(out),
             "--work", str(tmp_path / "w"), timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    model = out / f"{deck}_reader.int8.onnx"
    assert 20_000 < model.stat().st_size < 1_000_000
    rep = json.loads((out / f"{deck}_reader.json").read_text())
    assert rep["deck"] == deck and rep["train_views"] > 0 and 0.5 <= rep["temperature"] <= 4.0
    assert set(rep["thresholds"]) == {"card", "index", "card_rank", "index_rank", "second_look", "grown_look", "turned_look",
                                      "face_look", "frame_ink"}
    assert rep["thresholds"]["face_look"] is False  # no face reader in that folder: the bars were chosen without it
    # the frame's inks: tried at the bars and looks chosen, kept only with more cards exact and no more confident
    # mistakes; the report's figures are those of the reading kept
    ink, before = rep["calibration_scenes_with_frame_ink"], rep["calibration_scenes_without_frame_ink"]
    mistakes = lambda f: f["wrong_confident"] + f["false_reads"]  # noqa: E731
    assert rep["thresholds"]["frame_ink"] is (ink["exact"] > before["exact"] and mistakes(ink) <= mistakes(before))
    assert rep["calibration_scenes"] == (ink if rep["thresholds"]["frame_ink"] else before)
    # the bars alone, chosen again for the reader in the folder: the report's bars rewritten, the reader untouched
    before = model.read_bytes()
    rep["thresholds"] = {"card": 0.5}
    (out / f"{deck}_reader.json").write_text(json.dumps(rep))
    r = _run("-m", "vision.suited_reader", "--deck", alias, "--thresholds-only", "--calib-scenes", "2", "--calib-hands", "1",
             "--threads", "1", "--out", str(out), timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    again = json.loads((out / f"{deck}_reader.json").read_text())
    assert set(again["thresholds"]) == {"card", "index", "card_rank", "index_rank", "second_look", "grown_look", "turned_look",
                                        "face_look", "frame_ink"}
    assert again["temperature"] == rep["temperature"] and model.read_bytes() == before
    import onnxruntime as ort

    from vision.corner import CORNER_H, CORNER_W

    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    zr, zl, feat = sess.run(None, {"crop": np.zeros((2, 3, CORNER_H, CORNER_W), np.float32)})
    assert zr.shape == (2, n_rank) and zl.shape == (2, n_suit) and feat.shape == (2, 256)


# ---------------------------------------------------------------- data and geometry
def test_training_views_are_labelled_colour_crops_with_every_ink_mode():
    from vision.corner import CORNER_H, CORNER_W
    from vision.suited_reader import deck_codes, gen_suited_crops

    C, R, L = gen_suited_crops("island54", 24, seed=5)
    codes = deck_codes("island54")
    assert C.shape[1:] == (CORNER_H, CORNER_W, 3) and C.dtype == np.uint8
    none = R == len(codes.ranks)
    assert none.any() and (~none).any()
    assert (L[none] == -100).all() and ((L[~none] >= 0) & (L[~none] < 6)).all()
    assert ((R[~none] >= 0) & (R[~none] < 9)).all()


def test_ink_modes_give_other_suits_colours_and_grey():
    from vision.decks.island import FACES, PALETTES
    from vision.suited_reader import _ink

    style = FACES.PRINT
    true = PALETTES[0]["red"]
    seen = {"same": 0, "grey": 0, "other": 0}
    rng = np.random.default_rng(0)
    for _ in range(400):
        ink, grey = _ink(rng, FACES, style, true)
        if grey:
            assert len(set(ink)) == 1
            seen["grey"] += 1
        elif ink == tuple(float(c) for c in true):
            seen["same"] += 1
        elif min(np.abs(np.array(ink) - np.array(c)).max() for n, c in PALETTES[0].items() if n != "red") < 45:
            seen["other"] += 1
    assert seen["same"] > 150 and seen["grey"] > 15 and seen["other"] > 25


def test_index_view_has_the_crops_aspect_and_holds_the_box():
    from vision.corner import CORNER_H, CORNER_W
    from vision.suited_reader import index_view, quarter_turns

    box = np.array([[100, 50], [120, 50], [120, 90], [100, 90]], np.float32)
    for turn, q in enumerate(quarter_turns(box)):  # a box read in any quarter turn: the view follows its axes
        v = index_view(q)
        w, h = np.linalg.norm(v[1] - v[0]), np.linalg.norm(v[3] - v[0])
        assert abs(w / h - CORNER_W / CORNER_H) < 1e-3
        assert np.allclose(v.mean(0), box.mean(0))
        poly = v.reshape(-1, 1, 2)
        assert all(cv2.pointPolygonTest(poly, (float(x), float(y)), True) > 3 for x, y in box)
        top = v[1] - v[0]  # the view's top edge runs along the box's first edge (as read)
        edge = q[1] - q[0]
        assert np.dot(top, edge) / (np.linalg.norm(top) * np.linalg.norm(edge)) > 0.999, turn


@pytest.mark.parametrize("deck", SUITED)
def test_own_indices_lie_in_the_corner_zones_and_a_tight_hands_next_index_does_not(deck):
    """The scan takes an index inside a found card's outline for that card's own only in a corner zone
    (in_corner_zone); one further in is another card's lying on it, read as a lone index. Checked on the scenes'
    labelled geometry (train fonts: only the layout and the index sizes matter here)."""
    from vision.fonts import split_fonts
    from vision.suited_reader import in_corner_zone, quarter_turns
    from vision.synth.suited import HAND, make_deck_scene

    card = np.array([[0, 0], [63, 0], [63, 88], [0, 88]], np.float64)
    for q in quarter_turns(card):  # the zones do not depend on which corner the outline starts at
        assert in_corner_zone(q, (6, 8)) and in_corner_zone(q, (57, 80)) and in_corner_zone(q, (57, 8))
        assert not in_corner_zone(q, (31.5, 44)) and not in_corner_zone(q, (20, 8)) and not in_corner_zone(q, (6, 30))
        assert not in_corner_zone(q, (-40, 8)) and not in_corner_zone(q, (6, 130))
    assert not in_corner_zone(np.zeros((4, 2)), (0, 0))  # a degenerate outline holds nothing
    own = own_in = others = others_out = 0
    fonts = split_fonts("train")[:6]
    for i in range(6):
        s = make_deck_scene(9_300_000 + i, deck, HAND, fonts=fonts)
        for c in s.cards:
            poly = c.quad.reshape(-1, 1, 2).astype(np.float32)
            for iq in c.index_quads:
                own += 1
                own_in += in_corner_zone(c.quad, iq.mean(0))
            for c2 in s.cards:
                for iq, vis in zip(c2.index_quads, c2.index_visible):
                    p = tuple(map(float, iq.mean(0)))
                    if c2 is not c and vis >= 0.5 and cv2.pointPolygonTest(poly, p, False) >= 0:
                        others += 1
                        others_out += not in_corner_zone(c.quad, p)
    assert own >= 60 and others >= 20
    assert own_in >= 0.98 * own, (own_in, own)  # a wide index font reaches a little further (11 of 3,840 calibration indices)
    assert others_out >= 0.6 * others, (others_out, others)


def test_colour_normalize_keeps_the_hue():
    from vision.corner import normalize

    crop = np.zeros((1, 56, 42, 3), np.uint8)
    crop[..., 2] = 200  # red in BGR
    crop[0, :10] = 255
    x = normalize(crop)
    assert x.shape == (1, 3, 56, 42)
    assert x[0, 2, 30, 20] > x[0, 0, 30, 20] + 1.0  # the red channel stays above the blue one


@pytest.mark.parametrize("simple", [False, True])
@pytest.mark.parametrize("suit", ["S", "H", "D", "C"])
def test_standard_suit_symbols_have_no_holes(suit, simple):
    """A spade's lobes and a simple club's leaves only touched: a pinhole showed above the spade's stem on every
    printed card (a stray square in the outline drawing), a hole in the simple club. No paper may be enclosed by
    the ink beyond a few anti-aliased pixels."""
    from vision.decks.standard import SYMBOLS
    from vision.decks.suited import Canvas

    c = Canvas(480)
    SYMBOLS[suit](c, simple)
    paper = (c.m < 250).astype(np.uint8)
    n, lab, stats, _ = cv2.connectedComponentsWithStats(paper, connectivity=4)
    outside = set(np.unique(np.r_[lab[0], lab[-1], lab[:, 0], lab[:, -1]]).tolist())
    enclosed = [int(stats[i, cv2.CC_STAT_AREA]) for i in range(1, n) if i not in outside]
    assert all(a <= 4 for a in enclosed), enclosed


# ---------------------------------------------------------------- scans with the committed models
def _scenes(deck, layouts, n, seed):
    from vision.synth.suited import make_deck_scene

    fonts = held_out_99()
    return [make_deck_scene(seed + i, deck, layouts[i % len(layouts)], fonts=fonts) for i in range(n)]


@pytest.mark.slow
@pytest.mark.parametrize("deck", SUITED)
def test_committed_model_reads_held_out_start_scenes(deck):
    from vision.suited_reader import SuitedScanner, match_reads, score_rows

    sc = SuitedScanner(deck)
    rows = [r for s in _scenes(deck, ("start",), 10, 7_700_000) for r in match_reads(s, sc.scan(s.image))]
    st = score_rows(rows)
    assert st["cards"] >= 35
    assert st["recall_pct"] >= MIN_START[deck]["recall"], st
    assert st["exact_pct"] >= MIN_START[deck]["exact"], st
    assert st["wrong_confident"] <= 1, st


@pytest.mark.slow
@pytest.mark.parametrize("deck", SUITED)
def test_committed_model_reads_indices_in_fans_and_trick_piles(deck):
    from vision.suited_reader import SuitedScanner, match_reads, score_rows

    sc = SuitedScanner(deck)
    rows = [r for s in _scenes(deck, ("fan", "trick"), 10, 7_800_000) for r in match_reads(s, sc.scan(s.image))]
    st = score_rows(rows)
    assert st["cards"] >= 30
    assert st["exact_pct"] >= MIN_OVERLAP[deck], st
    assert st["wrong_confident"] <= 2, st


@pytest.mark.slow
@pytest.mark.parametrize("deck", SUITED)
def test_a_card_photographed_close_up_is_found_by_looking_again_zoomed_out(deck):
    """A single card filling the frame (a photo taken close up): the detector's first pass finds no index on it, so
    the pass triggered by the found indices' size never runs; the frame is detected again shrunk (``look_out``) and the
    card is read. Without that look most of these cards are not read at all."""
    import vision.suited_reader as sr
    from closeups import one_card_close_up
    from vision.synth.suited import make_deck_scene

    sc = sr.SuitedScanner(deck)
    assert sc.look_out
    read = {(): 0, sc.look_out: 0}
    nothing = 0
    for seed in range(8):
        s = make_deck_scene(seed, deck, "start")
        c, img = s.cards[0], one_card_close_up(s)
        nothing += not any(d[0] == 1 and d[1] >= 0.5 for d in sc.detector(img, 0.25))
        for zooms in read:
            sc.look_out = zooms
            reads = [r.to_json() for r in sc.scan(img)]
            read[zooms] += any(j["card"] == c.card for j in reads)
            assert all(j["card"] in {None} | {g.card for g in s.cards} for j in reads)  # no card that is not there
    assert nothing >= 3  # the first pass finds no index on several of them
    looked = next(z for z in read if z)
    assert read[looked] >= read[()] + 3, read


# floors measured on these scenes with the committed models, with margin (see models/MODEL_CARD.md)
# (measured 2026-11-24 on these 10 + 10 scenes: island54 start 83.3 % exact / 100 % recall, overlaps 35.2 %;
# standard52 start 50.9 % / 100 %, overlaps 24.6 %; none wrong with confidence)
MIN_START = {"island54": {"recall": 95.0, "exact": 70.0}, "standard52": {"recall": 95.0, "exact": 40.0}}
MIN_OVERLAP = {"island54": 25.0, "standard52": 15.0}


@pytest.mark.slow
@pytest.mark.parametrize("deck,alias", [("island54", "island"), ("standard52", "standard52")])
def test_scan_json_per_deck(tmp_path, deck, alias):
    from companion.decks import get_deck
    from vision.suited_reader import deck_codes

    s = _scenes(deck, ("start",), 1, 7_900_000)[0]
    img = tmp_path / "scene.png"
    cv2.imwrite(str(img), s.image)
    r = _run("-m", "companion", "scan", str(img), "--deck", alias, "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["deck"] == alias and out["width"] == 1280 and out["height"] == 720
    assert set(out["timing_ms"]) == {"load", "scan", "total"} and out["timing_ms"]["scan"] > 0
    d = get_deck(deck)
    truth = {c.card: c for c in s.cards}
    named = 0
    for c in out["cards"]:
        assert set(c) >= {"kind", "card", "rank", "suit", "corners", "confidence", "alternatives"}
        assert len(c["corners"]) == 4
        if c["card"] is None:  # unsure of the card: its rank alone may still be sure, and is one lying there
            assert c["suit"] is None
            if c["rank"] is not None:
                at = [t for t in s.cards if cv2.pointPolygonTest(t.quad.reshape(-1, 1, 2).astype(np.float32),
                                                                 tuple(np.mean(c["corners"], 0).tolist()), False) >= 0]
                codes = deck_codes(deck)
                assert c["rank"] in {codes.rank_text(codes.code(d.parse(t.card))) for t in at}
            continue
        card = d.parse(c["card"])
        assert c["suit"] == card.suit and d.notation(card) == c["card"]
        assert c["card"] in truth  # a card named is one that lies there
        q = truth[c["card"]].quad.reshape(-1, 1, 2).astype(np.float32)
        assert cv2.pointPolygonTest(q, tuple(np.mean(c["corners"], 0).tolist()), False) >= 0
        named += 1
    assert named >= len(s.cards) - 2


# ---------------------------------------------------------------- refusals
def _one_line_refusal(r, start):
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith("pirate-table: error: " + start), r.stderr


def test_scan_refuses_an_unknown_deck(tmp_path):
    img = tmp_path / "t.png"
    cv2.imwrite(str(img), np.full((72, 128, 3), 90, np.uint8))
    _one_line_refusal(_run("-m", "companion", "scan", str(img), "--deck", "island99", "--json", timeout=120), "--deck")


@pytest.mark.parametrize("alias", ["island", "standard"])
def test_scan_refuses_an_unreadable_image(tmp_path, alias):
    bad = tmp_path / "cards.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg" + bytes(range(256)))
    _one_line_refusal(_run("-m", "companion", "scan", str(bad), "--deck", alias, "--json", timeout=120), str(bad))
    _one_line_refusal(_run("-m", "companion", "scan", str(tmp_path / "none.jpg"), "--deck", alias, timeout=120),
                      str(tmp_path / "none.jpg"))


def test_scan_refuses_a_missing_model_and_a_float_backend(tmp_path):
    img = tmp_path / "t.png"
    cv2.imwrite(str(img), np.full((72, 128, 3), 90, np.uint8))
    _one_line_refusal(_run("-m", "companion", "scan", str(img), "--deck", "island54", "--models", str(tmp_path),
                           timeout=120), "model file missing")
    _one_line_refusal(_run("-m", "companion", "scan", str(img), "--deck", "standard", "--backend", "cv2",
                           timeout=120), "--backend cv2")


def test_training_command_refuses_a_deck_that_is_not_suited_and_bad_options(tmp_path):
    _one_line_refusal(_run("-m", "vision.suited_reader", "--deck", "pirates72", timeout=120), "--deck: pirates72")
    _one_line_refusal(_run("-m", "vision.suited_reader", "--deck", "nope", timeout=120), "--deck")
    _one_line_refusal(_run("-m", "vision.suited_reader", "--deck", "standard52", "--thresholds-only", "--out",
                           str(tmp_path / "none"), timeout=120), "--out")
    assert not (tmp_path / "none").exists()
    _one_line_refusal(_run("-m", "vision.suited_reader", "--deck", "island54", "--real", str(tmp_path), "--smoke",
                           "--out", str(tmp_path / "m"), "--work", str(tmp_path / "w"), timeout=300), "--real")
    assert not (tmp_path / "m").exists() and not (tmp_path / "w").exists()
    for opt in ("--hands", "--calib-hands"):
        _one_line_refusal(_run("-m", "vision.suited_reader", "--deck", "standard52", opt, "-1", "--smoke", "--out",
                               str(tmp_path / "m"), "--work", str(tmp_path / "w"), timeout=120),
                          f"python -m vision.suited_reader: argument {opt}: must be >= 0, got -1")
        assert not (tmp_path / "m").exists() and not (tmp_path / "w").exists()
    for bad, said in (("-4", "must be 0..1000000, got -4"), ("\u0661\u0662", "expected a whole number"),
                      ("1e3", "expected a whole number")):
        _one_line_refusal(_run("-m", "vision.suited_reader", "--deck", "standard52", "--data-seed", bad, "--smoke",
                               "--out", str(tmp_path / "m"), "--work", str(tmp_path / "w"), timeout=120),
                          f"python -m vision.suited_reader: argument --data-seed: {said}")
        assert not (tmp_path / "m").exists() and not (tmp_path / "w").exists()
    for bad, said in (("1.5", "must be"), ("nan", "")):
        _one_line_refusal(_run("-m", "vision.suited_reader", "--deck", "island54", "--lower-share", bad, "--smoke",
                               "--out", str(tmp_path / "m"), "--work", str(tmp_path / "w"), timeout=120),
                          f"python -m vision.suited_reader: argument --lower-share: {said}")
        assert not (tmp_path / "m").exists() and not (tmp_path / "w").exists()
    out = tmp_path / "bench.json"
    _one_line_refusal(_run("-m", "vision.suited_bench", "--hand-scenes", "-3", "--json", str(out), timeout=120),
                      "python -m vision.suited_bench: argument --hand-scenes: must be >= 0, got -3")
    assert not out.exists()


def test_the_benchs_blocks_are_the_next_equal_runs_of_each_sections_held_out_scenes():
    """``suited_bench --block k``: block 0 and block 1 of n scenes a section are, scene for scene, the bench of 2n
    (the counts add up); a block that would run into the next section's seeds is refused."""
    from vision.suited_bench import bench

    kw = {"frames": 0, "real": False, "far_scenes": 0, "out": lambda *a: None}
    b0, b1 = (bench(("standard52",), 2, 2, hand_scenes=1, block=k, **kw)["standard52"] for k in (0, 1))
    both = bench(("standard52",), 4, 4, hand_scenes=2, **kw)["standard52"]
    for sec in ("start", "overlaps", "hands"):
        for key in ("cards", "exact", "wrong_confident", "missed", "false_reads"):
            assert b0[sec][key] + b1[sec][key] == both[sec][key], (sec, key)
    assert b1["hands"]["cards"] > 0 and (b0["start"]["cards"], b0["start"]["exact"]) != (b1["start"]["cards"],
                                                                                     b1["start"]["exact"])
    with pytest.raises(ValueError, match="runs past"):
        bench(("standard52",), 50_001, 0, block=1, **kw)  # refused before a scene is made


def test_finish_by_is_the_next_time_the_clock_reads_it_and_refuses_what_is_no_time(tmp_path):
    import datetime as dt

    from vision.suited_reader import finish_time

    now = dt.datetime(2026, 11, 26, 23, 5, 30, tzinfo=dt.timezone.utc)
    assert finish_time("00:15", now) == dt.datetime(2026, 11, 27, 0, 15, tzinfo=dt.timezone.utc)  # past midnight
    assert finish_time("23:40", now) == dt.datetime(2026, 11, 26, 23, 40, tzinfo=dt.timezone.utc)
    assert finish_time("7:05", now) == dt.datetime(2026, 11, 27, 7, 5, tzinfo=dt.timezone.utc)
    assert finish_time("23:05", now) == dt.datetime(2026, 11, 27, 23, 5, tzinfo=dt.timezone.utc)  # just gone
    for bad in ("24:00", "12:60", "12", "12:5", " 12:05", "\u0661\u0662:05", "-1:05", "12:05:00", ""):
        with pytest.raises(ValueError):
            finish_time(bad, now)
    _one_line_refusal(_run("-m", "vision.suited_reader", "--deck", "standard52", "--finish-by", "25:00", "--smoke",
                           "--out", str(tmp_path / "m"), "--work", str(tmp_path / "w"), timeout=120),
                      "--finish-by '25:00'")
    assert not (tmp_path / "m").exists() and not (tmp_path / "w").exists()


def test_another_data_seed_makes_other_views_of_the_same_fonts():
    from vision.suited_reader import gen_suited_crops

    a = gen_suited_crops("standard52", 6, seed=11)
    b = gen_suited_crops("standard52", 6, seed=11)
    c = gen_suited_crops("standard52", 6, seed=21)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))  # a seed is a view set: the cache may stand for it
    assert a[0].shape[1:] == c[0].shape[1:] and not np.array_equal(a[0][:len(c[0])], c[0][:len(a[0])])


def test_committed_models_stay_small():
    sizes = {f.name: f.stat().st_size for f in MODELS.iterdir() if f.is_file()}
    for deck in SUITED:
        assert sizes[f"{deck}_reader.int8.onnx"] < 1_000_000
        assert f"{deck}_reader.onnx" not in sizes  # only the int8 model is committed
        rep = json.loads((MODELS / f"{deck}_reader.json").read_text())
        assert rep["deck"] == deck and rep["thresholds"]["card"] >= 0.5 and rep["reliability_cards"]
    # issue #16's target: the committed models together <= 20 MB. Over it (a 26 MiB guard) from 2026-11-26, when the
    # suited decks got a detector of their own (card_det_suited, 3.5 MB), to session 67, when the detector's float
    # weights (card_det.pt, 6.4 MB) and the index reader's state dict (0.8 MB) left models/: the comparison backends
    # recover the float detector from its int8 file (vision.det_recover), and a training run writes both files
    # again beside the models (git ignores them). Counted over what git tracks, so such a run's files do not count.
    tracked = subprocess.run(["git", "ls-files", "-z", "models"], cwd=ROOT, capture_output=True, text=True, check=True)
    committed = [ROOT / f for f in tracked.stdout.split("\0") if f]
    names = {f.name for f in committed}
    assert {"card_det.int8.onnx", "card_det_suited.int8.onnx", "island54_reader.int8.onnx"} <= names
    assert "card_det.pt" not in names and all(f.is_file() for f in committed)
    assert sum(f.stat().st_size for f in committed) <= 20_000_000


def _edje_like(tmp_path):
    """Two rendered standard52 scenes, and a writer of photos with labels laid out as edje-pinochle/ (whole-card
    boxes, rank only, the source's split) under tmp_path."""
    from vision.synth.suited import make_deck_scene

    folder = tmp_path / "edje-pinochle"
    folder.mkdir()
    scenes = [make_deck_scene(5, "standard52", "start"), make_deck_scene(6, "standard52", "start")]

    def write(name, scene, split, relabel=None, extra=()):
        cards = [{"label": (relabel(c.card[:-1]) if relabel else c.card[:-1]) + "?",
                  "box": [float(v) for v in (*c.quad.min(0), *c.quad.max(0))]} for c in scene.cards]
        cards += [{"label": "9?", "box": list(b)} for b in extra]
        cv2.imwrite(str(folder / f"{name}.jpg"), scene.image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        (folder / f"{name}.json").write_text(json.dumps({"image": f"{name}.jpg", "split": split, "cards": cards}))

    return scenes, write


def test_real_training_views_come_from_the_train_photos_only_labelled_by_rank(tmp_path):
    from companion.decks import get_deck
    from vision.corner import CORNER_H, CORNER_W
    from vision.suited_bench import edje_train_views
    from vision.suited_reader import SuitedScanner, deck_codes

    from vision.synth.suited import make_deck_scene

    scenes, write = _edje_like(tmp_path)
    write("a", scenes[0], "train")
    write("b", scenes[1], "test")
    codes = deck_codes("standard52")
    sc = SuitedScanner("standard52")
    C, R, L, n = edje_train_views(sc, tmp_path, copies=3)
    assert n["photos"] == 1 and n["boxes"] == len(scenes[0].cards)  # the test photo is never looked at
    assert n["cards"] >= len(scenes[0].cards) - 1 and len(C) == 3 * n["corners"] == len(R) == len(L)
    assert n["indices"] == 0
    # a fanned hand (cards the scan sees as lone corner indices only): their index views with indices=True
    fan = make_deck_scene(0, "standard52", "fan")
    write("f", fan, "train")
    C2, R2, _L2, n2 = edje_train_views(sc, tmp_path, copies=3, indices=True)
    assert n2["photos"] == 2 and n2["indices"] >= 1 and len(C2) == 3 * (n2["corners"] + n2["indices"])
    d0 = get_deck("standard52")
    assert set(R2[len(C):].tolist()) <= {codes.ranks.index(d0.parse(c.card).rank) for c in fan.cards}
    assert C.shape[1:] == (CORNER_H, CORNER_W, 3) and C.dtype == np.uint8
    assert (L == -100).all()  # the suit is not labelled: no loss on it
    d = get_deck("standard52")
    a_ranks = {codes.ranks.index(d.parse(c.card).rank) for c in scenes[0].cards}
    assert set(R.tolist()) <= a_ranks and len(set(R.tolist())) >= len(a_ranks) - 1
    assert not all(np.array_equal(C[0], C[k]) for k in range(1, 3))  # jittered copies, not one view thrice


def test_real_photo_figures_count_the_detectors_part_and_each_split_apart(tmp_path):
    """``suited_bench.real_edje`` on a folder laid out as edje-pinochle/ (whole-card boxes, rank only, the
    source's train / test split), here filled with rendered scenes: a box holding no card is not found; a
    mislabelled card read by the camera counts as wrong; each split is counted apart and the splits add up."""
    from vision.suited_bench import real_edje
    from vision.suited_reader import SuitedScanner

    scenes, write = _edje_like(tmp_path)
    ranks = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    write("a", scenes[0], "train")
    write("b", scenes[1], "test", extra=[(0.0, 0.0, 30.0, 20.0)])  # inside the scene's margin: no card there
    write("c", scenes[1], "test", relabel=lambda r: ranks[(ranks.index(r) + 5) % 13])
    st = real_edje(SuitedScanner("standard52"), tmp_path)
    n0, n1 = len(scenes[0].cards), len(scenes[1].cards)
    tr, te = st["by_split"]["train"], st["by_split"]["test"]
    assert (tr["images"], te["images"], st["images"]) == (1, 2, 3)
    assert (tr["cards"], te["cards"], st["cards"]) == (n0, 2 * n1 + 1, n0 + 2 * n1 + 1)
    for k in ("found", "right", "wrong_confident", "unread"):
        assert tr[k] + te[k] == st[k], k
    for t in (st, tr, te):
        assert t["right"] + t["wrong_confident"] + t["unread"] == t["cards"]
    assert tr["found"] == n0 and te["found"] == 2 * n1  # every card is found; the empty box is not
    assert tr["wrong_confident"] == 0 and tr["right"] >= n0 // 2
    # photo c: every card the camera names in photo b is named in c too, and is wrong there
    assert te["right"] >= n1 // 2 and te["wrong_confident"] >= te["right"]
    assert st["found_pct"] == round(100 * st["found"] / st["cards"], 2)


def test_a_read_unsure_of_its_card_but_sure_of_its_rank_names_the_rank_alone():
    from vision.suited_reader import DEFAULT_THRESHOLDS, SuitedScanner, deck_codes

    codes = deck_codes("standard52")
    sc = SuitedScanner("standard52")
    assert sc.card_rank_min <= 1.0 and sc.index_rank_min <= 1.0  # the committed report has rank bars
    q = np.array([[0, 0], [60, 0], [60, 90], [0, 90]], np.float32)
    queen = [codes.code(c) for c in codes.cards if codes.rank_text(codes.code(c)) == "Q"]
    p = np.full(codes.n, 1e-6)
    p[queen] = [0.5, 0.3, 0.15, 0.05]  # a queen for sure, of which suit not
    p /= p.sum()
    for kind, bar in (("card", sc.card_rank_min), ("index", sc.index_rank_min)):
        rd = sc._read(kind, q, p)
        j = rd.to_json()
        assert rd.code is None and rd.card() is None and j["card"] is None and j["suit"] is None
        assert j["rank"] == "Q" and abs(j["confidence"] - 0.5) < 1e-3  # the confidence stays the card's
        assert rd.unread().to_json()["rank"] is None
        # the rank's probability just under the bar: nothing named
        p2 = p.copy()
        p2[queen] *= (bar - 1e-4) / p2[queen].sum()
        rest = [k for k in range(codes.n) if k not in queen]
        p2[rest] = (1 - p2[queen].sum()) / len(rest)
        assert sc._read(kind, q, p2).to_json()["rank"] is None
    # a sure card is read whole
    p3 = np.full(codes.n, 1e-9)
    p3[queen[0]] = 1.0
    j = sc._read("card", q, p3 / p3.sum()).to_json()
    assert j["card"] is not None and j["rank"] == "Q" and j["suit"] is not None
    # a reader whose report has no rank bars never names a rank alone
    assert DEFAULT_THRESHOLDS["card_rank"] > 1 and DEFAULT_THRESHOLDS["index_rank"] > 1
    sc.card_rank_min, sc.index_rank_min = DEFAULT_THRESHOLDS["card_rank"], DEFAULT_THRESHOLDS["index_rank"]
    assert sc._read("card", q, p).to_json()["rank"] is None


def test_real_bidly_through_the_scan_scores_each_labelled_index_box(tmp_path):
    """``suited_bench.real_bidly_scan`` on a folder laid out as bidly/ (corner-index boxes labelled rank + suit),
    filled with a rendered fanned hand: the photo is scanned whole, each visible index box scored by the reads that
    cover it; a box on empty table is not found; the same photo with every label moved to another card turns what
    was right into wrong with confidence."""
    from companion.decks import get_deck
    from vision.suited_bench import real_bidly_scan
    from vision.suited_reader import SuitedScanner
    from vision.synth.suited import make_deck_scene

    folder = tmp_path / "bidly"
    folder.mkdir()
    sc = make_deck_scene(3, "standard52", "fan")  # the scan names 3 of its 4 cards
    d = get_deck("standard52")
    names = [d.notation(c) for c in d.cards]

    def write(name, relabel=lambda x: x, extra=()):
        boxes = [{"label": relabel(c.card), "box": [float(v) for v in (*q.min(0), *q.max(0))]}
                 for c in sc.cards for q, v in zip(c.index_quads, c.index_visible) if v >= 0.9]
        boxes += [{"label": "2S", "box": list(b)} for b in extra]
        cv2.imwrite(str(folder / f"{name}.jpg"), sc.image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        (folder / f"{name}.json").write_text(json.dumps({"image": f"{name}.jpg", "cards": boxes}))
        return len(boxes)

    n = write("a", extra=[(0.0, 0.0, 20.0, 30.0)])  # the scene's corner: no card there
    scanner = SuitedScanner("standard52")
    st = real_bidly_scan(scanner, tmp_path)
    assert (st["images"], st["indices"]) == (1, n)
    assert st["right"] + st["wrong_confident"] + st["unread"] == n
    assert st["found"] <= n - 1 and st["found"] >= (n - 1) // 2  # the empty box is not found
    assert st["right"] >= 1 and st["wrong_confident"] == 0
    write("b", relabel=lambda x: names[(names.index(x) + 7) % 52])  # every label names another card
    st2 = real_bidly_scan(scanner, tmp_path)
    assert st2["images"] == 2 and st2["wrong_confident"] >= st["right"]
    assert st2["right_pct"] == round(100 * st2["right"] / st2["indices"], 2)


def test_real_photo_scores_resolved_take_a_read_in_two_labelled_boxes_as_the_one_it_names(tmp_path):
    """Labelled boxes overlap on real photos (edje-pinochle's are whole visible cards): a right read of one card can
    lie in its neighbour's box too. The strict count calls it a mistake in the neighbour's box; ``resolved`` takes
    it as the read of the box whose label it names, and changes nothing else."""
    from vision.suited_bench import real_bidly_scan, real_edje
    from vision.suited_reader import SuitedScanner

    scenes, write = _edje_like(tmp_path)
    h, w = scenes[0].image.shape[:2]
    write("a", scenes[0], "train", extra=[(0.0, 0.0, float(w), float(h))])  # a "9" box around the whole photo
    scanner = SuitedScanner("standard52")
    st = real_edje(scanner, tmp_path)
    r = st["resolved"]
    assert st["cards"] == len(scenes[0].cards) + 1
    assert r["right"] + r["wrong_confident"] + r["unread"] == st["cards"]
    ranks = {c.card[:-1] for c in scenes[0].cards}
    assert len(ranks) >= 2 and st["right"] >= 2
    # strictly, the big box holds reads naming other ranks than 9: a mistake; resolved, each is its own box's read
    assert st["wrong_confident"] == 1 and r["wrong_confident"] == 0
    assert r["right"] == st["right"] + ("9" in ranks)  # the big box is right only if some card there is a 9
    assert st["by_split"]["train"]["resolved"] == r

    # bidly: a box round the whole photo labelled with a card that is not there
    folder = tmp_path / "bidly"
    folder.mkdir()
    sc = scenes[0]
    boxes = [{"label": c.card, "box": [float(v) for v in (*q.min(0), *q.max(0))]}
             for c in sc.cards for q, v in zip(c.index_quads, c.index_visible) if v >= 0.9]
    absent = next(x for x in ("2S", "3S", "4S", "5S") if x not in {c.card for c in sc.cards})
    cv2.imwrite(str(folder / "a.jpg"), sc.image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    (folder / "a.json").write_text(json.dumps({"image": "a.jpg", "cards": boxes}))
    base = real_bidly_scan(scanner, tmp_path)
    assert base["resolved"]["wrong_confident"] == base["wrong_confident"] == 0
    assert base["resolved"]["right"] == base["right"] >= 2
    boxes.append({"label": absent, "box": [0.0, 0.0, float(w), float(h)]})
    (folder / "a.json").write_text(json.dumps({"image": "a.jpg", "cards": boxes}))
    b = real_bidly_scan(scanner, tmp_path)
    assert b["wrong_confident"] == 1 and b["resolved"]["wrong_confident"] == 0
    assert b["resolved"]["right"] == b["right"] == base["right"] and b["resolved"]["unread"] == base["unread"] + 1


def test_the_suited_bench_runs_with_no_timing_frames():
    """``--frames 0``: the figures without a timing (it once failed on an empty frame list); one far scene."""
    from vision.suited_bench import bench

    lines = []
    res = bench(("standard52",), scenes=1, overlap_scenes=1, frames=0, real=False, hand_scenes=0, out=lines.append,
                far_scenes=1)
    assert "timing" not in res["standard52"] and res["standard52"]["start"]["scenes"] == 1
    assert res["standard52"]["far"]["scenes"] == 1 and any(" far " in s for s in lines)
    assert lines and not any("timing" in s for s in lines)


def test_scan_refuses_a_model_file_that_is_no_such_model_in_one_line(tmp_path):
    """A suited deck's ``--models`` folder with the other deck's reader under its name, or a truncated detector: one
    line naming the file, exit 2, nothing written (the heads of another deck would read nonsense)."""
    import shutil

    img = ROOT / "tests" / "fixtures" / "camera" / "start_a.jpg"
    for name, src, cut, said in [("standard52_reader.int8.onnx", "island54_reader.int8.onnx", None,
                                  "standard52_reader.int8.onnx: not a reader of standard52"),
                                 ("card_det_suited.int8.onnx", "card_det_suited.int8.onnx", 5000,
                                  "card_det_suited.int8.onnx")]:
        d = tmp_path / name.split(".")[0]
        d.mkdir()
        for f in ("standard52_reader.int8.onnx", "card_det_suited.int8.onnx"):
            shutil.copy(MODELS / f, d)
        data = (MODELS / src).read_bytes()
        (d / name).write_bytes(data[:cut] if cut else data)
        r = _run("-m", "companion", "scan", str(img), "--deck", "standard52", "--models", str(d), "--json", timeout=120)
        _one_line_refusal(r, f"model file in {d} cannot be loaded: ")
        assert said in r.stderr, r.stderr
        assert sorted(p.name for p in d.iterdir()) == ["card_det_suited.int8.onnx", "standard52_reader.int8.onnx"]


@pytest.mark.parametrize("report,said", [
    ('{"thresholds": {"card": NaN}}', "threshold 'card' must be a number from 0 to 1.01 or true/false, not 'nan'"),
    ('{"thresholds": {"index": 7}}', "threshold 'index' must be a number from 0 to 1.01 or true/false, not '7'"),
    ('{"thresholds": {"second_look": "yes"}}', "threshold 'second_look' must be"),
    ('{"thresholds": ', "not a reader's report (JSONDecodeError)"),
    ('[1, 2]', "not a reader's report (AttributeError)"),
])
def test_scan_refuses_a_readers_report_with_nonsense_bars_in_one_line(tmp_path, report, said):
    """The report beside a reader holds the bars that decide what is read: NaN, a bar out of range or a look that is
    no true/false is refused in one line naming the file, never used."""
    import shutil

    d = tmp_path / "m"
    d.mkdir()
    for f in ("standard52_reader.int8.onnx", "card_det_suited.int8.onnx"):
        shutil.copy(MODELS / f, d)
    (d / "standard52_reader.json").write_text(report)
    img = ROOT / "tests" / "fixtures" / "camera" / "start_a.jpg"
    r = _run("-m", "companion", "scan", str(img), "--deck", "standard52", "--models", str(d), "--json", timeout=120)
    _one_line_refusal(r, f"model file in {d} cannot be loaded: standard52_reader.json: ")
    assert said in r.stderr, r.stderr
