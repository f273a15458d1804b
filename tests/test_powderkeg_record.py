"""`pirate-table referee ROUND.json` for Powderkeg: JSON rulings out, malformed records refused with exit 2,
illegal-but-well-formed calls rejected with reasons."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from companion.errors import RecordError
from companion.games.powderkeg.record import RULEBOOK_EXAMPLE, rule_record
from companion.records import load_record
from companion.records import rule_record as rule_any

ROOT = Path(__file__).resolve().parents[1]


def referee(tmp_path, record=None, raw=None):
    f = tmp_path / "round.json"
    f.write_text(raw if raw is not None else json.dumps(record))
    return subprocess.run([sys.executable, "-m", "companion", "referee", str(f)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def mutate(fn):
    rec = copy.deepcopy(RULEBOOK_EXAMPLE)
    fn(rec)
    return rec


def test_cli_rules_the_example_file(tmp_path):
    p = subprocess.run([sys.executable, "-m", "companion", "referee", "companion/games/powderkeg/examples/rulebook.json"],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["game"] == "powderkeg" and r["winners"] == ["Beatrice", "Cowen"] and r["dead_at"] == "Q:anchors"
    assert r["stacks"] == {"Alfonse": 45, "Beatrice": 57, "Cowen": 57, "Dougherty": 45, "Eron": 46}
    assert load_record(ROOT / "companion/games/powderkeg/examples/rulebook.json") == RULEBOOK_EXAMPLE
    assert rule_any(copy.deepcopy(RULEBOOK_EXAMPLE)) == r


def test_colour_names_and_case_give_the_same_ruling(tmp_path):
    rec = mutate(lambda r: r.update(dock="k:blue", hand=["A:Yellow", "a:pink", "3:red", "6:BLUE", "6:boat",
                                                          "q:anchor", "K:crabs"]))
    rec["calls"][3] = {"Dougherty": "LIVE", "Cowen": "Die", "Beatrice": "die"}  # any key order
    assert rule_record(rec) == rule_record(copy.deepcopy(RULEBOOK_EXAMPLE))


BAD = [
    ("bad json", None, '{"game": "powderkeg", players: []}', "bad JSON at line 1"),
    ("unknown player in calls", mutate(lambda r: r["calls"][2].update(Zed="live")), None,
     "calls[2].Zed: unknown player 'Zed'"),
    ("bad call word", mutate(lambda r: r["calls"][2].update(Beatrice="maybe")), None,
     "calls[2].Beatrice: expected live, die or fold, got 'maybe'"),
    ("dealer not a player", mutate(lambda r: r.update(dealer="Zed")), None, "dealer: 'Zed' is not one of"),
    ("no dealer", mutate(lambda r: r.pop("dealer")), None, "dealer: missing"),
    ("card that does not exist", mutate(lambda r: r["hand"].__setitem__(3, "9:anchors")), None,
     "hand[3]: not an Island card: '9:anchors'"),
    ("unknown suit", mutate(lambda r: r.update(dock="K:hearts")), None, "dock: not an Island card"),
    ("card used twice", mutate(lambda r: r["hand"].__setitem__(6, "K:blue")), None,
     "hand[6]: card K:anchors is used twice (also at dock)"),
    ("wrong number of hand cards", mutate(lambda r: r["hand"].pop()), None, "hand: 6 cards, but the dealer sets 7"),
    ("too many calls", mutate(lambda r: r["calls"].extend([{}, {}])), None, "calls: 6 entries"),
    ("missing call from a player still in", mutate(lambda r: r["calls"][1].pop("Cowen")), None,
     "calls[1]: no call from Cowen, still in the hand on card 4"),
    ("round not finished", mutate(lambda r: r["calls"].pop()), None,
     "calls: the round is not finished: card 6 needs calls from Beatrice, Cowen, Dougherty"),
    ("unknown key", mutate(lambda r: r.update(pot=3)), None, "pot: unknown key"),
    ("unknown option", mutate(lambda r: r.update(options={"ante": 1, "rake": 2})), None, "options.rake"),
    ("bad option", mutate(lambda r: r.update(options={"misdeal": "shrug"})), None, "options: misdeal must be"),
    ("negative stack", mutate(lambda r: r.update(stacks={"Eron": -1})), None, "stacks.Eron: must be at least 0"),
    ("one player", mutate(lambda r: r.update(players=["Alfonse"])), None, "2-8 players"),
    ("calls not an object", mutate(lambda r: r["calls"].__setitem__(0, ["live"])), None, "calls[0]: expected"),
]


@pytest.mark.parametrize("name,record,raw,message", BAD, ids=[b[0] for b in BAD])
def test_malformed_records_are_refused_with_one_line(tmp_path, name, record, raw, message):
    if record is not None:  # the same refusal in-process, as a RecordError
        with pytest.raises(RecordError, match=None):
            rule_record(copy.deepcopy(record))
    p = referee(tmp_path, record, raw)
    assert p.returncode == 2
    assert p.stdout == ""  # no ruling at all
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pirate-table: error: ")
    assert message in lines[0], lines[0]


def test_illegal_calls_are_rejected_and_the_round_goes_on():
    rec = copy.deepcopy(RULEBOOK_EXAMPLE)
    rec["calls"][0]["Alfonse"] = "die"  # the dealer calling
    rec["calls"][3]["Eron"] = "die"  # out since card 5
    rec["calls"].append({"Beatrice": "live", "Dougherty": "die"})  # after the hand died
    r = rule_record(rec)
    assert r["stacks"] == rule_record(copy.deepcopy(RULEBOOK_EXAMPLE))["stacks"]
    rej = {(x["place"], x["reason"].split(":")[0]) for x in r["rejected"]}
    assert rej == {
        ("calls[0].Alfonse", "Alfonse is the dealer"),
        ("calls[3].Eron", "Eron is out of the hand (called die on card 5 (6"),
        ("calls[4].Beatrice", "no more calls"),
        ("calls[4].Dougherty", "no more calls"),
    }
    by_place = {x["place"]: x for x in r["rejected"]}
    assert "the hand died at card 6 (Q:anchors)" in by_place["calls[4].Beatrice"]["reason"]
    assert by_place["calls[3].Eron"] == {"index": 3, "place": "calls[3].Eron", "card_position": 6,
                                         "player": "Eron", "call": "die",
                                         "reason": "Eron is out of the hand (called die on card 5 (6:boats))"}


def test_ruling_with_stacks_carry_and_house_rule(tmp_path):
    rec = {
        "game": "powderkeg", "players": ["Ann", "Bob", "Cy"], "dealer": "Bob",
        "stacks": {"Ann": 10, "Cy": 3}, "pot_carry": 1, "options": {"misdeal": "dealer_pays", "misdeal_fine": 2},
        "dock": "Q:green", "hand": ["A:red", "3:blue", "2:pink", "5:yellow", "6:purple", "7:red", "K:green"],
        "calls": [{"Cy": "live", "Ann": "live"}],
    }
    p = referee(tmp_path, rec)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["call_order"] == ["Cy", "Ann"] and r["next_dealer"] == "Cy"
    assert r["set_legal"] is False and r["misdeal"] and r["misdeal_ruling"] == "dealer_pays"
    assert r["end"] == "misdeal" and r["ended_at"] == "2:crabs" and r["ended_at_position"] == 3
    assert [e["kind"] for e in r["entries"]] == ["ante", "bet", "refund", "penalty"]
    assert r["stacks_before"] == {"Ann": 10, "Bob": 50, "Cy": 3}
    assert r["stacks"] == {"Ann": 12, "Bob": 46, "Cy": 5} and r["pot_carry"] == 1 and r["pot_carry_before"] == 1


def test_short_stack_goes_negative_on_dock_death():
    rec = {"game": "powderkeg", "players": ["D", "P"], "dealer": "D", "stacks": {"P": 2},
           "dock": "A:red", "hand": ["2:skulls", "K:skulls", "K:red", "K:blue", "K:pink", "K:yellow", "K:green"]}
    r = rule_record(rec)
    assert r["dock_death"] and r["dead_at"] == "K:skulls" and r["dealer_wins"]
    assert r["stacks"] == {"D": 50 - 5 + 6 + 5, "P": 2 - 1 - 5} and r["short"] == ["P"]
