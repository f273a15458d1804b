"""`pirate-table referee`: JSON records in, JSON rulings out; malformed records refused with exit 2."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from companion.games.pirates_bluff.record import RULEBOOK_EXAMPLE

ROOT = Path(__file__).resolve().parents[1]


def referee(tmp_path, record=None, raw=None):
    f = tmp_path / "hand.json"
    f.write_text(raw if raw is not None else json.dumps(record))
    return subprocess.run([sys.executable, "-m", "companion", "referee", str(f)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_cli_rules_the_rulebook_example(tmp_path):
    p = referee(tmp_path, RULEBOOK_EXAMPLE)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["first_bidder"] == "Bethany"
    assert r["final_bid"] == {"quantity": 7, "rank": 7, "bidders": ["Eris"]}
    assert r["count"] == 6 and r["bid_holds"] is False
    assert r["stacks"]["Douglas"] == 61 and r["stacks"]["Eris"] == 42


def test_cli_demo_and_help():
    p = subprocess.run([sys.executable, "-m", "companion", "referee", "--demo"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and json.loads(p.stdout)["winners"] == ["Douglas"]
    p = subprocess.run([sys.executable, "-m", "companion", "--help"], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and "referee" in p.stdout


def test_cli_version_is_the_packages():
    from importlib.metadata import version

    from companion import __version__

    p = subprocess.run([sys.executable, "-m", "companion", "--version"], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, f"pirate-table {__version__}\n", "")
    assert version("pirate-table") == __version__  # pyproject.toml reads it from companion/__init__.py


def mutate(fn):
    rec = copy.deepcopy(RULEBOOK_EXAMPLE)
    fn(rec)
    return rec


BAD = [
    ("bad json", None, '{"game": "pirates-bluff", players: []}', "bad JSON at line 1"),
    ("unknown player in events", mutate(lambda r: r["events"][2].update(player="Zed")), None,
     "events[2].player: unknown player 'Zed'"),
    ("unknown player in starting", mutate(lambda r: r["starting_cards"].update(Zed="1H")), None,
     "starting_cards.Zed: unknown player"),
    ("card that does not exist", mutate(lambda r: r["hands"]["Carter"].__setitem__(3, "9A")), None,
     "hands.Carter[3]: not a Pirate's Bluff card: '9A'"),
    ("letter out of range", mutate(lambda r: r["starting_cards"].update(Eris="7J")), None,
     "starting_cards.Eris: not a Pirate's Bluff card: '7J'"),
    ("card dealt twice", mutate(lambda r: r["hands"]["Eris"].__setitem__(1, "1A")), None,
     "hands.Eris[1]: card 1A is dealt twice (also at hands.Arville[1])"),
    ("wrong hand size", mutate(lambda r: r["hands"]["Eris"].pop()), None, "hands.Eris: 6 cards, but hands are 7"),
    ("events out of order", mutate(lambda r: r["events"][3].update(t_ms=1)), None,
     "events[3].t_ms: 1 is earlier than the event before"),
    ("two kinds in one event", mutate(lambda r: r["events"][0].update(call=True)), None,
     "events[0]: expected exactly one of bid, call, countdown"),
    ("unknown game", mutate(lambda r: r.update(game="poker")), None, "game: unknown game 'poker'"),
    ("too few players", mutate(lambda r: r.update(players=["Arville", "Bethany"])), None, "3-8 players"),
    ("bad option", mutate(lambda r: r.update(options={"window_ms": -1})), None, "options.window_ms"),
]


@pytest.mark.parametrize("name,record,raw,message", BAD, ids=[b[0] for b in BAD])
def test_malformed_records_are_refused_with_one_line(tmp_path, name, record, raw, message):
    p = referee(tmp_path, record, raw)
    assert p.returncode == 2
    assert p.stdout == ""  # no ruling at all
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pirate-table: error: ")
    assert message in lines[0]


def test_missing_file(tmp_path):
    p = subprocess.run([sys.executable, "-m", "companion", "referee", str(tmp_path / "nope.json")], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "no such file" in p.stderr


def test_wild_written_as_W(tmp_path):
    rec = copy.deepcopy(RULEBOOK_EXAMPLE)
    rec["hands"]["Eris"][6] = "WC"
    p = referee(tmp_path, rec)
    assert p.returncode == 0 and json.loads(p.stdout)["count"] == 6


def test_cli_demo_powderkeg():
    p = subprocess.run([sys.executable, "-m", "companion", "referee", "--demo", "powderkeg"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["game"] == "powderkeg" and sorted(r["winners"]) == ["Beatrice", "Cowen"]
