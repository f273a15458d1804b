"""Teach the camera your deck: a photo per rank (Pirate's Bluff) or per suit (the suited decks) in, a per-deck
profile out.

``pirate-table deck enroll NAME --base pirates-bluff|standard52|island54 --rows DIR``; the photos
(``photo_layout``), each of cards lying upright side by side, read left to right (a second row below the first):

- ``pirates-bluff``: ``0.jpg`` ... ``8.jpg``; photo r shows the eight cards of rank r (rank 0 = the wilds),
  lettered A ... H from left to right;
- ``standard52``: ``S.jpg``, ``H.jpg``, ``D.jpg``, ``C.jpg``; each the thirteen cards of that suit, A, 2 ... 10, J, Q,
  K, in two rows (A to 7 above, 8 to K below);
- ``island54``: ``anchors.jpg``, ``boats.jpg``, ``crabs.jpg``, ``flowers.jpg``, ``palms.jpg``, ``skulls.jpg``; each the
  nine cards of that suit, A, 2 ... 7, Q, K, in one row.

For every card the deck's reader's two index corners are cropped from the card's outline (and the two corners
a card read the wrong way round gives, "no index"), each many times with the outline, light, blur and noise
jittered as in a camera's frame; the reader's pooled features of those crops train two small linear heads
(rank / no index, letter or suit) ADDED to the reader's own logits (the base reader's knowledge is kept; the
deck's head corrects it for this deck's faces). One temperature is fitted on a second, independently jittered
set. The profile (``profile.npz`` + ``deck.json``) goes to ``<data dir>/decks/NAME/`` (``$PIRATE_TABLE_DATA``, else
the platform's user data dir): written to a temporary folder beside it and renamed into place, so a failed
enrollment leaves nothing behind. The reader is the Pirate's Bluff corner reader (grey) or the suited deck's own
reader (colour, vision/suited_reader.py); the profile keeps the fingerprint of the reader it was taught to.

Every bad input is one ``PirateTableError`` (the CLI prints ``pirate-table: error: <place>: <what>``, exit 2).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from companion.errors import PirateTableError

BASES = ("pirates-bluff", "standard52", "island54")
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
IMAGE_EXT = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".heic"}
LETTERS = "ABCDEFGH"
AUGMENT = 24  # jittered crops per corner for the head
AUGMENT_CAL = 8  # for the temperature


def data_dir() -> Path:
    env = os.environ.get("PIRATE_TABLE_DATA")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("pirate-table", appauthor=False))


def decks_dir() -> Path:
    return data_dir() / "decks"


def check_name(name: str, place: str = "NAME") -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise PirateTableError(f"{place}: {name!r} is not a deck name (1-32 of a-z, 0-9, '-', '_', starting with a letter or digit)")
    from companion.decks import decks

    if name in BASES or any(name in (d.id, *d.aliases) for d in decks()):
        raise PirateTableError(f"{place}: {name!r} is the name of a built-in deck")
    return name


class Profile:
    """A deck's own heads on the corner reader's pooled features, added to the reader's logits."""

    def __init__(self, Wr, br, Wl, bl, temperature: float, name: str = "", base: str = "pirates-bluff"):
        self.Wr, self.br, self.Wl, self.bl = Wr, br, Wl, bl
        self.T = float(temperature)
        self.name = name
        self.base = base

    def heads(self, feat, zr, zl):
        return (zr + feat @ self.Wr + self.br) / self.T, (zl + feat @ self.Wl + self.bl) / self.T


def reader_file(base: str = "pirates-bluff", models: Path | None = None) -> Path:
    """The model file of the reader a profile of ``base`` is built on."""
    from vision.detect import MODELS

    m = Path(models or MODELS)
    if base != "pirates-bluff":
        return m / f"{base}_reader.int8.onnx"
    f = m / "corner_reader.int8.onnx"
    return f if f.exists() else m / "corner_reader.onnx"


def reader_id(models: Path | None = None, base: str = "pirates-bluff") -> str:
    """The fingerprint of the reader a profile's heads are built on (its pooled features): the first 16 hex digits
    of the SHA-256 of the model file the ``ort`` scanner reads ``base`` with (the corner reader, or the suited
    deck's reader). A retrained reader has other features, so a profile taught to an earlier one must not be used
    with it."""
    import hashlib

    return hashlib.sha256(reader_file(base, models).read_bytes()).hexdigest()[:16]


