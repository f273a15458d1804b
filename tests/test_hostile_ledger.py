"""Hostile input to every `ledger` action: CSV to import, damaged or foreign database files to show/verify/log/
export/settle/table, hostile names and amounts to the writing actions. Exit 0 with valid output, or exit 2 with one
line and every file (SQLite's side files included) byte-for-byte as before."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hostile import (COUNTS, HOSTILE_TEXT, NUMBER_TEXT, ROOT, assert_refused_cleanly, count, run_cli, snapshot,
                     strict_json)

from companion.inputs import COIN_MAX
from companion.ledger import Ledger

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])
HEAD = re.compile(r"head [0-9a-f]{64}\n\Z")
READS = ["show", "show --json", "table", "log", "log --json", "verify", "settle", "settle --json", "export --csv"]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A ledger with a bit of everything: loans, a ruling, an undo, a player who left."""
    d = tmp_path_factory.mktemp("tpl")
    db = d / "t.db"
    with Ledger.create(db, ["Ann", "Bo", "Cy"], 50) as led:
        led.loan("Ann", 5)
        led.apply_ruling({"players": ["Ann", "Bo", "Cy"], "stacks_before": {"Ann": 55, "Bo": 50, "Cy": 50},
                          "pot_carry_before": 0, "entries": [
                              {"kind": "ante", "postings": {"Ann": -1, "Bo": -1, "Cy": -1, "pot": 3}, "memo": "ante"},
                              {"kind": "pot_award", "postings": {"Bo": 2, "pot": -2}, "memo": "pot"}]})
        led.repay("Ann", 2)
        led.undo()
        led.leave("Cy")
    from companion.ledger.csvio import export_csv_text

    with Ledger.open(db) as led:
        csv_text = export_csv_text(led)
    return db, csv_text


def _check_read_output(cmd: str, out: str) -> None:
    if "--json" in cmd or cmd == "table":
        if cmd.startswith("log"):
            for line in out.splitlines():
                strict_json(line)
        else:
            strict_json(out)
    elif cmd == "verify":
        assert out.startswith("ok: ") and out.count("\n") == 1
    elif cmd == "export --csv":
        assert out.startswith("entry,ts,kind")


# ------------------------------------------------------------------ import


@st.composite
def hostile_csv(draw, base: str) -> bytes:
    lines = base.splitlines(keepends=True)
    ops = draw(st.lists(st.sampled_from(["field", "field", "drop", "dup", "swap", "bytes", "cut", "number"]),
                        max_size=3))
    for op in ops:
        i = draw(st.integers(0, len(lines) - 1))
        if op == "field":
            fields = lines[i].rstrip("\n").split(",")
            j = draw(st.integers(0, len(fields) - 1))
            fields[j] = draw(st.one_of(HOSTILE_TEXT, NUMBER_TEXT)).replace("\n", "\\n")
            lines[i] = ",".join(fields) + "\n"
        elif op == "number":
            lines[i] = re.sub(r"(?<=,)-?\d+(?=,)", lambda m: draw(NUMBER_TEXT).replace(",", ""), lines[i], count=1)
        elif op == "drop" and len(lines) > 1:
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    raw = "".join(lines).encode("utf-8", "surrogatepass")
    if "bytes" in ops:
        k = draw(st.integers(0, len(raw)))
        raw = raw[:k] + draw(st.binary(min_size=1, max_size=16)) + raw[k:]
    if draw(st.integers(0, 15)) == 0:
        raw = draw(st.binary(max_size=200))
    return raw


def test_import_fuzz(template):
    _, base = template

    @FUZZ
    @given(raw=hostile_csv(base))
    def run(raw):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "in.csv").write_bytes(raw)
            before = snapshot(d)
            code, out, err = run_cli("ledger", d / "new.db", "import", "--csv", d / "in.csv")
            count("ledger import")
            if code == 0:
                assert HEAD.search(out), out
                with Ledger.open(d / "new.db", readonly=True) as led:
                    assert led.verify()["head"] == out.split()[-1]
            else:
                assert_refused_cleanly(code, out, err, before, snapshot(d), raw[:200])

    run()
    print(f"\nledger import: {COUNTS['ledger import']} hostile CSV files")


