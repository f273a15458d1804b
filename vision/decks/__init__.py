"""Card-face renderers for the decks the camera reads (see ../shared/cards.md)."""

from vision.decks.render import CARD_SIZES_MM, FaceStyle, random_style, render_card, index_boxes_mm

__all__ = ["CARD_SIZES_MM", "FaceStyle", "random_style", "render_card", "index_boxes_mm"]