def base_id(base: str) -> str:
    """``--base`` as one of BASES (the registry's deck ids and aliases are accepted: pirates72, standard, island)."""
    from companion.decks import get_deck
    from companion.errors import CardError

    if base in BASES:
        return base
    try:
        d = get_deck(base)
    except CardError:
        d = None
    if d is not None and d.id == "pirates72":
        return "pirates-bluff"
    if d is not None and d.id in BASES:
        return d.id
    raise PirateTableError(f"--base: unknown base deck {base!r} (known: {', '.join(BASES)})")


def photo_layout(base: str) -> list[tuple[str, list]]:
    """The enrollment photos of a base deck: (file name, its cards in reading order) per photo."""
    from companion.decks import get_deck

    if base == "pirates-bluff":
        from companion.decks.pirates72 import PBCard

        return [(f"{r}.jpg", [PBCard(r, lt) for lt in LETTERS]) for r in range(9)]
    suits = list(dict.fromkeys(c.suit for c in get_deck(base).cards))
    return [(f"{s}.jpg", suit_cards(base, s)) for s in suits]


def load(name: str, models: Path | None = None) -> Profile:
    """The enrolled deck ``name`` (a PirateTableError when there is none, or when it was taught to another corner
    reader than the one in ``models``)."""
    check_name(name, "--deck")
    d = decks_dir() / name
    try:
        meta = json.loads((d / "deck.json").read_text())
        z = np.load(d / "profile.npz")
        if meta.get("base") not in BASES:
            raise ValueError("base")
        prof = Profile(z["Wr"], z["br"], z["Wl"], z["bl"], float(meta["temperature"]), name, meta["base"])
    except FileNotFoundError:
        raise PirateTableError(f"--deck: no deck named {name!r} (see `pirate-table deck list`)") from None
    except (OSError, ValueError, KeyError) as exc:
        raise PirateTableError(f"{d}: damaged deck profile ({exc.__class__.__name__})") from None
    try:
        current = reader_id(models, prof.base)
    except OSError:
        raise PirateTableError(f"--deck {name}: the camera's reader for {prof.base} is missing") from None
    if meta.get("reader") != current:
        raise PirateTableError(f"--deck {name}: taught to an earlier version of the camera's reader; teach it again "
                               f"(`pirate-table deck enroll {name} --base {prof.base} --rows DIR --again`)")
    return prof


def list_decks() -> list[dict]:
    out = []
    d = decks_dir()
    if not d.is_dir():
        return out
    current = {}
    for b in BASES:
        try:
            current[b] = reader_id(base=b)
        except OSError:  # no reader here for this base: none of its profiles can be used
            current[b] = None
    for p in sorted(d.iterdir()):
        if p.name.startswith(".") or not (p / "deck.json").is_file():
            continue
        try:
            meta = json.loads((p / "deck.json").read_text())
        except (OSError, ValueError):
            continue
        out.append({"name": p.name, "base": meta.get("base"), "enrolled": meta.get("enrolled"),
                    "cards": meta.get("cards"),
                    "current": meta.get("reader") is not None and meta.get("reader") == current.get(meta.get("base"))})
    return out


def remove(name: str) -> None:
    check_name(name)
    d = decks_dir() / name
    if not (d / "deck.json").is_file():
        raise PirateTableError(f"NAME: no deck named {name!r} (see `pirate-table deck list`)")
    shutil.rmtree(d)


def suit_cards(deck_id: str, suit: str) -> list:
    """The cards of one suit of a suited deck in the order they lie in its enrollment photo: rank order, the ace
    first (the standard deck: A, 2 ... 10, J, Q, K; the Island Deck: A, 2 ... 7, Q, K)."""
    from companion.decks import get_deck

    cards = [c for c in get_deck(deck_id).cards if c.suit == suit]
    return cards[-1:] + cards[:-1] if getattr(cards[-1], "rank", None) == 14 else cards


def _upright(quad: np.ndarray) -> np.ndarray:
    """A card lying upright in the photo: corners TL, TR, BR, BL with the long side vertical."""
    q = np.asarray(quad, np.float32)
    best = None
    for r in range(4):
        h = np.roll(q, -r, axis=0)
        w = np.linalg.norm(h[1] - h[0])
        ln = np.linalg.norm(h[3] - h[0])
        score = (ln >= w, -float(h[0].sum()))  # long side vertical, then the top-left corner first
        if best is None or score > best[0]:
            best = (score, h)
    return best[1]


