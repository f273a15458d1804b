"""``vision.det_gpu``: the suited detector's recipe for a lent GPU machine, run here on the CPU."""

import json
from pathlib import Path

import pytest
from hostile import assert_recipe_refuses, assert_refused_cleanly, gpu_recipe_folders, recipe_cli

from vision.train import decks_tile_plan, plan_chunks

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"


def test_the_tile_plan_is_vision_trains_and_its_chunks_hold_the_same_scenes():
    """The plan holds session 68's recipe (350 train-font and 300 own-face scenes; per suited deck 400 scenes, 200
    tight hands and 100 far scenes) with the seeds and names ``vision.train --only decks`` always used; cut into
    chunks it names every scene once, in order."""
    plan = decks_tile_plan(350, 300, 400, 100)
    got = [(p["prefix"], p["seed0"], p["n_scenes"], p.get("fonts"), p.get("deck"), p.get("far")) for p in plan]
    assert got == [("f", 200_000, 350, "train", None, None), ("s", 0, 300, None, None, None),
                   ("dstandard52_", 300_000, 400, "train", "standard52", None),
                   ("hstandard52_", 400_000, 200, "train", "standard52", None),
                   ("xstandard52_", 500_000, 100, "train", "standard52", (1.3, 2.0)),
                   ("disland54_", 310_000, 400, "train", "island54", None),
                   ("hisland54_", 410_000, 200, "train", "island54", None),
                   ("xisland54_", 510_000, 100, "train", "island54", (1.3, 2.0))]
    assert [p["prefix"] for p in decks_tile_plan(350, 300)] == ["f", "s"]  # no suited scenes: no far ones either
    assert decks_tile_plan(0, 0) == []
    scenes = lambda parts: [(p["prefix"], p["seed0"] + k) for p in parts for k in range(p["n_scenes"])]  # noqa: E731
    for size in (1, 7, 10, 1000):
        chunks = plan_chunks(plan, size)
        assert scenes(chunks) == scenes(plan) and max(c["n_scenes"] for c in chunks) <= size


@pytest.mark.slow
def test_the_detector_gpu_recipe_packs_makes_the_recipes_tiles_trains_and_finishes_a_detector(tmp_path, monkeypatch):
    """End to end on the CPU: two train families cut down, the committed suited detector recovered into the pack;
    there, the plan's tiles made by two processes from the packed fonts are byte for byte the tiles the recipe makes
    in one process from the same fonts; one short epoch from the pack's network; here, the run's checkpoint
    exported and quantized into an int8 detector the scanner's runtime loads."""
    import onnxruntime as ort

    from vision.corner_gpu import _packed_fonts
    from vision.det_gpu import make_tiles
    from vision.train import gen_plan_part

    pack, out = tmp_path / "pack", tmp_path / "out"
    run = recipe_cli("vision.det_gpu")
    r = run("pack", str(pack), "--families", "2")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["families"] == 2
    assert sorted(x.name for x in pack.iterdir()) == ["fonts", "fonts.json"]  # fonts only: the network is made there
    r = run("pack", str(pack), "--families", "2")  # packed already: refused, nothing overwritten
    assert_refused_cleanly(r.returncode, r.stdout, r.stderr)
    assert "already packed" in r.stderr

    # the pool's tiles are the recipe's made in one process from the same packed fonts
    import vision.fonts

    monkeypatch.setattr(vision.fonts, "split_fonts", lambda split: _packed_fonts(pack))  # undone after the test
    plan = [{**p, "n_scenes": 2} for p in decks_tile_plan(1, 1, 1, 1)]
    pooled, alone = tmp_path / "pooled", tmp_path / "alone"
    assert make_tiles(pack, pooled, plan, workers=2, chunk=1) == 3 * 2 * len(plan)
    assert sum(gen_plan_part(alone, p) for p in plan) == 3 * 2 * len(plan)
    files = sorted(str(f.relative_to(alone)) for f in alone.rglob("*") if f.is_file())
    assert files == sorted(str(f.relative_to(pooled)) for f in pooled.rglob("*") if f.is_file())
    for f in files:
        a, b = (alone / f).read_bytes(), (pooled / f).read_bytes()
        assert a == b or f == "data.yaml" and a.replace(str(alone.resolve()).encode(), b"") == b.replace(
            str(pooled.resolve()).encode(), b""), f
    assert any((alone / "labels" / "train" / f"xisland54_{510_000 + k}_0.txt").read_text() for k in range(2))

    r = run("train", str(pack), str(out), "--device", "cpu", "--scenes", "1", "--own", "1", "--suited", "1",
            "--far", "1", "--epochs", "1", "--batch", "4", "--workers", "2", "--loader-workers", "0", "--seed", "7", t=900)
    assert r.returncode == 0, r.stderr[-3000:]
    rec = json.loads((out / "det_gpu.json").read_text())
    assert rec["tiles"] == 3 * (1 + 1 + 2 * (1 + 0 + 1)) and rec["device"] == "cpu" and rec["epochs_done"] == 1
    assert rec["seed"] == 7 and "\nseed: 7\n" in (out / "runs" / "det_gpu" / "args.yaml").read_text()  # the run's own
    assert rec["init"] == "card_det_suited.int8.onnx (vision.det_recover recover)" and (out / "init.pt").is_file()
    r = run("train", str(pack), str(out), "--device", "cpu")  # a run is there already: refused, nothing written
    assert_refused_cleanly(r.returncode, r.stdout, r.stderr)
    int8 = tmp_path / "cand.int8.onnx"
    r = run("finish", str(out / "det_gpu.pt"), str(int8), t=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout.splitlines()[-1]) == {"int8": str(int8)}
    sess = ort.InferenceSession(str(int8), providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].shape == [1, 3, 384, 640] and any(
        n.op_type == "QuantizeLinear" for n in __import__("onnx").load(str(int8)).graph.node)
    assert not list(tmp_path.glob("*.part*"))


