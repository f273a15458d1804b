"""``vision.suited_face``: the suited decks' face reader (a whole card's middle) and the scan's face look."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hostile import assert_refused_cleanly, recipe_cli
from scan_switches import linked_with_report

from vision.suited_face import FACE_BOX, face_region, gen_face_views, middle_tells

ROOT = Path(__file__).resolve().parent.parent


def test_the_face_region_is_the_cards_middle_clear_of_its_index_columns_wherever_the_card_lies():
    W, H = 63.0, 88.0
    card = np.array([[0, 0], [W, 0], [W, H], [0, H]], np.float32)
    x0, y0, x1, y1 = FACE_BOX
    assert np.allclose(face_region(card), [[x0 * W, y0 * H], [x1 * W, y0 * H], [x1 * W, y1 * H], [x0 * W, y1 * H]],
                       atol=1e-3)
    a = np.deg2rad(37.0)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], np.float32)
    moved = card @ rot.T + np.float32([400, 150])
    assert np.allclose(face_region(moved), face_region(card) @ rot.T + np.float32([400, 150]), atol=1e-2)
    # read the other way up, the middle is the same place with its corners turned half round
    assert np.allclose(face_region(np.roll(card, -2, axis=0)), np.roll(face_region(card), -2, axis=0), atol=1e-3)
    # clear of a corner index: the index column is the outer 0.15 of the card's width
    assert x0 > 0.15 and x1 < 0.85


def test_a_middle_tells_its_card_only_where_it_shows_its_rank():
    class S:
        def __init__(self, centre):
            self.centre = centre

    assert middle_tells(S("pips"), 5, False) and middle_tells(S("pips"), 1, False)
    assert middle_tells(S("big"), 1, False) and middle_tells(S("big"), 0, True)  # an ace's symbol, a court's rank
    assert not middle_tells(S("big"), 5, False)  # one big symbol on a five: the suit shows, the rank does not
    assert not middle_tells(S("plain"), 5, False) and not middle_tells(S("plain"), 0, True)


def test_face_views_label_a_middle_that_does_not_tell_as_nothing_and_both_ways_up_alike():
    from vision.suited_reader import deck_codes

    C, R, L = gen_face_views("island54", 40, seed=5)
    nr = len(deck_codes("island54").ranks)
    assert C.shape[1:] == (56, 42, 3) and C.dtype == np.uint8 and len(C) == len(R) == len(L)
    assert ((R == nr) == (L == -100)).all()  # "does not tell" has no suit; every telling view has one
    assert 0 < (R < nr).sum() < len(R)
    # the views of a card come upright then half turned, with the same label; a quarter turn tells nothing
    i, pairs = 0, 0
    while i + 1 < len(R):
        if R[i] < nr:
            assert R[i + 1] == R[i] and L[i + 1] == L[i]
            pairs += 1
            i += 2
        else:
            i += 1
    assert pairs >= 10
    again = gen_face_views("island54", 40, seed=5)
    assert all((a == b).all() for a, b in zip((C, R, L), again))  # a pure function of the seed


@pytest.mark.slow
def test_the_face_reader_trains_and_the_scan_reads_an_unsure_cards_middle_with_it(tmp_path):
    """The recipe's smoke run writes a face reader the scanner loads; the face look multiplies its reading into an
    unsure card's posterior, weighed by P(the middle tells), and leaves sure cards and cards with no legible index
    alone; the bars' rule tries it and says whether it is kept."""
    from vision.suited_face import face_path
    from vision.suited_reader import CARD_TEMP, FACE_WEIGHT, SuitedScanner, calibration_scenes, set_thresholds

    models = tmp_path / "models"
    shutil.copytree(ROOT / "models", models)
    for f in models.glob("*_face.*"):  # the committed face readers: this test makes its own
        f.unlink()
    r = recipe_cli("vision.suited_face")("--deck", "standard", "--smoke", "--out", str(models))
    assert r.returncode == 0, r.stderr
    rep = json.loads((models / "standard52_face.json").read_text())
    assert rep["deck"] == "standard52" and rep["init"] == "standard52_reader.pt" and 0.1 < rep["temperature"] < 10
    assert sorted(x.name for x in models.iterdir() if "face" in x.name) == ["standard52_face.int8.onnx",
                                                                            "standard52_face.json",
                                                                            "standard52_face.pt"]
    for init in ("standard52_face.pt", "standard52_face.int8.onnx"):  # a face reader goes on from either
        again = tmp_path / init.replace(".", "_")
        r = recipe_cli("vision.suited_face")("--deck", "standard52", "--smoke", "--init", str(models / init),
                                             "--out", str(again))
        assert r.returncode == 0, r.stderr
        assert json.loads((again / "standard52_face.json").read_text())["init"] == init
    sc = SuitedScanner("standard52", models, threads=1)
    assert sc.face is not None and sc.face_look  # the committed report keeps the face look for standard52 ...
    island = SuitedScanner("island54", models, threads=1)
    assert island.face is None and not island.face_look  # ... and so for island54, but it has no face reader here

    quad = np.array([[500, 200], [600, 210], [590, 350], [490, 340]], np.float32)
    frame = (np.random.default_rng(1).random((720, 1280, 3)) * 255).astype(np.uint8)
    sure = np.full(52, -30.0)
    sure[7] = 0.0
    unsure = np.log(np.full(52, 1 / 52))
    logps = [sure.copy(), unsure.copy(), unsure.copy()]
    sc.suit_look = False  # the face look alone (a noise frame's centre holds "ink": the suit look has its own test)
    sc._face_look(frame, logps, [quad, quad, quad], [("views", None, None), ("views", None, None), None])
    p, pn = sc.face.read(frame, [face_region(quad)])
    assert (logps[0] == sure).all() and (logps[2] == unsure).all()  # a sure card; a card with no legible index
    want = unsure + CARD_TEMP * FACE_WEIGHT * (1 - pn[0]) * np.log(np.maximum(p[0], 1e-12))
    assert np.allclose(logps[1], want)

    rep = json.loads((models / "standard52_reader.json").read_text())
    th = set_thresholds("standard52", models, rep, threads=1, calib_scenes=2, calib_hands=1)["thresholds"]
    assert "face_look" in th and "calibration_scenes_with_face_look" in rep
    assert "suit_look" not in th  # judged by its own rule beside the reader it was kept with, not by the bars' rule
    assert SuitedScanner("standard52", models, threads=1).face_look == th["face_look"]
    assert face_path("standard52", models).is_file() and len(calibration_scenes("standard52", 2, 1)) == 3


