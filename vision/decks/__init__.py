"""Card-face renderers for every deck (see ../shared/cards.md): render.py (pirates72), standard.py, island.py
(on suited.py); faces.py maps a deck value to its renderer; printing.py writes printable decks."""

from vision.decks.render import CARD_SIZES_MM, FaceStyle, random_style, render_card, index_boxes_mm

__all__ = ["CARD_SIZES_MM", "FaceStyle", "random_style", "render_card", "index_boxes_mm"]
