"""The contract every registered game keeps (docs/adding-a-game.md), parametrised over the registry: a new
game package is picked up without touching this file.

Per game: no Kivy/cv2/serial/torch outside its ui/; every example record round-trips through the CLI referee
(exit 0, JSON equal to ``rule_record``, deterministic); malformed records are refused with exit 2, one line
``pirate-table: error: ...`` and nothing on stdout; ``referee --demo ID`` and the demo hook exist; the table
model starts a session at both ends of the player range and resumes it exactly; and (under Xvfb) every screen
builds and renders, with and without a session of the game, and its demo plays through the real app.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from companion.games import registry
from companion.records import load_record
from companion.session import TableSession

ROOT = Path(__file__).resolve().parents[2]
GAMES = registry.games()
IDS = [g.id for g in GAMES]


def package_of(spec) -> str:
    """The game's package, from where its referee lives (companion.games.<pkg>.record -> companion.games.<pkg>)."""
    return ".".join(spec.rule_record.__module__.split(".")[:3])


def cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "companion", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def assert_refused(p, what):
    assert p.returncode == 2, f"{what}: exit {p.returncode}, stdout {p.stdout[:300]!r} stderr {p.stderr[-500:]!r}"
    assert p.stdout == "", f"{what}: something on stdout: {p.stdout[:300]!r}"
    lines = p.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("pirate-table: error: "), f"{what}: {p.stderr[-800:]!r}"
    assert "Traceback" not in p.stderr


def test_the_registry_finds_the_seed_games():
    assert {"pirates-bluff", "powderkeg"} <= set(IDS)


@pytest.mark.parametrize("spec", GAMES, ids=IDS)
def test_spec_is_complete(spec):
    from companion.decks import get_deck

    assert spec.id and spec.title and 1 <= spec.min_players <= spec.max_players
    get_deck(spec.deck)
    assert spec.examples, "a game ships at least one example record"
    for p in (*spec.examples, *spec.refused_examples):
        assert Path(p).is_file(), p
        assert Path(p).resolve().is_relative_to(ROOT / package_of(spec).replace(".", "/")), \
            f"{p}: examples live in the game's package"
    assert spec.table is not None, "a game provides a table model (GameSpec.table)"
    assert callable(registry.resolve(spec.demo)), "a game provides a demo hook (GameSpec.demo)"
    for ref in spec.screens:
        module = ref.partition(":")[0]
        assert module.startswith(package_of(spec) + ".ui."), f"{ref}: screens live in the game's ui/"
        path = ROOT / (module.replace(".", "/") + ".kv")
        assert path.is_file(), f"{ref}: one kv file beside the screen's module ({path.name})"


@pytest.mark.parametrize("spec", GAMES, ids=IDS)
def test_no_ui_or_heavy_imports_outside_ui(spec):
    pkg = package_of(spec)
    code = ("import importlib, pkgutil, sys\n"
            f"import {pkg} as p\n"
            "for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.'):\n"
            "    if '.ui' not in m.name:\n"
            "        importlib.import_module(m.name)\n"
            "print(sorted(m for m in ('kivy', 'cv2', 'serial', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def example_params():
    return [pytest.param(g, p, id=f"{g.id}:{Path(p).name}") for g in GAMES for p in g.examples]


@pytest.mark.parametrize("spec, path", example_params())
def test_examples_round_trip_through_the_cli(spec, path):
    rec = load_record(path)
    assert rec.get("game") == spec.id
    want = spec.rule_record(copy.deepcopy(rec))
    assert want == spec.rule_record(copy.deepcopy(rec)), "the referee is deterministic"
    p = cli("referee", str(path))
    assert p.returncode == 0, p.stderr[-1000:]
    assert json.loads(p.stdout) == json.loads(json.dumps(want))


def malformed_params():
    out = []
    for g in GAMES:
        out.append(pytest.param(g, "unknown-key", id=f"{g.id}:unknown-key"))
        out.append(pytest.param(g, "players-not-a-list", id=f"{g.id}:players-not-a-list"))
        out.append(pytest.param(g, "array", id=f"{g.id}:array"))
        out.extend(pytest.param(g, p, id=f"{g.id}:{Path(p).name}") for p in g.refused_examples)
    return out


@pytest.mark.parametrize("spec, how", malformed_params())
def test_malformed_records_are_refused(spec, how, tmp_path):
    if isinstance(how, str):
        rec = spec.demo_record()
        if how == "unknown-key":
            rec["no_such_key_in_any_contract"] = 1
        elif how == "players-not-a-list":
            rec["players"] = "Ann, Ben"
        else:
            rec = [rec]
        path = tmp_path / f"{how}.json"
        path.write_text(json.dumps(rec))
    else:
        path = how
    assert_refused(cli("referee", str(path)), f"{spec.id} {how}")


@pytest.mark.parametrize("spec", GAMES, ids=IDS)
def test_demo_referee(spec):
    p = cli("referee", "--demo", spec.id)
    assert p.returncode == 0, p.stderr[-1000:]
    assert json.loads(p.stdout) == json.loads(json.dumps(spec.rule_record(spec.demo_record())))


@pytest.mark.parametrize("spec", GAMES, ids=IDS)
def test_table_model_session_at_both_ends_of_the_range(spec, tmp_path):
    for n in sorted({spec.min_players, spec.max_players}):
        players = [f"Player{i + 1}" for i in range(n)]
        s = TableSession(players, 50, spec.id)
        s.new_round()
        assert s.hand is not None and isinstance(s.model.screen(), str) and s.model.screen()
        assert not s.model.can_undo()
        s.save(tmp_path / "s.json")
        back = TableSession.load(tmp_path / "s.json")
        assert back.to_dict() == s.to_dict()
        assert back.uses_chips == spec.uses_chips and ("stacks" in back.to_dict()) == spec.uses_chips


@pytest.mark.ui
@pytest.mark.parametrize("spec", GAMES, ids=IDS)
def test_every_screen_renders(spec, tmp_path):
    if not os.environ.get("DISPLAY"):
        pytest.fail("the screens need a display: run under xvfb-run (make test does)")
    env = dict(os.environ, KIVY_NO_ARGS="1", KIVY_NO_CONSOLELOG="1")
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "games" / "render_screens.py"), spec.id,
                        str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert lines, p.stderr[-3000:]
    res = json.loads(lines[-1])
    assert p.returncode == 0 and res["error"] is None, res["error"] or p.stderr[-3000:]
    assert len(res["shots"]) == 2 * len(spec.screens)
    for name in res["shots"]:
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000, name
    if spec.screens:
        assert res["model_screen"] in res["screens"], "the table model names one of the game's screens"


@pytest.mark.ui
@pytest.mark.parametrize("spec", GAMES, ids=IDS)
def test_demo_mode_plays_in_the_app(spec, tmp_path):
    """``pirate-table app --demo --game ID --screenshot DIR``: the game's demo hook runs through the real app and
    every screenshot it asks for is written."""
    if not os.environ.get("DISPLAY"):
        pytest.fail("the demo needs a display: run under xvfb-run (make test does)")
    env = dict(os.environ, KIVY_NO_ARGS="1", KIVY_HOME=str(tmp_path / "kivy"), PIRATE_TABLE_DATA=str(tmp_path / "data"))
    out = tmp_path / "shots"
    p = subprocess.run([sys.executable, "-m", "companion", "app", "--demo", "--game", spec.id, "--screenshot",
                        str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    shots = sorted(f.name for f in out.glob("*.png"))
    assert "start.png" in shots and len(shots) >= 2, shots
    for f in out.glob("*.png"):
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f.stat().st_size > 5_000, f.name
