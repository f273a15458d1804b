"""Pirate's Bluff's own widget: a card picker for the 72-card deck (ranks W, 1-8; letters A-H), from the deck value."""

from __future__ import annotations

from companion.decks.pirates72 import LETTERS, RANKS
from companion.ui.widgets import FlatButton, FlatToggle


def fill_card_picker(ranks_box, letters_box, *, group: str, font_size: str, rank_tag: str, letter_tag: str,
                     on_rank, on_letter) -> None:
    """Rank toggles (W, 1-8) and letter buttons (A-H) for entering a Pirate's Bluff card by touch."""
    for r in RANKS:
        b = FlatToggle(text="W" if r == 0 else str(r), group=group, font_size=font_size, tag=f"{rank_tag}:{r}")
        b.bind(on_press=lambda b, r=r: on_rank(r))
        ranks_box.add_widget(b)
    for letter in LETTERS:
        b = FlatButton(text=letter, font_size=font_size, tag=f"{letter_tag}:{letter}")
        b.bind(on_press=lambda b, letter=letter: on_letter(letter))
        letters_box.add_widget(b)
