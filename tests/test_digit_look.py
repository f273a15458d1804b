"""The digit look (session 86, ``vision/digit_look.py``): the corner reader's word on the views whose rank a suited
reader is unsure of, through a confusion table fitted on calibration views."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scan_switches import linked_models, linked_with_report, write_report

import vision.digit_look as dl
from vision.suited_reader import MODELS, SuitedReader, SuitedScanner, deck_codes
from font_lists import calibration_99

ROOT = Path(__file__).resolve().parent.parent


def _q(cls: int, conf: float) -> np.ndarray:
    q = np.full(dl.N_CLASSES, (1 - conf) / (dl.N_CLASSES - 1))
    q[cls] = conf
    return q


def test_an_observation_is_the_surest_class_and_its_confidence_bin():
    q = np.stack([_q(2, 0.3), _q(3, 0.95), _q(9, 0.9995), _q(0, 0.5), _q(4, 0.999), _q(8, 0.9)])
    nb = len(dl.BINS)
    assert dl.observation(q).tolist() == [2 * nb + 0, 3 * nb + 2, 9 * nb + 4, 0 * nb + 1, 4 * nb + 4, 8 * nb + 2]


def test_the_table_counts_what_was_seen_with_half_a_count_everywhere():
    classes = np.array([0, 0, 0, 1])
    obs = np.array([7, 7, 3, 7])
    t = dl.fit_table(classes, obs, 3)
    cols = dl.N_CLASSES * len(dl.BINS)
    assert t.shape == (3, cols) and np.allclose(t.sum(1), 1)
    assert t[0, 7] == pytest.approx(2.5 / (3 + 0.5 * cols)) and t[0, 3] == pytest.approx(1.5 / (3 + 0.5 * cols))
    assert t[2, 7] == pytest.approx(1 / cols)  # a class never seen: flat


O5 = 5 * len(dl.BINS) + 4  # the corner reader's observation "class 5 at 0.999 or over"


def _table(weights: dict) -> np.ndarray:
    """A table for three ranks and "no index": every observation equally likely, but O5 weighed ``weights[r]`` for
    rank r (1 where not given)."""
    table = np.full((4, dl.N_CLASSES * len(dl.BINS)), 1.0)
    for r, w in weights.items():
        table[r, O5] = w
    return table / table.sum(1, keepdims=True)


def test_fusing_leaves_sure_views_alone_and_moves_an_unsure_one_by_the_table():
    # the table says O5 comes from rank 1 far more often than from rank 0
    table, o = _table({1: 50.0}), O5
    pr = np.array([[0.9995, 0.0003, 0.0001, 0.0001],  # sure: untouched
                   [0.55, 0.44, 0.005, 0.005]])  # torn between ranks 0 and 1
    q = np.stack([_q(5, 0.9995), _q(5, 0.9995)])
    for power in (0.5, 1.0):
        out = dl.fuse(pr, q, table, power)
        assert np.array_equal(out[0], pr[0])
        want = pr[1] * table[:, o] ** power
        assert np.allclose(out[1], want / want.sum()) and out[1].argmax() == 1
    assert np.array_equal(dl.fuse(pr, q, table, 1.0, below=0.5), pr)  # no view under the bar: nothing changes


def test_confirming_never_turns_a_view_to_another_rank():
    table = _table({1: 50.0, 2: 20.0})
    pr = np.array([[0.55, 0.44, 0.005, 0.005],  # leans to rank 0; the corner reader's word would turn it to rank 1
                   [0.30, 0.60, 0.05, 0.05]])  # leans to rank 1 already: made surer of it
    q = np.stack([_q(5, 0.9995), _q(5, 0.9995)])
    plain, confirmed = dl.fuse(pr, q, table, 1.0), dl.fuse(pr, q, table, 1.0, confirm=True)
    assert plain[0].argmax() == 1 and np.array_equal(confirmed[0], pr[0])
    assert np.allclose(confirmed[1], plain[1]) and confirmed[1, 1] > pr[1, 1]


def _folder(tmp_path: Path, deck: str, look: dict | None, name: str = "models") -> Path:
    """A models folder of links to the committed files, the deck's report copied: with ``look`` switched on, or
    without any digit look."""
    d = tmp_path / name
    d.mkdir()
    rep, rep_path = linked_with_report(d, deck)
    rep["thresholds"].pop("digit_look", None)
    rep.pop("digit_look", None)
    if look is not None:
        rep["thresholds"]["digit_look"] = True
        rep["digit_look"] = look
    write_report(rep_path, rep)
    return d


def _look(deck: str, power: float = 1.0, seed: int = 0) -> dict:
    n = len(deck_codes(deck).ranks) + 1
    t = np.random.default_rng(seed).random((n, dl.N_CLASSES * len(dl.BINS))) + 0.05
    return {"power": power, "below": dl.BELOW, "bins": list(dl.BINS), "reader": dl.DIGIT_READER,
            "table": (t / t.sum(1, keepdims=True)).tolist()}


def _views(deck: str):
    """The views a scan reads on one calibration start scene: every found card's four corner regions."""
    from vision import corner as cr
    from vision.synth.suited import make_deck_scene

    scene = make_deck_scene(15_090_000, deck, "start", fonts=calibration_99())
    views = []
    for c in scene.cards:
        for o in (0, 1):  # both readings of which pair of sides is long, as the scanner reads an unsure card
            views += cr.corner_regions(np.roll(c.quad, -o, axis=0))
    return scene.image, views


