"""The game-agnostic session (companion/session.py): sessions saved before the registry (version 1) still
resume exactly, damaged or unknown ones are refused cleanly, and a points game (no chips) keeps a score sheet
with history, undo, edit and resume through the TableModel protocol (companion/games/registry.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from companion.errors import IllegalActionError, PirateTableError
from companion.games import registry
from companion.games.registry import GameSpec, RoundStart, TableModel
from companion.session import STATE_VERSION, TableSession

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"


# ------------------------------------------------------------------ version 1 (saved by the app before the registry)

def test_v1_pirates_bluff_session_resumes_exactly(tmp_path):
    old = json.loads((FIXTURES / "v1-pirates-bluff.json").read_text())
    s = TableSession.load(FIXTURES / "v1-pirates-bluff.json")
    assert s.game == "pirates-bluff" and s.players == old["players"] and s.buy_in == 50
    assert s.stacks == old["stacks"] and s.pot_carry == old["pot_carry"] and s.history == old["history"]
    o = s.options
    assert (o.super_wilds, o.window_ms, o.ante, o.cyclone) == (True, 10.0, 2, "left")
    assert s.hand.phase == "bidding" and s.hand.standing_bid == (3, 2) and s.hand_clock_ms == 500
    assert s.hand.starting_cards["Arville"].rank == 5
    # saved again in version 2, it loads back to the same state
    s.save(tmp_path / "v2.json")
    d = json.loads((tmp_path / "v2.json").read_text())
    assert d["version"] == STATE_VERSION == 2
    back = TableSession.load(tmp_path / "v2.json")
    assert back.to_dict() == s.to_dict() and back.hand.snapshot() == s.hand.snapshot()


def test_v1_powderkeg_session_resumes_exactly():
    old = json.loads((FIXTURES / "v1-powderkeg.json").read_text())
    s = TableSession.load(FIXTURES / "v1-powderkeg.json")
    assert s.game == "powderkeg" and s.buy_in == 40 and s.model.dealer == "Alfonse"
    assert s.hand.phase == "calling" and len(s.hand.moves) == len(old["hand"]["moves"])
    assert s.model.round_json() == old["hand"]


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(version=7), "unknown version"),
    (lambda d: d.update(game="chess"), "unknown game"),
    (lambda d: d["hand"]["events"].append({"t_ms": 1, "player": "Zed", "bid": [9, 9]}), "damaged"),
    (lambda d: d.pop("stacks"), "damaged"),
    (lambda d: d.update(players=["Arville", "Arville", "B", "C", "D"]), "distinct"),
])
def test_damaged_or_unknown_sessions_are_refused_cleanly(tmp_path, change, words):
    d = json.loads((FIXTURES / "v1-pirates-bluff.json").read_text())
    change(d)
    p = tmp_path / "s.json"
    p.write_text(json.dumps(d))
    with pytest.raises(PirateTableError) as e:
        TableSession.load(p)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_not_json_is_refused(tmp_path):
    p = tmp_path / "s.json"
    p.write_bytes(b"\xff\xfe{")
    with pytest.raises(PirateTableError):
        TableSession.load(p)


# ------------------------------------------------------------------ a points game through the protocol

@dataclass(frozen=True)
class Score:
    player: str
    points: int


class TallyRound:
    """A tiny round: each player scores once, in seat order."""

    def __init__(self, players, number):
        self.players, self.number, self.moves = list(players), number, []

    @property
    def phase(self):
        return "over" if len(self.moves) == len(self.players) else "scoring"

    def apply(self, a):
        if self.phase == "over" or a.player != self.players[len(self.moves)]:
            raise IllegalActionError(f"not {a.player}'s turn")
        self.moves.append(a)

    def undo(self):
        if not self.moves:
            raise IllegalActionError("nothing to undo")
        return self.moves.pop()


class TallyTable(TableModel):
    spec_id = "test-tally"

    def __init__(self, players, options=None):
        super().__init__(players, options)
        options = dict(options or {})
        self.rounds = options.pop("rounds", 3)
        if options or isinstance(self.rounds, bool) or not isinstance(self.rounds, int) or self.rounds < 1:
            raise PirateTableError("tally options: rounds (a whole number >= 1)")

    def options_json(self):
        return {"rounds": self.rounds}

    def new_round(self, start: RoundStart):
        self.round = TallyRound(self.players, start.number)

    def round_over(self):
        return self.round is not None and self.round.phase == "over"

    def rule_round(self):
        return {"game": self.spec_id, "points": {a.player: a.points for a in self.round.moves}}

    def game_over(self, history):
        return len(history) >= self.rounds

    def screen(self):
        return "tally"

    def round_json(self):
        return {"number": self.round.number, "scores": [[a.player, a.points] for a in self.round.moves]}

    def load_round(self, data, start):
        if data is None:
            self.round = None
            return
        self.round = TallyRound(self.players, data["number"])
        for p, v in data["scores"]:
            self.round.apply(Score(p, v))


@pytest.fixture
def tally():
    spec = registry.register(GameSpec(id="test-tally", title="Tally", min_players=2, max_players=10,
                                      deck="standard52", uses_chips=False, rule_record=lambda r: r,
                                      table=TallyTable))
    yield spec
    registry._REGISTRY.pop(spec.id)


def test_points_game_score_sheet_undo_edit_resume(tally, tmp_path):
    players = [f"P{i}" for i in range(10)]
    s = TableSession(players, game="test-tally", options={"rounds": 2})
    assert s.buy_in is None and not s.uses_chips and s.totals() == {p: 0 for p in players}
    with pytest.raises(PirateTableError):
        s.create_ledger(tmp_path / "x.db")
    s.new_round()
    for i, p in enumerate(players):
        s.apply(Score(p, i))
    with pytest.raises(IllegalActionError):
        s.apply(Score("P0", 1))
    assert s.undo() == Score("P9", 9)
    s.apply(Score("P9", 90))
    s.save(tmp_path / "s.json")
    back = TableSession.load(tmp_path / "s.json")
    assert back.to_dict() == s.to_dict() and "stacks" not in back.to_dict()
    s.new_round()  # commits round 1
    assert s.history[0]["hand_no"] == 1 and s.totals()["P9"] == 90
    for p in players:
        s.apply(Score(p, 1))
    s.finish_round()
    assert s.game_over() and s.totals()["P9"] == 91
    with pytest.raises(PirateTableError, match="over"):
        s.new_round()
    s.edit_round(0, {"game": "test-tally", "points": {p: 0 for p in players}})
    assert s.totals() == {p: 1 for p in players}
    assert s.score_series()[-1] == s.totals() and len(s.score_series()) == 3
    assert len(s.history_lines()) == 2
    with pytest.raises(PirateTableError):
        s.edit_round(2, {})


@pytest.mark.parametrize("n", [1, 11])
def test_player_range_comes_from_the_game(tally, n):
    with pytest.raises(PirateTableError, match="2-10 players"):
        TableSession([f"P{i}" for i in range(n)], game="test-tally")


def test_chip_game_ranges():
    with pytest.raises(PirateTableError, match="3-8 players"):
        TableSession(["A", "B"], 50, "pirates-bluff")
    assert TableSession(["A", "B"], 50, "powderkeg").model.dealer == "A"


def test_every_games_named_parts_resolve():
    """A game's parts named as "module:name" (its reads rule, the reads its screen leaves for a tap, its table model,
    intents and demo) import: a misspelt name would fail only when a player reached it."""
    seen = 0
    for spec in registry.games():
        for ref in (spec.reads_rule, spec.reads_hold, spec.table, spec.intents, spec.demo, spec.demo_step):
            if isinstance(ref, str):
                assert callable(registry.resolve(ref)), (spec.id, ref)
                seen += 1
    assert seen >= 5
    assert registry.reads_hold_for_deck("pirates72") is registry.resolve(registry.get("pirates-bluff").reads_hold)
