"""The type designs the card reader trains on, and their honest split by family.

Installed TrueType/OpenType files (``scripts/system-deps.sh train`` installs Debian font packages) are grouped
into *families* (a design with its weights and italics: "Lato", "Lato Black", "Lato Italic" are one family) and
families into *design groups* (families that share drawings: "DejaVu Sans" and "DejaVu Serif", Hack (drawn from
DejaVu), Latin Modern and CMU (both Computer Modern), Liberation 2 and the croscore fonts). A whole design
group goes to one split, so no held-out family has a sibling in training:

- ``train``: the reader and the detector learn from these;
- ``calibration``: temperature and thresholds are chosen on these only;
- ``held_out``: the benchmark's "faces never seen" figures; nothing is ever tuned on them.

The split is a pure function of the group's name (sha1; ``_PLACED`` names the exceptions), written once to
``models/font_split.json`` (committed, and listed in the model card); a family installed later that is not in that
file is used by no split.

**Reserved, never used**: the URW base35 families and every clone of them (TeX Gyre, gsfonts, GNU FreeFont,
which is drawn from URW's designs). They are kept for an outside check. ``EXCLUDED`` below refuses them by
family name and by file path even where installed, in every split.

    python -m vision.fonts            # list what is installed, per split
    python -m vision.fonts --write    # (re)write models/font_split.json from the installed fonts
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from functools import lru_cache
from pathlib import Path

SPLIT_FILE = Path(__file__).resolve().parent.parent / "models" / "font_split.json"
FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"))
NEEDED = "012345678ABCDEFGHW"
LOWER = "abcdefgh"  # the letters as small letters: drawn where a training face has them (vision.corner, LOWER_SHARE)

# Reserved for an outside check: never installed for training, never used, never tuned to. Lower-case
# substrings of a family name or of a file path.
EXCLUDED = (
    "urw", "nimbus", "gyre", "gsfonts", "base35", "freefont", "freesans", "freeserif", "freemono",
    "c059", "p052", "z003", "d050000l", "standard symbols", "century schoolbook l", "dingbats",
    "texgyre", "tex gyre", "uralic",  # fonts-uralic: Bookman/Chancery/Gothic/Palladio/Schoolbook Uralic are URW's
)
# Not card faces: decorative display faces whose digits are pictures or puzzles (Aenigma's "... BRK"),
# symbol and maths companions.
NOT_FACES = (" brk", "dings", " math", "initials", "keyboard", "symbol")

_STYLE_WORDS = {
    "regular", "bold", "italic", "oblique", "light", "thin", "medium", "semibold", "demibold", "extrabold",
    "ultrabold", "black", "heavy", "book", "extralight", "ultralight", "condensed", "semicondensed", "narrow",
    "extended", "expanded", "wide", "demi", "extra", "ultra", "semi", "hairline", "roman", "normal", "slanted",
    "it", "bd", "lt", "md", "bk", "cn", "ex",
}
# families drawn from the same design go to one split
_ALIASES = {
    "hack": "dejavu", "arkpandora": "dejavu", "aerial": "dejavu", "verajja": "dejavu", "tuffy": "tuffy",
    "lm": "computer-modern", "latin": "computer-modern", "cmu": "computer-modern", "lmroman": "computer-modern",
    "lmsans": "computer-modern", "lmmono": "computer-modern", "concrete": "computer-modern",
    "liberation": "croscore", "arimo": "croscore", "tinos": "croscore", "cousine": "croscore",
    "linux": "libertine", "biolinum": "libertine", "libertine": "libertine",
    "rasa": "yrsa",  # Rasa's Latin is Yrsa's, outline for outline (fonts-yrsa-rasa; found in session 93)
    "campania": "doulos",  # Campania draws Doulos SIL's glyphs (Doulos SIL Compact's outlines exactly; session 99)
    # ADF's Verana, Verana Sans and Switzera draw Bitstream Vera's glyphs, as DejaVu does (rendered glyphs overlap at
    # IoU 0.96-0.995; session 100)
    "verana": "dejavu", "switzera": "dejavu",
}
# groups placed by what was done with them, not by their hash: bars and rules were chosen on calibration scenes in
# Verana's faces (Vera's drawing) from the first split to session 99, so the DejaVu group, which draws it too, was
# tuned on and cannot stand in the held-out bench (session 100; it had been held out by its hash)
_PLACED = {"dejavu": "calibration"}
# a first word that names a foundry, not a design: the group takes two words
_FOUNDRY = {"gfs", "sil", "tlwg", "the", "le", "la", "league", "levien", "old", "ocr", "open", "national",
            "comic", "clear", "courier", "yrsa", "ubuntu", "eb", "fira", "b612", "kacst", "gnu"}
# a width/style word glued to the first word: "OpenDyslexicAlta", "OCRABold", "BetecknaGS", "STIXGeneral"
_GLUED = re.compile(r"(alta|mono|sans|serif|bold|italic|condensed|display|sketch|general|gs|text)$")
# folders whose fonts are all drawn from one design (Arkpandora's Aerial/Tymes/Veranda are Bitstream Vera's)
_DIR_GROUPS = {"arkpandora": "dejavu", "dejavu": "dejavu"}


def excluded(family: str, path: str = "") -> bool:
    """True for the reserved URW base35 families and their clones (by family name or file path)."""
    s = f"{family} {path}".lower()
    return any(x in s for x in EXCLUDED)


def family_name(name: str) -> str:
    """A family's name without weight/width/slant words: 'Lato Black Italic' -> 'Lato'."""
    words = re.split(r"[\s_\-]+", name.strip())
    keep = [w for w in words if w.lower() not in _STYLE_WORDS]
    return " ".join(keep or words[:1])