def find_row(scanner, img: np.ndarray) -> list[np.ndarray]:
    """The cards of one row photo as enrollment finds them, left to right: their outlines (upright), however
    many (the app's Enroll screen says what it saw; ``_row_cards`` wants exactly eight)."""
    from vision.detect import _overlap, card_outline

    gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    # whole cards from the detector, outlined at full resolution (no reading involved: the deck is new)
    # a lower bar than a scan's (0.4): the photo is known to hold a row of cards, and the faces are new to the detector
    boxes = sorted([d for d in scanner.detector(img, conf_thres=0.05) if d[0] == 0], key=lambda d: -d[1])
    quads: list[np.ndarray] = []
    for d in boxes:
        q = card_outline(gray, d[2:])
        if not any(_overlap(q, q2) > 0.5 for q2 in quads):
            quads.append(q)
    # a find whose outline reaches the photo's edge (within EDGE_PX) is not a card to teach: it is cut by the frame, its
    # corners not all in the photo (and on a patterned table the detector's weakest finds at the edge are mostly the
    # cloth). Measured on enrollment photos of calibration-font decks (session 56): every card lies 21 px or more inside
    h, w = gray.shape
    quads = [q for q in quads if float(q[:, 0].min()) >= EDGE_PX and float(q[:, 1].min()) >= EDGE_PX
             and float(q[:, 0].max()) <= w - 1 - EDGE_PX and float(q[:, 1].max()) <= h - 1 - EDGE_PX]
    if quads:  # the cards of a photo are one size: a much smaller find is part of a card (or a shadow), not one
        areas = [abs(float(cv2.contourArea(q.astype(np.float32)))) for q in quads]
        big = float(np.median(areas))
        quads = [q for q, a in zip(quads, areas) if a >= 0.6 * big]
    if quads:  # the photo's cards lie upright: a find turned far from the row's tilt (a lamp's glare outlined as a
        # diamond, 45 degrees off) is not one of them. Chosen on enrollment photos of calibration-font decks
        # (session 56): 14 such finds in 504 Pirate's Bluff photos, none more than 13 degrees off among the cards
        tilts = [_tilt(q) for q in quads]
        mid = float(np.median(tilts))
        quads = [q for q, t in zip(quads, tilts) if abs(t - mid) <= ROW_TILT_MAX]
    return [_upright(q) for q in reading_order(quads)]


EDGE_PX = 2.0  # a find this close to the photo's edge, or over it, is cut by the frame
ROW_TILT_MAX = 20.0  # degrees a find may be turned from the row's median tilt and still count as one of its cards


def _tilt(q: np.ndarray) -> float:
    """The angle of an outline's first side, folded into [-45, 45) degrees (any side of a rectangle gives the same)."""
    e = q[1] - q[0]
    return float((np.degrees(np.arctan2(float(e[1]), float(e[0]))) + 45.0) % 90.0 - 45.0)


def reading_order(quads: list[np.ndarray]) -> list[np.ndarray]:
    """Cards lying in rows, in reading order: rows top to bottom (a new row where the next card's centre is more
    than half a card's height below the row's), each left to right."""
    if not quads:
        return []
    by_y = sorted(quads, key=lambda q: float(q.mean(0)[1]))
    h = float(np.median([np.ptp(q[:, 1]) for q in quads]))
    rows = [[by_y[0]]]
    for q in by_y[1:]:
        if float(q.mean(0)[1]) - float(np.mean([r.mean(0)[1] for r in rows[-1]])) > 0.5 * h:
            rows.append([q])
        else:
            rows[-1].append(q)
    return [q for row in rows for q in sorted(row, key=lambda q: float(q.mean(0)[0]))]


def _describe(base: str, cards: list) -> str:
    """How a photo of ``base`` lies, for the refusal of a wrong one."""
    if base == "pirates-bluff":
        return "one row of A to H, upright, apart, all in the photo"
    from companion.decks import get_deck

    d = get_deck(base)
    names = [d.notation(c) for c in cards]
    rows = "in two rows: " + f"{names[0]} to {names[6]} above, {names[7]} to {names[-1]} below" if len(cards) > 9 \
        else f"in one row: {names[0]} to {names[-1]}"
    return f"the {cards[0].suit} suit {rows}, upright, apart, all in the photo"


def _row_cards(scanner, img: np.ndarray, place: str, base: str = "pirates-bluff", cards: list | None = None
               ) -> list[np.ndarray]:
    """The cards of one photo in reading order: their outlines (upright)."""
    n = 8 if cards is None else len(cards)
    quads = find_row(scanner, img)
    if len(quads) != n:
        raise PirateTableError(f"{place}: found {len(quads)} cards, expected {n} ({_describe(base, cards or [])})")
    return quads


