"""Pirate Whist and the table camera (pure: no Kivy, no cv2): the trick laid in front of the seats.

The play screen asks for :func:`trick_request` when the round is entered trick by trick; the camera reads the
cards on the table, each assigned to the seat nearest to it (companion/tablecam.py), and :func:`plays_from_reading`
turns the reading into the plays of the trick, in the order of play from the leader, through the same rules check
as a tap: the first card that cannot be entered (unreadable, a revoke the camera saw, a card seen before) stops
there with the reason, for the players to settle by touch. Cards of the trick already entered by touch must be
the ones the camera sees.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from companion.decks.standard52 import full_deck
from companion.games.pirate_whist import rules
from companion.games.pirate_whist.rules import PlayCard
from companion.tablecam import ScanRequest


@dataclass(frozen=True)
class TrickPlan:
    """The plays to enter (player, card), in the order of play; ``stop``: why entry stops after them ('' when
    the whole trick is entered); ``revoke``: the stop is a revoke the camera saw."""

    plays: tuple[tuple[str, str], ...]
    stop: str = ""
    revoke: bool = False


def trick_request(table: Any, seed: int = 0) -> ScanRequest | None:
    """What the camera reads now: the trick in front of the seats (one card per player), or None when the round
    is not being entered trick by trick. ``demo``: a legal trick for the simulated table camera."""
    if table is None or table.mode != "tricks" or table.phase != "play":
        return None
    tv = table.trick_view()
    if tv.get("trick") is None:
        return None
    players = tuple(table.players)
    return ScanRequest("standard52", players, layout="seats", title="cards of the trick",
                       demo=tuple((c,) for c in demo_trick(table.state, seed)))


def demo_trick(state: rules.State, seed: int) -> list[str]:
    """A trick the simulated table can show (cards in seat order): the cards already entered, then for each
    player still to play a card not seen this round that the rules accept (following the lead when it can)."""
    r = state.round
    players = list(state.setup.players)
    rng = random.Random(seed)
    unseen = [c for c in full_deck() if c not in set(r.played_cards())]
    rng.shuffle(unseen)
    chosen = dict((p, c) for p, c in r.current)
    s = state
    while len(chosen) < len(players):
        who = rules.to_play(s)
        lead = (s.round.current[0][1].suit if s.round.current else None)
        options = sorted(unseen, key=lambda c: c.suit != lead) if lead else unseen
        for c in options:
            if rules.why_not(s, PlayCard(who, c)) is None:
                s = rules.apply(s, PlayCard(who, c))
                chosen[who] = c
                unseen.remove(c)
                break
        else:  # no legal card: leave the seat empty (cannot happen with a whole deck)
            break
    return [str(chosen[p]) for p in players if p in chosen]


def plays_from_reading(table: Any, cards: dict[str, str | None]) -> TrickPlan:
    """The plays of the trick the camera read (``cards``: player -> card text or None), in the order of play."""
    tv = table.trick_view()
    players = list(table.players)
    entered = dict(tv["cards"])
    for p, c in entered.items():
        if cards.get(p) is not None and cards[p] != c:
            return TrickPlan((), f"The camera sees {cards[p]} in front of {p}, but {c} was entered for {p}: "
                             "undo it or read again.")
    lead = players.index(tv["leader"])
    order = [players[(lead + i) % len(players)] for i in range(len(players))]
    s = table.state
    plays = []
    for p in order:
        if p in entered:
            continue
        c = cards.get(p)
        if c is None:
            return TrickPlan(tuple(plays), f"{p}'s card could not be read: enter it by touch.")
        why = rules.why_not(s, PlayCard(p, rules.card(c)))
        if why:
            revoke = why.startswith("revoke")
            return TrickPlan(tuple(plays), f"The camera saw {p} play {c}: " + ("Revoke! " if revoke else "") + why,
                             revoke)
        s = rules.apply(s, PlayCard(p, rules.card(c)))
        plays.append((p, c))
    return TrickPlan(tuple(plays))