@pytest.mark.parametrize("deck", ["standard52", "island54"])
def test_the_reader_multiplies_in_the_corner_readers_word_on_its_unsure_views(tmp_path, deck):
    from vision import corner as cr

    look = _look(deck)
    with_look = SuitedReader(deck, _folder(tmp_path, deck, look), threads=1)
    plain = SuitedReader(deck, _folder(tmp_path, deck, None, "plain"), threads=1)
    assert with_look.digit is not None and plain.digit is None
    frame, views = _views(deck)
    pr0, pl0 = plain.heads(frame, views)
    pr1, pl1 = with_look.heads(frame, views)
    assert np.array_equal(pl0, pl1)
    import cv2

    grey = np.stack([cv2.cvtColor(cr.crop_region(frame, v), cv2.COLOR_BGR2GRAY) for v in views])
    from vision.ortsession import session

    q = cr._softmax(session(MODELS / dl.DIGIT_READER, 1).run(None, {"crop": cr.normalize(grey)})[0])
    want = dl.fuse(pr0, q, np.array(look["table"]), look["power"])
    assert np.allclose(pr1, want, atol=1e-6)
    unsure = pr0[:, :-1].max(1) < dl.BELOW
    assert unsure.any() and (~unsure).any()  # both kinds of view on the scene: the test sees the bar at work
    assert np.array_equal(pr1[~unsure], pr0[~unsure]) and not np.allclose(pr1[unsure], pr0[unsure])


def test_only_the_unsure_views_are_read_again(tmp_path, monkeypatch):
    deck = "island54"
    reader = SuitedReader(deck, _folder(tmp_path, deck, _look(deck)), threads=1)
    seen = []
    run = reader.digit.sess.run

    class Spy:
        def run(self, names, feed):
            seen.append(len(feed["crop"]))
            return run(names, feed)

    reader.digit.sess = Spy()
    frame, views = _views(deck)
    pr = reader.heads(frame, views)[0]
    raw = SuitedReader(deck, _folder(tmp_path, deck, None, "plain"), threads=1).heads(frame, views)[0]
    assert seen == [int((raw[:, :-1].max(1) < dl.BELOW).sum())] and 0 < seen[0] < len(views)
    assert pr.shape == raw.shape


def test_a_look_off_in_far_frames_reads_them_as_the_reader_alone(tmp_path):
    deck = "standard52"
    look = dict(_look(deck), far=False)
    reader = SuitedReader(deck, _folder(tmp_path, deck, look), threads=1)
    plain = SuitedReader(deck, _folder(tmp_path, deck, None, "plain"), threads=1)
    frame, views = _views(deck)
    near = reader.heads(frame, views)[0]
    reader.far_frame = True  # what SuitedScanner.scan sets while it reads a frame that looks far
    assert np.array_equal(reader.heads(frame, views)[0], plain.heads(frame, views)[0])
    assert not np.allclose(near, plain.heads(frame, views)[0])
    sc = SuitedScanner(deck, _folder(tmp_path, deck, look, "scanner"), threads=1)
    calls = []
    apply = sc.reader.digit.apply
    sc.reader.digit.apply = lambda crops, pr: calls.append(len(crops)) or apply(crops, pr)
    dets, _far = sc.detect(frame)
    sc.scan(frame, (dets, True))  # a frame that looks far: the look stays out
    assert calls == [] and sc.reader.far_frame is False  # and the flag is reset after the scan
    sc.scan(frame, (dets, False))
    assert calls  # the same frame near: the look reads


