"""The training command, end to end on a tiny generated set, so the recipe cannot rot."""

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures" / "camera"


@pytest.mark.slow
def test_train_smoke_produces_models_the_runtime_loads(tmp_path):
    out = tmp_path / "models"
    r = subprocess.run([sys.executable, "-m", "companion", "vision", "train", "--smoke", "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["det_tiles"] > 0 and report["reader_crops"] > 0
    for f in ("card_det.onnx", "card_det.int8.onnx", "card_det.pt", "index_reader.onnx", "index_reader.int8.onnx"):
        assert (out / f).stat().st_size > 10_000, f
    import onnx

    # the runtime detector decodes its boxes along the last axis (vision.train.dfl_on_last_axis)
    assert [[a.i for a in n.attribute] for n in onnx.load(out / "card_det.int8.onnx").graph.node if n.op_type == "Softmax"] == [[-1]]
    from vision.detect import Scanner

    img = cv2.imread(str(FIX / "start_a.jpg"))
    cards, reads = Scanner("ort", out).scan(img)  # an untrained model may find anything; it must run
    assert isinstance(cards, list)
    import onnxruntime as ort

    sess = ort.InferenceSession(str(out / "index_reader.onnx"), providers=["CPUExecutionProvider"])
    from vision.geometry import CROP_H, CROP_W

    rank, letter = sess.run(None, {"crop": np.zeros((3, 1, CROP_H, CROP_W), np.float32)})
    assert rank.shape == (3, 10) and letter.shape == (3, 8)
    # the corner reader (trained on the train font split, temperature on the calibration split), float and int8
    from vision.corner import CORNER_H, CORNER_W

    for f in ("corner_reader.onnx", "corner_reader.int8.onnx", "middle_reader.onnx", "middle_reader.int8.onnx",
              "second_reader.onnx", "second_reader.int8.onnx"):
        sess = ort.InferenceSession(str(out / f), providers=["CPUExecutionProvider"])
        rank, letter, feat = sess.run(None, {"crop": np.zeros((2, 1, CORNER_H, CORNER_W), np.float32)})
        assert rank.shape == (2, 10) and letter.shape == (2, 8) and feat.shape == (2, 256)
    rep = json.loads((out / "corner_reader.json").read_text())
    assert rep["train_crops"] > 0 and rep["temperature"] > 0
    assert json.loads((out / "middle_reader.json").read_text())["recipe"]["init"] == "corner_reader.onnx"
    second = json.loads((out / "second_reader.json").read_text())["recipe"]
    assert second["init"] == "corner_reader.onnx" and second["data_seed"] == 5  # a fresh set of cards
    cards, _ = Scanner("ort", out, reader="both").scan(img)
    assert isinstance(cards, list)
    sc = Scanner("ort", out, reader="corner")
    assert sc.middle is not sc.corner  # step 3 reads a card's middle with the middle reader
    assert sc.second is not None  # ... and an unsure card's corners with the second reader too
    cards, _ = sc.scan(img)
    assert isinstance(cards, list)


def test_corner_training_cut_off_goes_on_from_its_checkpoint(tmp_path):
    """A training run stopped part way goes on from its last checkpoint and ends with exactly the weights of a run
    that was never stopped."""
    import torch

    from vision.corner import CORNER_H, CORNER_W, train

    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (40, 1, CORNER_H, CORNER_W)).astype(np.float32)
    R = rng.integers(0, 10, 40).astype(np.int64)
    L = np.where(R < 9, rng.integers(0, 8, 40), -100).astype(np.int64)
    whole = train(X, R, L, 4, tmp_path / "a" / "r.onnx", batch=8, threads=1, log=lambda m: None)

    class Cut(Exception):
        pass

    def cut(msg):
        if "step 3/4" in msg:
            raise Cut

    ck = tmp_path / "b" / "r.ckpt"
    ck.parent.mkdir()
    with pytest.raises(Cut):
        train(X, R, L, 4, tmp_path / "b" / "r.onnx", batch=8, threads=1, log=cut, checkpoint=ck, checkpoint_every=2)
    assert ck.exists()
    said = []
    again = train(X, R, L, 4, tmp_path / "b" / "r.onnx", batch=8, threads=1, log=said.append, checkpoint=ck,
                  checkpoint_every=2)
    assert any("going on from step 2" in m for m in said)
    assert not ck.exists()
    a, b = whole.state_dict(), again.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_reader_with_extra_convolutions_starts_from_one_without_them_reading_the_same(tmp_path):
    """``make_net(extra=1)`` warm-started from the committed reader (``load_onnx_weights``): the new convolutions
    start as the identity, so before any training it gives the committed reader's logits; exported, its onnx is
    recognised as ``extra`` 1 and loads back into the same architecture."""
    import torch

    from vision.corner import CORNER_H, CORNER_W, export, load_onnx_weights, logits, make_net, reader_extra

    committed = ROOT / "models" / "corner_reader.onnx"
    base_extra = reader_extra(committed)
    deep = make_net(extra=base_extra + 1)
    load_onnx_weights(deep, committed)
    deep.eval()
    X = np.random.default_rng(0).uniform(-1, 1, (6, 1, CORNER_H, CORNER_W)).astype(np.float32)
    zr, zl, _ = logits(committed, X)
    T = json.loads((ROOT / "models" / "corner_reader.json").read_text())["temperature"]
    with torch.no_grad():
        dr, dl, _ = deep(torch.from_numpy(X))
    assert np.allclose(dr.numpy(), zr * T, atol=1e-3) and np.allclose(dl.numpy(), zl * T, atol=1e-3)
    with torch.no_grad():  # a convolution that is not the identity changes the reads: the check above can fail
        deep.f[deep.extra[-1]][0].weight.mul_(0.5)
        assert not np.allclose(deep(torch.from_numpy(X))[0].numpy(), zr * T, atol=1e-3)
    export(deep, tmp_path / "deep.onnx")
    assert reader_extra(tmp_path / "deep.onnx") == base_extra + 1
    assert reader_extra(tmp_path / "deep.pt") == base_extra + 1  # the state dict export writes beside it
    again = make_net(extra=base_extra + 1)
    load_onnx_weights(again, tmp_path / "deep.onnx")
    with pytest.raises(ValueError, match="convolutions"):
        load_onnx_weights(make_net(extra=base_extra + 3), tmp_path / "deep.onnx")


def test_a_reader_goes_on_from_its_int8_file_with_its_weights_dequantized(tmp_path):
    """Only the int8 file of a suited reader may be committed (island54's): ``load_onnx_weights`` reads a static
    int8 (QDQ) file's weights back as (q - zero point) x scale, so every convolution and head weight is the float
    one to within half its channel's quantization step, the heads times the temperature of the report beside it
    (``<name>.json`` for ``<name>.int8.onnx``); the reader so rebuilt names the same codes as the float file."""
    import torch

    from vision.corner import CORNER_H, CORNER_W, export, load_onnx_weights, logits, make_net, quantize
    from vision.suited_reader import net_kw

    torch.manual_seed(3)
    net = make_net(**net_kw("island54"))
    net.eval()
    export(net, tmp_path / "island54_reader.onnx", 1.5)
    (tmp_path / "island54_reader.json").write_text(json.dumps({"temperature": 1.5}))
    X = np.random.default_rng(1).uniform(-1, 1, (64, 3, CORNER_H, CORNER_W)).astype(np.float32)
    quantize(tmp_path / "island54_reader.onnx", tmp_path / "island54_reader.int8.onnx", X)
    back = make_net(**net_kw("island54"))
    load_onnx_weights(back, tmp_path / "island54_reader.int8.onnx")
    ref = make_net(**net_kw("island54"))
    load_onnx_weights(ref, tmp_path / "island54_reader.onnx")  # the float file: the exact folded weights
    sd, sr = back.state_dict(), ref.state_dict()
    for k in sd:
        if k.endswith("weight") and sd[k].dim() == 4:  # a convolution: per output channel, half a step
            err = (sd[k] - sr[k]).abs().flatten(1).amax(1)
            step = sr[k].abs().flatten(1).amax(1) / 127
            assert bool((err <= 0.51 * step + 1e-7).all()), k
    for head in ("rank", "letter"):  # a step is at most the largest weight / 127 (the temperature scales both)
        w, wr = getattr(back, head).weight, getattr(ref, head).weight
        assert float((w - wr).abs().max()) <= 0.51 * float(wr.abs().max()) / 127 + 1e-6
    back.eval()
    ref.eval()
    with torch.no_grad():
        zb, zr = back(torch.from_numpy(X))[0].numpy(), ref(torch.from_numpy(X))[0].numpy()
    assert (zb.argmax(1) == zr.argmax(1)).mean() >= 0.95
    zf, _, _ = logits(tmp_path / "island54_reader.onnx", X)
    assert np.allclose(zr, zf * 1.5, atol=1e-3)  # the float file's heads times its temperature
    import onnx

    m = onnx.load(str(tmp_path / "island54_reader.onnx"))
    for node in m.graph.node:
        if node.op_type == "Gemm":
            node.input[1] = node.input[1].replace("rank.weight", "other.weight")
    onnx.save(m, str(tmp_path / "bad.onnx"))
    with pytest.raises(ValueError, match="no rank head"):  # a file without the heads is no reader: not half-loaded
        load_onnx_weights(make_net(**net_kw("island54")), tmp_path / "bad.onnx")


@pytest.mark.parametrize("content", [b"", b"not a model", b"\x08\x01"])
def test_the_suited_recipe_refuses_an_init_that_is_no_reader_before_making_anything(tmp_path, content, capsys):
    """``suited_reader --init`` reads the file before any view is made: a file named .pt or .onnx that holds no
    reader is one line, exit code 2, and nothing written (before, a missing one gave a traceback after the views)."""
    from vision.suited_reader import main

    for suffix in (".pt", ".onnx"):
        bad = tmp_path / f"x{suffix}"
        bad.write_bytes(content)
        out = tmp_path / "out"
        assert main(["--deck", "island54", "--init", str(bad), "--out", str(out), "--work", str(tmp_path / "w")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"pirate-table: error: --init {bad}: not a corner reader") and err.count("\n") == 1, err
        assert not out.exists() and not (tmp_path / "w").exists()


def test_detector_tiles_of_suited_hands_label_every_index_that_shows(tmp_path):
    """The decks detector's recipe (``--decks-suited``): tiles cut from suited scenes (here hands held tight) carry
    an oriented box for each whole card and each index at least 90 % visible, in the tile's own coordinates."""
    from vision.synth.suited import HAND, make_deck_scene
    from vision.train import DET_SCALE, TILE, gen_detector_data

    n = gen_detector_data(tmp_path, 2, seed0=400_000, tiles_per_scene=3, prefix="h", deck="standard52",
                          layouts=(HAND,))
    assert n == 6
    assert "1: index" in (tmp_path / "data.yaml").read_text()
    shown = 0
    for seed in (400_000, 400_001):
        sc = make_deck_scene(seed, "standard52", HAND)
        idx = [q * DET_SCALE for c in sc.cards for q, v in zip(c.index_quads, c.index_visible) if v >= 0.9]
        for t in range(3):
            lines = (tmp_path / "labels" / "train" / f"h{seed}_{t}.txt").read_text().split("\n")
            boxes = [np.array(ln.split()[1:], float).reshape(4, 2) * TILE for ln in lines if ln.startswith("1 ")]
            assert cv2.imread(str(tmp_path / "images" / "train" / f"h{seed}_{t}.jpg")).shape == (TILE, TILE, 3)
            shown += len(boxes)
            for b in boxes:  # each index box lies on a labelled index of the scene (the tile's offset unknown here:
                # its size and shape must be an index's)
                w, h = sorted([np.linalg.norm(b[1] - b[0]), np.linalg.norm(b[2] - b[1])])
                sizes = [sorted([np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[2] - q[1])]) for q in idx]
                assert any(abs(w - s[0]) < 0.35 * s[0] + 2 and abs(h - s[1]) < 0.35 * s[1] + 2 for s in sizes), (w, h)
    assert shown >= 5  # the hands' indices are labelled


@pytest.mark.parametrize("args,start", [(["--decks-suited", "-1"], "--decks-suited: must be >= 0, got -1"),
                                        (["--det-hours", "nan"], "--det-hours: expected a number"),
                                        (["--decks-hours", "0"], "--decks-hours: must be > 0, got 0"),
                                        (["--decks-far", "\u0662"], "--decks-far: expected a whole number"),
                                        (["--decks-own", "-3"], "--decks-own: must be >= 0, got -3"),
                                        (["--decks-far", "5"], "--decks-far: needs --decks-suited"),
                                        (["--reader-steps", "-5"], "--reader-steps: must be >= 0, got -5"),
                                        (["--decks-as", "pirates"], "--decks-as: invalid choice: 'pirates'")])
def test_training_command_refuses_nonsense_numbers_in_one_line(tmp_path, args, start):
    out, work = tmp_path / "m", tmp_path / "w"
    r = subprocess.run([sys.executable, "-m", "vision.train", *args, "--out", str(out), "--work", str(work)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and r.stderr.startswith("pirate-table: error: python -m vision.train: argument " + start)
    assert not out.exists() and not work.exists()


def test_the_corner_readers_training_command_refuses_bad_options_in_one_line_and_writes_nothing(tmp_path):
    """``python -m vision.corner`` (the corner and middle readers' training) refuses a bad option before it makes a
    folder or generates a crop: one line, exit code 2."""
    out, work = tmp_path / "m", tmp_path / "w"
    a_file = tmp_path / "f.txt"
    a_file.write_text("x")
    cases = [
        (["--lr", "nan"], "python -m vision.corner: argument --lr:"),
        (["--lr", "0"], "python -m vision.corner: argument --lr:"),
        (["--steps", "-5"], "python -m vision.corner: argument --steps: must be >= 1, got -5"),
        (["--cards", "１２"], "python -m vision.corner: argument --cards: expected a whole number"),
        (["--data-seed", "2"], "python -m vision.corner: argument --data-seed: 2 is the calibration cards' seed"),
        (["--data-seed", "4"], "python -m vision.corner: argument --data-seed: 4 is the middle cards' seed"),
        (["--data-seed", "0"], "python -m vision.corner: argument --data-seed: must be >= 1, got 0"),
        (["--init", str(tmp_path / "none.onnx")], "python -m vision.corner: argument --init: no such file"),
        (["--name", "../../evil"], "python -m vision.corner: argument --name: invalid choice"),
        (["--out", str(a_file)], "python -m vision.corner: argument --out: not a folder"),
    ]
    for extra, start in cases:
        args = ["--smoke", "--out", str(out), "--work", str(work)] + extra
        if extra[0] == "--out":
            args = ["--smoke", "--work", str(work)] + extra
        r = subprocess.run([sys.executable, "-m", "vision.corner", *args], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 2, (extra, r.returncode, r.stderr)
        assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, (extra, r.stderr)
        assert r.stderr.startswith("pirate-table: error: " + start), (extra, r.stderr)
        assert not out.exists() and not work.exists(), extra
    assert a_file.read_text() == "x"


@pytest.mark.slow
def test_the_gpu_recipe_packs_fonts_makes_cards_from_them_and_trains_a_reader_the_runtime_loads(tmp_path):
    """``vision.corner_gpu`` end to end on the CPU: two train families cut down to the glyphs a face needs, cards
    made from those files by a worker pool, a reader continued on them (state dict and recipe), then finished
    here (temperature, ONNX, int8) into a models folder that onnxruntime reads."""
    import onnxruntime as ort

    from hostile import recipe_cli

    from vision.corner import CORNER_H, CORNER_W
    from vision.fonts import LOWER, NEEDED, draws_lower

    pack, out, models = tmp_path / "pack", tmp_path / "out", tmp_path / "models"
    run = recipe_cli("vision.corner_gpu")
    r = run("pack", str(pack), "--families", "2")
    assert r.returncode == 0, r.stderr
    listing = json.loads((pack / "fonts.json").read_text())
    assert len(listing) == 2 and all(files for _fam, files in listing)
    from fontTools.ttLib import TTFont

    for _fam, files in listing:
        for f in files:
            cmap = TTFont(str(pack / "fonts" / f)).getBestCmap()
            assert {chr(c) for c in cmap} >= set(NEEDED) and len(cmap) < 40  # cut down, every needed glyph kept
            have_lower = set(LOWER) <= {chr(c) for c in cmap}
            assert have_lower == draws_lower(str(pack / "fonts" / f))  # small letters kept where the face has them
    r = run("train", str(pack), str(out), "--device", "cpu", "--gen-seconds", "1", "--train-seconds", "1",
            "--workers", "1", "--batch", "8", "--nets", "0:0.5,1:0.5", "--probe-steps", "2", "--min-steps", "4",
            "--lower-share", "0.5", "--focus-ranks", "0,8", "--focus-letters", "H")
    assert r.returncode == 0, r.stderr
    for name, extra in (("second_x0", 0), ("second_x1", 1)):
        rec = json.loads((out / f"{name}.json").read_text())
        assert rec["extra"] == extra and rec["steps"] >= 4 and rec["cards"] >= 500 and rec["cards"] % 500 == 0
        assert rec["train_crops"] == 4 * rec["cards"] and rec["device"] == "cpu"
        assert rec["lower_share"] == 0.5  # the cards' share with small letters, as asked, in the recipe
        assert (rec["focus_ranks"], rec["focus_letters"], rec["focus_share"]) == ([0, 8], ["H"], 0.3)
    r = run("finish", str(out / "second_x1.pt"), "--name", "second_reader", "--out", str(models), "--calib-cards",
            "100", t=900)
    assert r.returncode == 0, r.stderr
    rep = json.loads((models / "second_reader.json").read_text())
    assert rep["recipe"]["extra"] == 1 and 0.5 <= rep["temperature"] <= 4.0 and rep["calibration"]["crops"] == 200
    sess = ort.InferenceSession(str(models / "second_reader.int8.onnx"), providers=["CPUExecutionProvider"])
    rank, letter, _feat = sess.run(None, {"crop": np.zeros((3, 1, CORNER_H, CORNER_W), np.float32)})
    assert rank.shape == (3, 10) and letter.shape == (3, 8)
    assert not (models / "second_reader.pt").exists()
    r = run("finish", str(out / "second_x0.pt"), "--name", "second_reader", "--out", str(models), "--calib-cards",
            "100", t=900)  # a reader in the place of another: the one it replaces keeps its figures there
    assert r.returncode == 0, r.stderr
    rep = json.loads((models / "second_reader.json").read_text())
    assert rep["recipe"]["extra"] == 0 and rep["previous"]["recipe"]["extra"] == 1
    assert "reliability" not in rep["previous"]["calibration"] and "previous" not in rep["previous"]


def test_the_gpu_recipe_refuses_bad_options_in_one_line_and_writes_nothing(tmp_path):
    """``python -m vision.corner_gpu`` refuses a bad option before it makes a folder or a card."""
    from hostile import assert_recipe_refuses, gpu_recipe_folders

    pack, out, a_file, junk = gpu_recipe_folders(tmp_path)
    p = "python -m vision.corner_gpu train: argument "
    f = "python -m vision.corner_gpu finish: argument "
    cases = [
        (["train", str(pack), str(out), "--nets", "0:nan"], p + "--nets: not extra:share"),
        (["train", str(pack), str(out), "--nets", "٣:0.5"], p + "--nets: not extra:share"),
        (["train", str(pack), str(out), "--nets", "9:0.5"], p + "--nets: not extra:share"),
        (["train", str(pack), str(out), "--nets", "0:0.7,2:0.7"], p + "--nets: the shares add up to more than 1"),
        (["train", str(pack), str(out), "--lr", "inf"], p + "--lr:"),
        (["train", str(pack), str(out), "--lower-share", "1.5"], p + "--lower-share: must be >= 0"),
        (["train", str(pack), str(out), "--lower-share", "nan"], p + "--lower-share:"),
        (["train", str(pack), str(out), "--data-seed", "2"], p + "--data-seed: must be >= 5"),
        (["train", str(tmp_path / "none"), str(out)], p + "pack: no fonts.json"),
        (["train", str(pack), str(a_file)], p + "out: not a folder"),
        (["train", str(pack), str(out), "--init", str(tmp_path / "x.onnx")], p + "--init: no such file"),
        (["finish", str(tmp_path / "x.pt"), "--name", "second_reader"], f + "state: no state dict"),
        (["finish", str(a_file), "--name", "../evil"], f + "--name: invalid choice"),
        (["pack", str(a_file)], "python -m vision.corner_gpu pack: argument dest: not a folder"),
        (["finish", str(junk), "--name", "second_reader", "--out", str(out)], f + "state: "),
    ]
    assert_recipe_refuses("vision.corner_gpu", cases, out)
    assert a_file.read_text() == "x" and sorted(p.name for p in pack.iterdir()) == ["fonts.json"]


def _dfl_graph(a: int = 37, axis: int = 1, bins=None):
    """The exported detector's box decoding alone: [1, 64, A] -> [1, 4, 16, A] -> [1, 16, 4, A] -> softmax over the
    16 bins -> a 1x1 convolution of weights ``bins`` (0..15 in the export) -> [1, 4, A]."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.arange(16, dtype=np.float32) if bins is None else np.asarray(bins, np.float32)
    nodes = [
        helper.make_node("Reshape", ["x", "s1"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3]),
        helper.make_node("Softmax", ["t"], ["p"], axis=axis),
        helper.make_node("Conv", ["p", "w"], ["c"], name="/model.22/dfl/conv/Conv"),
        helper.make_node("Reshape", ["c", "s2"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array([1, 4, 16, a], np.int64), "s1"),
             numpy_helper.from_array(np.array([1, 4, a], np.int64), "s2"),
             numpy_helper.from_array(w.reshape(1, 16, 1, 1), "w")]
    g = helper.make_graph(nodes, "dfl", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, a])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, a])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _run(path, x):
    import onnxruntime as ort

    s = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return s.run(None, {"x": x})[0]


def test_the_detectors_box_decoding_is_rewritten_along_the_last_axis_with_the_same_outputs(tmp_path):
    import onnx

    from vision.train import dfl_on_last_axis

    x = (np.random.default_rng(3).standard_normal((1, 64, 37)) * 4).astype(np.float32)
    onnx.save(_dfl_graph(), tmp_path / "a.onnx")
    dfl_on_last_axis(tmp_path / "a.onnx", tmp_path / "b.onnx")
    ops = [(n.op_type, [a.i for a in n.attribute if a.name == "axis"]) for n in onnx.load(tmp_path / "b.onnx").graph.node]
    assert ("Softmax", [-1]) in ops and "Conv" not in [o for o, _ in ops] and "MatMul" in [o for o, _ in ops]
    want = _run(tmp_path / "a.onnx", x)
    # the expected distance per side and anchor, worked out here: softmax over the bins, weighted by 0..15
    e = np.exp(x.reshape(4, 16, 37) - x.reshape(4, 16, 37).max(1, keepdims=True))
    assert np.allclose(want[0], (e / e.sum(1, keepdims=True) * np.arange(16)[:, None]).sum(1), atol=1e-4)
    assert np.allclose(_run(tmp_path / "b.onnx", x), want, atol=1e-5)
    # other graphs are written unchanged: a softmax already on the last axis, bins that are not 0..15
    for k, g in enumerate((_dfl_graph(axis=-1), _dfl_graph(bins=np.arange(16)[::-1]))):
        onnx.save(g, tmp_path / f"o{k}.onnx")
        dfl_on_last_axis(tmp_path / f"o{k}.onnx", tmp_path / f"p{k}.onnx")
        assert [n.op_type for n in onnx.load(tmp_path / f"p{k}.onnx").graph.node] == [n.op_type for n in g.graph.node]
        assert np.allclose(_run(tmp_path / f"p{k}.onnx", x), _run(tmp_path / f"o{k}.onnx", x), atol=1e-6)


@pytest.mark.parametrize("name", ["card_det", "card_det_decks", "card_det_suited"])
def test_the_committed_detectors_decode_their_boxes_along_the_last_axis(name):
    import onnx

    from vision.train import MODELS

    sm = [n for n in onnx.load(MODELS / f"{name}.int8.onnx").graph.node if n.op_type == "Softmax"]
    assert len(sm) == 1 and [a.i for a in sm[0].attribute if a.name == "axis"] == [-1]


def test_a_state_dict_goes_on_with_its_heads_times_the_temperature_of_its_report(tmp_path, capsys):
    """``--init <deck>_reader.pt``: the heads there were divided by the temperature; it is read from
    ``--init-report``, or from the ``<deck>_reader.json`` beside the .pt (the committed pair), or 1 without either.
    A report without a finite positive temperature is one line, exit code 2, nothing written, before any view."""
    import torch

    from vision.corner import make_net
    from vision.suited_reader import go_on_from, init_temperature, main, net_kw

    torch.manual_seed(5)
    sd = make_net(**net_kw("island54")).state_dict()
    pt = tmp_path / "island54_reader.pt"
    torch.save(sd, str(pt))
    assert init_temperature(pt, None) == 1.0
    (tmp_path / "island54_reader.json").write_text(json.dumps({"temperature": 1.25}))
    assert init_temperature(pt, None) == 1.25  # the report beside it
    (tmp_path / "other.json").write_text(json.dumps({"temperature": 2}))
    assert init_temperature(pt, tmp_path / "other.json") == 2.0  # --init-report wins
    back = torch.load(str(go_on_from(pt, 1.25, tmp_path / "go_on.pt")))
    for k in sd:
        want = sd[k] * 1.25 if k.split(".")[0] in ("rank", "letter") else sd[k]
        assert torch.equal(back[k], want), k
    for bad in ('{"temperature": NaN}', '{"temperature": -1}', '{"temperature": "1.2"}', '{"temperature": true}',
                "[1]", "not json"):
        (tmp_path / "bad.json").write_text(bad)
        with pytest.raises(ValueError):
            init_temperature(pt, tmp_path / "bad.json")
        out = tmp_path / "out"
        assert main(["--deck", "island54", "--init", str(pt), "--init-report", str(tmp_path / "bad.json"), "--out",
                     str(out), "--work", str(tmp_path / "w")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("pirate-table: error: --init-report: ") and err.count("\n") == 1, err
        assert not out.exists() and not (tmp_path / "w").exists()
    with pytest.raises(ValueError):
        init_temperature(pt, tmp_path / "missing.json")
