"""The table model of Bluffing Battles (no Kivy): one door for revealed cards, fights and battles in words,
counts, reshuffle prompts, the limit loss and game end, history, undo, save/resume, refusals that change
nothing — ruled through the same rules as the referee."""

import json
import re

import pytest

from companion.errors import IllegalActionError, RecordError
from companion.games.bluffing_battles import demo, rules
from companion.games.bluffing_battles.record import rule_record
from companion.games.bluffing_battles.table import BattleTable


def feed(table, inputs, known=True):
    for kind, player, *rest in inputs:
        if kind == "reveal":
            table.reveal(player, rest[0])
        else:
            table.reshuffle(player, rest[0] if known else None)
        yield table


@pytest.mark.parametrize("variant", sorted(rules.VARIANTS))
def test_a_whole_demo_game_of_each_variant_matches_the_referee(variant):
    record, states = demo.play_game(variant, 11)
    t = BattleTable(record["players"], variant, piles=[record["piles"][p] for p in record["players"]])
    inputs = demo.table_inputs(record)
    for _ in feed(t, inputs):
        assert rules.conserved(t.state)
    assert t.over and t.state == states[-1]
    assert t.record() == record
    r = rule_record(t.record())
    assert r["score"] == dict(zip(t.players, t.counts()["score"])) and r["winner"] == t.state.winner_name()
    assert t.event.kind == "over" and t.event.text.endswith(t.state.reason)
    assert len(t.history()) == len(r["fights"])


@pytest.mark.parametrize("variant", sorted(rules.VARIANTS))
def test_a_real_table_with_unknown_piles_accepts_every_legal_card(variant):
    """The same games with the piles unknown (as at a real table): no true card is refused, and every count
    matches the game with known piles at every step."""
    for seed in (3, 4):
        record, _ = demo.play_game(variant, seed)
        red = 0 if record["piles"]["Ann"][0][-1] in "HD" else 1
        known = BattleTable(record["players"], variant, red=red,
                            piles=[record["piles"][p] for p in record["players"]])
        blind = BattleTable(record["players"], variant, red=red)
        inputs = demo.table_inputs(record)
        for a, b in zip(feed(known, inputs), feed(blind, inputs, known=False)):
            assert a.counts() == b.counts() and a.phase == b.phase and a.prompt() == b.prompt()
            assert rules.conserved(b.state)
        assert blind.over and blind.state.winner == known.state.winner and blind.state.reason == known.state.reason


def test_a_fight_in_words_and_counts():
    t = BattleTable(["Ann", "Ben"], "two-decks")
    assert t.counts() == {"draw": (49, 49), "score": (0, 0), "hand": (3, 3), "pot": 0, "limit": None,
                          "reshuffles": (0, 0)}
    ev = t.reveal("Ann", "QS")
    assert ev.kind == "waiting" and "Waiting for Ben's card" in ev.text and t.prompt() == "Reveal a card: Ben."
    ev = t.reveal("Ben", "5d")
    assert ev.kind == "fight" and ev.text == "Ann's QS beats 5D: Ann takes both cards. Both draw one."
    assert t.counts()["score"] == (2, 0) and t.counts()["draw"] == (48, 48)
    assert [h.text for h in t.history()] == ["1. QS–5D: Ann takes 2 (fight)"]


def test_a_battle_says_the_hidden_prizes_and_who_took_how_many():
    t = BattleTable(["Ann", "Ben"], "two-decks")
    ev = t.reveal(0, "7H") and t.reveal(1, "7C")
    assert ev.kind == "battle" and "hidden prizes: Ann puts up 2, Ben puts up 2" in ev.text
    assert t.counts()["pot"] == 6 and "battle's next card" in t.prompt()
    assert t.history()[-1].text == "1. 7H=7C: battle in progress"
    t.reveal(0, "JD")
    ev = t.reveal(1, "2S")
    assert ev.kind == "battle-won" and ev.text.startswith("Ann's JD beats 2S: Ann wins the battle and takes 8 cards")
    assert t.counts()["score"] == (8, 0) and t.counts()["pot"] == 0


def test_fewer_hidden_prizes_when_a_pile_is_short():
    record, states = demo.play_game("one-deck", 0)  # the example with a short battle at the end
    t = BattleTable(record["players"], "one-deck", red=0 if record["piles"]["Ann"][0][-1] in "HD" else 1,
                    piles=[record["piles"][p] for p in record["players"]])
    texts = [t.event.text for t in feed(t, demo.table_inputs(record))]
    assert any("puts up 0" in x or "puts up 1" in x for x in texts)
    assert "hands go into the score piles" in texts[-1]


