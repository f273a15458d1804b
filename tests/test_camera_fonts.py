"""The font families the reader trains on: reserved families refused, honest split by design group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vision.fonts import SPLIT_FILE, design_group, excluded, installed, load_split, split_fonts

RESERVED = ["Nimbus Sans", "Nimbus Roman", "Nimbus Mono PS", "URW Bookman", "URW Gothic", "C059", "P052", "Z003",
            "D050000L", "Standard Symbols PS", "TeX Gyre Heros", "TeX Gyre Termes", "TeX Gyre Pagella",
            "FreeSans", "FreeSerif", "FreeMono", "Nimbus Sans L", "Century Schoolbook L", "URW Palladio L",
            "Bookman Uralic", "DejaVu Math TeX Gyre"]


@pytest.mark.parametrize("fam", RESERVED)
def test_reserved_families_are_refused(fam):
    assert excluded(fam)


def test_reserved_paths_are_refused():
    for p in ("/usr/share/fonts/opentype/urw-base35/NimbusSans-Regular.otf",
              "/usr/share/fonts/opentype/tex-gyre/texgyreheros-regular.otf",
              "/usr/share/fonts/type1/gsfonts/n019003l.pfb", "/usr/share/fonts/truetype/freefont/FreeSans.ttf"):
        assert excluded("Anything", p)
    assert not excluded("DejaVu Sans", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def test_committed_split_is_honest():
    sp = load_split()
    assert set(sp) == {"train", "calibration", "held_out"}
    fams = [f for d in sp.values() for f in d]
    assert len(fams) == len(set(fams)) >= 150  # no family in two splits; well over 150 families
    assert len(sp["held_out"]) >= 30
    for d in sp.values():
        assert not any(excluded(f) for f in d)
    # a design group lies in one split only (no held-out family has a sibling in training)
    where = {}
    for name, d in sp.items():
        for fam, group in d.items():
            assert where.setdefault(group, name) == name, (fam, group)
            assert design_group(fam) == group or group in ("dejavu",)


def test_installed_fonts_never_include_reserved_ones():
    have = installed()
    if not have:
        pytest.skip("no TrueType fonts installed (scripts/system-deps.sh train)")
    for fam, files in have.items():
        assert not excluded(fam)
        assert not any(excluded("", f) for f in files)
    for split in ("train", "calibration", "held_out"):
        for fam, files in split_fonts(split):
            assert fam in load_split()[split]
            assert not any(excluded(fam, f) for f in files)