def test_import_then_export_is_identical(template, tmp_path):
    _, base = template
    (tmp_path / "in.csv").write_text(base, encoding="utf-8")
    assert run_cli("ledger", tmp_path / "n.db", "import", "--csv", tmp_path / "in.csv")[0] == 0
    code, out, _ = run_cli("ledger", tmp_path / "n.db", "export", "--csv")
    assert code == 0 and out == base


# ------------------------------------------------------------------ reading damaged / foreign files


@st.composite
def hostile_db(draw, good: bytes) -> bytes:
    kind = draw(st.sampled_from(["flip", "flip", "cut", "empty", "random", "foreign", "text"]))
    if kind == "flip":
        raw = bytearray(good)
        for _ in range(draw(st.integers(1, 8))):
            i = draw(st.integers(0, len(raw) - 1))
            raw[i] = draw(st.integers(0, 255))
        return bytes(raw)
    if kind == "cut":
        return good[: draw(st.integers(0, len(good)))]
    if kind == "empty":
        return b""
    if kind == "random":
        return draw(st.binary(max_size=4096))
    if kind == "text":
        return draw(st.text(max_size=200)).encode("utf-8", "surrogatepass")
    return b"foreign"


def _foreign_db(path: Path, variant: int) -> None:
    conn = sqlite3.connect(path)
    if variant == 0:
        conn.execute("CREATE TABLE t (x)")
    elif variant == 1:
        conn.execute("CREATE TABLE entries (x)")
    elif variant == 2:
        conn.execute("CREATE TABLE entries (x)")
        conn.execute("PRAGMA user_version = 2")
    else:
        conn.execute("PRAGMA user_version = 77")
        conn.execute("CREATE TABLE entries (x)")
    conn.commit()
    conn.close()


def test_read_actions_fuzz(template):
    db, _ = template
    good = db.read_bytes()

    @FUZZ
    @given(raw=hostile_db(good), cmd=st.sampled_from(READS), variant=st.integers(0, 3))
    def run(raw, cmd, variant):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            target = d / "l.db"
            if raw == b"foreign":
                _foreign_db(target, variant)
            else:
                target.write_bytes(raw)
            before = snapshot(d)
            code, out, err = run_cli("ledger", target, *cmd.split())
            count("ledger read")
            if code == 0:
                _check_read_output(cmd, out)
            else:
                assert_refused_cleanly(code, out, err, what=(cmd, raw[:64]))
            assert snapshot(d) == before, (cmd, code, err)  # a read changes nothing, ever

    run()
    print(f"\nledger show/verify/...: {COUNTS['ledger read']} hostile files")


def test_read_actions_on_a_good_ledger_leave_the_folder_as_it_was(template, tmp_path):
    db, _ = template
    shutil.copy(db, tmp_path / "l.db")
    before = snapshot(tmp_path)
    for cmd in READS:
        code, out, err = run_cli("ledger", tmp_path / "l.db", *cmd.split())
        if cmd.startswith("settle"):  # the pot is not empty: settle refuses until the session ends
            assert_refused_cleanly(code, out, err, what=cmd)
            assert "pot holds" in err
        else:
            assert code == 0, (cmd, err)
            _check_read_output(cmd, out)
        assert snapshot(tmp_path) == before, cmd


# ------------------------------------------------------------------ writing actions


WRITES = st.one_of(
    st.tuples(st.sampled_from(["loan", "repay"]), st.one_of(st.sampled_from(["Ann", "Bo", "Cy"]), HOSTILE_TEXT),
              NUMBER_TEXT).map(list),
    st.tuples(st.sampled_from(["join", "rejoin"]), st.one_of(st.sampled_from(["Cy", "Di"]), HOSTILE_TEXT)).map(list),
    st.tuples(st.sampled_from(["join", "rejoin"]), st.sampled_from(["Di", "Cy"]), st.just("--buy-in"),
              NUMBER_TEXT).map(list),
    st.tuples(st.just("leave"), st.one_of(st.sampled_from(["Ann", "Bo"]), HOSTILE_TEXT)).map(list),
    st.tuples(st.just("undo"), st.one_of(NUMBER_TEXT, st.just(None))).map(lambda t: [x for x in t if x is not None]),
    st.just(["end"]),
)


