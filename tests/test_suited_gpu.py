"""``vision.suited_gpu``: the standard52 and Island readers' recipe for a lent GPU machine, run here on the CPU."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hostile import assert_recipe_refuses, assert_refused_cleanly, gpu_recipe_folders, recipe_cli
from scan_switches import linked_models

from vision.suited_gpu import CHARS, KINDS, chunk_jobs, one_cycle_lr

ROOT = Path(__file__).resolve().parent.parent


def test_the_learning_rate_follows_one_cycle_over_the_time_budget():
    lr = 1e-3
    xs = np.linspace(0, 1, 201)
    ys = [one_cycle_lr(x, lr) for x in xs]
    assert ys[0] == pytest.approx(lr / 25) and one_cycle_lr(0.3, lr) == pytest.approx(lr)
    assert ys[-1] == pytest.approx(lr / 25 / 1e4) and max(ys) == pytest.approx(lr)
    peak = int(np.argmax(ys))
    assert all(a <= b for a, b in zip(ys[:peak], ys[1:peak + 1]))  # up to the peak, then down
    assert all(a >= b for a, b in zip(ys[peak:], ys[peak + 1:]))
    assert one_cycle_lr(-0.5, lr) == ys[0] and one_cycle_lr(7.0, lr) == ys[-1]  # time past the budget: the end


def test_the_views_come_in_the_recipes_proportions_each_chunk_seeded_once():
    jobs = list(chunk_jobs("island54", 31, rounds=40))
    kinds = [k for k, _, _ in jobs]
    assert kinds[:11] == ["cards"] * 5 + ["scenes"] * 4 + ["hands"] * 2
    assert {k: kinds.count(k) for k, _, _ in KINDS} == {"cards": 200, "scenes": 160, "hands": 80}  # 32000:3200:1600
    seeds = [s for _, s, _ in jobs]
    assert len(set(seeds)) == len(seeds) and all(d == "island54" for _, _, d in jobs)
    other = {s for _, s, _ in chunk_jobs("island54", 41, rounds=40)}
    assert not other & set(seeds)  # another data seed: other views


@pytest.mark.slow
def test_the_suited_gpu_recipe_packs_makes_views_trains_and_finishes_a_reader_the_scan_loads(tmp_path):
    """End to end on the CPU: two train families cut down to the glyphs a suited face sets, views made from those
    files by a worker pool while a reader goes on from the committed one (with packed extra views drawn into each
    batch), then finished here into a models folder the scanner reads; the replaced reader's figures are kept."""
    import onnxruntime as ort
    from fontTools.ttLib import TTFont

    from vision.corner import CORNER_H, CORNER_W, reader_extra
    from vision.fonts import split_fonts
    from vision.suited_reader import SuitedScanner, gen_suited_crops

    pack, out, models = tmp_path / "pack", tmp_path / "out", tmp_path / "models"
    run = recipe_cli("vision.suited_gpu")
    r = run("pack", str(pack), "--families", "2")
    assert r.returncode == 0, r.stderr
    listing = json.loads((pack / "fonts.json").read_text())
    assert len(listing) == 2 and not (pack / "real_standard52.npz").exists()
    for (fam, files), (fam0, files0) in zip(listing, split_fonts("train")[:2]):
        assert fam == fam0
        for f, f0 in zip(files, files0):
            kept = {chr(c) for c in TTFont(str(pack / "fonts" / f)).getBestCmap()}
            had = {chr(c) for c in TTFont(f0, fontNumber=0).getBestCmap()}
            assert set(CHARS) & had <= kept and len(kept) < 60  # every rank glyph the file draws, little else
    C, R, L = gen_suited_crops("standard52", 4, seed=5)  # stand-ins for the real views (the format, not photos)
    np.savez_compressed(pack / "real_standard52.npz", C=C, R=R, L=L, counts=json.dumps({"copies": 1}))
    r = run("train", str(pack), str(out), "--deck", "standard", "--device", "cpu", "--gen-seconds", "1",
            "--train-seconds", "3", "--refresh-s", "1", "--workers", "1", "--batch", "8", "--real-share", "0.25",
            "--extra", "1", "--lower-share", "0.5")  # a deeper reader than the committed one: its new blocks start
    # as the identity
    assert r.returncode == 0, r.stderr
    rec = json.loads((out / "standard52_gpu.json").read_text())
    assert rec["deck"] == "standard52" and rec["init"] == "standard52_reader.pt" and rec["steps"] >= 1
    assert rec["init_extra"] == 0 and rec["extra"] == 1
    assert rec["lower_share"] == 0.5  # the share of small-letter ranks asked for, as the workers used it
    assert rec["real_train_views"] == len(C) and rec["views_trained_on"] > len(C) and rec["chunks_made"]["cards"] >= 1
    committed = json.loads((ROOT / "models" / "standard52_reader.json").read_text())
    assert rec["init_temperature"] == committed["temperature"]
    shutil.copytree(ROOT / "models", models)
    r = run("finish", str(out / "standard52_gpu.pt"), "--out", str(models), "--threads", "1", "--workers", "1",
            "--calib-cards", "24", "--calib-scenes", "2", "--calib-hands", "1", t=900)
    assert r.returncode == 0, r.stderr
    rep = json.loads((models / "standard52_reader.json").read_text())
    assert rep["recipe"] == rec and 0.3 <= rep["temperature"] <= 5.0 and "thresholds" in rep
    assert rep["previous"]["temperature"] == rec["init_temperature"] and "previous" not in rep["previous"]
    assert not (models / "standard52_reader.onnx").exists() and (models / "standard52_reader.pt").is_file()
    sess = ort.InferenceSession(str(models / "standard52_reader.int8.onnx"), providers=["CPUExecutionProvider"])
    rank, suit, _feat = sess.run(None, {"crop": np.zeros((2, 3, CORNER_H, CORNER_W), np.float32)})
    assert rank.shape == (2, 14) and suit.shape == (2, 4)
    assert reader_extra(models / "standard52_reader.int8.onnx") == 1 == reader_extra(models / "standard52_reader.pt")
    SuitedScanner("standard52", models, threads=1)  # the runtime takes the finished folder as it is