def test_reshuffle_prompt_and_limit_loss_in_words():
    record, _ = demo.play_game("one-deck-until-all", 1)
    t = BattleTable(record["players"], record["variant"], red=0 if record["piles"]["Ann"][0][-1] in "HD" else 1)
    prompted = False
    for kind, player, *rest in demo.table_inputs(record):
        if kind == "reveal":
            t.reveal(player, rest[0])
        else:
            assert t.phase == rules.RESHUFFLE and t.needs_reshuffle() == player
            assert t.event.kind == "reshuffle" and "shuffle the score pile" in t.prompt()
            with pytest.raises(IllegalActionError, match="shuffle the score pile"):
                t.reveal(player, "2H")
            before = t.to_json()
            ev = t.reshuffle()
            assert ev.kind in ("reshuffled", "reshuffle", "over") and f"{player} shuffled" in ev.text
            prompted = True
            t.undo()
            assert t.to_json() == before
            t.reshuffle(player)
    assert prompted and t.over and "7 or fewer" in t.state.reason and t.counts()["limit"] == 7
    with pytest.raises(IllegalActionError, match="the game is over"):
        t.reveal(0, "2H")
    with pytest.raises(IllegalActionError, match="no reshuffle"):
        t.reshuffle()


def test_bad_input_is_refused_and_changes_nothing():
    t = BattleTable(["Ann", "Ben"], "one-deck", red=1)
    t.reveal("Ben", "KH")
    t.reveal("Ann", "2S")
    before = t.to_json()
    cases = [
        (("Ann", "3H"), "3H is not in Ann's hand; Ann plays the black cards"),
        (("Ben", "KH"), r"KH is already out of play \(in Ben's score pile\)"),
        (("Ann", "2S"), r"2S is already out of play \(in Ben's score pile\)"),
        (("Cy", "2S"), "no player 'Cy'"),
        ((True, "2S"), "no player True"),
        (("Ann", "1S"), "not a standard card"),
        (("Ann", 7), "a card is a string"),
    ]
    for args, message in cases:
        with pytest.raises(IllegalActionError, match=message):
            t.reveal(*args)
        assert t.to_json() == before
    t.reveal("Ann", "AS")
    with pytest.raises(IllegalActionError, match="already revealed AS in this fight; undo"):
        t.reveal("Ann", "KS")
    with pytest.raises(IllegalActionError, match="already out of play \\(just revealed by Ann\\)"):
        t.reveal("Ben", "AS")


def test_known_piles_check_the_hand_exactly():
    record, _ = demo.play_game("two-decks", 2)
    t = BattleTable(record["players"], "two-decks", piles=[record["piles"][p] for p in record["players"]])
    hand = [str(c) for c in t.hand("Ann")]
    not_in_hand = next(c for c in record["piles"]["Ann"] if c not in hand)
    with pytest.raises(IllegalActionError, match=f"{not_in_hand} is not in Ann's hand \\(hand: "):
        t.reveal("Ann", not_in_hand)


def test_undo_takes_back_the_last_reveal_exactly():
    t = BattleTable(["Ann", "Ben"], "two-decks")
    saves = [t.to_json()]
    for p, c in [("Ann", "7H"), ("Ben", "7C"), ("Ann", "JD"), ("Ben", "2S"), ("Ben", "AS")]:
        t.reveal(p, c)
        saves.append(t.to_json())
    while t.can_undo:
        assert t.to_json() == saves.pop()
        ev = t.undo()
        assert ev.kind == "undo"
    assert t.to_json() == saves.pop() and not saves
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        t.undo()


def test_resume_replays_to_the_same_table():
    record, _ = demo.play_game("two-decks-until-all", 5)
    t = BattleTable(record["players"], record["variant"], red=0)
    inputs = demo.table_inputs(record)
    for i, _ in enumerate(feed(t, inputs[:200], known=False)):
        pass
    again = BattleTable.from_json(t.to_json())
    assert again.state == t.state and again.pending == t.pending and again.to_json() == t.to_json()
    assert again.event == t.event and [h.text for h in again.history()] == [h.text for h in t.history()]


