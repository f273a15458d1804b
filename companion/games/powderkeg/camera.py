"""Powderkeg and the table camera (pure: no Kivy, no cv2): the dock card and each card the dealer turns up.

The dealer lays the cards face up on the table one by one: the dock card, the opening set, each card after the
calls, the rest of the hand at the showdown. :func:`turn_request` asks the camera for the one card on the table
that the round has not recorded yet (``layout="new"``: the cards already recorded may stay in view or not);
:func:`move_from_reading` makes it the round's next move (``Dock`` or ``Reveal``), the same move as a tap, so the
rules refuse it the same way (a card seen before, a card when a call is awaited).
"""

from __future__ import annotations

import random
from typing import Any

from companion.decks.island54 import IslandCard, island_deck
from companion.games.powderkeg.rules import Dock, Reveal
from companion.tablecam import ScanRequest

TURNING = ("dock", "opening", "reveal", "showing")  # the phases in which a card is laid face up


def turn_request(round_: Any, seed: int = 0) -> ScanRequest | None:
    """The card just laid face up (the dock, or the next card of the set), or None when no card is due.
    ``demo``: a card not seen yet beside the dock, for the simulated table camera."""
    if round_ is None or round_.phase not in TURNING:
        return None
    known = ([round_.dock] if round_.dock else []) + list(round_.revealed)
    fresh = [c for c in island_deck() if c not in known]
    nxt = random.Random(seed).choice(fresh)
    title = "the dock card" if round_.phase == "dock" else f"card {len(round_.revealed) + 1} turned up"
    return ScanRequest("island54", tuple(round_.players), layout="new", count=1, known=tuple(map(str, known)),
                       title=title, demo_middle=tuple(str(c) for c in ([round_.dock] if round_.dock else [])
                                                      + [nxt]))


def move_from_reading(round_: Any, new: list[str]) -> Dock | Reveal | None:
    """The move the new card on the table makes (None when there is not exactly one)."""
    if round_ is None or round_.phase not in TURNING or len(new) != 1:
        return None
    card = IslandCard.parse(new[0])
    return Dock(card) if round_.phase == "dock" else Reveal(card)
