"""Chip ledger: entries, rulings, undo, sessions, tamper evidence, migrations, CSV, CLI."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from companion.ledger import Ledger, LedgerError, schema
from companion.ledger.csvio import export_csv_text, import_csv

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "companion" / "games" / "pirates_bluff" / "examples" / "rulebook.json"


def ruling(stacks_before, pot_before, *entries):
    players = list(stacks_before)
    stacks = dict(stacks_before)
    pot = pot_before
    out = []
    for kind, postings in entries:
        for a, v in postings.items():
            if a == "pot":
                pot += v
            else:
                stacks[a] += v
        out.append({"kind": kind, "postings": postings, "memo": kind})
    return {"players": players, "stacks_before": dict(stacks_before), "pot_carry_before": pot_before,
            "entries": out, "stacks": stacks, "pot_carry": pot}


def ante_and_win(led, winner, loser, penalty, ante=1):
    t = led.table()
    ps = t["players"]
    return ruling(t["stacks"], t["pot_carry"],
                  ("ante", {**{p: -ante for p in ps}, "pot": ante * len(ps)}),
                  ("penalty", {loser: -penalty, winner: penalty}),
                  ("pot_award", {"pot": -(t["pot_carry"] + ante * len(ps)), winner: t["pot_carry"] + ante * len(ps)}))


@pytest.fixture
def led(tmp_path):
    with Ledger.create(tmp_path / "t.db", ["A", "B", "C"]) as ledger:
        yield ledger


def test_new_session_buys_everyone_in(led):
    assert led.table() == {"players": ["A", "B", "C"], "stacks": {"A": 50, "B": 50, "C": 50}, "pot_carry": 0}
    s = led.summary()
    assert s["bank"] == -150 and all(v["net"] == 0 for v in s["players"].values())
    assert led.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert led.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert led.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert led.verify()["coins_on_table"] == 150


def test_ruling_applies_all_entries_and_balances_follow(led):
    entries = led.apply_ruling(ante_and_win(led, "A", "B", 7))
    assert [e.kind for e in entries] == ["ante", "penalty", "pot_award"]
    assert led.table()["stacks"] == {"A": 59, "B": 42, "C": 49}
    st = led.summary()["players"]
    assert (st["A"]["net"], st["B"]["net"], st["C"]["net"]) == (9, -8, -1)
    assert led.verify()["rounds_played"] == 1


def test_ruling_against_stale_balances_is_refused_and_nothing_written(led):
    r = ante_and_win(led, "A", "B", 7)
    led.apply_ruling(r)
    n = len(led.entries())
    with pytest.raises(LedgerError, match=r"stacks_before\.A: the ruling says 50, the ledger says 59"):
        led.apply_ruling(r)
    assert len(led.entries()) == n


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r["entries"][1]["postings"].update(A=8), r"entries\[1\]\.postings: sum to 1"),
    (lambda r: r["entries"][0]["postings"].update(Z=0), r"'Z' is neither"),
    (lambda r: r["entries"][0].update(kind="buy_in"), r"not a game entry kind"),
    (lambda r: (r["entries"][2]["postings"].update(pot=-4, A=4), r.pop("stacks"), r.pop("pot_carry")),
     r"takes the pot to -1"),
    (lambda r: r.update(stacks={"A": 1, "B": 1, "C": 1}), r"ruling\.stacks"),
    (lambda r: r["entries"][1]["postings"].update(A=7.0), r"whole coins"),
    (lambda r: r.update(json.loads(json.dumps(r).replace('"C"', '"D"'))), r"'D' is not a player"),
])
def test_bad_ruling_writes_nothing(led, mutate, message):
    r = ante_and_win(led, "A", "B", 7)
    mutate(r)
    head = led.summary()["head"]
    with pytest.raises(LedgerError, match=message):
        led.apply_ruling(r)
    assert led.summary()["head"] == head and led.table()["stacks"] == {"A": 50, "B": 50, "C": 50}


def test_short_player_takes_an_automatic_loan_in_the_same_transaction(led):
    led.apply_ruling(ante_and_win(led, "A", "B", 60))
    kinds = [(e.kind, e.meta.get("auto")) for e in led.entries()[-4:]]
    assert kinds == [("loan", True), ("ante", None), ("penalty", None), ("pot_award", None)]
    assert led.table()["stacks"]["B"] == 0
    b = led.summary()["players"]["B"]
    assert b["loans"] == 11 and b["net"] == -61  # 0 stack - 11 loan - 50 bought in
    with pytest.raises(LedgerError, match="has 0 coins"):
        led.repay("B", 5)


def test_loan_and_repay(led):
    led.loan("C", 10)
    assert led.table()["stacks"]["C"] == 60 and led.summary()["players"]["C"]["net"] == 0
    with pytest.raises(LedgerError, match="owes 10"):
        led.repay("C", 11)
    led.repay("C", 4)
    assert led.summary()["players"]["C"]["loans"] == 6
    with pytest.raises(LedgerError, match="> 0"):
        led.loan("C", 0)
    with pytest.raises(LedgerError, match="not a player"):
        led.loan("Z", 3)


def test_undo_reverses_and_names_what_it_reverses(led):
    before = led.balances()
    entries = led.apply_ruling(ante_and_win(led, "A", "B", 7))
    undos = led.undo()  # the whole latest action, newest entry first
    assert [u.reverses for u in undos] == [e.id for e in reversed(entries)]
    assert led.balances() == before
    assert led.verify()["rounds_played"] == 0
    with pytest.raises(LedgerError, match="already undone"):
        led.undo(entries[0].id)
    with pytest.raises(LedgerError, match="undo is not undone"):
        led.undo(undos[0].id)
    with pytest.raises(LedgerError, match="no such entry"):
        led.undo(999)
    with pytest.raises(LedgerError, match="cannot be undone"):
        led.undo(1)
    assert len(led.entries()) == entries[-1].id + 3  # nothing deleted, refusals wrote nothing


def test_undo_refuses_to_make_a_stack_negative(led):
    led.apply_ruling(ante_and_win(led, "A", "B", 7))
    award = led.entries()[-1]
    led.apply_ruling(ante_and_win(led, "B", "A", 59))  # A drops to 0
    with pytest.raises(LedgerError, match=f"cannot undo entry {award.id} .*A's stack would be -"):
        led.undo(award.id)


def test_leave_repays_cashes_out_and_rejoin_buys_in(led):
    led.loan("C", 10)
    led.apply_ruling(ante_and_win(led, "A", "C", 55))  # C: 60-1-55 = 4, owes 10
    entries = led.leave("C")
    assert [e.kind for e in entries] == ["repayment", "leave"]
    c = led.summary()["players"]["C"]
    assert (c["stack"], c["loans"], c["seated"], c["net"]) == (0, 6, False, -56)
    assert led.table()["players"] == ["A", "B"]
    with pytest.raises(LedgerError, match="has left"):
        led.loan("C", 1)
    led.rejoin("C")
    assert led.table()["players"] == ["A", "B", "C"]
    assert led.summary()["players"]["C"]["net"] == -56
    led.leave("A")
    a = led.summary()["players"]["A"]
    assert a["cashed_out"] == a["bought_in"] + a["net"] and a["stack"] == 0
    led.undo()  # undo A's leave: A is seated again with the stack back
    assert "A" in led.table()["players"] and led.table()["stacks"]["A"] > 0
    led.join("D")
    assert led.table()["players"] == ["A", "B", "C", "D"]
    assert led.verify()["ok"]


def test_end_splits_the_pot_with_odd_coins_in_seat_order(led):
    t = led.table()
    led.apply_ruling(ruling(t["stacks"], 0, ("ante", {"A": -1, "B": -1, "C": -1, "pot": 3}),
                            ("dock_penalty", {"A": -2, "pot": 2})))
    assert led.table()["pot_carry"] == 5
    with pytest.raises(LedgerError, match="pot holds 5"):
        led.settle()
    entries = led.end()
    assert entries[0].kind == "end_split" and entries[0].postings == {
        "pot": -5, "stack:A": 2, "stack:B": 2, "stack:C": 1}
    nets = {p: v["net"] for p, v in led.summary()["players"].items()}
    assert nets == {"A": -1, "B": 1, "C": 0}
    assert led.settle() == [("A", "B", 1)]
    with pytest.raises(LedgerError, match="ended"):
        led.apply_ruling(ante_and_win(led, "A", "B", 1))
    led.undo()  # reopen
    assert led.table()["pot_carry"] == 5 and not led.summary()["ended"]


def test_rounds_limit(tmp_path):
    with Ledger.create(tmp_path / "r.db", ["A", "B", "C"], rounds=2) as led:
        led.apply_ruling(ante_and_win(led, "A", "B", 1))
        led.apply_ruling(ante_and_win(led, "A", "B", 1))
        with pytest.raises(LedgerError, match="2 rounds have been played"):
            led.apply_ruling(ante_and_win(led, "A", "B", 1))
        led.undo()  # an undone round does not count
        led.apply_ruling(ante_and_win(led, "A", "B", 1))


def test_time_limit_finishes_the_hand_in_play_then_stops(tmp_path):
    now = [datetime(2026, 1, 1, 20, 0, tzinfo=timezone.utc)]
    clock = lambda: now[0]  # noqa: E731
    with Ledger.create(tmp_path / "m.db", ["A", "B", "C"], minutes=30, clock=clock) as led:
        now[0] += timedelta(minutes=29)
        led.apply_ruling(ante_and_win(led, "A", "B", 1))
        assert not led.summary()["time_up"]
        now[0] += timedelta(minutes=2)
        assert led.summary()["time_up"]
        led.apply_ruling(ante_and_win(led, "A", "B", 1))  # the hand that was in play at the deadline
        with pytest.raises(LedgerError, match="time is up"):
            led.apply_ruling(ante_and_win(led, "A", "B", 1))


def test_session_arguments_are_checked(tmp_path):
    for kwargs, msg in [({"players": []}, "at least one"), ({"players": ["A", "A"]}, "twice"),
                        ({"players": ["pot"]}, "bad player name"), ({"players": ["A:B"]}, "bad player name"),
                        ({"players": ["A"], "buy_in": 0}, "buy-in"),
                        ({"players": ["A"], "minutes": 30, "rounds": 3}, "not both")]:
        with pytest.raises(LedgerError, match=msg):
            Ledger.create(tmp_path / "x.db", **kwargs)
    assert not (tmp_path / "x.db").exists()


def _tamper(path, sql, *params):
    conn = sqlite3.connect(path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


@pytest.mark.parametrize("sql, message", [
    # a balanced change of two amounts: every sum still checks, only the hash chain can tell
    ("UPDATE postings SET amount = amount + 5 WHERE entry_id = 9 AND account = 'stack:A'", None),
    ("UPDATE postings SET amount = amount - 5 WHERE entry_id = 9 AND account = 'stack:B'", "tampered"),
    ("UPDATE entries SET memo = 'nothing to see' WHERE id = 8", "tampered"),
    ("DELETE FROM postings WHERE entry_id = 10", "sum to|tampered"),
    ("UPDATE entries SET hash = 'x' WHERE id = 10", "chain broken|tampered"),
])
def test_verify_catches_tampering(tmp_path, sql, message):
    path = tmp_path / "t.db"
    with Ledger.create(path, ["A", "B", "C"]) as led:
        led.apply_ruling(ante_and_win(led, "A", "B", 7))
        led.loan("C", 3)
        assert led.verify()["ok"]
    if message is None:
        _tamper(path, sql)
        _tamper(path, "UPDATE postings SET amount = amount - 5 WHERE entry_id = 9 AND account = 'stack:B'")
        message = "tampered"
    else:
        _tamper(path, sql)
    with Ledger.open(path) as led, pytest.raises(LedgerError, match=message):
        led.verify()


def test_migration_from_a_v1_file(tmp_path):
    src = tmp_path / "v2.db"
    with Ledger.create(src, ["A", "B", "C"]) as led:
        led.apply_ruling(ante_and_win(led, "A", "B", 7))
        led.undo()
        led.loan("B", 4)
        entries = led.entries()
        balances = led.balances()
    v1 = tmp_path / "v1.db"
    conn = sqlite3.connect(v1)
    conn.executescript(schema.V1_DDL)
    for e in entries:
        conn.execute("INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?)",
                     (e.id, e.ts, e.kind, e.memo, e.reverses, json.dumps(e.meta), json.dumps(e.postings),
                      e.prev_hash, e.hash))
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Ledger.open(v1) as led:
        assert led.conn.execute("PRAGMA user_version").fetchone()[0] == 2
        assert led.entries() == entries and led.balances() == balances
        assert led.verify()["ok"]
        led.repay("B", 4)  # and it keeps working
        assert led.verify()["ok"]
    # a file from the future is refused
    _tamper(v1, "PRAGMA user_version = 99")
    with pytest.raises(LedgerError, match="newer"):
        Ledger.open(v1)


def test_migration_rolls_back_on_a_bad_v1_file(tmp_path):
    v1 = tmp_path / "bad.db"
    conn = sqlite3.connect(v1)
    conn.executescript(schema.V1_DDL)
    conn.execute("INSERT INTO entries VALUES (1,'t','session_start','',NULL,'{}','{\"a\": 1.5}','0','h')")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with pytest.raises(LedgerError, match="not whole"):
        Ledger.open(v1)
    conn = sqlite3.connect(v1)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("SELECT postings FROM entries").fetchone()[0] == '{"a": 1.5}'
    conn.close()


def test_csv_round_trip_and_tampered_csv_is_refused(tmp_path, led):
    led.apply_ruling(ante_and_win(led, "A", "B", 60))
    led.leave("C")
    led.undo()
    led.end()
    text = export_csv_text(led)
    with import_csv(io.StringIO(text), tmp_path / "copy.db") as copy:
        assert copy.entries() == led.entries()
        assert export_csv_text(copy) == text
        assert copy.settle() == led.settle()
    bad = text.replace("stack:B,-60", "stack:B,-61").replace("stack:A,60", "stack:A,61")
    assert bad != text
    with pytest.raises(LedgerError, match="tampered"):
        import_csv(io.StringIO(bad), tmp_path / "bad.db")
    assert not (tmp_path / "bad.db").exists()
    with pytest.raises(LedgerError, match="header"):
        import_csv(io.StringIO("a,b\n"), tmp_path / "bad.db")


# ---------------------------------------------------------------------------------------------- CLI
def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "companion", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_cli_session_with_the_referee(tmp_path):
    db = tmp_path / "s.db"
    r = cli("ledger", db, "new", "--players", "Arville,Bethany,Carter,Douglas,Eris", "--minutes", "30")
    assert r.returncode == 0, r.stderr
    r = cli("referee", EXAMPLE, "--ledger", db)
    assert r.returncode == 0, r.stderr
    ruling = json.loads(r.stdout)
    assert ruling["ledger"]["entries"]
    shown = json.loads(cli("ledger", db, "show", "--json").stdout)
    assert {p: v["stack"] for p, v in shown["players"].items()} == ruling["stacks"]
    assert shown["pot"] == ruling["pot_carry"]
    # a second hand is ruled against the new balances
    r2 = json.loads(cli("referee", EXAMPLE, "--ledger", db).stdout)
    assert r2["stacks_before"] == ruling["stacks"]
    assert "ok:" in cli("ledger", db, "verify").stdout
    assert cli("ledger", db, "loan", "Eris", "5").returncode == 0
    assert cli("ledger", db, "undo").returncode == 0
    assert cli("ledger", db, "end").returncode == 0
    settle = json.loads(cli("ledger", db, "settle", "--json").stdout)
    assert settle == [{"from": "Eris", "to": "Douglas", "coins": 16}, {"from": "Arville", "to": "Douglas", "coins": 2},
                      {"from": "Bethany", "to": "Douglas", "coins": 2}, {"from": "Carter", "to": "Douglas", "coins": 2}]
    out = tmp_path / "s.csv"
    assert cli("ledger", db, "export", "--csv", "-o", out).returncode == 0
    r = cli("ledger", tmp_path / "copy.db", "import", "--csv", out)
    assert r.returncode == 0, r.stderr
    assert cli("ledger", tmp_path / "copy.db", "export", "--csv").stdout == out.read_text()


def test_cli_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path):
    db = tmp_path / "s.db"
    assert cli("ledger", db, "new", "--players", "Arville,Bethany,Carter,Douglas,Eris").returncode == 0
    head = json.loads(cli("ledger", db, "show", "--json").stdout)["head"]
    rec = json.loads(EXAMPLE.read_text())
    cases = []
    stated = dict(rec, stacks={p: 40 for p in rec["players"]})
    (tmp_path / "stated.json").write_text(json.dumps(stated))
    cases.append((("referee", tmp_path / "stated.json", "--ledger", db), "the record says 40, the ledger says 50"))
    stranger = dict(rec, players=rec["players"][:4] + ["Zed"])
    (tmp_path / "stranger.json").write_text(json.dumps(stranger))
    cases.append((("referee", tmp_path / "stranger.json", "--ledger", db), "'Zed' is not seated"))
    cases.append((("referee", EXAMPLE, "--ledger", tmp_path / "missing.db"), "no such ledger"))
    cases.append((("ledger", db, "repay", "Eris", "3"), "owes 0"))
    cases.append((("ledger", db, "loan", "Nobody", "3"), "not a player"))
    cases.append((("ledger", db, "undo", "1"), "cannot be undone"))
    cases.append((("ledger", db, "settle"), None))
    cases.append((("ledger", db, "new", "--players", "A,B"), "already exists"))
    cases.append((("ledger", tmp_path / "x.db", "import", "--csv", tmp_path / "nope.csv"), "cannot read"))
    (tmp_path / "junk.db").write_text("not sqlite at all, just text " * 100)
    cases.append((("ledger", tmp_path / "junk.db", "show"), "not a ledger"))
    for args, message in cases:
        r = cli(*args)
        if message is None:
            assert r.returncode == 0
            continue
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and message in r.stderr, (args, r.stderr)
    assert json.loads(cli("ledger", db, "show", "--json").stdout)["head"] == head
    assert not (tmp_path / "missing.db").exists() and not (tmp_path / "x.db").exists()


def test_import_refuses_a_rehashed_csv_with_a_bad_timestamp(tmp_path, led):
    """A forger who recomputes every hash still cannot slip in a malformed entry."""
    import dataclasses

    entries = led.entries()
    forged, prev = [], entries[0].prev_hash
    for e in entries:
        if e.id == 3:
            e = dataclasses.replace(e, ts="yesterday-ish")
        e = dataclasses.replace(e, prev_hash=prev)
        e = dataclasses.replace(e, hash=e.digest())
        forged.append(e)
        prev = e.hash
    from companion.ledger.csvio import COLUMNS

    buf = io.StringIO()
    import csv

    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for e in forged:
        for a, v in (sorted(e.postings.items()) or [("", "")]):
            w.writerow([e.id, e.ts, e.kind, e.memo, e.reverses or "", json.dumps(e.meta), a, v, e.prev_hash, e.hash])
    with pytest.raises(LedgerError, match="entry 3: bad timestamp"):
        import_csv(io.StringIO(buf.getvalue()), tmp_path / "forged.db")
    assert not (tmp_path / "forged.db").exists()


def test_record_for_fills_stacks_and_pot_from_the_ledger(led):
    rec = {"game": "pirates-bluff", "players": ["A", "B", "C"], "options": {"ante": 1}}
    assert led.record_for({"game": "powderkeg", "players": ["A", "B"]}) == {
        "game": "powderkeg", "players": ["A", "B"], "stacks": {"A": 50, "B": 50}, "pot_carry": 0}
    led.apply_ruling(ante_and_win(led, "A", "B", 7))
    filled = led.record_for(rec)
    assert filled["stacks"] == {"A": 59, "B": 42, "C": 49} and filled["options"] == {"ante": 1, "pot_carry": 0}
    assert rec == {"game": "pirates-bluff", "players": ["A", "B", "C"], "options": {"ante": 1}}  # not mutated
    with pytest.raises(LedgerError, match="record.options.pot_carry"):
        led.record_for({**rec, "options": {"pot_carry": 3}})
    with pytest.raises(LedgerError, match="not seated"):
        led.record_for({**rec, "players": ["A", ["B"]]})


def test_cli_powderkeg_rounds_go_through_the_ledger_too(tmp_path):
    db = tmp_path / "p.db"
    pk = ROOT / "companion" / "games" / "powderkeg" / "examples" / "rulebook.json"
    assert cli("ledger", db, "new", "--players", "Alfonse,Beatrice,Cowen,Dougherty,Eron", "--rounds", "2").returncode == 0
    r1 = cli("referee", pk, "--ledger", db)
    assert r1.returncode == 0, r1.stderr
    ruling = json.loads(r1.stdout)
    shown = json.loads(cli("ledger", db, "show", "--json").stdout)
    assert {p: v["stack"] for p, v in shown["players"].items()} == ruling["stacks"]
    assert shown["pot"] == ruling["pot_carry"]
    r2 = json.loads(cli("referee", pk, "--ledger", db).stdout)
    assert r2["pot_carry_before"] == ruling["pot_carry"]
    r3 = cli("referee", pk, "--ledger", db)
    assert r3.returncode == 2 and "2 rounds have been played" in r3.stderr
    assert cli("ledger", db, "verify").returncode == 0