def test_the_face_recipe_refuses_bad_options_in_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    a_file = tmp_path / "f.txt"
    a_file.write_text("x")
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"\x80\x04not a pickle")
    a_file.with_suffix(".onnx").write_bytes(b"not onnx")
    p = "python -m vision.suited_face: "
    cases = [
        (["--deck", "pirates72"], p + "--deck: pirates72: not a suited deck"),
        (["--deck", "tarot"], p + "--deck:"),
        (["--deck", "island", "--steps", "0"], p + "argument --steps:"),
        (["--deck", "island", "--lr", "nan"], p + "argument --lr:"),
        (["--deck", "island", "--data-seed", "٣١"], p + "argument --data-seed:"),
        (["--deck", "island", "--init", str(tmp_path / "x.pt")], p + "--init: "),
        (["--deck", "island", "--init", str(junk)], p + "--init: "),
        (["--deck", "island", "--init", str(a_file.with_suffix(".onnx"))], p + "--init: "),
        (["--deck", "island", "--init", str(ROOT / "models" / "standard52_face.int8.onnx")], p + "--init: "),
        (["--deck", "island", "--init", str(ROOT / "models" / "standard52_reader.pt")],
         p + "--init: " + str(ROOT / "models" / "standard52_reader.pt") + ": not a reader of island54"),
        (["--deck", "island", "--smoke", "--out", str(a_file)], p + "--out: "),
    ]
    run = recipe_cli("vision.suited_face")
    for args, start in cases:
        r = run(*(args if "--out" in args else args + ["--out", str(out)]), t=120)
        assert_refused_cleanly(r.returncode, r.stdout, r.stderr, what=args)
        assert r.stderr.startswith("pirate-table: error: " + start) and not out.exists(), (args, r.stderr)
    assert a_file.read_text() == "x" and sorted(x.name for x in tmp_path.iterdir()) == ["f.onnx", "f.txt", "junk.pt"]


