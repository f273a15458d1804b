"""`pirate-table referee GAME.json` for Bluff Pirate: the contract's keys, every decision in its "where the rules
are silent" section, and every refusal (exit 2, one line on stderr, nothing on stdout)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from companion.errors import RecordError
from companion.games.bluff_pirate.record import rule_record
from companion.records import rule_record as rule_any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "companion" / "games" / "bluff_pirate" / "examples"
CONTRACT = json.loads((EXAMPLES / "contract.json").read_text())


def rec(players=("Ann", "Ben", "Cy"), turns=(), track=30):
    return {"game": "bluff-pirate", "players": list(players), "track": track, "turns": list(turns)}


def S(player, visible, hidden, voter, vote):
    return {"player": player, "set": {"visible": list(visible), "hidden": list(hidden)}, "voter": voter,
            "vote": vote}


def referee(tmp_path, record=None, raw=None):
    f = tmp_path / "game.json"
    f.write_text(raw if raw is not None else json.dumps(record))
    return subprocess.run([sys.executable, "-m", "companion", "referee", str(f)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


# ------------------------------------------------------------------------------------------- the contract


def test_contract_example_ruling_via_cli():
    p = subprocess.run([sys.executable, "-m", "companion", "referee", str(EXAMPLES / "contract.json")],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["game"] == "bluff-pirate"
    t0 = r["turns"][0]
    # the contract's own ruling of the first turn
    assert {k: t0[k] for k in ("player", "action", "bluff", "outcome", "positions", "hand_sizes")} == {
        "player": "Ann", "action": "set", "bluff": True, "outcome": "caught",
        "positions": {"Ann": 0, "Ben": 3, "Cy": 0}, "hand_sizes": {"Ann": 7, "Ben": 5, "Cy": 5}}
    assert [t["action"] for t in r["turns"]] == ["set", "discard", "set", "board"]
    assert r["turns"][1]["hand_sizes"] == {"Ann": 7, "Ben": 6, "Cy": 5}          # drew 2, discarded 1
    assert r["turns"][2]["outcome"] == "trusted" and r["turns"][2]["bluff"] is False
    assert r["turns"][2]["positions"] == {"Ann": 0, "Ben": 3, "Cy": 3}
    assert r["turns"][2]["hand_sizes"]["Cy"] == 4                                # 5 + 2 - 3
    # Ann (0) boards Cy (3, joint leader): pirate first (7 -> 6), takes 3 (-> 9), Cy 4 -> 1; no draw
    assert r["turns"][3]["hand_sizes"] == {"Ann": 9, "Ben": 6, "Cy": 1}
    assert r["positions"] == {"Ann": 0, "Ben": 3, "Cy": 3} and r["hand_sizes"] == {"Ann": 9, "Ben": 6, "Cy": 1}
    assert r["pile"] + r["board"] + sum(r["hand_sizes"].values()) == 90
    assert rule_any(copy.deepcopy(CONTRACT)) == r


def test_every_example_rules_and_the_registry_finds_the_game():
    from companion.games import registry

    spec = registry.get("bluff-pirate")
    assert spec.title == "Bluff Pirate" and (spec.min_players, spec.max_players) == (2, 5)
    assert spec.uses_chips is False and spec.deck == "accessory90"
    assert spec.examples and spec.examples[0].name == "contract.json"
    assert spec.demo_record() == CONTRACT
    for f in spec.examples:
        r = rule_any(json.loads(f.read_text()))
        assert r["cards"] == 90, f


def test_deck_value_is_ninety_cards():
    from companion.decks import get_deck
    from companion.errors import CardError

    import companion.games.bluff_pirate  # noqa: F401

    d = get_deck("accessory90")
    assert d.size == 90 and d.cards.count("pirate") == 10
    assert d.parse("Hat") == "hat"
    with pytest.raises(CardError):
        d.parse("teapot")


def test_referee_demo_flag_rules_the_contract_example():
    p = subprocess.run([sys.executable, "-m", "companion", "referee", "--demo", "bluff-pirate"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == rule_record(copy.deepcopy(CONTRACT))


# -------------------------------------------------------------------------------------------- the rules


def test_track_defaults_to_the_board_length():
    r = rule_record({"game": "bluff-pirate", "players": ["A", "B"], "turns": []})
    assert r["track"] == 30 and r["positions"] == {"A": 0, "B": 0} and r["hand_sizes"] == {"A": 5, "B": 5}
    assert r["pile"] == 80


def test_three_outcomes_and_their_moves():
    turns = [
        S("Ann", ["hat"], ["hat", "hat"], "Ben", "not bluffing"),              # trusted, honest
        S("Ben", ["map", "map"], ["hat"], "Cy", "not bluffing"),               # trusted bluff
        S("Cy", ["sword"], ["sword", "sword", "sword"], "Ann", "bluffing"),    # wrongly accused
        S("Ann", ["hat", "hat"], ["hat", "parrot", "hat"], "Cy", "bluffing"),  # caught
    ]
    r = rule_record(rec(turns=turns))
    t = r["turns"]
    assert (t[0]["outcome"], t[0]["bluff"], t[0]["positions"]) == ("trusted", False, {"Ann": 3, "Ben": 0, "Cy": 0})
    assert (t[1]["outcome"], t[1]["bluff"], t[1]["positions"]) == ("trusted", True, {"Ann": 3, "Ben": 3, "Cy": 0})
    assert t[1]["board"] == 6                                                 # a trusted bluff goes to the board
    assert (t[2]["outcome"], t[2]["bluff"]) == ("wrongly_accused", False)
    assert t[2]["positions"] == {"Ann": 1, "Ben": 3, "Cy": 4}                 # Ann back 2, Cy +4
    assert (t[3]["outcome"], t[3]["bluff"]) == ("caught", True)
    assert t[3]["positions"] == {"Ann": 1, "Ben": 3, "Cy": 9}                 # Cy +5, Ann stays
    assert t[3]["hand_sizes"]["Ann"] == t[0]["hand_sizes"]["Ann"] + 2         # set back to hand, +2 drawn
    assert t[3]["board"] == t[2]["board"]                                     # a caught set never goes to the board


def test_wrong_accuser_never_goes_behind_the_start():
    turns = [S("Ann", ["hat"], ["hat", "hat"], "Ben", "bluffing"),
             S("Ben", ["map"], ["map", "map"], "Ann", "not bluffing"),
             S("Ann", ["hat"], ["hat", "hat"], "Ben", "bluffing")]
    r = rule_record(rec(players=["Ann", "Ben"], turns=turns))
    assert r["turns"][0]["positions"] == {"Ann": 3, "Ben": 0}
    assert r["turns"][2]["positions"] == {"Ann": 6, "Ben": 1}                 # 3 - 2


def test_card_names_compared_exactly():
    r = rule_record(rec(turns=[S("Ann", ["hat"], ["Hat", "hat"], "Ben", "bluffing")]))
    assert r["turns"][0]["bluff"] is True and r["turns"][0]["outcome"] == "caught"


def test_a_set_is_checked_against_the_hand_after_drawing_and_may_use_all_of_it():
    turns = [S("Ann", ["hat"], ["hat", "hat", "hat"], "Ben", "not bluffing"),         # 7 - 4 = 3
             {"player": "Ben", "discard": "map"},
             S("Ann", ["hat", "hat"], ["hat", "hat", "hat"], "Ben", "not bluffing"),  # 3 + 2 = 5, all five
             {"player": "Ben", "discard": "map"},
             {"player": "Ann"}]                                                     # 0 + 2 = 2: draw only
    r = rule_record(rec(players=["Ann", "Ben"], turns=turns))
    assert [t["hand_sizes"]["Ann"] for t in r["turns"][::2]] == [3, 0, 2]
    assert r["turns"][4]["action"] == "draw" and r["positions"]["Ann"] == 9
    more = turns + [{"player": "Ben", "discard": "map"}]                               # Ann: 2 + 2 = 4
    with pytest.raises(RecordError, match=r"^turns\[6\]\.set: a set of 5 is more than the 4 cards in Ann's hand"):
        rule_record(rec(players=["Ann", "Ben"], turns=more + [S("Ann", ["hat"], ["hat"] * 4, "Ben", "bluffing")]))
    r = rule_record(rec(players=["Ann", "Ben"], turns=more + [S("Ann", ["hat"], ["map"] * 3, "Ben", "bluffing")]))
    assert r["turns"][6]["outcome"] == "caught" and r["hand_sizes"]["Ann"] == 4


def test_exactly_five_discard_and_draw_only():
    # after drawing 7 cards: a discard is allowed, a draw-only turn is not
    assert rule_record(rec(turns=[{"player": "Ann", "discard": "hat"}]))["hand_sizes"]["Ann"] == 6
    with pytest.raises(RecordError, match=r"^turns\[0\]: Ann holds 7 cards after drawing"):
        rule_record(rec(turns=[{"player": "Ann"}]))
    # Ann: 7 - 5 = 2; next turn 2 + 2 = 4 < 5: a discard is refused, draw-only is fine
    first = [S("Ann", ["hat"], ["hat"] * 4, "Ben", "not bluffing"), {"player": "Ben", "discard": "x"}]
    with pytest.raises(RecordError, match=r"^turns\[2\]\.discard: Ann holds 4 cards after drawing: a discard needs 5"):
        rule_record(rec(players=["Ann", "Ben"], turns=first + [{"player": "Ann", "discard": "hat"}]))
    r = rule_record(rec(players=["Ann", "Ben"], turns=first + [{"player": "Ann"}]))
    assert r["turns"][2]["hand_sizes"]["Ann"] == 4 and r["turns"][2]["action"] == "draw"
    # exactly five after drawing: must set or discard
    first = [S("Ann", ["hat"], ["hat"] * 3, "Ben", "not bluffing"), {"player": "Ben", "discard": "x"}]   # Ann 3
    with pytest.raises(RecordError, match=r"^turns\[2\]: Ann holds 5 cards"):
        rule_record(rec(players=["Ann", "Ben"], turns=first + [{"player": "Ann"}]))
    assert rule_record(rec(players=["Ann", "Ben"], turns=first + [{"player": "Ann", "discard": "hat"}]))[
        "hand_sizes"]["Ann"] == 4


def test_drawing_is_card_by_card_with_the_board_shuffled_in():
    # two players, 80 in the pile; 40 discard turns empty it (board 40); the 41st draw reshuffles the board
    turns = [{"player": "AB"[k % 2], "discard": "hat"} for k in range(41)]
    r = rule_record(rec(players=["A", "B"], turns=turns, track=1000))
    assert (r["turns"][39]["pile"], r["turns"][39]["board"], r["turns"][39]["reshuffles"]) == (0, 40, 0)
    assert (r["turns"][40]["pile"], r["turns"][40]["board"], r["turns"][40]["reshuffles"]) == (38, 1, 1)
    assert r["turns"][40]["drew"] == 2
    # three players: an odd pile (75); after 37 discard turns one card is left, the second card of the
    # 38th draw comes from the reshuffled board
    turns = [{"player": "ABC"[k % 3], "discard": "hat"} for k in range(38)]
    r = rule_record(rec(players=["A", "B", "C"], turns=turns, track=1000))
    assert (r["turns"][36]["pile"], r["turns"][36]["board"]) == (1, 37)
    assert (r["turns"][37]["pile"], r["turns"][37]["board"], r["turns"][37]["reshuffles"]) == (36, 1, 1)
    assert r["turns"][37]["drew"] == 2


def test_draw_is_fewer_when_pile_and_board_run_out():
    # caught sets keep every card in the hands: 40 turns take all 80 cards, the board stays empty
    turns = [S("AB"[k % 2], ["hat"], ["map", "map"], "BA"[k % 2], "bluffing") for k in range(40)]
    turns.append({"player": "A", "discard": "hat"})               # draws 0, discards 1 -> board 1
    turns.append({"player": "B", "discard": "hat"})               # draws the 1 reshuffled card
    r = rule_record(rec(players=["A", "B"], turns=turns, track=1000))
    assert r["turns"][39]["pile"] == 0 and r["turns"][39]["board"] == 0
    assert r["turns"][40]["drew"] == 0 and r["turns"][40]["hand_sizes"]["A"] == 44
    assert r["turns"][41]["drew"] == 1 and r["turns"][41]["reshuffles"] == 1
    assert r["turns"][41]["hand_sizes"]["B"] == 45 and r["turns"][41]["board"] == 1
    assert all(t["pile"] + t["board"] + sum(t["hand_sizes"].values()) == 90 for t in r["turns"])


def test_boarding_joint_leaders_and_targets():
    base = [S("Ann", ["hat"], ["hat", "hat"], "Cy", "not bluffing"),
            S("Ben", ["map"], ["map", "map"], "Cy", "not bluffing")]          # Ann 3, Ben 3, Cy 0
    r = rule_record(rec(turns=base + [{"player": "Cy", "board": "Ann"}]))    # at a joint leader: fine
    assert r["turns"][2]["hand_sizes"] == {"Ann": 1, "Ben": 4, "Cy": 7}     # Cy 5 - 1 + 3
    assert r["turns"][2]["board"] == 7 and "drew" not in r["turns"][2]   # no draw: 3 + 3 + the pirate
    nxt = base + [{"player": "Cy", "discard": "x"}]
    with pytest.raises(RecordError, match=r"^turns\[3\]\.board: Ann is in the lead"):
        rule_record(rec(turns=nxt + [{"player": "Ann", "board": "Ben"}]))   # a joint leader cannot board


def test_nobody_can_board_before_anyone_moved():
    with pytest.raises(RecordError, match=r"^turns\[0\]\.board: nobody is ahead"):
        rule_record(rec(turns=[{"player": "Ann", "board": "Ben"}]))


def test_boarding_a_player_not_strictly_ahead_is_refused():
    base = [S("Ann", ["hat"], ["hat", "hat", "hat"], "Cy", "not bluffing"),   # Ann 4
            S("Ben", ["map"], ["map", "map"], "Cy", "not bluffing"),          # Ben 3
            {"player": "Cy", "discard": "x"}]                                 # Cy 0
    with pytest.raises(RecordError, match=r"^turns\[3\]\.board: Ann is in the lead"):
        rule_record(rec(turns=base + [{"player": "Ann", "board": "Cy"}]))
    base2 = base + [{"player": "Ann", "discard": "x"}]
    with pytest.raises(RecordError, match=r"^turns\[4\]\.board: Cy is not ahead of Ben"):
        rule_record(rec(turns=base2 + [{"player": "Ben", "board": "Cy"}]))
    r = rule_record(rec(turns=base2 + [{"player": "Ben", "board": "Ann"}]))
    assert r["turns"][4]["hand_sizes"]["Ben"] == 4 - 1 + 3                  # 5 + 2 - 3, pirate, +3


def test_one_card_hand_can_board_and_takes_all_when_fewer_than_three_and_empty_hand_cannot():
    turns = [S("Ann", ["hat"], ["hat", "hat"], "Ben", "not bluffing"),       # Ann 3, hand 4
             S("Ben", ["map"], ["map"] * 4, "Ann", "not bluffing"),           # Ben 5, hand 2
             S("Ann", ["hat"], ["hat"] * 4, "Ben", "not bluffing"),           # Ann 8, hand 1
             S("Ben", ["map"], ["map"] * 3, "Ann", "not bluffing"),           # Ben 9, hand 0
             {"player": "Ann", "board": "Ben"},                              # pirate first: 0, takes 0
             {"player": "Ben"}]                                              # Ben draws 2: 2
    r = rule_record(rec(players=["Ann", "Ben"], turns=turns))
    assert r["turns"][3]["hand_sizes"] == {"Ann": 1, "Ben": 0}
    assert r["turns"][4]["hand_sizes"] == {"Ann": 0, "Ben": 0}
    assert r["turns"][5]["hand_sizes"] == {"Ann": 0, "Ben": 2}
    with pytest.raises(RecordError, match=r"^turns\[6\]\.board: Ann has no cards"):
        rule_record(rec(players=["Ann", "Ben"], turns=turns + [{"player": "Ann", "board": "Ben"}]))
    r = rule_record(rec(players=["Ann", "Ben"], turns=turns + [{"player": "Ann"},
                                                               {"player": "Ben"},
                                                               {"player": "Ann", "board": "Ben"}]))
    assert r["turns"][8]["hand_sizes"] == {"Ann": 1 + 3, "Ben": 1}          # Ann 2 - 1 + 3; Ben 4 - 3


def test_counters_stop_at_the_islands():
    turns = [S("A", ["hat"], ["hat"] * 3, "B", "not bluffing"), {"player": "B", "discard": "x"},
             S("A", ["hat"], ["hat"] * 3, "B", "not bluffing")]                  # 4 + 4 = 8, stops on 7
    r = rule_record(rec(players=["A", "B"], turns=turns, track=7))
    assert r["positions"] == {"A": 7, "B": 0} and r["islands"] == ["A"]


# ------------------------------------------------------------------------------------------- refusals

BAD = [
    ("bad JSON", None, '{"game": "bluff-pirate", "players": [', "bad JSON at line 1"),
    ("not an object", None, "[1, 2]", "a record is a JSON object"),
    ("unknown top key", {"note": "hi"}, None, "note: unknown key"),
    ("wrong game", {"game": "bluff_pirate"}, None, "game: unknown game"),
    ("one player", {"players": ["Ann"]}, None, "players: Bluff Pirate is for 2-5 players, got 1"),
    ("six players", {"players": list("ABCDEF")}, None, "players: Bluff Pirate is for 2-5 players, got 6"),
    ("twice", {"players": ["Ann", "Ann"]}, None, "players: 'Ann' is listed twice"),
    ("number name", {"players": ["Ann", 7]}, None, "players[1]: a player name is a string"),
    ("empty name", {"players": ["Ann", " "]}, None, "players[1]: a player name cannot be empty"),
    ("control char", {"players": ["Ann", "B\u0007n"]}, None, "players[1]: player name 'B\\x07n' holds a control or invisible character"),
    ("players missing", {"players": None}, None, "players: missing"),
    ("track bool", {"track": True}, None, "track: expected a whole number"),
    ("track float", {"track": 30.0}, None, "track: expected a whole number"),
    ("track string", {"track": "30"}, None, "track: expected a whole number"),
    ("track zero", {"track": 0}, None, "track: must be 1-1000 squares, got 0"),
    ("track huge", {"track": 10 ** 9}, None, "track: must be 1-1000 squares"),
    ("turns not list", {"turns": {}}, None, "turns: expected a list"),
]


def _apply(over):
    r = rec()
    for k, v in over.items():
        if v is None:
            del r[k]
        else:
            r[k] = v
    return r


@pytest.mark.parametrize("name,over,raw,msg", BAD, ids=[b[0] for b in BAD])
def test_refusals_of_the_record(tmp_path, name, over, raw, msg):
    _refused(tmp_path, _apply(over) if over is not None else None, raw, msg)


def test_refusal_of_nan_track(tmp_path):
    raw = '{"game": "bluff-pirate", "players": ["A", "B"], "track": NaN, "turns": []}'
    _refused(tmp_path, None, raw, "track: expected a whole number")


def _refused(tmp_path, record, raw, msg):
    p = referee(tmp_path, record, raw)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pirate-table: error: "), p.stderr
    assert msg in lines[0], lines[0]


SET = {"visible": ["hat"], "hidden": ["hat", "hat"]}
TURN_BAD = [
    ("turn not object", ["x"], "turns[0]: expected a JSON object"),
    ("unknown turn key", [{"player": "Ann", "discard": "hat", "why": 1}], "turns[0].why: unknown key"),
    ("player missing", [{"discard": "hat"}], "turns[0].player: missing"),
    ("unknown player", [{"player": "Zed"}], "turns[0].player: unknown player 'Zed'"),
    ("out of order", [{"player": "Ben", "discard": "hat"}], "turns[0].player: out of turn: it is Ann's turn"),
    ("out of order later", [{"player": "Ann", "discard": "hat"}, {"player": "Cy", "discard": "hat"}],
     "turns[1].player: out of turn: it is Ben's turn"),
    ("two actions", [{"player": "Ann", "discard": "hat", "board": "Ben"}], "turns[0]: a turn holds only one of"),
    ("voter without set", [{"player": "Ann", "discard": "hat", "voter": "Ben"}],
     "turns[0].voter: only a set is voted on"),
    ("set without voter", [{"player": "Ann", "set": SET, "vote": "bluffing"}], "turns[0].voter: missing"),
    ("set without vote", [{"player": "Ann", "set": SET, "voter": "Ben"}], "turns[0].vote: missing"),
    ("bad vote", [{"player": "Ann", "set": SET, "voter": "Ben", "vote": "Bluffing"}],
     "turns[0].vote: expected 'bluffing' or 'not bluffing'"),
    ("voter is setter", [{"player": "Ann", "set": SET, "voter": "Ann", "vote": "bluffing"}],
     "turns[0].voter: Ann laid the set and cannot be the voter"),
    ("unknown voter", [{"player": "Ann", "set": SET, "voter": "Zed", "vote": "bluffing"}],
     "turns[0].voter: unknown player 'Zed'"),
    ("set not object", [{"player": "Ann", "set": ["hat"] * 3, "voter": "Ben", "vote": "bluffing"}],
     "turns[0].set: expected a JSON object"),
    ("set unknown key", [{"player": "Ann", "set": {**SET, "shown": 1}, "voter": "Ben", "vote": "bluffing"}],
     "turns[0].set.shown: unknown key"),
    ("set missing hidden", [{"player": "Ann", "set": {"visible": ["hat"]}, "voter": "Ben", "vote": "bluffing"}],
     "turns[0].set.hidden: missing"),
    ("set too small", [S("Ann", ["hat"], ["hat"], "Ben", "bluffing")], "turns[0].set: a set is 3, 4 or 5 cards, got 2"),
    ("set too big", [S("Ann", ["hat"], ["hat"] * 5, "Ben", "bluffing")], "turns[0].set: a set is 3, 4 or 5 cards, got 6"),
    ("no visible", [S("Ann", [], ["hat"] * 3, "Ben", "bluffing")], "turns[0].set.visible: a set shows 1 or 2"),
    ("three visible", [S("Ann", ["hat"] * 3, ["hat"], "Ben", "bluffing")], "turns[0].set.visible: a set shows 1 or 2"),
    ("mixed visible", [S("Ann", ["hat", "map"], ["hat"], "Ben", "bluffing")],
     "turns[0].set.visible: the visible cards must all be the same"),
    ("card not string", [S("Ann", ["hat"], ["hat", 3], "Ben", "bluffing")],
     "turns[0].set.hidden[1]: a card name is a string"),
    ("card empty", [{"player": "Ann", "discard": ""}], "turns[0].discard: a card name cannot be empty"),
    ("card control", [{"player": "Ann", "discard": "h\nat"}], "turns[0].discard: card name"),
    ("visible not list", [{"player": "Ann", "set": {"visible": "hat", "hidden": ["hat", "hat"]}, "voter": "Ben",
                           "vote": "bluffing"}], "turns[0].set.visible: expected a list"),
    ("board unknown", [{"player": "Ann", "board": "Zed"}], "turns[0].board: unknown player 'Zed'"),
    ("board self", [{"player": "Ann", "board": "Ann"}], "turns[0].board: Ann cannot board their own ship"),
    ("board leader", [{"player": "Ann", "board": "Ben"}], "turns[0].board: nobody is ahead"),
    ("discard not allowed", [S("Ann", ["hat"], ["hat"] * 4, "Ben", "not bluffing"), {"player": "Ben", "discard": "x"},
                             {"player": "Cy", "discard": "x"}, {"player": "Ann", "discard": "hat"}],
     "turns[3].discard: Ann holds 4 cards after drawing: a discard needs 5"),
    ("draw only not allowed", [{"player": "Ann"}], "turns[0]: Ann holds 7 cards after drawing"),
]


@pytest.mark.parametrize("name,turns,msg", TURN_BAD, ids=[b[0] for b in TURN_BAD])
def test_refusals_of_turns(tmp_path, name, turns, msg):
    raw = json.dumps(rec(turns=turns)).replace("\\\\", "\\")
    _refused(tmp_path, None, raw, msg)
    with pytest.raises(RecordError):
        rule_record(json.loads(raw))


def test_structure_is_checked_before_any_turn_is_ruled():
    # turn 0 breaks a rule, turn 1 is malformed: the malformed one is named (the whole record is validated first)
    with pytest.raises(RecordError, match=r"^turns\[1\]\.player: missing"):
        rule_record(rec(turns=[{"player": "Ann"}, {}]))


def test_outcomes_example_worked_by_hand():
    r = rule_record(json.loads((EXAMPLES / "outcomes.json").read_text()))
    got = [(t["action"], t.get("outcome"), t["positions"]["Ann"], t["positions"]["Ben"], t["hand_sizes"]["Ann"],
            t["hand_sizes"]["Ben"], t["pile"], t["board"]) for t in r["turns"]]
    assert got == [
        ("set", "wrongly_accused", 3, 0, 4, 5, 78, 3),   # Ben accuses an honest set; Ben already on the start
        ("set", "trusted", 3, 5, 4, 2, 76, 8),           # a trusted bluff of 5 goes to the board
        ("set", "caught", 3, 8, 6, 2, 74, 8),            # the set back to Ann's hand, Ben +3
        ("draw", None, 3, 8, 6, 4, 72, 8),               # Ben 2 + 2 = 4 < 5: draw only
        ("board", None, 3, 8, 8, 1, 72, 9),              # Ann (behind) boards Ben: pirate, +3; no draw
        ("set", "wrongly_accused", 1, 11, 8, 0, 70, 12),  # Ben's whole hand (1 + 2 = 3); Ann back 2
        ("discard", None, 1, 11, 9, 0, 68, 13),
        ("draw", None, 1, 11, 9, 2, 66, 13),
    ]
