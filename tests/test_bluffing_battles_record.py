"""`pirate-table referee GAME.json` for Bluffing Battles, exactly per the contract: rulings of every variant,
and every refusal as one line `pirate-table: error: <place>: <what>`, exit 2, nothing on stdout."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from companion.errors import RecordError
from companion.games import registry
from companion.games.bluffing_battles import EXAMPLES, demo, rules
from companion.games.bluffing_battles.record import rule_record
from companion.records import rule_record as rule_any
from test_bluffing_battles_oracle import oracle

ROOT = Path(__file__).resolve().parents[1]
RED, BLACK = ([str(x) for x in s] for s in rules.shares("one-deck"))
DECK = [str(x) for x in rules.shares("two-decks")[0]]


def referee(tmp_path, record=None, raw=None):
    f = tmp_path / "game.json"
    f.write_text(raw if raw is not None else json.dumps(record))
    return subprocess.run([sys.executable, "-m", "companion", "referee", str(f)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def rec(variant="two-decks", plays=(), a=None, b=None, **more):
    if variant.startswith("one"):
        a, b = a or RED, b or BLACK
    else:
        a, b = a or DECK, b or DECK[::-1]
    r = {"game": "bluffing-battles", "variant": variant, "players": ["Ann", "Ben"],
         "piles": {"Ann": list(a), "Ben": list(b)}, "plays": [list(p) for p in plays]}
    r.update(more)
    return r


def stack(share, top):
    """The share with ``top`` (in order) on top of the pile."""
    top = top.split()
    return top + [x for x in share if x not in top]


def keys(r):
    return {"fights": [{k: f[k] for k in ("reveals", "winner", "cards_won")} for f in r["fights"]],
            **{k: r[k] for k in ("score", "ended", "winner")}}


def test_registered_with_the_contracts_spec():
    spec = registry.get("bluffing-battles")
    assert (spec.title, spec.min_players, spec.max_players, spec.deck, spec.uses_chips) == (
        "Bluffing Battles", 2, 2, "standard52", False)
    assert [p.name for p in spec.examples] == [p.name for p in EXAMPLES] and len(EXAMPLES) == 4
    assert {json.loads(p.read_text())["variant"] for p in EXAMPLES} == set(rules.VARIANTS)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_cli_rules_every_example_as_the_oracle_does(path):
    p = subprocess.run([sys.executable, "-m", "companion", "referee", str(path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    r = json.loads(p.stdout)
    record = json.loads(path.read_text())
    assert r["game"] == "bluffing-battles" and r["ended"] is True
    assert keys(r) == oracle(record) and r == rule_any(record)
    total = sum(r["score"].values())
    assert total <= 104 and (total == sum(len(v) for v in record["piles"].values()) or "until" in record["variant"])


def test_demo_is_the_first_example():
    p = subprocess.run([sys.executable, "-m", "companion", "referee", "--demo", "bluffing-battles"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and json.loads(p.stdout) == rule_record(json.loads(EXAMPLES[0].read_text()))


def test_the_contracts_shape_and_a_battle():
    a = stack(DECK, "7H QS 2D JD 9C 8C 4H")
    b = stack(DECK, "AS 7C 5D 2S 9D 8D 3H")
    r = rule_record(rec(plays=[["QS", "AS"], ["7H", "7C"], ["JD", "2S"]], a=a, b=b))
    assert r["fights"][0] == {"reveals": [["QS", "AS"]], "winner": "Ben", "cards_won": 2,
                              "hidden_prizes": []}
    assert r["fights"][1]["reveals"] == [["7H", "7C"], ["JD", "2S"]]
    assert (r["fights"][1]["winner"], r["fights"][1]["cards_won"]) == ("Ann", 8)
    assert r["score"] == {"Ann": 8, "Ben": 2} and r["ended"] is False and r["winner"] is None


def test_ten_is_t_and_case_does_not_matter():
    a = stack(DECK, "10H 2C 3C")
    b = stack(DECK, "9S 2D 3D")
    r1 = rule_record(rec(plays=[["10H", "9S"]], a=a, b=b))
    r2 = rule_record(rec(plays=[["th", "9s"]], a=[x.lower() for x in a], b=b))
    assert r1 == r2 and r1["fights"][0]["reveals"] == [["10H", "9S"]]


def test_either_player_may_hold_the_red_half():
    r = rule_record(rec("one-deck", plays=[["2S", "2H"]], a=BLACK, b=RED))
    assert r["fights"][0]["winner"] is None and r["ended"] is False  # a battle in progress
    r = rule_record(rec("one-deck", plays=[["3S", "2H"]], a=BLACK, b=RED))
    assert r["fights"] == [{"reveals": [["3S", "2H"]], "winner": "Ann", "cards_won": 2, "hidden_prizes": []}]


def test_a_record_stopping_inside_a_battle_is_a_fight_nobody_won():
    r = rule_record(rec("one-deck", plays=[["2H", "2S"]]))
    assert r["fights"] == [{"reveals": [["2H", "2S"]], "winner": None, "cards_won": 0, "hidden_prizes": [[1, 1]]}]
    assert r["score"] == {"Ann": 0, "Ben": 0} and r["battle_pot"] == 4


def test_one_deck_plays_through_and_hands_go_into_the_score_piles():
    # Ann's red cards in order against Ben's black cards in order: rank for rank, so every reveal of the
    # highest card in hand wins or ties; simply play the whole game through the oracle and compare.
    record, _ = demo.play_game("one-deck", 5, style="high")
    r = rule_record(record)
    assert r["ended"] and sum(r["score"].values()) == 52 and keys(r) == oracle(record)
    assert r["winner"] == ("tie" if r["score"]["Ann"] == r["score"]["Ben"]
                           else max(r["score"], key=r["score"].get))


def until_all_record_at_first_reshuffle():
    for seed in range(100):
        record, states = demo.play_game("one-deck-until-all", seed)
        for i, s in enumerate(states):
            if s.phase == rules.RESHUFFLE:
                return record, states, i
    raise AssertionError("no reshuffle in 100 games")


def test_a_needed_reshuffle_missing_at_the_end_means_the_game_goes_on():
    record, states, i = until_all_record_at_first_reshuffle()
    n = sum(1 for s in states[1:i + 1])  # the states before the reshuffle are all plays
    cut = copy.deepcopy(record)
    cut["plays"] = record["plays"][:n]
    cut["reshuffles"] = {"Ann": [], "Ben": []}
    r = rule_record(cut)
    assert r["ended"] is False and r["winner"] is None and r["waiting_for_reshuffle"]
    cut["plays"] = record["plays"][:n + 1]
    with pytest.raises(RecordError, match=rf"plays\[{n}\]: before this play \w+ must turn the score pile"):
        rule_record(cut)


def bad_records():
    ok = rec()
    until, _ = demo.play_game("one-deck-until-all", 1)
    p = next(p for p in until["players"] if until["reshuffles"][p])
    wrong_perm = copy.deepcopy(until)
    wrong_perm["reshuffles"][p][0] = wrong_perm["reshuffles"][p][0][1:]
    unused = copy.deepcopy(until)
    unused["reshuffles"][p].append(list(unused["reshuffles"][p][-1]))
    over, _ = demo.play_game("one-deck", 3)
    more = copy.deepcopy(over)
    more["plays"].append(more["plays"][-1])

    def m(fn, base=ok):
        r = copy.deepcopy(base)
        fn(r)
        return r

    return [
        ("bad json", None, '{"game": "bluffing-battles", variant: 1}', "bad JSON at line 1"),
        ("not an object", None, "[1, 2]", "a record is a JSON object"),
        ("unknown key", m(lambda r: r.update(stacks={})), None, "stacks: unknown key"),
        ("missing plays", m(lambda r: r.pop("plays")), None, "plays: missing"),
        ("wrong game", m(lambda r: r.update(game="bluffing-battle")), None, "game: unknown game 'bluffing-battle'"),
        ("unknown variant", m(lambda r: r.update(variant="three-decks")), None, "variant: unknown variant"),
        ("variant not text", m(lambda r: r.update(variant=2)), None, "variant: unknown variant 2"),
        ("one player", m(lambda r: r.update(players=["Ann"])), None, "exactly two players, got 1"),
        ("three players", m(lambda r: r.update(players=["Ann", "Ben", "Cy"])), None, "exactly two players, got 3"),
        ("same names", m(lambda r: r.update(players=["Ann", "Ann"])), None, "players[1]: names must be distinct"),
        ("name not text", m(lambda r: r.update(players=["Ann", True])), None, "players[1]: a player's name is a string"),
        ("empty name", m(lambda r: r.update(players=["Ann", " "])), None, "players[1]: a player's name must not be empty"),
        ("control in name", m(lambda r: r.update(players=["An\x07n", "Ben"])), None, "players[0]: a player's name must be printable"),
        ("players not a list", m(lambda r: r.update(players="Ann,Ben")), None, "players: expected a list of two names"),
        ("piles not an object", m(lambda r: r.update(piles=[])), None, "piles: expected an object"),
        ("pile of unknown player", m(lambda r: r["piles"].update(Cy=[])), None, "piles.Cy: unknown player"),
        ("pile missing", m(lambda r: r["piles"].pop("Ben")), None, "piles.Ben: missing"),
        ("pile short", m(lambda r: r["piles"]["Ann"].pop()), None, "piles.Ann: 51 cards, missing AC"),
        ("pile card twice", m(lambda r: r["piles"]["Ann"].__setitem__(5, "2S")), None,
         "piles.Ann[5]: 2S is there twice (also at [0])"),
        ("pile card not a card", m(lambda r: r["piles"]["Ben"].__setitem__(3, "1S")), None, "piles.Ben[3]: not a standard card"),
        ("pile card a number", m(lambda r: r["piles"]["Ben"].__setitem__(3, 10)), None, "piles.Ben[3]: a card is a string"),
        ("one-deck both red", rec("one-deck", a=RED, b=RED), None, "piles: neither pile holds the black cards"),
        ("one-deck whole deck", rec("one-deck", a=DECK, b=BLACK), None, "piles.Ann"),
        ("one-deck mixed colours", rec("one-deck", a=RED[:-1] + ["2S"], b=BLACK[1:] + ["AD"]), None,
         "piles.Ann[25]: 2S does not belong"),
        ("two-decks half deck", rec("two-decks", a=RED, b=BLACK), None, "piles.Ann: 26 cards"),
        ("plays not a list", m(lambda r: r.update(plays={})), None, "plays: expected a list of reveal pairs"),
        ("play not a pair", m(lambda r: r.update(plays=[["2S"]])), None, "plays[0]: expected a pair of cards"),
        ("play bad card", m(lambda r: r.update(plays=[["2S", "ZZ"]])), None, "plays[0][1]: not a standard card"),
        ("card not in hand", m(lambda r: r.update(plays=[["AS", "AC"]])), None,
         "plays[0][0]: AS is not in Ann's hand (2S, 3S, 4S)"),
        ("second card not in hand", m(lambda r: r.update(plays=[["2S", "2S"]])), None,
         "plays[0][1]: 2S is not in Ben's hand (AC, KC, QC)"),
        ("card played twice", m(lambda r: r.update(plays=[["2S", "AC"], ["2S", "KC"]])), None,
         "plays[1][0]: 2S is not in Ann's hand"),
        ("more plays than the game allows", more, None, f"plays[{len(more['plays']) - 1}]: the game is over"),
        ("reshuffles outside until-all", m(lambda r: r.update(reshuffles={"Ann": [DECK]})), None,
         "reshuffles.Ann: two-decks never reshuffles"),
        ("reshuffles of unknown player", m(lambda r: r.update(reshuffles={"Cy": []})), None, "reshuffles.Cy: unknown player"),
        ("reshuffles not lists", m(lambda r: r.update(reshuffles={"Ann": "x"}), until), None,
         "reshuffles.Ann: expected a list"),
        ("reshuffle not a permutation", wrong_perm, None, f"reshuffles.{p}[0]: not a permutation of {p}'s score pile"),
        ("reshuffle that never happens", unused, None, f"reshuffles.{p}[{len(until['reshuffles'][p])}]: this reshuffle never happens"),
    ]


BAD = bad_records()


@pytest.mark.parametrize("name,record,raw,message", BAD, ids=[b[0] for b in BAD])
def test_malformed_records_are_refused_with_one_line(tmp_path, name, record, raw, message):
    p = referee(tmp_path, record, raw)
    assert p.returncode == 2, (name, p.stdout[:300])
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pirate-table: error: "), p.stderr
    assert message in lines[0], lines[0]


def test_rule_record_checks_the_game_itself():
    with pytest.raises(RecordError, match="game: expected 'bluffing-battles'"):
        rule_record(rec(game="pirate-whist"))
    with pytest.raises(RecordError, match="record: expected a JSON object"):
        rule_record([])


def test_the_oracle_refuses_what_play_refuses():
    for name, record, raw, _ in BAD:
        if name in {"card not in hand", "second card not in hand", "card played twice",
                    "more plays than the game allows", "reshuffle not a permutation", "reshuffle that never happens"}:
            with pytest.raises(Exception):
                oracle(record)
