"""`pirate-table referee GAME.json` for Pirate Whist, per the record contract (docs/pirate-whist.md): rulings
on the example records, and every refusal (exit 2, one line `pirate-table: error: <place>: <what>` on stderr,
nothing on stdout)."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from companion.errors import RecordError
from companion.games import registry
from companion.games.pirate_whist.record import rule_record
from companion.records import rule_record as rule_any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "companion/games/pirate_whist/examples"
CONTRACT = json.loads((EXAMPLES / "contract-example.json").read_text())


def referee(tmp_path, record=None, raw=None):
    f = tmp_path / "game.json"
    f.write_text(raw if raw is not None else json.dumps(record), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "companion", "referee", str(f)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def mutate(fn, base=None):
    rec = copy.deepcopy(CONTRACT if base is None else base)
    fn(rec)
    return rec


def game(players=("Ann", "Ben", "Cy", "Dee"), max_cards=3, first_dealer="Ann", rounds=()):
    return {"game": "pirate-whist", "players": list(players), "max_cards": max_cards,
            "first_dealer": first_dealer, "rounds": list(rounds)}


# ------------------------------------------------------------------------------------------------ rulings


def test_cli_rules_the_contract_example():
    p = subprocess.run([sys.executable, "-m", "companion", "referee",
                        "companion/games/pirate_whist/examples/contract-example.json"],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["game"] == "pirate-whist"
    r1 = r["rounds"][0]
    assert (r1["round"], r1["cards"], r1["dealer"], r1["leader"]) == (1, 3, "Ann", "Ben")
    # Dee trumps the hearts with 2S; Ben's KC takes the clubs; Cy's QD the diamonds.
    assert r1["trick_winners"] == ["Dee", "Ben", "Cy"]
    assert r1["won"] == {"Ann": 0, "Ben": 1, "Cy": 1, "Dee": 1}
    assert r1["scores"] == {"Ann": -1, "Ben": -1, "Cy": 11, "Dee": -1}
    assert [x["dealer"] for x in r["rounds"]] == ["Ann", "Ben", "Cy", "Dee", "Ann"]
    assert [x["leader"] for x in r["rounds"]] == ["Ben", "Cy", "Dee", "Ann", "Ben"]
    assert [x["cards"] for x in r["rounds"]] == [3, 2, 1, 2, 3]
    assert "trick_winners" not in r["rounds"][1] and r["rounds"][2]["trick_winners"] == ["Ben"]
    assert r["totals"] == {"Ann": 41, "Ben": 42, "Cy": 29, "Dee": 7}
    assert r["complete"] is True and r["winners"] == ["Ben"]
    assert rule_any(copy.deepcopy(CONTRACT)) == r


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_every_example_is_ruled_and_registered(path):
    spec = registry.get("pirate-whist")
    assert path in spec.examples
    r = rule_record(json.loads(path.read_text()))
    assert r["totals"] == {p: sum(x["scores"][p] for x in r["rounds"]) for p in r["players"]}
    assert r["complete"] == (len(r["rounds"]) == 2 * r["max_cards"] - 1)
    if r["complete"]:
        top = max(r["totals"].values())
        assert r["winners"] == [p for p in r["players"] if r["totals"][p] == top]
    else:
        assert r["winners"] == []


def test_registered_spec():
    spec = registry.get("pirate-whist")
    assert (spec.title, spec.min_players, spec.max_players, spec.deck, spec.uses_chips) == \
        ("Pirate Whist", 2, 10, "standard52", False)
    assert spec.demo_record() == CONTRACT
    p = subprocess.run([sys.executable, "-m", "companion", "referee", "--demo", "pirate-whist"],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and json.loads(p.stdout)["winners"] == ["Ben"]


def test_tied_captains():
    r = rule_record(json.loads((EXAMPLES / "three-players-tied-captains.json").read_text()))
    assert r["complete"] and r["winners"] == ["Red", "Blue"]


def test_incomplete_game_has_no_captain_and_empty_rounds_are_fine():
    r = rule_record(game(rounds=[]))
    assert r["rounds"] == [] and r["totals"] == {"Ann": 0, "Ben": 0, "Cy": 0, "Dee": 0}
    assert r["complete"] is False and r["winners"] == []
    r = rule_record(mutate(lambda x: x["rounds"].pop()))
    assert r["complete"] is False and r["winners"] == [] and len(r["rounds"]) == 4


def test_card_notation_is_case_insensitive_and_t_is_ten():
    rec = game(players=("A", "B"), max_cards=1, first_dealer="B",
               rounds=[{"bids": {"A": 1, "B": 0}, "hands": {"A": ["th"], "B": ["Js"]},
                        "tricks": [["A:tH", "B:js"]]}])
    r = rule_record(rec)
    assert r["rounds"][0]["leader"] == "A" and r["rounds"][0]["trick_winners"] == ["B"]
    assert r["rounds"][0]["tricks"] == [["A:10H", "B:JS"]]
    assert r["rounds"][0]["scores"] == {"A": -1, "B": -1}


def test_names_are_free_text_with_spaces_and_colons():
    rec = game(players=("Anne Bonny", "Mr: Smee"), max_cards=1, first_dealer="Anne Bonny",
               rounds=[{"bids": {"Anne Bonny": 0, "Mr: Smee": 1}, "tricks": [["Mr: Smee:2C", "Anne Bonny:3C"]]}])
    r = rule_record(rec)
    assert r["rounds"][0]["trick_winners"] == ["Anne Bonny"]
    assert r["totals"] == {"Anne Bonny": -1, "Mr: Smee": -1}


def test_spades_trump_and_off_suit_never_wins():
    base = dict(players=("N", "E", "S", "W"), max_cards=1, first_dealer="W")

    def winner(*cards):
        rec = game(**base, rounds=[{"bids": {"N": 0, "E": 0, "S": 0, "W": 0},
                                    "tricks": [[f"{p}:{c}" for p, c in zip("NESW", cards)]]}])
        return rule_record(rec)["rounds"][0]["trick_winners"][0]

    assert winner("2H", "AD", "KC", "3H") == "W"  # off-suit aces never win; highest heart does
    assert winner("2H", "AD", "2S", "AH") == "S"  # the only spade
    assert winner("KH", "3S", "2S", "AH") == "E"  # the highest spade
    assert winner("10S", "AS", "KH", "QS") == "E"  # spades led: the highest spade
    assert winner("2C", "3C", "4C", "5C") == "W"


def test_winner_leads_the_next_trick_and_revoke_without_hands_is_refused():
    # 2 players, 2 cards; B leads (A deals); B wins trick 1 and must lead trick 2.
    ok = game(players=("A", "B"), max_cards=2, first_dealer="A",
              rounds=[{"bids": {"A": 0, "B": 2}, "tricks": [["B:AH", "A:2C"], ["B:KD", "A:3D"]]}])
    r = rule_record(ok)
    assert r["rounds"][0]["trick_winners"] == ["B", "B"] and r["rounds"][0]["scores"] == {"A": 10, "B": 12}
    # A failed to follow hearts, then plays hearts: a revoke (following).
    bad = mutate(lambda x: x["rounds"][0]["tricks"].__setitem__(1, ["B:KH", "A:3H"]), ok)
    with pytest.raises(RecordError, match=r"rounds\[0\]\.tricks\[1\]\[1\]: revoke"):
        rule_record(bad)
    # ...and by leading: A wins trick 1 with a spade after failing to follow hearts, then leads a heart.
    lead = game(players=("A", "B"), max_cards=2, first_dealer="A",
                rounds=[{"bids": {"A": 0, "B": 2}, "tricks": [["B:AH", "A:2S"], ["A:3H", "B:KD"]]}])
    with pytest.raises(RecordError, match=r"rounds\[0\]\.tricks\[1\]\[0\]: revoke"):
        rule_record(lead)


def test_follow_suit_with_hands_is_exact():
    base = game(players=("A", "B"), max_cards=2, first_dealer="A",
                rounds=[{"bids": {"A": 0, "B": 0}, "hands": {"A": ["2H", "3C"], "B": ["AH", "KD"]},
                         "tricks": [["B:AH", "A:2H"], ["B:KD", "A:3C"]]}])
    assert rule_record(base)["rounds"][0]["trick_winners"] == ["B", "B"]
    bad = mutate(lambda x: x["rounds"][0].update(tricks=[["B:AH", "A:3C"], ["B:KD", "A:2H"]]), base)
    with pytest.raises(RecordError, match=r"rounds\[0\]\.tricks\[0\]\[1\]: revoke: A must follow hearts"):
        rule_record(bad)
    # Discarding while void is fine with hands.
    void = mutate(lambda x: x["rounds"][0].update(hands={"A": ["2S", "3C"], "B": ["AH", "KD"]},
                                                   tricks=[["B:AH", "A:3C"], ["B:KD", "A:2S"]]), base)
    assert rule_record(void)["rounds"][0]["trick_winners"] == ["B", "A"]


def test_won_beside_tricks_must_agree():
    rec = mutate(lambda x: x["rounds"][0].update(won={"Ann": 0, "Ben": 1, "Cy": 1, "Dee": 1}))
    assert rule_record(rec) == rule_record(copy.deepcopy(CONTRACT))


def test_scoring():
    from companion.games.pirate_whist.rules import score

    assert [score(0, 0), score(1, 1), score(2, 2)] == [10, 11, 12]
    assert [score(1, 0), score(0, 2), score(3, 1)] == [-1, -2, -2]


# ------------------------------------------------------------------------------------------------ refusals

R0 = "rounds[0]"
BAD = [
    ("bad json", None, '{"game": "pirate-whist", players: []}', "bad JSON"),
    ("not an object", None, "[1, 2]", "a record is a JSON object"),
    ("unknown top key", mutate(lambda r: r.update(note="x")), None, "note: unknown key"),
    ("missing rounds", mutate(lambda r: r.pop("rounds")), None, "rounds: missing"),
    ("missing players", mutate(lambda r: r.pop("players")), None, "players: missing"),
    ("missing max_cards", mutate(lambda r: r.pop("max_cards")), None, "max_cards: missing"),
    ("missing first_dealer", mutate(lambda r: r.pop("first_dealer")), None, "first_dealer: missing"),
    ("wrong game", mutate(lambda r: r.update(game="pirate-whisk")), None, "game: "),
    ("one player", game(players=["Ann"], max_cards=1), None, "players: Pirate Whist is for 2-10 players, got 1"),
    ("eleven players", game(players=[f"P{i}" for i in range(11)], first_dealer="P0", max_cards=1), None,
     "got 11"),
    ("players not a list", mutate(lambda r: r.update(players="Ann,Ben")), None, "players: expected a list"),
    ("duplicate player", mutate(lambda r: r.update(players=["Ann", "Ben", "Ann", "Dee"])), None,
     "players[2]: 'Ann' is listed twice"),
    ("empty name", mutate(lambda r: r.update(players=["Ann", "", "Cy", "Dee"])), None, "players[1]: a name"),
    ("blank name", mutate(lambda r: r.update(players=["Ann", "  ", "Cy", "Dee"])), None, "players[1]: a name"),
    ("name with newline", mutate(lambda r: r.update(players=["Ann", "B\nen", "Cy", "Dee"])), None,
     "players[1]: a name cannot hold control"),
    ("name with escape", mutate(lambda r: r.update(players=["Ann", "Ben\x1b[31m", "Cy", "Dee"])), None,
     "players[1]"),
    ("number as name", mutate(lambda r: r.update(players=["Ann", 7, "Cy", "Dee"])), None,
     "players[1]: a name is text"),
    ("max_cards zero", mutate(lambda r: r.update(max_cards=0)), None, "max_cards: must be 1 to 13"),
    ("max_cards above 52/players", mutate(lambda r: r.update(max_cards=14)), None, "max_cards: must be 1 to 13"),
    ("max_cards above 52/players, 10 players",
     game(players=[f"P{i}" for i in range(10)], first_dealer="P0", max_cards=6), None, "must be 1 to 5"),
    ("max_cards bool", mutate(lambda r: r.update(max_cards=True)), None, "max_cards: the maximum hand size must"),
    ("max_cards float", mutate(lambda r: r.update(max_cards=3.0)), None, "max_cards"),
    ("max_cards NaN", None, json.dumps(CONTRACT).replace('"max_cards": 3', '"max_cards": NaN'), "max_cards"),
    ("max_cards Infinity", None, json.dumps(CONTRACT).replace('"max_cards": 3', '"max_cards": Infinity'),
     "max_cards"),
    ("max_cards string", mutate(lambda r: r.update(max_cards="3")), None, "max_cards"),
    ("first dealer unknown", mutate(lambda r: r.update(first_dealer="Zed")), None,
     "first_dealer: 'Zed' is not one of"),
    ("rounds not a list", mutate(lambda r: r.update(rounds={})), None, "rounds: expected a list"),
    ("more rounds than the plan", mutate(lambda r: r["rounds"].append(copy.deepcopy(r["rounds"][0]))), None,
     "rounds: 6 rounds, but the plan 3..1..3 has 5"),
    ("round not an object", mutate(lambda r: r["rounds"].__setitem__(1, [1])), None, "rounds[1]: expected"),
    ("unknown round key", mutate(lambda r: r["rounds"][1].update(score={})), None, "rounds[1].score: unknown key"),
    ("no bids", mutate(lambda r: r["rounds"][1].pop("bids")), None, "rounds[1].bids: missing"),
    ("missing bid", mutate(lambda r: r["rounds"][1]["bids"].pop("Cy")), None, "rounds[1].bids: no bid for Cy"),
    ("unknown player bids", mutate(lambda r: r["rounds"][1]["bids"].update(Zed=0)), None,
     "rounds[1].bids.Zed: unknown player 'Zed'"),
    ("bid above cards", mutate(lambda r: r["rounds"][2]["bids"].update(Ann=2)), None,
     "rounds[2].bids.Ann: bid 2 is more than the 1 card dealt"),
    ("negative bid", mutate(lambda r: r["rounds"][1]["bids"].update(Ann=-1)), None,
     "rounds[1].bids.Ann: bid -1 is negative"),
    ("bool bid", mutate(lambda r: r["rounds"][1]["bids"].update(Ann=True)), None,
     "rounds[1].bids.Ann: a bid must be a whole number, got True"),
    ("float bid", mutate(lambda r: r["rounds"][1]["bids"].update(Ann=1.0)), None, "rounds[1].bids.Ann"),
    ("string bid", mutate(lambda r: r["rounds"][1]["bids"].update(Ann="1")), None, "rounds[1].bids.Ann"),
    ("null bid", mutate(lambda r: r["rounds"][1]["bids"].update(Ann=None)), None, "rounds[1].bids.Ann"),
    ("NaN bid", None, json.dumps(CONTRACT).replace('"Ann": 0, "Ben": 1, "Cy": 0, "Dee": 1}, "won"',
                                                   '"Ann": NaN, "Ben": 1, "Cy": 0, "Dee": 1}, "won"'),
     "rounds[1].bids.Ann"),
    ("bids not an object", mutate(lambda r: r["rounds"][1].update(bids=[0, 1, 0, 1])), None,
     "rounds[1].bids: expected an object"),
    ("neither won nor tricks", mutate(lambda r: r["rounds"][1].pop("won")), None,
     "rounds[1]: give won (tricks won per player) or tricks"),
    ("hands without tricks", mutate(lambda r: r["rounds"][0].pop("tricks")), None,
     f"{R0}.hands: hands are given only with tricks"),
    ("won does not sum", mutate(lambda r: r["rounds"][1]["won"].update(Ann=1)), None,
     "rounds[1].won: tricks won add up to 3, but round 2 has 2"),
    ("won missing a player", mutate(lambda r: r["rounds"][1]["won"].pop("Dee")), None,
     "rounds[1].won: no tricks won count for Dee"),
    ("won above cards", mutate(lambda r: r["rounds"][1].update(won={"Ann": 3, "Ben": -1, "Cy": 0, "Dee": 0})),
     None, "rounds[1].won.Ann: 3 tricks won, but round 2 has 2"),
    ("won bool", mutate(lambda r: r["rounds"][1]["won"].update(Ann=False)), None, "rounds[1].won.Ann"),
    ("won disagrees with tricks", mutate(lambda r: r["rounds"][0].update(
        won={"Ann": 1, "Ben": 1, "Cy": 1, "Dee": 0})), None, f"{R0}.won.Ann: 1, but the tricks give Ann 0"),
    ("bad card", mutate(lambda r: r["rounds"][2]["tricks"][0].__setitem__(1, "Ann:1H")), None,
     "rounds[2].tricks[0][1]: not a standard card: '1H'"),
    ("bad suit", mutate(lambda r: r["rounds"][2]["tricks"][0].__setitem__(1, "Ann:2X")), None,
     "rounds[2].tricks[0][1]: not a standard card"),
    ("card with spaces", mutate(lambda r: r["rounds"][2]["tricks"][0].__setitem__(1, "Ann: 2H")), None,
     "rounds[2].tricks[0][1]: not a standard card"),
    ("non-ascii card", mutate(lambda r: r["rounds"][2]["tricks"][0].__setitem__(1, "Ann:\uff12H")), None,
     "rounds[2].tricks[0][1]: not a standard card"),
    ("play without colon", mutate(lambda r: r["rounds"][2]["tricks"][0].__setitem__(1, "Ann2H")), None,
     "rounds[2].tricks[0][1]: a play is \"player:card\""),
    ("play not a string", mutate(lambda r: r["rounds"][2]["tricks"][0].__setitem__(1, ["Ann", "2H"])), None,
     "rounds[2].tricks[0][1]: a play is"),
    ("unknown player plays", mutate(lambda r: r["rounds"][2]["tricks"][0].__setitem__(1, "Zed:2H")), None,
     "rounds[2].tricks[0][1]: unknown player 'Zed'"),
    ("card twice in tricks", mutate(lambda r: r["rounds"][2]["tricks"][0].__setitem__(3, "Cy:QS")), None,
     "rounds[2].tricks[0][3]: QS was already played this round"),
    ("card twice in hands", mutate(lambda r: r["rounds"][0]["hands"].update(Dee=["2S", "8C", "AH"])), None,
     f"{R0}.hands: card AH appears twice"),
    ("play not in the hand", mutate(lambda r: r["rounds"][0]["tricks"][0].__setitem__(0, "Ben:6H")), None,
     f"{R0}.tricks[0][0]: Ben does not hold 6H"),
    ("hand of the wrong size", mutate(lambda r: r["rounds"][0]["hands"]["Ann"].pop()), None,
     f"{R0}.hands.Ann: 2 cards, but 3 were dealt"),
    ("hand missing", mutate(lambda r: r["rounds"][0]["hands"].pop("Cy")), None, f"{R0}.hands: no hand for Cy"),
    ("bad card in hand", mutate(lambda r: r["rounds"][0]["hands"]["Ann"].__setitem__(0, "ZZ")), None,
     f"{R0}.hands.Ann[0]: not a standard card"),
    ("wrong first leader", mutate(lambda r: r["rounds"][2].update(tricks=[["Ann:2H", "Ben:AS", "Cy:3D", "Dee:QS"]])),
     None, "rounds[2].tricks[0][0]: Ann plays out of turn: it is Dee's turn"),
    ("anticlockwise", mutate(lambda r: r["rounds"][2].update(tricks=[["Dee:QS", "Cy:3D", "Ben:AS", "Ann:2H"]])),
     None, "rounds[2].tricks[0][1]: Cy plays out of turn: it is Ann's turn"),
    ("loser leads the next trick", mutate(lambda r: r["rounds"][0]["tricks"].__setitem__(
        1, ["Ann:3C", "Ben:KC", "Cy:7C", "Dee:8C"])), None, f"{R0}.tricks[1][0]: Ann plays out of turn"),
    ("revoke with hands", mutate(lambda r: r["rounds"][0]["tricks"].__setitem__(
        2, ["Ben:4D", "Cy:QD", "Dee:6D", "Ann:9D"]) or r["rounds"][0]["hands"].update(
        Dee=["2S", "8C", "6D"]) or r["rounds"][0]["tricks"][1].__setitem__(3, "Cy:QD") or
        r["rounds"][0]["tricks"][2].__setitem__(1, "Cy:7C")), None, f"{R0}.tricks[1][3]: revoke: Cy must follow clubs"),
    ("a trick short of players", mutate(lambda r: r["rounds"][2]["tricks"][0].pop()), None,
     "rounds[2].tricks[0]: 3 plays, but each of the 4 players plays once per trick"),
    ("a trick too many", mutate(lambda r: r["rounds"][2]["tricks"].append(["Ben:2C", "Cy:3C", "Dee:4C", "Ann:5C"])),
     None, "rounds[2].tricks: 2 tricks, but round 3 deals 1 card"),
    ("tricks not a list", mutate(lambda r: r["rounds"][2].update(tricks="Dee:QS")), None,
     "rounds[2].tricks: expected a list"),
    ("trick not a list", mutate(lambda r: r["rounds"][2].update(tricks=["Dee:QS"])), None,
     "rounds[2].tricks[0]: expected a list"),
    ("unknown key with a newline", mutate(lambda r: r["rounds"][1]["bids"].update({"Z\ned": 0})), None,
     "rounds[1].bids['Z\\ned']: unknown player"),
]


@pytest.mark.parametrize("name,record,raw,message", BAD, ids=[b[0] for b in BAD])
def test_malformed_records_are_refused_with_one_line(tmp_path, name, record, raw, message):
    if record is not None:
        with pytest.raises(RecordError):
            rule_record(copy.deepcopy(record))
    p = referee(tmp_path, record, raw)
    assert p.returncode == 2, p.stdout
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pirate-table: error: "), p.stderr
    assert message in lines[0], lines[0]


def test_refusal_changes_nothing_and_is_not_half_a_ruling(tmp_path):
    rec = mutate(lambda r: r["rounds"][4]["bids"].update(Ann=9))
    before = copy.deepcopy(rec)
    with pytest.raises(RecordError, match=r"rounds\[4\]\.bids\.Ann: bid 9 is more than the 3 cards dealt"):
        rule_record(rec)
    assert rec == before


def test_the_refused_examples_are_registered_and_each_refused_for_its_reason():
    spec = registry.get("pirate-whist")
    files = sorted((EXAMPLES / "refused").glob("*.json"))
    assert len(files) >= 8 and tuple(files) == spec.refused_examples
    reasons = {
        "revoke-with-hands": "revoke: Cy must follow clubs", "revoke-without-hands": "revoke: A failed to follow",
        "play-out-of-turn": "plays out of turn", "bid-out-of-range": "more than the 1 card dealt",
        "won-does-not-sum": "add up to 3", "more-rounds-than-the-plan": "6 rounds", "card-twice": "already played",
        "bool-bid": "got True",
    }
    for f in files:
        with pytest.raises(RecordError, match=reasons[f.stem]):
            rule_record(json.loads(f.read_text()))