def test_the_suited_gpu_recipe_refuses_bad_options_in_one_line_and_writes_nothing(tmp_path):
    pack, out, a_file, junk = gpu_recipe_folders(tmp_path, '{"deck": "island54", "data_seed": 7, "extra": 0}')
    p = "python -m vision.suited_gpu train: argument "
    f = "python -m vision.suited_gpu finish: argument "
    tr = ["train", str(pack), str(out)]
    cases = [
        (tr + ["--deck", "pirates72"], p + "--deck: pirates72: not a suited deck"),
        (tr + ["--deck", "tarot"], p + "--deck:"),
        (tr + ["--deck", "island", "--data-seed", "0"], p + "--data-seed:"),
        (tr + ["--deck", "island", "--data-seed", "1001"], p + "--data-seed:"),
        (tr + ["--deck", "island", "--data-seed", "٣١"], p + "--data-seed:"),
        (tr + ["--deck", "island", "--lr", "nan"], p + "--lr:"),
        (tr + ["--deck", "island", "--real-share", "1.5"], p + "--real-share:"),
        (tr + ["--deck", "island", "--lower-share", "nan"], p + "--lower-share:"),
        (tr + ["--deck", "island", "--lower-share", "-0.1"], p + "--lower-share:"),
        (tr + ["--deck", "island", "--train-seconds", "inf"], p + "--train-seconds:"),
        (["train", str(tmp_path / "none"), str(out), "--deck", "island"], p + "pack: no fonts.json"),
        (["train", str(pack), str(a_file), "--deck", "island"], p + "out: not a folder"),
        (tr + ["--deck", "island", "--init", str(tmp_path / "x.pt")], p + "--init: no such state dict"),
        (tr + ["--deck", "island", "--init", str(a_file)], p + "--init: no such state dict"),
        (["finish", str(tmp_path / "x.pt"), "--out", str(out)], f + "state: no state dict"),
        (["finish", str(junk), "--out", str(out)], f + "state: "),
        (["finish", str(junk), "--out", str(a_file)], f + "--out: not a folder"),
        (["pack", str(a_file)], "python -m vision.suited_gpu pack: argument dest: not a folder"),
        (["pack", str(out), "--real", str(tmp_path)], "python -m vision.suited_gpu pack: argument --real: no "
                                                      "edje-pinochle/"),
    ]
    assert_recipe_refuses("vision.suited_gpu", cases, out)
    assert a_file.read_text() == "x" and sorted(x.name for x in pack.iterdir()) == ["fonts.json"]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["f.txt", "junk.json", "junk.pt", "pack"]