def test_the_committed_face_readers_are_the_ones_the_bars_rule_kept():
    from vision.suited_reader import DECKS, SuitedScanner

    for deck in DECKS:
        rep = json.loads((ROOT / "models" / f"{deck}_reader.json").read_text())
        face = json.loads((ROOT / "models" / f"{deck}_face.json").read_text())
        assert face["deck"] == deck and face["init"] in (f"{deck}_reader.pt", f"{deck}_face.int8.onnx")  # or went on
        sc = SuitedScanner(deck, threads=1)
        assert sc.face is not None and sc.face_look == rep["thresholds"]["face_look"]
        assert rep["thresholds"]["face_look"]  # kept for both decks in session 46 ...
        # ... because it read more calibration cards exactly than every choice without it
        others = [v["exact"] for k, v in rep.items() if k.startswith("calibration_scenes_with") and "face" not in k]
        assert rep["calibration_scenes"] == rep["calibration_scenes_with_face_look"]
        assert len(others) == 4 and rep["calibration_scenes"]["exact"] > max(others)  # with/without the 2nd look,
        # the grown look, the turned look


def _card_face(deck: str, card: str, centre: str):
    """A card of ``deck`` in its printed style with the middle ``centre`` (pips, big, plain): BGR image at 4 px/mm."""
    from dataclasses import replace

    from companion.decks import get_deck
    from vision.decks.faces import faces_for

    faces = faces_for(deck)
    img, _iq = faces.render(get_deck(deck).parse(card), replace(faces.print_style(), centre=centre))
    return img


def _on_table(face: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """A 1280 x 720 frame of green baize with ``face`` lying at ``quad`` (TL, TR, BR, BL)."""
    import cv2

    h, w = face.shape[:2]
    M = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]), quad.astype(np.float32))
    frame = np.full((720, 1280, 3), (40, 110, 30), np.uint8)
    warped = cv2.warpPerspective(face, M, (1280, 720), flags=cv2.INTER_AREA)
    inside = cv2.warpPerspective(np.full((h, w), 255, np.uint8), M, (1280, 720)) > 127
    frame[inside] = warped[inside]
    return frame


def test_centre_ink_tells_one_big_symbol_or_a_court_from_a_plain_middle():
    from vision.suited_face import centre_ink
    from vision.suited_reader import SUIT_LOOK_INK

    for deck, cards in (("standard52", ("5H", "AS", "QC")), ("island54", ("5:crabs", "A:palms", "Q:skulls"))):
        for card in cards:
            face = _card_face(deck, card, "plain")
            h, w = face.shape[:2]
            quad = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
            assert centre_ink(face, quad) < SUIT_LOOK_INK / 2, (deck, card)  # paper only
            big = _card_face(deck, card, "big")
            assert centre_ink(big, quad) > 2 * SUIT_LOOK_INK, (deck, card)
            # the same read from the frame, the card lying turned on the table, either way up
            q = np.float32([[500, 150], [700, 190], [650, 470], [450, 430]])
            assert centre_ink(_on_table(face, q), q) < SUIT_LOOK_INK
            assert centre_ink(_on_table(big, q), q) > SUIT_LOOK_INK
            assert centre_ink(_on_table(big, q), np.roll(q, -2, axis=0)) > SUIT_LOOK_INK


