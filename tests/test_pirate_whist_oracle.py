"""The referee against a second, independent and deliberately naive reading of the contract
(shared/contracts/pirate-whist.md), on random whole games and random damage to them: both must accept the same
records, refuse the same records, and agree on every key the contract names."""

import copy
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.errors import RecordError
from companion.games.pirate_whist import rules, sim
from companion.games.pirate_whist.record import rule_record, to_record

RANKS = {"2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "10": 10, "T": 10, "J": 11, "Q": 12,
         "K": 13, "A": 14}


class Refused(Exception):
    pass


def need(cond):
    if not cond:
        raise Refused


def is_int(v):
    return type(v) is int


def parse_card(text):
    need(isinstance(text, str) and text == text.strip() and text.isascii() and len(text) >= 2)
    t = text.upper()
    need(t[:-1] in RANKS and t[-1] in "SHDC")
    return RANKS[t[:-1]], t[-1]


def oracle(rec):
    """The contract, read plainly. Returns the contract's ruling keys, or raises Refused."""
    need(isinstance(rec, dict) and set(rec) == {"game", "players", "max_cards", "first_dealer", "rounds"})
    need(rec["game"] == "pirate-whist")
    players = rec["players"]
    need(isinstance(players, list) and 2 <= len(players) <= 10)
    need(all(isinstance(p, str) and p.strip() == p and p and p.isprintable() for p in players))
    need(len(set(players)) == len(players))
    n = len(players)
    m = rec["max_cards"]
    need(is_int(m) and 1 <= m <= 52 // n)
    need(rec["first_dealer"] in players)
    plan = list(range(m, 0, -1)) + list(range(2, m + 1))
    rounds = rec["rounds"]
    need(isinstance(rounds, list) and len(rounds) <= len(plan))
    d0 = players.index(rec["first_dealer"])
    out = []
    totals = {p: 0 for p in players}
    for k, rd in enumerate(rounds):
        cards = plan[k]
        dealer = players[(d0 + k) % n]
        leader = players[(d0 + k + 1) % n]
        need(isinstance(rd, dict) and set(rd) <= {"bids", "hands", "tricks", "won"} and "bids" in rd)
        need("tricks" in rd or "won" in rd)
        need("hands" not in rd or "tricks" in rd)
        bids = rd["bids"]
        need(isinstance(bids, dict) and set(bids) == set(players))
        need(all(is_int(b) and 0 <= b <= cards for b in bids.values()))
        won = None
        if "won" in rd:
            won = rd["won"]
            need(isinstance(won, dict) and set(won) == set(players))
            need(all(is_int(w) and 0 <= w <= cards for w in won.values()) and sum(won.values()) == cards)
        winners = None
        if "tricks" in rd:
            hands = None
            seen = set()
            if "hands" in rd:
                need(isinstance(rd["hands"], dict) and set(rd["hands"]) == set(players))
                hands = {}
                for p in players:
                    need(isinstance(rd["hands"][p], list) and len(rd["hands"][p]) == cards)
                    hands[p] = [parse_card(c) for c in rd["hands"][p]]
                    for c in hands[p]:
                        need(c not in seen)
                        seen.add(c)
            tricks = rd["tricks"]
            need(isinstance(tricks, list) and len(tricks) == cards)
            played = set()
            failed = {p: set() for p in players}
            lead = leader
            winners = []
            for trick in tricks:
                need(isinstance(trick, list) and len(trick) == n)
                order = [players[(players.index(lead) + i) % n] for i in range(n)]
                plays = []
                for want, play in zip(order, trick):
                    need(isinstance(play, str) and ":" in play)
                    p, c = play.rsplit(":", 1)
                    need(p == want)
                    c = parse_card(c)
                    need(c not in played)
                    played.add(c)
                    led = plays[0][1][1] if plays else None
                    if hands is not None:
                        need(c in hands[p])
                        hands[p].remove(c)
                        if led is not None and c[1] != led:
                            need(all(h[1] != led for h in hands[p]))
                    need(c[1] not in failed[p])
                    if led is not None and c[1] != led:
                        failed[p].add(led)
                    plays.append((p, c))
                led = plays[0][1][1]
                spades = [x for x in plays if x[1][1] == "S"]
                pool = spades or [x for x in plays if x[1][1] == led]
                lead = max(pool, key=lambda x: x[1][0])[0]
                winners.append(lead)
            counted = {p: winners.count(p) for p in players}
            need(won is None or won == counted)
            won = counted
        scores = {p: 10 + won[p] if bids[p] == won[p] else -abs(bids[p] - won[p]) for p in players}
        for p in players:
            totals[p] += scores[p]
        r = {"round": k + 1, "cards": cards, "dealer": dealer, "leader": leader, "bids": bids, "won": won,
             "scores": scores}
        if winners is not None:
            r["trick_winners"] = winners
        out.append(r)
    complete = len(rounds) == len(plan)
    top = max(totals.values())
    return {"game": "pirate-whist", "rounds": out, "totals": totals, "complete": complete,
            "winners": [p for p in players if totals[p] == top] if complete else []}


CONTRACT_KEYS = ("round", "cards", "dealer", "leader", "bids", "won", "scores", "trick_winners")


def ours(rec):
    try:
        r = rule_record(copy.deepcopy(rec))
    except RecordError:
        raise Refused from None
    return {"game": r["game"], "totals": r["totals"], "complete": r["complete"], "winners": r["winners"],
            "rounds": [{k: x[k] for k in CONTRACT_KEYS if k in x} for x in r["rounds"]]}


def agree(rec):
    try:
        want = oracle(copy.deepcopy(rec))
    except Refused:
        want = "refused"
    try:
        got = ours(rec)
    except Refused:
        got = "refused"
    assert got == want, json.dumps(rec)[:2000]
    return want != "refused"


def damage(rec, rnd):
    """One random change of the kind a hand-written record might have (none when an earlier change took away
    what this one would touch)."""
    rec = copy.deepcopy(rec)
    try:
        _damage(rec, rnd)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        pass
    return rec


def _damage(rec, rnd):
    rounds = rec["rounds"]
    players = rec["players"]
    kind = rnd.randrange(10)
    if not rounds:
        kind = 9
    rd = rnd.choice(rounds) if rounds else None
    if kind == 0 and "tricks" in rd:  # another card in a play
        t = rnd.choice(rd["tricks"])
        i = rnd.randrange(len(t))
        p = t[i].rsplit(":", 1)[0]
        t[i] = f"{p}:{rnd.choice('23456789TJQKA')}{rnd.choice('SHDC')}"
    elif kind == 1 and "tricks" in rd:  # two plays swapped (order or across tricks)
        t1, t2 = rnd.choice(rd["tricks"]), rnd.choice(rd["tricks"])
        i, j = rnd.randrange(len(t1)), rnd.randrange(len(t2))
        t1[i], t2[j] = t2[j], t1[i]
    elif kind == 2 and "tricks" in rd:  # two cards swapped between players
        t1, t2 = rnd.choice(rd["tricks"]), rnd.choice(rd["tricks"])
        i, j = rnd.randrange(len(t1)), rnd.randrange(len(t2))
        (p1, c1), (p2, c2) = t1[i].rsplit(":", 1), t2[j].rsplit(":", 1)
        t1[i], t2[j] = f"{p1}:{c2}", f"{p2}:{c1}"
    elif kind == 3:
        rd["bids"][rnd.choice(players)] = rnd.choice([-1, 0, 1, 2, 3, 13, True, 1.0, "1", None])
    elif kind == 4:
        rd.setdefault("won", {p: 0 for p in players})[rnd.choice(players)] += rnd.choice([-1, 1])
    elif kind == 5:
        rd.pop(rnd.choice(sorted(rd)))
    elif kind == 6 and "hands" in rd:
        a, b = rnd.sample(players, 2)
        i, j = rnd.randrange(len(rd["hands"][a])), rnd.randrange(len(rd["hands"][b]))
        rd["hands"][a][i], rd["hands"][b][j] = rd["hands"][b][j], rd["hands"][a][i]
    elif kind == 7:
        rec["first_dealer"] = rnd.choice(players)
    elif kind == 8:
        rec["max_cards"] = rec["max_cards"] + rnd.choice([-1, 1])
    else:
        rounds.append(copy.deepcopy(rnd.choice(rounds)) if rounds else {"bids": {p: 0 for p in players}})


@given(st.integers(2, 6), st.integers(1, 4), st.integers(0, 10**6), st.integers(1, 4), st.randoms(use_true_random=False))
@settings(max_examples=300, deadline=None)
def test_referee_agrees_with_a_naive_reading_of_the_contract(n, m, seed, damages, rnd):
    players = tuple(["Ann", "Ben", "Cy", "Dee", "Eve", "Fay"][:n])
    setup = rules.Setup(players, min(m, 52 // n), players[seed % n])
    g = sim.play_game(setup, seed, styles=("cards", "tricks", "counts"), rounds=rnd.randint(0, setup.n_rounds))
    rec = json.loads(json.dumps(to_record(g.state)))
    if rnd.random() < 0.5:  # the counts beside the tricks are optional
        for rd in rec["rounds"]:
            if "tricks" in rd:
                rd.pop("won")
    assert agree(rec)
    for _ in range(damages):
        rec = damage(rec, rnd)
        agree(rec)


def test_the_damage_finds_both_kinds():
    rnd = random.Random(5)
    kinds = {True: 0, False: 0}
    for seed in range(150):
        setup = rules.Setup(("Ann", "Ben", "Cy"), 3, "Ben")
        g = sim.play_game(setup, seed, styles=("cards", "tricks"))
        kinds[agree(damage(json.loads(json.dumps(to_record(g.state))), rnd))] += 1
    assert kinds[True] > 10 and kinds[False] > 50, kinds
