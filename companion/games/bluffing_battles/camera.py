"""Bluffing Battles and the table camera (pure: no Kivy, no cv2): the two cards revealed in a fight.

The players sit face to face: the tablet by the first player (6 o'clock in the frame), the second across the
table (12 o'clock). :func:`fight_request` asks for the revealed cards in front of the two seats;
:func:`reveals_from_reading` turns the reading into reveals through the same door as a tap
(``BattleTable.reveal``'s checks): a card that cannot be revealed (unreadable, not in the player's piles) stops
there with the reason, for a tap. The hidden prizes of a battle are counted, not named, by the rules here, so
the camera has nothing to record of them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from companion.tablecam import ScanRequest


@dataclass(frozen=True)
class FightPlan:
    """The reveals to enter (player, card); ``stop``: why entry stops after them ('' when all are in)."""

    reveals: tuple[tuple[str, str], ...]
    stop: str = ""


def fight_request(table: Any, seed: int = 0) -> ScanRequest | None:
    """The two revealed cards of the fight in front of the seats, or None when no card is to be revealed now.
    ``demo``: cards the players could reveal, for the simulated table camera."""
    if table is None or table.phase != "reveal" or None not in table.pending:
        return None
    rng = random.Random(seed)
    demo = []
    for i in (0, 1):
        pend = table.pending[i]
        options = table.playable(i)
        demo.append((str(pend if pend is not None else rng.choice(options)),))
    return ScanRequest("standard52", tuple(table.players), layout="seats", title="revealed cards of the fight",
                       demo=tuple(demo), one_deck=table.variant.decks == 1)


def reveals_from_reading(table: Any, cards: dict[str, str | None]) -> FightPlan:
    """The reveals of the fight the camera read (``cards``: player -> card text or None)."""
    out = []
    for i, p in enumerate(table.players):
        pend = table.pending[i]
        c = cards.get(p)
        if pend is not None:
            if c is not None and c != str(pend):
                return FightPlan(tuple(out), f"The camera sees {c} in front of {p}, but {pend} was entered for "
                                 f"{p}: undo it or read again.")
            continue
        if c is None:
            return FightPlan(tuple(out), f"{p}'s card could not be read: tap it.")
        if c not in {str(x) for x in table.playable(i)}:
            return FightPlan(tuple(out), f"The camera saw {p} reveal {c}, which {p} cannot reveal now: tap the "
                             "card, or read again.")
        out.append((p, c))
    return FightPlan(tuple(out))