def _jitter_crops(gray, quad, rng, n: int, first: bool):
    """n jittered versions of the card's 4 corner crops: 2 index corners (labelled) + 2 wrong-way corners (no
    index). ``gray``: the photo as the reader sees it (grey, or colour for a suited deck's reader)."""
    from vision.corner import corner_regions, crop_region

    short = min(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[3] - quad[0]))
    crops, is_index = [], []
    for k in range(n):
        q = quad if (first and k == 0) else (quad + rng.normal(0, 0.025 * short, (4, 2))).astype(np.float32)
        for o, lab in ((0, True), (1, False)):
            for reg in corner_regions(np.roll(q, -o, axis=0)):
                c = crop_region(gray, reg).astype(np.float32)
                if k:  # light, blur, noise, JPEG as a camera frame varies
                    c = c * rng.uniform(0.6, 1.15) + rng.uniform(-25, 25)
                    if rng.random() < 0.6:
                        c = cv2.GaussianBlur(c, (0, 0), rng.uniform(0.3, 1.3))
                    c = c + rng.normal(0, rng.uniform(0, 8), c.shape)
                    c = np.clip(c, 0, 255).astype(np.uint8)
                    ok, buf = cv2.imencode(".jpg", c, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 95))])
                    c = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)
                crops.append(np.clip(c, 0, 255).astype(np.uint8))
                is_index.append(lab)
    return crops, is_index


def _softmax(z):
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def _fit_residual(F, Z, y, iters: int = 300, lr: float = 0.05, l2: float = 1e-3):
    """Multinomial logistic regression of the residual head: softmax(Z + F W + b) ~ y (Adam, full batch)."""
    n, d = F.shape
    c = Z.shape[1]
    mu, sd = F.mean(0), F.std(0) + 1e-3
    Fs = (F - mu) / sd
    W = np.zeros((d, c))
    b = np.zeros(c)
    m = [np.zeros_like(W), np.zeros_like(b)]
    v = [np.zeros_like(W), np.zeros_like(b)]
    Y = np.eye(c)[y]
    for t in range(1, iters + 1):
        P = _softmax(Z + Fs @ W + b)
        G = (P - Y) / n
        g = [Fs.T @ G + l2 * W, G.sum(0)]
        for i, (p, gi) in enumerate(zip((W, b), g)):
            m[i] = 0.9 * m[i] + 0.1 * gi
            v[i] = 0.999 * v[i] + 0.001 * gi * gi
            p -= lr * (m[i] / (1 - 0.9 ** t)) / (np.sqrt(v[i] / (1 - 0.999 ** t)) + 1e-8)
    # fold the standardisation into W, b: (F - mu) / sd @ W + b = F @ (W / sd) + (b - mu / sd @ W)
    return (W / sd[:, None]).astype(np.float32), (b - (mu / sd) @ W).astype(np.float32)


def _taught_base(target: Path) -> str | None:
    """The base deck an enrolled deck's folder says it was taught on (None: its deck.json cannot be read)."""
    try:
        meta = json.loads((target / "deck.json").read_text())
    except (OSError, ValueError):
        return None
    return meta.get("base") if isinstance(meta, dict) else None