def test_write_actions_fuzz(template):
    db, _ = template

    @FUZZ
    @given(args=WRITES)
    def run(args):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            shutil.copy(db, d / "l.db")
            before = snapshot(d)
            code, out, err = run_cli("ledger", d / "l.db", *args)
            count("ledger write")
            if code == 0:
                assert HEAD.search(out), out
                with Ledger.open(d / "l.db", readonly=True) as led:
                    info = led.verify()
                    assert info["head"] == out.split()[-1]
                    for name, v in led.summary()["players"].items():
                        assert name.isprintable() and abs(v["stack"]) <= COIN_MAX
            else:
                assert_refused_cleanly(code, out, err, before, snapshot(d), args)

    run()
    print(f"\nledger writes: {COUNTS['ledger write']} hostile argument lists")


@given(players=st.lists(HOSTILE_TEXT, min_size=1, max_size=4), buy_in=NUMBER_TEXT)
@FUZZ
def test_new_fuzz(players, buy_in):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        before = snapshot(d)
        code, out, err = run_cli("ledger", d / "n.db", "new", "--players", ",".join(players), "--buy-in", buy_in)
        count("ledger new")
        if code == 0:
            assert HEAD.search(out)
            with Ledger.open(d / "n.db", readonly=True) as led:
                assert led.verify()["entries"] >= 3
        else:
            assert_refused_cleanly(code, out, err, before, snapshot(d), (players, buy_in))


# ------------------------------------------------------------------ the classes of the issue, one by one


def test_amounts_beyond_the_ledger_range_are_refused(template, tmp_path):
    db, _ = template
    shutil.copy(db, tmp_path / "l.db")
    before = snapshot(tmp_path)
    for n in (2**63, 2**63 - 1, 2**64, COIN_MAX + 1, 10**30):
        code, out, err = run_cli("ledger", tmp_path / "l.db", "loan", "Ann", n)
        assert_refused_cleanly(code, out, err, before, snapshot(tmp_path), n)
    # a stack may not grow beyond the range by many loans either
    code, out, err = run_cli("ledger", tmp_path / "l.db", "loan", "Ann", COIN_MAX)
    assert_refused_cleanly(code, out, err, before, snapshot(tmp_path))
    assert "range" in err
    code, out, _ = run_cli("ledger", tmp_path / "l.db", "verify")
    assert code == 0


def test_a_damaged_chain_takes_no_new_entry_and_its_good_part_can_be_rescued(template, tmp_path):
    db, _ = template
    shutil.copy(db, tmp_path / "l.db")
    conn = sqlite3.connect(tmp_path / "l.db")
    conn.execute("UPDATE entries SET memo = 'forged' WHERE id = 9")
    conn.commit()
    conn.close()
    before = snapshot(tmp_path)
    code, out, err = run_cli("ledger", tmp_path / "l.db", "loan", "Ann", "3")
    assert_refused_cleanly(code, out, err, before, snapshot(tmp_path))
    assert "damaged" in err and "export --csv --good" in err
    code, out, err = run_cli("ledger", tmp_path / "l.db", "export", "--csv", "--good", "-o", tmp_path / "good.csv")
    assert code == 0
    code, out, err = run_cli("ledger", tmp_path / "new.db", "import", "--csv", tmp_path / "good.csv")
    assert code == 0, err
    with Ledger.open(tmp_path / "new.db") as led:
        assert led.verify()["entries"] == 8  # entries 1-8, the good part
    # an orphan posting (what replaying the entries alone does not see) also blocks appending
    shutil.copy(db, tmp_path / "o.db")
    conn = sqlite3.connect(tmp_path / "o.db")
    conn.execute("INSERT INTO postings VALUES (999, 'stack:Ann', 5)")
    conn.commit()
    conn.close()
    before = snapshot(tmp_path)
    code, out, err = run_cli("ledger", tmp_path / "o.db", "loan", "Ann", "3")
    assert_refused_cleanly(code, out, err, before, snapshot(tmp_path))


