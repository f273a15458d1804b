"""Hostile records to `pirate-table referee` (every registered game) and to `referee --ledger` (a ruling applied
to a ledger): exit 0 with a strict-JSON ruling, or exit 2 with one line and every file byte-for-byte as before."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from companion.games import registry
from hypothesis import HealthCheck, given, settings, strategies as st

from hostile import (COUNTS, ROOT, assert_refused_cleanly, count, mutated_json_text, run_cli, snapshot,
                     strict_json)

# Records are ruled in ~10 ms: more examples here (a bid of rank 9, the first crash, needs ~300 to be found).
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60")) * 4
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


def game_examples() -> dict[str, list[dict]]:
    """game id -> example records: every game of the registry (so new games are covered when they land) and
    the shipped examples/ files."""
    out: dict[str, list[dict]] = {}
    for spec in registry.games():
        for path in spec.examples:
            out.setdefault(spec.id, []).append(json.loads(Path(path).read_text(encoding="utf-8")))
    for f in sorted((ROOT / "examples").glob("*.json")):
        rec = json.loads(f.read_text(encoding="utf-8"))
        if isinstance(rec, dict) and isinstance(rec.get("game"), str):
            out.setdefault(rec["game"], []).append(rec)
    return out


GAMES = game_examples()


def test_every_game_is_fuzzed():
    assert {"pirates-bluff", "powderkeg"} <= set(GAMES), sorted(GAMES)
    from companion.games import registry

    assert {s.id for s in registry.games()} <= set(GAMES), "a registered game without an example record"


def _referee(raw: bytes, game: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        rec = d / "record.json"
        rec.write_bytes(raw)
        before = snapshot(d)
        code, out, err = run_cli("referee", rec)
        count(f"referee {game}")
        if code == 0:
            ruling = strict_json(out)
            assert isinstance(ruling, dict) and err == "", (out[:300], err)
            assert snapshot(d) == before
        else:
            assert_refused_cleanly(code, out, err, before, snapshot(d), raw[:300])


@pytest.mark.parametrize("game", sorted(GAMES))
def test_referee_fuzz(game):
    base = GAMES[game]

    @FUZZ
    @given(data=st.data())
    def run(data):
        rec = data.draw(st.sampled_from(base))
        _referee(data.draw(mutated_json_text(rec)), game)

    run()
    # the unmutated examples are ruled (the fuzz starts from valid records)
    for rec in base:
        code, out, err = 0, "", ""
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "r.json"
            p.write_text(json.dumps(rec))
            code, out, err = run_cli("referee", p)
        assert code == 0, err
    print(f"\nreferee {game}: {COUNTS.get(f'referee {game}')} hostile records")


def _ledger_for(rec: dict, folder: Path) -> Path | None:
    from companion.ledger import Ledger

    players = rec.get("players")
    try:
        Ledger.create(folder / "t.db", players, 50).close()
    except ValueError:  # a game whose names the ledger does not take: no ledger run for it
        return None
    return folder / "t.db"


@pytest.mark.parametrize("game", sorted(g for g in GAMES if registry.get(g).uses_chips))
def test_referee_ledger_apply_fuzz(game, tmp_path):
    """`referee --ledger`: a hostile record is refused without touching the ledger; a good one is applied whole
    and the ledger verifies."""
    base = GAMES[game]
    template_dir = tmp_path / "template"
    template_dir.mkdir()
    rec0 = {k: v for k, v in base[0].items() if k not in ("stacks", "pot_carry")}
    if isinstance(rec0.get("options"), dict):
        rec0["options"] = {k: v for k, v in rec0["options"].items() if k != "pot_carry"}
    db0 = _ledger_for(rec0, template_dir)
    assert db0 is not None

    @FUZZ
    @given(raw=mutated_json_text(rec0))
    def run(raw):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            shutil.copy(db0, d / "t.db")
            (d / "r.json").write_bytes(raw)
            before = snapshot(d)
            code, out, err = run_cli("referee", d / "r.json", "--ledger", d / "t.db")
            count(f"referee --ledger {game}")
            if code == 0:
                ruling = strict_json(out)
                assert len(ruling["ledger"]["head"]) == 64
                from companion.ledger import Ledger

                with Ledger.open(d / "t.db", readonly=True) as led:
                    assert led.verify()["head"] == ruling["ledger"]["head"]
            else:
                assert_refused_cleanly(code, out, err, before, snapshot(d), raw[:300])

    run()
    print(f"\nreferee --ledger {game}: {COUNTS.get(f'referee --ledger {game}')} hostile records")


def test_referee_in_a_real_process_is_one_line(tmp_path):
    """What the in-process runs cannot see: the interpreter's own stderr (a RecursionError's traceback)."""
    cases = {"deep.json": b"[" * 100_000 + b"]" * 100_000, "nan.json": b'{"game": "powderkeg", "pot_carry": NaN}',
             "utf16.json": '{"game": "powderkeg"}'.encode("utf-16"), "bin.json": bytes(range(256))}
    for name, raw in cases.items():
        (tmp_path / name).write_bytes(raw)
        r = subprocess.run([sys.executable, "-m", "companion", "referee", str(tmp_path / name)], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        assert_refused_cleanly(r.returncode, r.stdout, r.stderr, what=name)
