"""Powderkeg and the table camera (pure: no Kivy, no cv2): the dock card and each card the dealer turns up.

The dealer lays the cards face up on the table: the dock card, the opening set, each card after the calls, the
rest of the hand at the showdown. :func:`turn_request` asks the camera for the card on the table that the round has
not recorded yet (``layout="new"``: the cards already recorded may stay in view or not); at the showdown
("showing") for the whole rest of the hand at once: the cards turned up lie in their row, so the new cards are
read in the hand's order along it (``ScanRequest.row``; with none of the turned-up cards in view the order cannot
be told and the reading is refused). :func:`moves_from_reading` makes them the round's next moves (``Dock`` or
``Reveal``), the same moves as taps, so the rules refuse them the same way (a card seen before, a card when a
call is awaited, a lower card: the set was illegal).
"""

from __future__ import annotations

import random
from typing import Any

from companion.decks.island54 import IslandCard, island_deck
from companion.games.powderkeg.rules import Dock, Reveal
from companion.tablecam import ScanRequest

TURNING = ("dock", "opening", "reveal", "showing")  # the phases in which a card is laid face up


def turn_request(round_: Any, seed: int = 0) -> ScanRequest | None:
    """The card just laid face up (the dock, or the next card of the set), or at the showdown the rest of the hand,
    or None when no card is due. ``demo_middle``: what the simulated table camera lays out: the dock and a card not
    seen yet; at the showdown the hand's row, the turned-up cards then the rest (rising, as a legal set lies)."""
    if round_ is None or round_.phase not in TURNING:
        return None
    dock = [round_.dock] if round_.dock else []
    known = dock + list(round_.revealed)
    fresh = [c for c in island_deck() if c not in known]
    rng = random.Random(seed)
    if round_.phase == "showing":
        left = round_.options.hand_size - len(round_.revealed)
        top = round_.revealed[-1].order if round_.revealed else -1
        rest = sorted(rng.sample([c for c in fresh if c.order >= top] or fresh, left), key=lambda c: c.order)
        return ScanRequest("island54", tuple(round_.players), layout="new", count=left,
                           known=tuple(map(str, dock)), row=tuple(map(str, round_.revealed)),
                           title=f"the rest of the hand ({left} card{'s' if left != 1 else ''})",
                           demo_middle=tuple(str(c) for c in list(round_.revealed) + rest))
    nxt = rng.choice(fresh)
    title = "the dock card" if round_.phase == "dock" else f"card {len(round_.revealed) + 1} turned up"
    return ScanRequest("island54", tuple(round_.players), layout="new", count=1, known=tuple(map(str, known)),
                       title=title, demo_middle=tuple(str(c) for c in dock + [nxt]))


def moves_from_reading(round_: Any, new: list[str]) -> list[Dock | Reveal]:
    """The moves the new cards on the table make, in order (none when they are not what the round awaits: one card,
    or at the showdown the rest of the hand)."""
    if round_ is None or round_.phase not in TURNING:
        return []
    want = round_.options.hand_size - len(round_.revealed) if round_.phase == "showing" else 1
    if len(new) != want:
        return []
    cards = [IslandCard.parse(t) for t in new]
    return [Dock(cards[0])] if round_.phase == "dock" else [Reveal(c) for c in cards]