def test_a_deeper_reader_starts_from_a_shallower_state_dict_reading_as_it_did():
    """``--extra``: the state dict of a reader with fewer convolutions fills the deeper one's places scale by scale;
    the blocks it lacks start as the identity, so before training the deeper reader gives the same logits."""
    import torch

    from nets import trained_looking_batchnorms
    from vision import corner as cr
    from vision.suited_reader import net_kw

    torch.manual_seed(3)
    x = torch.randn(5, 3, cr.CORNER_H, cr.CORNER_W)
    for have, want in ((0, 0), (0, 1), (0, 2), (1, 3)):
        small = cr.make_net(**net_kw("standard52", have))
        trained_looking_batchnorms(small)  # so a misplaced block would show
        small.eval()
        big = cr.make_net(**net_kw("standard52", want))
        cr.load_state_deeper(big, small.state_dict())
        big.eval()
        with torch.no_grad():
            (r0, s0, f0), (r1, s1, f1) = small(x), big(x)
        assert len(big.extra) == 2 * want
        assert torch.allclose(r0, r1, atol=1e-3) and torch.allclose(s0, s1, atol=1e-3), (have, want)
        assert torch.allclose(f0, f1, atol=1e-3, rtol=1e-3)
    with pytest.raises(ValueError, match="does not fit"):  # never shallower: which blocks to drop is no choice
        cr.load_state_deeper(cr.make_net(**net_kw("standard52", 1)), cr.make_net(**net_kw("standard52", 2)).state_dict())
    with pytest.raises(ValueError, match="not a reader of this shape"):  # another deck's heads
        cr.load_state_deeper(cr.make_net(**net_kw("standard52", 1)), cr.make_net(**net_kw("island54", 0)).state_dict())
    with pytest.raises(ValueError, match="no corner reader"):
        cr.load_state_deeper(cr.make_net(**net_kw("standard52", 1)), {"rank.weight": torch.zeros(3, 3)})


def test_the_suited_gpu_recipe_refuses_an_init_or_depth_that_does_not_fit_in_one_line(tmp_path):
    import torch

    from vision import corner as cr
    from vision.suited_reader import net_kw

    pack, out, a_file, junk = gpu_recipe_folders(tmp_path, '{"deck": "island54", "data_seed": 7, "extra": 0}')
    deep = tmp_path / "deep.pt"
    torch.save(cr.make_net(**net_kw("island54", 1)).state_dict(), str(deep))
    before = sorted(x.name for x in tmp_path.iterdir())
    p = "python -m vision.suited_gpu train: argument "
    tr = ["train", str(pack), str(out)]
    cases = [
        (tr + ["--deck", "island", "--extra", "9"], p + "--extra:"),
        (tr + ["--deck", "island", "--extra", "-1"], p + "--extra:"),
        (tr + ["--deck", "island", "--extra", "١"], p + "--extra:"),
        (tr + ["--deck", "island", "--init", str(deep), "--extra", "0"], p + "--extra: 0: fewer convolutions"),
        (tr + ["--deck", "standard52", "--init", str(deep)], p + "--init: " + str(deep) + ": not a standard52 reader"),
        (tr + ["--deck", "island", "--init", str(junk)], p + "--init: "),
    ]
    assert_recipe_refuses("vision.suited_gpu", cases, out)
    assert sorted(x.name for x in tmp_path.iterdir()) == before and sorted(x.name for x in pack.iterdir()) == ["fonts.json"]


def _reader_pt(path: Path, deck: str, seed: int, T: float | None, extra: int = 0) -> dict:
    """A random reader of ``deck`` saved as ``export`` leaves one (heads divided by ``T``, its report beside)."""
    import torch

    from vision import corner as cr
    from vision.suited_reader import HEAD_KEYS, net_kw

    torch.manual_seed(seed)
    net = cr.make_net(**net_kw(deck, extra))
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    raw = {k: v.clone() for k, v in net.state_dict().items()}
    sd = {k: (v / T if T and k in HEAD_KEYS else v) for k, v in raw.items()}
    torch.save(sd, str(path))
    if T is not None:
        path.with_suffix(".json").write_text(json.dumps({"temperature": T}))
    return raw