def test_the_face_reader_and_a_taught_deck_never_take_the_look(tmp_path):
    deck = "standard52"
    folder = _folder(tmp_path, deck, _look(deck))
    sc = SuitedScanner(deck, folder, threads=1)
    assert sc.reader.digit is not None
    assert sc.face is not None and sc.face.digit is None

    class Profile:  # what SuitedReader asks of a taught deck's profile before any view
        pass

    assert SuitedReader(deck, folder, threads=1, profile=Profile()).digit is None


@pytest.mark.parametrize("change, why", [
    (lambda d: d.pop("digit_look"), "no table"),
    (lambda d: d["digit_look"].update(power=0), "power"),
    (lambda d: d["digit_look"].update(power=True), "power"),
    (lambda d: d["digit_look"].update(power=float("nan")), "power"),
    (lambda d: d["digit_look"].update(below=1.5), "below"),
    (lambda d: d["digit_look"].update(bins=[0, 0.5]), "bins"),
    (lambda d: d["digit_look"].update(confirm="yes"), "confirm"),
    (lambda d: d["digit_look"].update(far=1), "far"),
    (lambda d: d["digit_look"].update(table=d["digit_look"]["table"][:-1]), "table"),
    (lambda d: d["digit_look"]["table"][0].__setitem__(0, float("nan")), "table"),
    (lambda d: d["digit_look"]["table"][0].__setitem__(0, -0.1), "table"),
    (lambda d: d["digit_look"]["table"][0].__setitem__(0, 0.9), "table"),  # the row no longer sums to 1
    (lambda d: d["digit_look"].update(table="x"), "table"),
])
def test_a_nonsense_look_is_refused_naming_the_file(tmp_path, change, why):
    deck = "standard52"
    folder = _folder(tmp_path, deck, _look(deck))
    rep = folder / f"{deck}_reader.json"
    d = json.loads(rep.read_text(encoding="utf-8"))
    change(d)
    rep.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(ValueError) as e:
        SuitedReader(deck, folder, threads=1)
    assert "standard52_reader.json" in str(e.value) and why in str(e.value)


def _cli(*args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "vision.digit_look", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600)


def test_fit_refuses_bad_input_in_one_line_and_writes_nothing(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    linked = tmp_path / "linked"
    linked_models(linked)
    before = (MODELS / "standard52_reader.json").read_bytes()
    for args, what in ((["--out", str(empty)], "no standard52_reader.json"),
                       (["--out", str(linked)], "a link"),
                       (["--out", str(empty), "--power", "nan"], "--power"),
                       (["--out", str(empty), "--cards", "0"], "--cards")):
        r = _cli("fit", "--deck", "standard52", "--table-seed", "1", "--choose-seed", "2", *args)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("pirate-table: error: digit_look: ") and what in lines[0]
        assert "Traceback" not in r.stderr
    assert list(empty.iterdir()) == []
    assert (MODELS / "standard52_reader.json").read_bytes() == before


def test_fit_writes_a_table_that_the_reader_loads(tmp_path):
    from vision.fonts import split_fonts

    if not split_fonts("calibration"):
        pytest.fail("no TrueType fonts installed (scripts/system-deps.sh train)")
    deck = "island54"
    folder = _folder(tmp_path, deck, None)
    logs = []
    res = dl.fit(deck, folder, 86_001, 86_002, 12, threads=1, log=logs.append, power=0.5)
    assert res["power"] == 0.5 and res["power_chosen_by"] == "given" and len(logs) == len(dl.POWERS)
    assert set(res["by_power"]) == {"alone", *map(str, dl.POWERS)}
    rep = json.loads((folder / f"{deck}_reader.json").read_text(encoding="utf-8"))
    assert rep["thresholds"]["digit_look"] is True and rep["digit_look"]["fit"] == res
    assert SuitedReader(deck, folder, threads=1).digit.power == 0.5