def design_group(family: str, files=()) -> str:
    for f in files:
        for d, g in _DIR_GROUPS.items():
            if f"/{d}/" in f:
                return g
    words = family.lower().split()
    if not words:
        return ""
    first = re.sub(r"[^a-z0-9]", "", words[0])
    while len(first) > 4 and _GLUED.search(first):
        first = _GLUED.sub("", first)
    if first in _ALIASES:
        return _ALIASES[first]
    if first in _FOUNDRY and len(words) > 1:
        return f"{first} {re.sub(r'[^a-z0-9]', '', words[1])}"
    return first


def split_of(group: str) -> str:
    """held_out (~20 % of groups), calibration (~12 %), train: a pure function of the group's name (``_PLACED``
    names the groups placed otherwise, and why)."""
    if group in _PLACED:
        return _PLACED[group]
    h = int(hashlib.sha1(group.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "held_out" if h < 0.20 else ("calibration" if h < 0.32 else "train")


def _covers(path: Path, chars: str = NEEDED) -> bool:
    """The file maps every one of ``chars`` to a glyph that draws something."""
    try:
        import logging

        from fontTools.pens.boundsPen import BoundsPen
        from fontTools.ttLib import TTFont

        logging.getLogger("fontTools").setLevel(logging.ERROR)  # old files' odd header dates: not our business
        f = TTFont(str(path), fontNumber=0, lazy=True)
        cmap = f.getBestCmap() or {}
        if not all(ord(c) in cmap for c in chars):
            return False
        # mapped is not drawn: a face can map a character to an empty glyph (Museum Fourteen / Sixty map the digits
        # to blanks, and a card set in them shows no rank at all)
        glyphs = f.getGlyphSet()
        for c in chars:
            pen = BoundsPen(glyphs)
            glyphs[cmap[ord(c)]].draw(pen)
            if pen.bounds is None or pen.bounds[2] - pen.bounds[0] <= 0 or pen.bounds[3] - pen.bounds[1] <= 0:
                return False
        return True
    except Exception:
        return False


@lru_cache(maxsize=4096)
def draws_lower(path: str, chars: str = LOWER) -> bool:
    """The font file draws these small letters too (``LOWER``: the Pirate's Bluff letters; a suited deck asks for its
    letter ranks' small letters, e.g. "ajqk")."""
    return _covers(Path(path), chars)


def cache_dir() -> Path:
    """Where the font listing is kept between processes: $PIRATE_TABLE_CACHE, else the platform's user cache dir
    (platformdirs: ~/.cache/pirate-table on Linux)."""
    import os

    if os.environ.get("PIRATE_TABLE_CACHE"):
        return Path(os.environ["PIRATE_TABLE_CACHE"])
    import platformdirs

    return Path(platformdirs.user_cache_dir("pirate-table", appauthor=False))


def _candidates() -> list[Path]:
    return [p for d in FONT_DIRS if d.is_dir() for p in sorted(d.rglob("*"))
            if p.suffix.lower() in (".ttf", ".otf") and not excluded("", str(p))]


def _listing_key(files: list[Path]) -> str:
    """What the listing depends on: this module's code (the rules above), the versions of the two libraries that
    read the files, and every candidate file's path, size and time of change. Any difference and the fonts are
    looked at again."""
    import fontTools
    import PIL

    h = hashlib.sha1(Path(__file__).read_bytes())
    h.update(f"\0{fontTools.version}\0{PIL.__version__}".encode())
    for p in files:
        try:
            st = p.stat()
            seen = f"{st.st_size}\0{st.st_mtime_ns}"
        except OSError:  # a link to a file that is gone (a removed package): it is no face, and that is its key too
            seen = "gone"
        h.update(f"\0{p}\0{seen}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _cached_listing(path: Path, key: str, files: list[Path]) -> dict[str, list[str]] | None:
    """The listing kept at ``path`` when it was made for ``key`` and is well formed (a family's files among the
    candidates); None otherwise (missing, unreadable, another key, damaged): the caller looks again."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("families"), dict):
        return None
    names = {str(p) for p in files}
    fams = data["families"]
    for k, v in fams.items():
        if not (isinstance(k, str) and k and not excluded(k) and isinstance(v, list) and v
                and all(isinstance(f, str) and f in names for f in v)):
            return None
    return {k: sorted(v) for k, v in sorted(fams.items())}


def _keep_listing(path: Path, key: str, fams: dict[str, list[str]]) -> None:
    """Write the listing for the next process (whole or not at all); a cache that cannot be written is no error."""
    import os
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".fonts-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"key": key, "families": fams}, f)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass


@lru_cache(maxsize=1)
def installed() -> dict[str, list[str]]:
    """family -> sorted font files (TrueType/OpenType) that draw every needed glyph; reserved ones left out.
    Looking at every file takes 13-25 s for the 1,160 files here, so the listing is kept in ``cache_dir()`` under
    ``_listing_key`` (this module's code, the fontTools and Pillow versions, every file's path, size and mtime)."""
    files = _candidates()
    key = _listing_key(files)
    path = cache_dir() / "fonts-installed.json"
    fams = _cached_listing(path, key, files)
    if fams is None:
        fams = _look_at(files)
        _keep_listing(path, key, fams)
    return fams


def _look_at(files: list[Path]) -> dict[str, list[str]]:
    from PIL import ImageFont

    fams: dict[str, list[str]] = {}
    for p in files:
        try:
            name, _style = ImageFont.truetype(str(p), 20).getname()
        except Exception:
            continue
        fam = family_name(name or p.stem)
        if not fam or excluded(fam, str(p)) or any(x in f" {fam.lower()}" for x in NOT_FACES) or not _covers(p):
            continue
        fams.setdefault(fam, []).append(str(p))
    return {k: sorted(v) for k, v in sorted(fams.items())}


def compute_split(fams: dict[str, list[str]] | None = None) -> dict[str, dict]:
    fams = installed() if fams is None else fams
    out: dict[str, dict] = {"train": {}, "calibration": {}, "held_out": {}}
    for fam, files in fams.items():
        g = design_group(fam, files)
        out[split_of(g)][fam] = {"group": g, "files": [Path(f).name for f in files]}
    return out


def load_split() -> dict[str, dict]:
    """The committed split (models/font_split.json)."""
    return json.loads(SPLIT_FILE.read_text())


@lru_cache(maxsize=8)
def split_fonts(split: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(family, installed font files) of one split, from the committed split file, that are installed here.
    A reserved family can never come through (checked again here)."""
    want = load_split().get(split, {})
    have = installed()
    out = []
    for fam in sorted(want):
        if excluded(fam) or fam not in have:
            continue
        files = tuple(f for f in have[fam] if not excluded(fam, f))
        if files:
            out.append((fam, files))
    return tuple(out)


def main(argv=None) -> int:
    from companion.inputs import OneLineParser

    ap = OneLineParser(prog="python -m vision.fonts", description="Print the font families' split (train, "
                       "calibration, held-out) from the fonts installed here.")
    ap.add_argument("--write", action="store_true", help=f"also write it to {SPLIT_FILE.name}")
    a = ap.parse_args(argv)
    sp = compute_split()
    if a.write:
        SPLIT_FILE.write_text(json.dumps({k: {f: v["group"] for f, v in d.items()} for k, d in sp.items()},
                                         indent=1, sort_keys=True) + "\n")
    for k, d in sp.items():
        groups = {v["group"] for v in d.values()}
        print(f"{k}: {len(d)} families in {len(groups)} design groups")
        print("  " + ", ".join(sorted(d)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
