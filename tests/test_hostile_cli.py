"""Hostile arguments and files to `odds`, `scan` and `buttons`: exit 0 with valid output, or exit 2 with one line
and every file byte-for-byte as before. A few runs in a real process check what only a real process shows (the
C libraries' own stderr)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hostile import (COUNTS, HOSTILE_TEXT, NUMBER_TEXT, ROOT, assert_refused_cleanly, count, run_cli, snapshot,
                     strict_json)

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])

# ------------------------------------------------------------------ odds

CARD = st.one_of(st.builds(lambda r, l: f"{r}{l}", st.sampled_from("012345678W9٣"), st.sampled_from("ABCDEFGHIa")),
                 HOSTILE_TEXT)
CARDS = st.lists(CARD, max_size=9).map(",".join)
BID = st.one_of(st.builds(lambda q, r: f"{q}x{r}", st.integers(0, 80), st.integers(0, 10)),
                st.builds(lambda q, r: f"{q}x{r}", NUMBER_TEXT, NUMBER_TEXT), HOSTILE_TEXT)
SMALL_MC = st.one_of(st.integers(1, 3000).map(str), NUMBER_TEXT.filter(lambda s: not s.strip().isdigit()
                                                                        or len(s.strip()) > 8))


@st.composite
def odds_argv(draw):
    argv = ["odds"]
    good_start = draw(st.booleans())
    starting = "2C,2D,3A,4B,7E" if good_start else draw(CARDS)
    if draw(st.integers(0, 9)):
        argv += ["--starting", starting]
    if draw(st.integers(0, 9)):
        argv += ["--bid", draw(BID)]
    for opt, strat in (("--players", NUMBER_TEXT), ("--seat", NUMBER_TEXT), ("--hand", CARDS),
                       ("--mc", SMALL_MC), ("--seed", NUMBER_TEXT)):
        if draw(st.integers(0, 3)) == 0:
            argv += [opt, draw(strat)]
    if draw(st.booleans()):
        argv.append("--super-wilds")
    if draw(st.booleans()):
        argv.append("--json")
    return argv


@FUZZ
@given(argv=odds_argv())
def test_odds_fuzz(argv):
    code, out, err = run_cli(*argv)
    count("odds")
    if code == 0:
        if "--json" in argv:
            res = strict_json(out)
            assert 0.0 <= res["probability"] <= 1.0
            assert abs(sum(d["p"] for d in res["distribution"]) - 1.0) < 1e-9
        else:
            assert out.startswith("Bid: ")
    else:
        assert_refused_cleanly(code, out, err, what=argv)


def test_odds_absurd_counts_are_refused():
    for argv in (["--mc", "100000000000000"], ["--mc", "0"], ["--mc", "-5"], ["--mc", "٣"], ["--seed", "-1"],
                 ["--players", "99"], ["--seat", "0"]):
        code, out, err = run_cli("odds", "--starting", "2C,2D,3A,4B,7E", "--bid", "3x2", *argv)
        assert_refused_cleanly(code, out, err, what=argv)


# ------------------------------------------------------------------ scan


ROW_DATA_MAX = 65536  # more than any side the scanner decodes (vision.imageio.MAX_SIDE)


def png_bytes(w: int, h: int, rows: int | None = None) -> bytes:
    """A PNG whose header says w x h (only ``rows`` rows of data, each at most ROW_DATA_MAX bytes: a header can
    promise anything, and a side of 2**32 - 1 written out would take the test itself 16 GB)."""
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    rows = min(h, 4) if rows is None else rows
    raw = zlib.compress(b"".join(b"\x00" + b"\x80" * min(w, ROW_DATA_MAX) for _ in range(rows)))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", raw) + chunk(b"IEND", b""))


def real_image(fmt: str, w: int, h: int, seed: int) -> bytes:
    import cv2
    import numpy as np

    img = np.random.default_rng(seed).integers(0, 255, (h, w, 3), dtype=np.uint8)
    ok, buf = cv2.imencode(fmt, img)
    assert ok
    return buf.tobytes()


@st.composite
def hostile_image(draw) -> bytes:
    kind = draw(st.sampled_from(["real", "real", "header", "cut", "flip", "random", "text"]))
    if kind == "header":
        side = st.one_of(st.integers(0, 70), st.integers(0, 2**32 - 1), st.sampled_from([20000, 30000, 16384]))
        return png_bytes(draw(side), draw(side))
    data = real_image(draw(st.sampled_from([".png", ".jpg", ".bmp", ".webp"])), draw(st.integers(8, 120)),
                      draw(st.integers(8, 120)), draw(st.integers(0, 99)))
    if kind == "cut":
        return data[: draw(st.integers(0, len(data)))]
    if kind == "flip":
        raw = bytearray(data)
        for _ in range(draw(st.integers(1, 6))):
            raw[draw(st.integers(0, min(len(raw) - 1, 64)))] = draw(st.integers(0, 255))
        return bytes(raw)
    if kind == "random":
        return draw(st.binary(max_size=300))
    if kind == "text":
        return draw(st.text(max_size=100)).encode("utf-8", "surrogatepass")
    return data


@pytest.mark.skipif(not (ROOT / "models" / "card_det.int8.onnx").exists(), reason="no models")
@settings(max_examples=max(10, EXAMPLES // 2), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(raw=hostile_image(), as_json=st.booleans())
def test_scan_fuzz(raw, as_json):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "img").write_bytes(raw)
        before = snapshot(d)
        code, out, err = run_cli("scan", d / "img", *(["--json"] if as_json else []))
        count("scan")
        if code == 0:
            if as_json:
                res = strict_json(out)
                assert res["width"] >= 32 and res["height"] >= 32 and isinstance(res["cards"], list)
        else:
            assert_refused_cleanly(code, out, err, before, snapshot(d), raw[:40])
        assert snapshot(d) == before


def test_scan_refuses_a_bomb_by_its_header_fast(tmp_path):
    import time

    from vision.imageio import MAX_SIDE

    assert ROW_DATA_MAX > MAX_SIDE  # every side that is decoded gets its rows written out in full
    for w, h in ((30000, 30000), (20000, 2), (2, 20000), (16384, 16384), (10000, 10000), (0, 0)):
        (tmp_path / "bomb.png").write_bytes(png_bytes(w, h))
        t0 = time.perf_counter()
        code, out, err = run_cli("scan", tmp_path / "bomb.png")
        assert time.perf_counter() - t0 < 1.0
        assert_refused_cleanly(code, out, err, what=(w, h))
        assert f"{w} x {h}" in err


def test_scan_in_a_real_process_never_lets_opencv_speak_first(tmp_path):
    """A cut JPEG, a cut PNG, a bomb, text: one line of ours, no libjpeg/libpng/OpenCV warning before it."""
    good = (ROOT / "tests" / "fixtures" / "camera" / "start_a.jpg").read_bytes()
    cases = {"cut.jpg": good[: len(good) // 2], "bomb.png": png_bytes(30000, 30000), "text.png": b"hello",
             "cutpng.png": real_image(".png", 200, 200, 1)[:3000], "strip.png": png_bytes(20000, 2)}
    for name, raw in cases.items():
        (tmp_path / name).write_bytes(raw)
        r = subprocess.run([sys.executable, "-m", "companion", "scan", str(tmp_path / name)], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        assert_refused_cleanly(r.returncode, r.stdout, r.stderr, what=name)


# ------------------------------------------------------------------ buttons (argument parsing)


@FUZZ
@given(arm=st.one_of(NUMBER_TEXT, st.none()), duration=st.one_of(NUMBER_TEXT, st.none()),
       presses=NUMBER_TEXT, seed=NUMBER_TEXT, port=st.one_of(HOSTILE_TEXT, st.none()))
def test_buttons_argument_fuzz(arm, duration, presses, seed, port):
    """Every number the button commands take is parsed strictly: a value that parses is in range."""
    from companion.cli import build_parser

    def parse(argv):
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as out:
            try:
                return build_parser().parse_args(argv), "", ""
            except SystemExit as exc:
                return exc.code, out.getvalue(), err.getvalue()

    mon = ["buttons", "monitor"] + (["--arm", arm] if arm is not None else []) + (
        ["--duration", duration] if duration is not None else []) + (["--port", port] if port is not None else [])
    for argv in (mon, ["buttons", "bench", "--sim-firmware", "--presses", presses, "--seed", seed]):
        res, out, err = parse(argv)
        count("buttons")
        if isinstance(res, int):
            assert_refused_cleanly(res, out, err, what=argv)
        elif argv[1] == "monitor":
            assert res.arm is None or 0 <= res.arm <= 65535
            assert res.duration is None or 0 < res.duration < float("inf")
            assert res.port is None or res.port.isprintable()
        else:
            assert 1 <= res.presses <= 1_000_000 and 0 <= res.seed < 2**63


def test_buttons_monitor_in_a_real_process(tmp_path):
    """A negative --arm is one line; a good one arms the software box and exits 0."""
    r = subprocess.run([sys.executable, "-m", "companion", "buttons", "monitor", "--sim", "--arm", "-5"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert_refused_cleanly(r.returncode, r.stdout, r.stderr)
    r = subprocess.run([sys.executable, "-m", "companion", "buttons", "monitor", "--sim", "--arm", "65535",
                        "--duration", "0.5", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert any('"armed"' in line for line in r.stdout.splitlines())


@pytest.mark.parametrize("argv,want", [
    (["--first-bidder", "--players", "9"], "--players 9: Pirate's Bluff is played by 3 to 8 players"),
    (["--first-bidder", "--players", "2"], "--players 2: Pirate's Bluff is played by 3 to 8 players"),
    (["--players", "4"], "--players: only with --first-bidder"),
    (["--first-bidder", "--players", "\u0663"], "argument --players: expected a whole number"),
    (["--first-bidder", "--players", "0"], "argument --players: must be 1..99"),
])
def test_scan_players_refused_in_one_line(argv, want, tmp_path):
    """How many players sit at the table is checked against the game that decides, before any image is read."""
    img = ROOT / "tests" / "fixtures" / "camera" / "start_a.jpg"
    r = subprocess.run([sys.executable, "-m", "companion", "scan", str(img), *argv], cwd=ROOT, capture_output=True,
                       text=True, timeout=120, env={**os.environ, "PIRATE_TABLE_DATA": str(tmp_path)})
    assert_refused_cleanly(r.returncode, r.stdout, r.stderr, what=argv)
    assert want in r.stderr, r.stderr
    assert not any(tmp_path.iterdir())


def test_counts_printed():
    print("\nhostile inputs tried in this module:", dict(sorted(COUNTS.items())))


@pytest.mark.parametrize("argv", [
    ["vision", "camera", "--device", "99", "--frames", "1"],  # OpenCV's videoio warns on stderr first, unless kept
    ["vision", "camera", "--device", "0", "--players", "9"],  # refused before any camera is opened
    ["app", "--screenshot", "/proc/no/such/folder"],
    ["print-deck", "-o", "/no/such/folder/deck.pdf"],
    ["referee", "--demo", "no-such-game"],
    ["odds", "--starting", "2C,2D,3A,4B,7E", "--bid", "3x2", "--mc", "100000000000000"],
])
def test_other_commands_in_a_real_process_are_one_line(argv, tmp_path):
    r = subprocess.run([sys.executable, "-m", "companion", *argv], cwd=ROOT, capture_output=True, text=True,
                       timeout=120, env={**os.environ, "PIRATE_TABLE_DATA": str(tmp_path), "KIVY_NO_ARGS": "1"})
    assert_refused_cleanly(r.returncode, r.stdout, r.stderr, what=argv)


TOKENS = st.one_of(
    st.sampled_from(["referee", "app", "odds", "ledger", "buttons", "scan", "print-deck", "vision", "monitor",
                     "bench", "camera", "train", "new", "show", "verify", "loan", "import", "export", "--json",
                     "--csv", "--players", "--mc", "--arm", "--duration", "--seed", "--demo", "--ledger", "-o",
                     "--expect-head", "--buy-in", "--sim", "--deck", "--backend", "x.db", "A,B", "--"]),
    NUMBER_TEXT, HOSTILE_TEXT)


PREFIXES = st.sampled_from([[], ["referee"], ["referee", "r.json"], ["odds"], ["ledger", "x.db"],
                            ["ledger", "x.db", "show"], ["ledger", "x.db", "loan", "A"], ["buttons", "monitor"],
                            ["buttons", "bench", "--sim-firmware"], ["scan", "i.png"], ["vision", "bench"],
                            ["print-deck", "-o", "d.pdf"], ["app"]])


@settings(max_examples=EXAMPLES * 10, deadline=None)  # parsing only: ~2 ms an example
@given(argv=st.builds(lambda a, b: a + b, PREFIXES, st.lists(TOKENS, max_size=5)))
def test_any_command_line_parses_or_is_one_line(argv):
    """Parsing alone (nothing runs): a usage error of any command is one line with exit 2."""
    import contextlib
    import io

    from companion.cli import build_parser

    if any(a in ("-h", "--help") or a.startswith("--h") or (len(a) > 2 and "--version".startswith(a)) for a in argv):
        return  # help and version print and exit 0 (tested on their own)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            build_parser().parse_args(argv)
        except SystemExit as exc:
            count("argv")
            assert_refused_cleanly(exc.code, out.getvalue(), err.getvalue(), what=argv)


@pytest.mark.parametrize("argv,start", [
    (["vision.calibrate", "--scenes", "nan"], "python -m vision.calibrate: argument --scenes:"),
    (["vision.calibrate", "--scenes", "0"], "python -m vision.calibrate: argument --scenes: must be 1..100000, got 0"),
    (["vision.calibrate", "--split", "test"], "python -m vision.calibrate: argument --split:"),
    (["vision.suited_reader", "--deck", "standard52", "--lr", "nan"], "python -m vision.suited_reader: argument --lr:"),
    (["vision.suited_reader", "--deck", "standard52", "--steps", "٣"], "python -m vision.suited_reader: argument --steps:"),
    (["vision.suited_reader", "--deck", "standard52", "--train-budget-s", "inf"],
     "python -m vision.suited_reader: argument --train-budget-s:"),
    (["vision.suited_reader", "--deck", "island54", "--init", "/no/such/island54_reader.pt"],
     "--init /no/such/island54_reader.pt: not a reader's state dict (.pt) or exported reader (.onnx)"),
    (["vision.suited_reader", "--deck", "island54", "--init", "README.md"], "--init README.md: not a reader's"),
    (["vision.suited_reader", "--deck", "standard52", "--far-bars-only", "--far-scenes", "0"],
     "python -m vision.suited_reader: argument --far-scenes: must be >= 1, got 0"),
    (["vision.suited_reader", "--deck", "standard52", "--far-bars-only", "--far-hands", "nan"],
     "python -m vision.suited_reader: argument --far-hands:"),
    (["vision.suited_bench", "--threads", "0"], "python -m vision.suited_bench: argument --threads: must be 1..256"),
    (["vision.suited_bench", "--far-scenes", "-1"], "python -m vision.suited_bench: argument --far-scenes: must be >= 0"),
    (["vision.suited_bench", "--far-scenes", "٣"], "python -m vision.suited_bench: argument --far-scenes:"),
    (["vision.suited_bench", "--block", "-1"], "python -m vision.suited_bench: argument --block: must be >= 0"),
    (["vision.suited_bench", "--block", "833"],  # 834 blocks of 120 start scenes: past the 100,000 seeds of a section
     "python -m vision.suited_bench: argument --block: block 833 of these scene counts runs past a section's 100000"),
    (["vision.suited_bench", "--decks", "island54", "--models", "/no/such/folder"],
     "python -m vision.suited_bench: model file in /no/such/folder cannot be loaded: "),
    (["vision.suited_bench", "--models", "tests\x07"], "python -m vision.suited_bench: argument --models:"),
    (["companion.table_server.bench", "--phones", "0"], "python -m companion.table_server.bench: argument --phones:"),
    (["companion.table_server.bench", "--rounds", "1e3"], "python -m companion.table_server.bench: argument --rounds:"),
    (["companion.table_server", "--port", "1"], "python -m companion.table_server: unrecognized arguments"),
    (["vision.fonts", "--wrte"], "python -m vision.fonts: unrecognized arguments: --wrte"),
    (["vision.realcards", "/no/such/folder"], "python -m vision.realcards: argument root: no real-card photos at"),
    (["vision.realcards", "a", "b"], "python -m vision.realcards: unrecognized arguments: b"),
])
def test_developer_commands_refuse_bad_options_in_one_line(argv, start, tmp_path):
    """The project's ``python -m`` commands (training, calibration, benchmarks, the phone server) parse their
    options as the ``pirate-table`` ones do: a bad value is one line, exit code 2, before anything runs."""
    def state():
        return sorted((str(p.relative_to(ROOT)), p.stat().st_size, p.stat().st_mtime_ns)
                      for p in (ROOT / "models").rglob("*") if p.is_file())

    before = state()
    r = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PIRATE_TABLE_DATA": str(tmp_path)})
    assert_refused_cleanly(r.returncode, r.stdout, r.stderr, what=argv)
    assert r.stderr.startswith("pirate-table: error: " + start), r.stderr
    assert state() == before
