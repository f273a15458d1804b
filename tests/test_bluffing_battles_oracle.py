"""An independent, deliberately plain reading of the Bluffing Battles contract (mutable lists, one loop), used
only by the tests to cross-check companion.games.bluffing_battles on random and mutated records. It assumes a
record whose shape is valid (the shape checks are tested on their own) and raises Refused for what the
contract refuses during play."""

from __future__ import annotations

RANKS = {**{str(r): r for r in range(2, 11)}, "T": 10, "J": 11, "Q": 12, "K": 13, "A": 14}


class Refused(Exception):
    pass


def norm(c: str) -> str:
    c = c.strip().upper()
    r, s = c[:-1], c[-1]
    return ("10" if r == "T" else r) + s


def val(c: str) -> int:
    return RANKS[c[:-1]]


def oracle(rec: dict) -> dict:
    v = rec["variant"]
    n_prizes = {"two-decks": 2, "one-deck": 1, "two-decks-until-all": 3, "one-deck-until-all": 2}[v]
    until = v.endswith("until-all")
    limit = 13 if v.startswith("two") else 7
    players = rec["players"]
    pile = {p: [norm(c) for c in rec["piles"][p]] for p in players}
    hand = {p: pile[p][:3] for p in players}
    for p in players:
        del pile[p][:3]
    score: dict = {p: [] for p in players}
    pot: dict = {p: [] for p in players}
    orders = {p: [[norm(c) for c in o] for o in (rec.get("reshuffles") or {}).get(p, [])] for p in players}
    fights: list = []
    battle: list = []
    out = {"ended": False, "winner": None}

    def other(p):
        return players[1] if p == players[0] else players[0]

    def step(kind: str, follows: bool) -> str:
        """'ok', 'stop' (a needed reshuffle is not in the record and no play follows) or 'over'."""
        n = 1 if kind == "draw" else n_prizes
        if until:
            short = [p for p in players if len(pile[p]) < n]
            cannot = [p for p in short if len(score[p]) <= limit]
            if cannot:
                out["ended"] = True
                out["winner"] = "tie" if len(cannot) == 2 else other(cannot[0])
                if battle:
                    fights.append((list(battle), None, 0))
                    battle.clear()
                return "over"
            missing = False
            for p in short:
                if not orders[p]:
                    missing = True
                    continue
                o = orders[p].pop(0)
                if sorted(o) != sorted(score[p]):
                    raise Refused(f"reshuffle of {p} is not a permutation")
                pile[p].extend(o)
                score[p] = []
            if missing:
                if follows:
                    raise Refused("missing reshuffle")
                return "stop"
        got = {}
        for p in players:
            moved = pile[p][:n]
            del pile[p][:n]
            got[p] = len(moved)
            (hand if kind == "draw" else pot)[p].extend(moved)
        if kind == "draw" and not until and min(got.values()) < 1:
            return "short"
        return "ok"

    def finish():
        for p in players:
            score[p].extend(hand[p])
            hand[p] = []
        a, b = (len(score[p]) for p in players)
        out["ended"] = True
        out["winner"] = "tie" if a == b else (players[0] if a > b else players[1])

    plays = rec["plays"]
    for i, pair in enumerate(plays):
        if out["ended"]:
            raise Refused(f"plays[{i}] after the end")
        cards = [norm(c) for c in pair]
        for p, c in zip(players, cards):
            if c not in hand[p]:
                raise Refused(f"plays[{i}]: {c} not in hand")
            hand[p].remove(c)
            pot[p].append(c)
        battle.append(cards)
        follows = i + 1 < len(plays)
        a, b = cards
        if val(a) == val(b):
            r = step("draw", follows)
            if r == "stop":
                break
            if r == "over":
                continue  # a play after this is refused at the top of the loop
            r = step("prizes", follows)
            if r == "stop":
                break
            if r == "over":
                continue
            if not until and (not hand[players[0]] or not hand[players[1]]):
                for p in players:
                    score[p].extend(pot[p])
                    pot[p] = []
                fights.append((list(battle), None, 0))
                battle.clear()
                finish()
        else:
            w = players[0] if val(a) > val(b) else players[1]
            won = pot[players[0]] + pot[players[1]]
            score[w].extend(won)
            for p in players:
                pot[p] = []
            fights.append((list(battle), w, len(won)))
            battle.clear()
            r = step("draw", follows)
            if r == "short":
                finish()
            elif r == "stop":
                break
    # a needed reshuffle right after the last play that is listed: step() already applied it
    for p in players:
        if orders[p]:
            raise Refused(f"unused reshuffle of {p}")
    if battle:
        fights.append((list(battle), None, 0))
    return {
        "fights": [{"reveals": r, "winner": w, "cards_won": n} for r, w, n in fights],
        "score": {p: len(score[p]) for p in players},
        "ended": out["ended"],
        "winner": out["winner"],
    }