def test_a_soup_averages_readers_with_their_heads_multiplied_back_and_finish_can_take_it(tmp_path):
    import torch

    from vision import corner as cr
    from vision.suited_gpu import main
    from vision.suited_reader import net_kw

    a = _reader_pt(tmp_path / "a.pt", "standard52", 1, 1.25)
    b = _reader_pt(tmp_path / "b.pt", "standard52", 2, None)  # no report beside it: given on the command line
    (tmp_path / "b_report.json").write_text(json.dumps({"temperature": 0.8}))
    assert main(["soup", str(tmp_path / "dest"), str(tmp_path / "a.pt"), f"{tmp_path / 'b.pt'}={tmp_path / 'b_report.json'}",
                 "--deck", "standard", "--data-seed", "61"]) == 0
    got = torch.load(str(tmp_path / "dest" / "standard52_gpu.pt"))
    rec = json.loads((tmp_path / "dest" / "standard52_gpu.json").read_text())
    assert rec["deck"] == "standard52" and rec["data_seed"] == 61 and rec["extra"] == 0
    assert [p["temperature"] for p in rec["soup"]] == [1.25, 0.8]
    for k, v in got.items():
        if not v.dtype.is_floating_point:
            assert torch.equal(v, a[k])
            continue
        # b was saved undivided (no temperature at save time); its report says 0.8, so its heads count 0.8 times
        bk = b[k] * 0.8 if k in ("rank.weight", "rank.bias", "letter.weight", "letter.bias") else b[k]
        assert torch.allclose(v, (a[k] + bk) / 2, atol=1e-6), k
    cr.make_net(**net_kw("standard52", 0)).load_state_dict(got)  # what finish loads


def test_the_soup_refuses_readers_it_cannot_average_in_one_line_and_writes_nothing(tmp_path):
    import torch

    _reader_pt(tmp_path / "a.pt", "standard52", 1, 1.2)
    _reader_pt(tmp_path / "b.pt", "standard52", 2, 1.1)
    _reader_pt(tmp_path / "isl.pt", "island54", 3, 1.0)
    _reader_pt(tmp_path / "deep.pt", "standard52", 4, 1.0, extra=1)
    _reader_pt(tmp_path / "bare.pt", "standard52", 5, None)  # no report: its temperature is unknown
    nan = torch.load(str(tmp_path / "b.pt"))
    nan["rank.bias"][0] = float("nan")
    torch.save(nan, str(tmp_path / "nan.pt"))
    (tmp_path / "badT.pt").write_bytes((tmp_path / "b.pt").read_bytes())
    (tmp_path / "badT.json").write_text('{"temperature": -1}')
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"\x80\x04not a pickle")
    a_file = tmp_path / "f.txt"
    a_file.write_text("x")
    dest = tmp_path / "dest"
    before = sorted(x.name for x in tmp_path.iterdir())
    s = "python -m vision.suited_gpu soup: argument "
    A, B = str(tmp_path / "a.pt"), str(tmp_path / "b.pt")
    cases = [
        ([A], s + "READER: a soup needs at least two readers"),
        ([A, str(tmp_path / "none.pt")], s + "READER: no such state dict (.pt)"),
        ([A, str(a_file)], s + "READER: no such state dict (.pt)"),
        ([A, f"{B}={tmp_path / 'none.json'}"], s + "READER: no such report"),
        ([A, str(tmp_path / "bare.pt")], s + "READER: " + str(tmp_path / "bare.pt") + ": no report beside it"),
        ([A, str(junk)], s + "READER: " + str(junk) + ": not a reader's state dict"),
        ([A, str(tmp_path / "isl.pt")], s + "READER: " + str(tmp_path / "isl.pt") + ": not a standard52 reader"),
        ([A, str(tmp_path / "deep.pt")], s + "READER: the readers differ in depth"),
        ([A, str(tmp_path / "nan.pt")], s + "READER: " + str(tmp_path / "nan.pt") + ": rank.bias holds a value that is not finite"),
        ([A, str(tmp_path / "badT.pt")], s + "READER: " + str(tmp_path / "badT.json") + ": temperature -1"),
        ([A, B, "--deck", "pirates72"], s + "--deck: pirates72: not a suited deck"),
        ([A, B, "--data-seed", "nan"], s + "--data-seed:"),
        ([A, B, "--data-seed", "٦١"], s + "--data-seed:"),
    ]
    run = recipe_cli("vision.suited_gpu")
    for args, start in cases:
        full = ["soup", str(dest), *args]
        if "--deck" not in args:
            full += ["--deck", "standard52"]
        if "--data-seed" not in args:
            full += ["--data-seed", "61"]
        r = run(*full, t=120)
        assert_refused_cleanly(r.returncode, r.stdout, r.stderr, what=args)
        assert r.stderr.startswith("pirate-table: error: " + start), (args, r.stderr)
        assert sorted(x.name for x in tmp_path.iterdir()) == before, args
    r = run("soup", str(a_file), A, B, "--deck", "standard52", "--data-seed", "61", t=120)
    assert_refused_cleanly(r.returncode, r.stdout, r.stderr)
    assert r.stderr.startswith("pirate-table: error: " + s + "dest: not a folder") and a_file.read_text() == "x"