def enroll(name: str, base: str, rows: str | Path, models: Path | None = None, seed: int = 0,
           again: bool = False) -> dict:
    """Build and store the profile of deck ``name``; returns its summary. Nothing is written on any error.
    ``again``: teach an enrolled deck again (new photos: other light, or a reader changed since): the deck must be
    enrolled, on the same base deck; its profile is replaced only once the new one is built (on any error the old
    one stays as it was)."""
    t0 = time.process_time()
    check_name(name)
    base = base_id(base)
    rows = Path(rows)
    if not rows.is_dir():
        raise PirateTableError(f"--rows: {str(rows)!r} is not a folder")
    target = decks_dir() / name
    if again:
        if not (target / "deck.json").is_file():
            raise PirateTableError(f"NAME: no deck named {name!r} to teach again (see `pirate-table deck list`)")
        was = _taught_base(target)
        if was is not None and was != base:
            raise PirateTableError(f"--base: deck {name!r} was taught on {was}, not {base}: teach it again on {was}, "
                                   f"or remove it first (`pirate-table deck remove {name}`)")
    elif target.exists():
        raise PirateTableError(f"NAME: a deck named {name!r} is already enrolled (teach it again with --again, or "
                               f"remove it first: `pirate-table deck remove {name}`)")
    layout = photo_layout(base)
    files = [f for f, _ in layout]
    said = f"the photos are named {files[0]} ... {files[-1]}, one per {'rank' if base == 'pirates-bluff' else 'suit'}"
    names = {p.name for p in rows.iterdir()}
    for f in sorted(names):
        if Path(f).suffix.lower() in IMAGE_EXT and f not in files:
            raise PirateTableError(f"{rows / f}: unexpected photo ({said})")
    for f in files:
        if f not in names:
            raise PirateTableError(f"{rows / f}: missing ({said})")
    from vision.cli import loaded
    from vision.detect import MODELS

    if base == "pirates-bluff":
        from vision.detect import Scanner

        scanner = loaded(models or MODELS, lambda: Scanner("ort", models or MODELS, reader="corner"))
        sess, colour, no_index = scanner.corner.sess, False, 9

        def labels(card):
            return card.rank, LETTERS.index(card.letter)
    else:
        from vision.suited_reader import SuitedScanner, deck_codes

        scanner = loaded(models or MODELS, lambda: SuitedScanner(base, models or MODELS))
        sess, colour = scanner.reader.sess, True
        codes = deck_codes(base)
        no_index = len(codes.ranks)

        def labels(card):
            return divmod(codes.code(card), len(codes.suits))
    rng = np.random.default_rng(seed)
    fit_crops, fit_rank, fit_letter = [], [], []
    cal_crops, cal_rank, cal_letter = [], [], []
    for f, cards in layout:
        path = rows / f
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if img is None:
            raise PirateTableError(f"{path}: cannot read image")
        seen = img if colour else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        for card, quad in zip(cards, _row_cards(scanner, img, str(path), base, cards)):
            r, li = labels(card)
            for n, first, C, Rk, Lt in ((AUGMENT, True, fit_crops, fit_rank, fit_letter),
                                         (AUGMENT_CAL, False, cal_crops, cal_rank, cal_letter)):
                crops, is_index = _jitter_crops(seen, quad, rng, n, first)
                C += crops
                Rk += [r if ix else no_index for ix in is_index]
                Lt += [li if ix else -1 for ix in is_index]
    from vision.corner import normalize

    def run(C):
        X = normalize(np.stack(C))
        outs = [sess.run(None, {"crop": X[i : i + 256]}) for i in range(0, len(X), 256)]
        return tuple(np.concatenate([o[k] for o in outs]) for k in range(3))

    zr, zl, feat = run(fit_crops)
    R, L = np.array(fit_rank), np.array(fit_letter)
    Wr, br = _fit_residual(feat, zr, R)
    m = L >= 0
    Wl, bl = _fit_residual(feat[m], zl[m], L[m])
    # temperature on the independently jittered set
    zr2, zl2, f2 = run(cal_crops)
    R2, L2 = np.array(cal_rank), np.array(cal_letter)
    a, b = zr2 + f2 @ Wr + br, zl2 + f2 @ Wl + bl
    m2 = L2 >= 0
    best = (np.inf, 1.0)
    for T in np.exp(np.linspace(np.log(0.5), np.log(4.0), 41)):
        nll = -np.log(np.maximum(_softmax(a / T)[np.arange(len(R2)), R2], 1e-12)).mean()
        nll -= np.log(np.maximum(_softmax(b[m2] / T)[np.arange(m2.sum()), L2[m2]], 1e-12)).mean()
        best = min(best, (nll, float(T)))
    T = best[1]
    pr, pl = _softmax(a / T), _softmax(b / T)
    acc_rank = float((pr.argmax(1) == R2).mean())
    acc_letter = float((pl[m2].argmax(1) == L2[m2]).mean())
    meta = {"name": name, "base": base, "cards": sum(len(c) for _, c in layout), "enrolled": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "again": bool(again),
            "temperature": round(T, 4), "crops": len(fit_crops), "check_rank_accuracy": round(acc_rank, 4),
            "check_letter_accuracy": round(acc_letter, 4), "cpu_s": round(time.process_time() - t0, 1),
            "reader": reader_id(models, base)}
    decks_dir().mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=decks_dir()))
    try:
        np.savez(tmp / "profile.npz", Wr=Wr, br=br, Wl=Wl, bl=bl)
        (tmp / "deck.json").write_text(json.dumps(meta, indent=1) + "\n")
        if not again:
            if target.exists():
                raise PirateTableError(f"NAME: a deck named {name!r} is already enrolled")
            os.rename(tmp, target)
        else:
            _swap_in(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return meta


def _swap_in(new: Path, target: Path) -> None:
    """``new`` (a complete profile folder) in ``target``'s place: the old folder is moved aside first (a dot name,
    never listed), the new one renamed in, then the old one deleted; if the new one cannot go in, the old one is
    put back."""
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}-old-", dir=target.parent))
    old.rmdir()
    moved = False
    try:
        if target.exists():
            os.rename(target, old)
            moved = True
        os.rename(new, target)
    except BaseException:
        if moved and not target.exists():
            os.rename(old, target)
        raise
    if moved:
        shutil.rmtree(old, ignore_errors=True)