def test_read_only_ledger(template, tmp_path):
    db, _ = template
    shutil.copy(db, tmp_path / "l.db")
    os.chmod(tmp_path / "l.db", 0o444)
    before = snapshot(tmp_path)
    code, out, err = run_cli("ledger", tmp_path / "l.db", "loan", "Ann", "3")
    assert_refused_cleanly(code, out, err, before, snapshot(tmp_path))
    assert "read-only" in err
    assert run_cli("ledger", tmp_path / "l.db", "verify")[0] == 0
    assert snapshot(tmp_path) == before


def test_names_with_control_characters_never_reach_the_ledger_or_csv(template, tmp_path):
    db, _ = template
    shutil.copy(db, tmp_path / "l.db")
    before = snapshot(tmp_path)
    for bad in ("A\nB", "Z\x00", "E\x1b[31m", "\u202eevil", "Ann\u200b", " Ann", "x" * 33, "e\u0301"):
        code, out, err = run_cli("ledger", tmp_path / "l.db", "join", bad)
        assert_refused_cleanly(code, out, err, before, snapshot(tmp_path), bad)
        code, out, err = run_cli("ledger", tmp_path / "n.db", "new", "--players", f"Ann,{bad}")
        assert_refused_cleanly(code, out, err, before, snapshot(tmp_path), bad)


def test_verify_expect_head_detects_truncation(template, tmp_path):
    db, _ = template
    shutil.copy(db, tmp_path / "l.db")
    code, out, _ = run_cli("ledger", tmp_path / "l.db", "loan", "Bo", "4")
    head = out.split()[-1]
    assert run_cli("ledger", tmp_path / "l.db", "verify", "--expect-head", head)[0] == 0
    assert run_cli("ledger", tmp_path / "l.db", "verify", "--expect-head", head[:16])[0] == 0
    conn = sqlite3.connect(tmp_path / "l.db")
    last = conn.execute("SELECT MAX(id) FROM entries").fetchone()[0]
    conn.execute("DELETE FROM postings WHERE entry_id = ?", (last,))
    conn.execute("DELETE FROM entries WHERE id = ?", (last,))
    conn.commit()
    conn.close()
    assert run_cli("ledger", tmp_path / "l.db", "verify")[0] == 0  # a shorter chain verifies on its own...
    code, out, err = run_cli("ledger", tmp_path / "l.db", "verify", "--expect-head", head)
    assert_refused_cleanly(code, out, err)  # ...but not against the head printed after the write
    assert "not in this ledger's chain" in err


def test_binary_csv_in_a_real_process(tmp_path):
    (tmp_path / "b.csv").write_bytes(bytes(range(256)) * 8)
    r = subprocess.run([sys.executable, "-m", "companion", "ledger", str(tmp_path / "n.db"), "import", "--csv",
                        str(tmp_path / "b.csv")], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert_refused_cleanly(r.returncode, r.stdout, r.stderr)
    assert sorted(os.listdir(tmp_path)) == ["b.csv"]


def test_reading_a_v1_file_migrates_a_copy_in_memory_and_leaves_the_file(tmp_path):
    from companion.ledger import schema

    with Ledger.create(tmp_path / "v2.db", ["A", "B", "C"]) as led:
        led.loan("B", 4)
        entries = led.entries()
    conn = sqlite3.connect(tmp_path / "v1.db")
    conn.executescript(schema.V1_DDL)
    for e in entries:
        conn.execute("INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?)",
                     (e.id, e.ts, e.kind, e.memo, e.reverses, json.dumps(e.meta), json.dumps(e.postings),
                      e.prev_hash, e.hash))
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    (tmp_path / "v2.db").unlink()
    before = snapshot(tmp_path)
    for cmd in ("verify", "show --json", "export --csv"):
        code, out, err = run_cli("ledger", tmp_path / "v1.db", *cmd.split())
        assert code == 0, err
    assert snapshot(tmp_path) == before  # still version 1, byte for byte
    code, out, err = run_cli("ledger", tmp_path / "v1.db", "loan", "A", "2")  # a write migrates it
    assert code == 0 and HEAD.search(out), err
    with Ledger.open(tmp_path / "v1.db", readonly=True) as led:
        assert led.conn.execute("PRAGMA user_version").fetchone()[0] == 2 and led.verify()["ok"]