def test_finish_keep_bars_makes_a_candidate_beside_links_to_models_and_leaves_the_committed_reader(tmp_path):
    """A keep rule's candidate (session 79): the committed standard52 reader souped with another of its depth, then
    ``finish --keep-bars`` into a folder of links to models/: the links to the reader's own files are replaced by
    files (the committed ones keep every byte), the committed report's bars, looks and far bars are kept, its
    temperature and int8 are made again, the int8 weights are unsigned and marked, and the scanner reads the folder."""
    import hashlib

    from vision.ortsession import _marked
    from vision.suited_reader import SuitedScanner

    models = ROOT / "models"
    mine = sorted(models.glob("standard52_reader.*"))
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in mine}
    _reader_pt(tmp_path / "b.pt", "standard52", 3, 1.2)
    run = recipe_cli("vision.suited_gpu")
    r = run("soup", str(tmp_path / "soup"), str(models / "standard52_reader.pt"), str(tmp_path / "b.pt"),
            "--deck", "standard52", "--data-seed", "61", t=300)
    assert r.returncode == 0, r.stderr
    cand = tmp_path / "cand"
    linked_models(cand)
    r = run("finish", str(tmp_path / "soup" / "standard52_gpu.pt"), "--out", str(cand), "--keep-bars",
            "--threads", "1", "--workers", "1", "--calib-cards", "24", t=900)
    assert r.returncode == 0, r.stderr
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in mine} == before
    for name in ("standard52_reader.int8.onnx", "standard52_reader.pt", "standard52_reader.json"):
        assert (cand / name).is_file() and not (cand / name).is_symlink(), name
    assert not (cand / "standard52_reader.onnx").exists() and (cand / "island54_reader.int8.onnx").is_symlink()
    committed = json.loads((models / "standard52_reader.json").read_text())
    rep = json.loads((cand / "standard52_reader.json").read_text())
    for k in ("thresholds", "far_calibration", "recipe", "previous"):
        assert rep[k] == committed[k], k
    assert rep["kept_bars_recipe"]["soup"][0]["state"] == str(models / "standard52_reader.pt")
    assert rep["kept_bars_recipe"]["data_seed"] == 61 and 0.3 <= rep["temperature"] <= 5.0
    assert rep["int8_bytes"] == (cand / "standard52_reader.int8.onnx").stat().st_size
    assert rep["calibration_views_int8"]["crops"] > 0 and rep["calibration_views_int8"] != \
        committed["calibration_views_int8"]
    assert _marked(cand / "standard52_reader.int8.onnx")
    SuitedScanner("standard52", cand, threads=1)


def test_finish_keep_bars_refuses_a_folder_without_a_report_in_one_line_and_writes_nothing(tmp_path):
    _reader_pt(tmp_path / "a.pt", "standard52", 1, 1.0)
    _reader_pt(tmp_path / "b.pt", "standard52", 2, 1.0)
    run = recipe_cli("vision.suited_gpu")
    r = run("soup", str(tmp_path / "soup"), str(tmp_path / "a.pt"), str(tmp_path / "b.pt"), "--deck", "standard52",
            "--data-seed", "5", t=300)
    assert r.returncode == 0, r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "standard52_reader.json").write_text('{"temperature": 1.0}')  # a report with no bars
    for out in (tmp_path / "none", empty):
        r = run("finish", str(tmp_path / "soup" / "standard52_gpu.pt"), "--out", str(out), "--keep-bars", t=300)
        assert_refused_cleanly(r.returncode, r.stdout, r.stderr, what=out)
        assert r.stderr.startswith("pirate-table: error: python -m vision.suited_gpu finish: argument --out: ") \
            and "no reader report whose bars could be kept" in r.stderr, r.stderr
    assert not (tmp_path / "none").exists() and [p.name for p in empty.iterdir()] == ["standard52_reader.json"]
