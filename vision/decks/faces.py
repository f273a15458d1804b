"""The way from a deck value to the renderer that draws its faces.

Every ``companion.decks.Deck`` names its renderer in ``Deck.faces`` as ``"module:object"`` (companion imports
no OpenCV, so the name is resolved here, when a face is drawn). A renderer has ``deck_id``,
``print_style(size)`` (the face ``print-deck`` prints), ``random_style(rng, fonts=None)`` (synthetic scenes)
and ``render(card, style, px_per_mm) -> (image BGR uint8, index quads)``; each quad is (TL, TR, BR, BL) of an
index as read upright, in card-image pixels.
"""

from __future__ import annotations

import importlib
from dataclasses import replace

import numpy as np

from companion.errors import PirateTableError


class PiratesFaces:
    """The face renderer of pirates72: ``vision.decks.render`` (the camera's training faces)."""

    deck_id = "pirates72"

    def print_style(self, size: str = "poker"):
        from vision.decks.render import PRINT_STYLE

        return replace(PRINT_STYLE, size=size)

    def random_style(self, rng: np.random.Generator, fonts=None):
        from vision.decks.render import random_style

        return random_style(rng) if fonts is None else random_style(rng, fonts)

    def render(self, card, style=None, px_per_mm: float = 4.0):
        from vision.decks.render import PRINT_STYLE, render_card

        return render_card(card.rank, card.letter, PRINT_STYLE if style is None else style, px_per_mm)


PIRATES = PiratesFaces()


def faces_for(deck):
    """The renderer of ``deck`` (a Deck value, or its id / alias)."""
    if isinstance(deck, str):
        from companion.decks import get_deck

        deck = get_deck(deck)
    if not getattr(deck, "faces", None):
        raise PirateTableError(f"no card faces for the {deck.title}")
    mod, _, name = deck.faces.partition(":")
    return getattr(importlib.import_module(mod), name)