BAD_SAVES = [
    ("{", "saved game: bad JSON"),
    ("[]", "saved game: expected a JSON object"),
    ('{"format": "x"}', "saved game.players: missing"),
    (None, "saved game.extra: unknown key"),
    (None, "saved game.format: expected"),
    (None, "saved game.inputs[0]: no player 'Cy'"),
    (None, "saved game.inputs[1]: "),
    (None, "saved game.inputs[0]: expected"),
    (None, "saved game: unknown variant"),
]


def test_a_damaged_save_is_refused_with_its_place():
    good = BattleTable(["Ann", "Ben"], "two-decks")
    good.reveal("Ann", "2H")
    base = json.loads(good.to_json())
    texts = ["{", "[]", '{"format": "x"}',
             json.dumps({**base, "extra": 1}),
             json.dumps({**base, "format": "v0"}),
             json.dumps({**base, "inputs": [["reveal", "Cy", "2H"]]}),
             json.dumps({**base, "inputs": [["reveal", "Ann", "2H"], ["reveal", "Ann", "3H"]]}),
             json.dumps({**base, "inputs": [["flip", "Ann"]]}),
             json.dumps({**base, "variant": "three-decks"})]
    for text, (_, message) in zip(texts, BAD_SAVES):
        with pytest.raises(RecordError, match=re.escape(message)):
            BattleTable.from_json(text)


def test_setup_refuses_bad_players_and_variants():
    with pytest.raises(IllegalActionError, match="exactly two players"):
        BattleTable(["Ann"], "two-decks")
    with pytest.raises(IllegalActionError, match="different names"):
        BattleTable(["Ann", "Ann"], "two-decks")
    with pytest.raises(IllegalActionError, match="printable"):
        BattleTable(["Ann", "B\x00en"], "two-decks")
    with pytest.raises(IllegalActionError, match="unknown variant"):
        BattleTable(["Ann", "Ben"], "war")


def test_the_session_runs_whole_games_and_resumes_them(tmp_path):
    import random

    from companion.errors import PirateTableError
    from companion.games.bluffing_battles.table import ConfirmReshuffle, Reveal
    from companion.session import TableSession

    s = TableSession(["Ann", "Ben"], None, "bluffing-battles", {"variant": "one-deck-until-all", "seed": 49})
    s.new_round()
    assert s.model.screen() == "battles_fight" and not s.model.can_undo() and not s.uses_chips
    rng = random.Random(49)
    saved_mid = None
    while not s.model.round_over():
        t = s.model.round
        if t.phase == rules.RESHUFFLE:
            s.apply(ConfirmReshuffle())
        else:
            a, b = demo.choose(t.state, 0, rng), demo.choose(t.state, 1, rng)
            s.apply(Reveal("Ann", str(a)))
            if saved_mid is None:  # a game saved with one card of a fight in: resumes exactly
                s.save(tmp_path / "s.json")
                back = TableSession.load(tmp_path / "s.json")
                assert back.to_dict() == s.to_dict() and back.model.round.pending == t.pending
                saved_mid = True
            s.apply(Reveal("Ben", str(b)))
    assert s.model.describe(s.model.moves[-1]) == s.model.round.event.text
    s.save(tmp_path / "s.json")
    assert TableSession.load(tmp_path / "s.json").to_dict() == s.to_dict()
    s.new_round()  # the finished game goes into the history; a new one is shuffled
    (r,) = s.history
    assert r["winner"] in ("Ann", "Ben") and r["points"] == {p: int(p == r["winner"]) for p in ("Ann", "Ben")}
    assert s.totals() == r["points"] and s.history_lines()[0].startswith("Game 1 (one-deck-until-all): ")
    assert s.model.round.known_piles != rules.shares("one-deck")  # seeded anew
    with pytest.raises(PirateTableError, match="unknown option 'ante'"):
        TableSession(["Ann", "Ben"], None, "bluffing-battles", {"ante": 1})
    with pytest.raises(PirateTableError, match="red is 0 or 1, got True"):
        TableSession(["Ann", "Ben"], None, "bluffing-battles", {"red": True})
    with pytest.raises(PirateTableError, match="unknown variant"):
        TableSession(["Ann", "Ben"], None, "bluffing-battles", {"variant": "three-decks"})
    with pytest.raises(PirateTableError, match="2-2 players"):
        TableSession(["Ann", "Ben", "Cy"], None, "bluffing-battles")
