"""The font lists that tests' pinned scenes were found on.

Tests that name scenes by seed (a frame a switch is for, a hand a look reads more of) draw their faces from a font
list in ``vision.synth``'s order; when the split moves, the same seed draws other faces and the scene is another one.
Session 100 (rule VD) moved the DejaVu group's nine families from held-out to calibration (ADF's Verana and Switzera,
calibration families, draw the same Bitstream Vera glyphs). The scenes tests found up to session 99 keep their faces
through these lists: session 99's held-out and calibration families, in ``split_fonts``' order. None of these faces
is a training family; figures on the held-out families are the benches', never these tests'."""

from __future__ import annotations

from vision.fonts import split_fonts

# held-out until session 99, calibration from session 100 (vision.fonts._PLACED)
MOVED_IN_SESSION_100 = frozenset({"Aerial", "Aerial Mono", "DejaVu Sans", "DejaVu Sans Mono", "DejaVu Serif", "Hack",
                                  "Tymes", "Veranda", "sans"})


def held_out_99() -> tuple:
    """Session 99's 60 held-out families: today's held-out ones and the nine moved to calibration."""
    moved = tuple(f for f in split_fonts("calibration") if f[0] in MOVED_IN_SESSION_100)
    return tuple(sorted(split_fonts("held_out") + moved))


def calibration_99() -> tuple:
    """Session 99's 28 calibration families: today's calibration ones without the nine moved there."""
    return tuple(f for f in split_fonts("calibration") if f[0] not in MOVED_IN_SESSION_100)
