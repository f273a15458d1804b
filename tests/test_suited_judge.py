"""vision.suited_judge: model folders side by side on the same fresh calibration scenes and edje's train photos."""

import json
import subprocess
import sys
from pathlib import Path

import cv2
import pytest
from scan_switches import linked_models, linked_with_report, write_report

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"


def _edje_like(tmp_path):
    """An edje-pinochle/ folder of rendered standard52 scenes: two train photos and one test photo (whole-card boxes,
    rank only)."""
    from vision.synth.suited import make_deck_scene

    folder = tmp_path / "real" / "edje-pinochle"
    folder.mkdir(parents=True)
    for name, seed, split in (("train_a", 5, "train"), ("train_b", 6, "train"), ("test_c", 7, "test")):
        sc = make_deck_scene(seed, "standard52", "start")
        cards = [{"label": c.card[:-1] + "?", "box": [float(v) for v in (*c.quad.min(0), *c.quad.max(0))]}
                 for c in sc.cards]
        cv2.imwrite(str(folder / f"{name}.jpg"), sc.image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        (folder / f"{name}.json").write_text(json.dumps({"image": f"{name}.jpg", "split": split, "cards": cards}))
    return folder.parent


def test_the_plan_matches_the_keep_rules_seed_layout():
    from vision.suited_judge import plan

    p = plan(1, 13_100_000, 320, 200)  # island54, session 67's seeds A
    assert len(p["near"]) == 320 and len(p["far"]) == 200
    assert p["near"][0] == (13_110_000, "start", False) and p["near"][239] == (13_110_239, "mixed", False)
    assert p["near"][240] == (13_130_000, "hand", False) and p["near"][-1] == (13_130_079, "hand", False)
    assert p["far"][0] == (13_150_000, "start", True) and p["far"][3] == (13_150_003, "hand", True)
    seeds = [s for sec in p.values() for s, _l, _f in sec]
    assert len(set(seeds)) == len(seeds)  # no scene twice
    other = plan(0, 13_100_000, 320, 200)
    assert not set(seeds) & {s for sec in other.values() for s, _l, _f in sec}  # the two decks' scenes differ


def test_two_folders_read_the_same_scenes_and_the_train_photos_only(tmp_path):
    """The committed folder and a copy of it score alike on every section; edje's train photos are read, its test
    photo never opened; the JSON holds what was printed."""
    cand = tmp_path / "cand"
    # the detector, the reader, its face reader
    linked_models(cand, keep=lambda n: n == "card_det_suited.int8.onnx" or n.startswith("standard52_"))
    real = _edje_like(tmp_path)
    out = tmp_path / "judge.json"
    r = subprocess.run([sys.executable, "-m", "vision.suited_judge", str(MODELS), str(cand), "--seed", "13100000",
                        "--decks", "standard52", "--near", "4", "--far", "2", "--real", str(real), "--json", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads(out.read_text())
    near = res["decks"]["standard52"]["near"]
    assert near["scenes"] == 4 and near["seeds"] == [13_100_000, 13_120_000]
    a, b = near["by_folder"][str(MODELS)], near["by_folder"][str(cand)]
    assert a == b and a["cards"] > 10 and a["exact"] > 0
    far = res["decks"]["standard52"]["far"]["by_folder"]
    assert far[str(MODELS)] == far[str(cand)] and res["decks"]["standard52"]["far"]["seeds"] == [13_140_000, 13_140_001]
    e = res["edje_train"][str(MODELS)]
    # the two train photos; the test photo would make 3
    assert e == res["edje_train"][str(cand)] and e["images"] == 2 and e["cards"] > 5 and e["right"] > 0
    assert f"exact {a['exact']:5d}" in r.stdout and "edje train" in r.stdout


def test_folders_with_one_detector_share_each_frames_detections_and_read_as_they_would_alone(tmp_path):
    """A reader-only candidate (the same detector bytes: here a copy, not a link) is detected once per frame with the
    committed folder; a folder with another detector file is detected apart; every folder's figures are those of its
    own scanner scanning each frame by itself."""
    import shutil

    from vision.fonts import split_fonts
    from vision.suited_judge import judge, plan
    from vision.suited_reader import SuitedScanner, match_reads, score_rows
    from vision.synth.suited import far_scene, make_deck_scene

    cand, other = tmp_path / "cand", tmp_path / "other"
    for d in (cand, other):
        rep, rep_path = linked_with_report(d, "standard52", keep=lambda n: n.startswith("standard52_"))
        rep["thresholds"]["scaled_look"] = d is cand  # the candidate reads otherwise
        write_report(rep_path, rep)
    shutil.copy(MODELS / "card_det_suited.int8.onnx", cand / "card_det_suited.int8.onnx")
    shutil.copy(MODELS / "card_det_decks.int8.onnx", other / "card_det_suited.int8.onnx")  # another detector
    dirs = [MODELS, cand, other]
    res = judge(dirs, ["standard52"], 13_100_000, 4, 2, out=lambda *_a: None)
    assert res["decks"]["standard52"]["detector_passes_per_frame"] == 2
    fonts = split_fonts("calibration")  # the judge's own faces (vision.suited_judge draws its scenes from the split)
    for section, scenes in plan(0, 13_100_000, 4, 2).items():
        frames = []
        for s, layout, is_far in scenes:
            sc = make_deck_scene(s, "standard52", layout, fonts=fonts)
            frames.append(far_scene(sc) if is_far else sc)
        for d in dirs:
            scanner = SuitedScanner("standard52", d)
            st = score_rows([r for sc in frames for r in match_reads(sc, scanner.scan(sc.image))])
            got = res["decks"]["standard52"][section]["by_folder"][str(d)]
            assert got == {k: st[k] for k in got} and got["cards"] > 5


@pytest.mark.parametrize("args,said", [
    (["--seed", "13100000", "--decks", "poker"], "--decks: unknown suited deck 'poker'"),
    (["--seed", "nan"], "argument --seed:"),
    (["--seed", "13100000", "--near", "-1"], "argument --near:"),
    ([], "the following arguments are required: --seed"),
])
def test_the_judge_refuses_bad_options_in_one_line(tmp_path, args, said):
    r = subprocess.run([sys.executable, "-m", "vision.suited_judge", str(MODELS), *args, "--json",
                        str(tmp_path / "j.json")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("pirate-table: error: python -m vision.suited_judge: ") and said in r.stderr, r.stderr
    assert not (tmp_path / "j.json").exists()


def test_the_judge_refuses_a_folder_it_cannot_load_before_it_renders_a_scene(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "standard52_reader.int8.onnx").write_bytes((MODELS / "island54_reader.int8.onnx").read_bytes())
    empty = tmp_path / "real"
    empty.mkdir()
    for folders, extra, said in [
        ([str(tmp_path / "none")], [], "no such folder: "),
        ([str(MODELS), str(bad)], [], "standard52_reader.int8.onnx: not a reader of standard52"),
        ([str(MODELS)], ["--real", str(empty)], f"--real {empty}: no edje-pinochle/ labels there"),
    ]:
        r = subprocess.run([sys.executable, "-m", "vision.suited_judge", *folders, "--seed", "13100000", "--decks",
                            "standard52", *extra], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
        assert said in r.stderr, r.stderr