def test_the_detector_gpu_recipe_refuses_bad_input_in_one_line_and_writes_nothing(tmp_path):
    pack, out, a_file, junk = gpu_recipe_folders(tmp_path)
    text = tmp_path / "text.onnx"
    text.write_text("not a model\n")
    p = "python -m vision.det_gpu train: argument "
    f = "python -m vision.det_gpu finish: argument "
    k = "python -m vision.det_gpu pack: argument "
    tr = ["train", str(pack), str(out)]
    cases = [
        (tr + ["--suited", "-1"], p + "--suited:"),
        (tr + ["--far", "٣"], p + "--far:"),
        (tr + ["--suited", "0", "--far", "3"], p + "--far: needs --suited"),
        (tr + ["--epochs", "0"], p + "--epochs:"),
        (tr + ["--seed", "-1"], p + "--seed:"),
        (tr + ["--seed", "2147483648"], p + "--seed:"),
        (tr + ["--hours", "nan"], p + "--hours:"),
        (tr + ["--hours", "0"], p + "--hours:"),
        (tr + ["--batch", "1e3"], p + "--batch:"),
        (tr + ["--device", "tpu"], p + "--device:"),
        (tr + ["--scenes", "0", "--own", "0", "--suited", "0", "--far", "0", "--device", "cpu"], p + "--scenes: no scenes"),
        (["train", str(tmp_path / "none"), str(out), "--device", "cpu"], p + "pack: no fonts.json"),
        (["train", str(pack), str(a_file), "--device", "cpu"], p + "out: not a folder"),
        (tr + ["--device", "cpu", "--from", str(tmp_path / "none.onnx")], p + "--from: no such file"),
        (tr + ["--device", "cpu", "--from", str(text)], p + "--from: text.onnx: not an ONNX model"),
        (tr + ["--device", "cpu", "--from", str(MODELS / "corner_reader.int8.onnx")],
         p + "--from: corner_reader.int8.onnx: no exported YOLOv8n-OBB detector"),
        (tr + ["--device", "cpu", "--init-pt", str(tmp_path / "none.pt")], p + "--init-pt: no such file"),
        (tr + ["--device", "cpu", "--init-pt", str(junk)], p + "--init-pt: junk.pt: not an ultralytics checkpoint"),
        (["finish", str(tmp_path / "x.pt"), str(tmp_path / "c.int8.onnx")], f + "state: no such file"),
        (["finish", str(junk), str(tmp_path / "c.int8.onnx")], f + "state: junk.pt: not an ultralytics checkpoint"),
        (["finish", str(junk), str(tmp_path / "c.int8")], f + "int8: the file name must end in .onnx"),
        (["finish", str(junk), str(text)], f + "int8: already there"),
        (["finish", str(junk), str(tmp_path / "none" / "c.onnx")], f + "int8: folder does not exist"),
        (["pack", str(a_file)], k + "dest: not a folder"),
        (["pack", str(pack)], k + "dest: already packed"),
    ]
    assert_recipe_refuses("vision.det_gpu", cases, out, t=300)
    assert a_file.read_text() == "x" and sorted(x.name for x in pack.iterdir()) == ["fonts.json"]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["f.txt", "junk.json", "junk.pt", "pack", "text.onnx"]