def test_the_suit_look_gives_one_big_symbols_suit_and_leaves_a_plain_middle_alone(tmp_path):
    """A card unsure after its corners whose middle does not tell its rank: where its centre holds ink (one big
    symbol), the face reader's suit head multiplies in, weighed by P(the middle does not tell); a plain middle, a sure
    card and a card with no legible index are left as the face look leaves them. On by the reader's report only."""
    from vision.suited_face import face_region
    from vision.suited_reader import CARD_TEMP, FACE_WEIGHT, SuitedScanner

    rep, rep_path = linked_with_report(tmp_path, "standard52")
    for flag, face, want in ((None, True, False), (False, True, False), (True, True, True), (True, False, False)):
        th = {k: v for k, v in rep["thresholds"].items() if k != "suit_look"}
        if flag is not None:
            th["suit_look"] = flag
        rep_path.write_text(json.dumps({**rep, "thresholds": {**th, "face_look": face}}))
        assert SuitedScanner("standard52", tmp_path, threads=1).suit_look is want  # the face look's cards only
    sc = SuitedScanner("standard52", tmp_path, threads=1)
    q = np.float32([[500, 150], [700, 190], [650, 470], [450, 430]])
    unsure = np.log(np.full(52, 1 / 52))
    sure = np.full(52, -30.0)
    sure[7] = 0.0
    corner = ("views", None, None)
    for centre in ("big", "plain"):
        frame = _on_table(_card_face("standard52", "5H", centre), q)
        looked = {}
        for on in (False, True):
            sc.suit_look = on
            logps = [unsure.copy(), sure.copy(), unsure.copy()]
            sc._face_look(frame, logps, [q, q, q], [corner, corner, None])
            assert (logps[1] == sure).all() and (logps[2] == unsure).all()
            looked[on] = logps[0]
        pr, pl = sc.face.heads(frame, [face_region(q)])
        if centre == "plain":
            assert (looked[True] == looked[False]).all()
            continue
        assert pr[0, -1] > 0.5  # one big heart on a five: the middle does not tell the rank ...
        assert sc.codes.suits[int(pl[0].argmax())] == "H"  # ... but it shows the suit
        suit = np.tile(np.log(np.maximum(pl[0], 1e-12)), 13)
        assert np.allclose(looked[True] - looked[False], CARD_TEMP * FACE_WEIGHT * pr[0, -1] * suit)
        p = np.exp(looked[True] - looked[True].max())
        by_suit = (p / p.sum()).reshape(13, 4).sum(0)
        assert sc.codes.suits[int(by_suit.argmax())] == "H" and by_suit.max() > 0.9


def test_the_suit_look_is_on_only_where_its_rule_kept_it():
    """Rule S (session 72): on for a deck whose judge on fresh calibration scenes read more cards exactly, with
    confident mistakes at most floor(gain / 20) more than the committed scanner's. Rule U (session 73): for a taught
    deck of it only where decks taught in fresh calibration styles read more cards exactly with it and made no more
    mistakes (``taught_suit_look``)."""
    from vision.suited_reader import SuitedScanner

    class Same:  # a profile whose heads change nothing
        def heads(self, feat, zr, zl):
            return zr, zl

    for deck, key in (("standard52", "suit_look_session_72"), ("island54", "not_kept_session_72")):
        rep = json.loads((ROOT / "models" / f"{deck}_reader.json").read_text())
        judged = rep[key]["judge"]
        gain = sum(judged[s]["suit_look"]["exact"] - judged[s]["committed"]["exact"] for s in ("near", "far"))
        more_wrong = sum(judged[s]["suit_look"]["wrong_confident"] - judged[s]["committed"]["wrong_confident"]
                         for s in ("near", "far"))
        kept = gain > 0 and more_wrong <= gain // 20
        assert rep["thresholds"].get("suit_look", False) is kept is (deck == "standard52")
        assert SuitedScanner(deck, threads=1).suit_look is kept
        u = rep.get("taught_suit_look_session_73", {}).get("judge")
        taught = kept and u is not None and u["on"]["exact"] > u["off"]["exact"] and u["on"]["wrong"] <= u["off"]["wrong"]
        assert rep["thresholds"].get("taught_suit_look", False) is taught is (deck == "standard52")
        assert SuitedScanner(deck, threads=1, profile=Same()).suit_look is taught
