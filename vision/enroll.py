"""Teach the camera your deck: nine photos in, a per-deck profile out.

``pirate-table deck enroll NAME --base pirates-bluff --rows DIR``: DIR holds ``0.jpg`` ... ``8.jpg``; photo r shows
the eight cards of rank r (rank 0 = the wilds), lying upright side by side, lettered A ... H from left to right.
For every card the corner reader's two index corners are cropped from the card's outline (and the two corners
a card read the wrong way round gives, "no index"), each many times with the outline, light, blur and noise
jittered as in a camera's frame; the corner reader's pooled features of those crops train two small linear
heads (rank / no index, letter) ADDED to the reader's own logits (the base reader's knowledge is kept; the
deck's head corrects it for this deck's faces). One temperature is fitted on a second, independently jittered
set. The profile (``profile.npz`` + ``deck.json``) goes to ``<data dir>/decks/NAME/`` (``$PIRATE_TABLE_DATA``, else
the platform's user data dir): written to a temporary folder beside it and renamed into place, so a failed
enrollment leaves nothing behind.

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

BASES = ("pirates-bluff",)
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
ROW_FILES = tuple(f"{r}.jpg" for r in range(9))
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


def reader_id(models: Path | None = None) -> str:
    """The fingerprint of the corner reader a profile's heads are built on (its pooled features): the first 16
    hex digits of the SHA-256 of the model file the ``ort`` scanner reads with. A retrained reader has other
    features, so a profile taught to an earlier one must not be used with it."""
    import hashlib

    from vision.detect import MODELS

    m = Path(models or MODELS)
    f = m / "corner_reader.int8.onnx"
    if not f.exists():
        f = m / "corner_reader.onnx"
    return hashlib.sha256(f.read_bytes()).hexdigest()[:16]


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
    if meta.get("reader") != reader_id(models):
        raise PirateTableError(f"--deck {name}: taught to an earlier version of the camera's reader; teach it again "
                               f"(`pirate-table deck remove {name}`, then `pirate-table deck enroll {name} ...`)")
    return prof


def list_decks() -> list[dict]:
    out = []
    d = decks_dir()
    if not d.is_dir():
        return out
    try:
        current = reader_id()
    except OSError:  # no corner reader here: no profile can be used
        current = None
    for p in sorted(d.iterdir()):
        if p.name.startswith(".") or not (p / "deck.json").is_file():
            continue
        try:
            meta = json.loads((p / "deck.json").read_text())
        except (OSError, ValueError):
            continue
        out.append({"name": p.name, "base": meta.get("base"), "enrolled": meta.get("enrolled"),
                    "cards": meta.get("cards"), "current": meta.get("reader") == current})
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
    quads.sort(key=lambda q: float(q.mean(0)[0]))
    return [_upright(q) for q in quads]


def _row_cards(scanner, img: np.ndarray, place: str) -> list[np.ndarray]:
    """The eight cards of one photo, left to right: their outlines (upright)."""
    quads = find_row(scanner, img)
    if len(quads) != 8:
        raise PirateTableError(f"{place}: found {len(quads)} cards, expected 8 (one row of A to H, upright, apart)")
    return quads


def _jitter_crops(gray, quad, rng, n: int, first: bool):
    """n jittered versions of the card's 4 corner crops: 2 index corners (labelled) + 2 wrong-way corners (9)."""
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
                    c = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE)
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


def enroll(name: str, base: str, rows: str | Path, models: Path | None = None, seed: int = 0) -> dict:
    """Build and store the profile of deck ``name``; returns its summary. Nothing is written on any error."""
    t0 = time.process_time()
    check_name(name)
    if base not in BASES:
        raise PirateTableError(f"--base: unknown base deck {base!r} (known: {', '.join(BASES)})")
    rows = Path(rows)
    if not rows.is_dir():
        raise PirateTableError(f"--rows: {str(rows)!r} is not a folder")
    target = decks_dir() / name
    if target.exists():
        raise PirateTableError(f"NAME: a deck named {name!r} is already enrolled (remove it first: `pirate-table deck remove {name}`)")
    names = {p.name for p in rows.iterdir()}
    for f in sorted(names):
        if Path(f).suffix.lower() in IMAGE_EXT and f not in ROW_FILES:
            raise PirateTableError(f"{rows / f}: unexpected photo (the photos are named 0.jpg ... 8.jpg, one per rank)")
    for f in ROW_FILES:
        if f not in names:
            raise PirateTableError(f"{rows / f}: missing (the photos are named 0.jpg ... 8.jpg, one per rank)")
    from vision.detect import MODELS, Scanner

    scanner = Scanner("ort", models or MODELS, reader="corner")
    rng = np.random.default_rng(seed)
    fit_crops, fit_rank, fit_letter = [], [], []
    cal_crops, cal_rank, cal_letter = [], [], []
    for r, f in enumerate(ROW_FILES):
        path = rows / f
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if img is None:
            raise PirateTableError(f"{path}: cannot read image")
        gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        for li, quad in enumerate(_row_cards(scanner, img, str(path))):
            for n, first, C, Rk, Lt in ((AUGMENT, True, fit_crops, fit_rank, fit_letter),
                                         (AUGMENT_CAL, False, cal_crops, cal_rank, cal_letter)):
                crops, is_index = _jitter_crops(gray, quad, rng, n, first)
                C += crops
                Rk += [r if ix else 9 for ix in is_index]
                Lt += [li if ix else -1 for ix in is_index]
    from vision.corner import normalize

    sess = scanner.corner.sess

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
    meta = {"name": name, "base": base, "cards": 72, "enrolled": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "temperature": round(T, 4), "crops": len(fit_crops), "check_rank_accuracy": round(acc_rank, 4),
            "check_letter_accuracy": round(acc_letter, 4), "cpu_s": round(time.process_time() - t0, 1),
            "reader": reader_id(models)}
    decks_dir().mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=decks_dir()))
    try:
        np.savez(tmp / "profile.npz", Wr=Wr, br=br, Wl=Wl, bl=bl)
        (tmp / "deck.json").write_text(json.dumps(meta, indent=1) + "\n")
        if target.exists():
            raise PirateTableError(f"NAME: a deck named {name!r} is already enrolled")
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return meta
