"""The face reader of the suited decks: a whole card's middle, read for its rank and suit.

A card lying whole on the table shows more than its two corner indices: its middle holds the suit's symbols (as
many as the rank on a number card, one big one on an ace) or a court's frame with the rank set large. The corner
reader (``vision.suited_reader``) reads only the corners, so a card whose small indices it is unsure of (a face
it never saw, a blurred corner) stays unread although its middle says plainly what it is. The face reader is a
second, independent pair of eyes on the same card: another network (``vision.corner.make_net``, colour input, the
deck's heads) on other pixels (``face_region``: the card less its index columns, 42 x 56 px), so its mistakes are
not the corner reader's.

Its rank head's last class says "the middle does not tell": a plain middle (nothing but the indices), a middle
with one big symbol on a number card (``SuitedStyle.centre == "big"``: the suit shows, the rank does not), a card
read sideways. The scanner (``SuitedScanner._face_look``) multiplies its reading into an unsure card's posterior,
weighed by P(the middle tells), so a middle that says nothing changes nothing.

Training views (``gen_face_views``): single cards of the deck's renderer in random styles of the ``train`` font
split (15 % Hershey), inks as the corner reader's (print colour, jittered, another suit's, grey), through the
camera treatment (``vision.corner.camera_view``), the outline jittered as the snapper makes it; each card's middle
upright and turned half round (both labelled: the scanner may hold a card either way up) and half the time turned
a quarter ("does not tell"). It starts from the deck's committed corner reader (``models/<deck>_reader.pt``,
convolutions and heads: it already knows the deck's symbols and rank glyphs). One temperature is fitted on views
of the ``calibration`` split; whether the scan uses it at all is chosen on the calibration scenes
(``suited_reader.set_thresholds``).

    python -m vision.suited_face --deck standard52|island54 [--cards N] [--steps N] [--out DIR] [--smoke]

writes ``<out>/<deck>_face.int8.onnx``, ``<out>/<deck>_face.json`` (the report) and ``<out>/<deck>_face.pt`` (the float
state dict, heads divided by the temperature, for ``--init`` to go on from).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from vision import corner as cr

MODELS = Path(__file__).resolve().parent.parent / "models"
FACE_BOX = (0.16, 0.05, 0.84, 0.95)  # the middle: x0, y0, x1, y1 as fractions of the card read upright
PIPS_SHARE = 0.6  # training cards whose style is made a middle of pips (random_style draws pips, big, plain alike)


def card_box(card_quad: np.ndarray, box) -> np.ndarray:
    """The quad (TL, TR, BR, BL) of ``box`` (x0, y0, x1, y1 as fractions of the card) on a card lying at
    ``card_quad`` (its corners as read upright), through the card's perspective."""
    x0, y0, x1, y1 = box
    unit = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)
    src = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    M = cv2.getPerspectiveTransform(src, np.asarray(card_quad, np.float32))
    return cv2.perspectiveTransform(unit[None], M)[0].astype(np.float32)


def face_region(card_quad: np.ndarray) -> np.ndarray:
    """The middle of a card (its quad TL, TR, BR, BL as read upright): ``FACE_BOX`` of it, clear of the corner
    indices' columns."""
    return card_box(card_quad, FACE_BOX)


CENTRE_BOX = (0.3, 0.3, 0.7, 0.7)  # the card's centre (x0, y0, x1, y1 as fractions of the card), where one big symbol is


def centre_ink(bgr: np.ndarray, card_quad: np.ndarray) -> float:
    """How much ink the card's centre (``CENTRE_BOX``) holds: (p95 - p5) / p95 of its grey, seen at 32 x 32 px. About
    0 for a plain middle (paper only), well above for one big symbol, a court's frame, most pips."""
    dst = np.array([[0, 0], [32, 0], [32, 32], [0, 32]], np.float32)
    view = cv2.warpPerspective(bgr, cv2.getPerspectiveTransform(card_box(card_quad, CENTRE_BOX), dst), (32, 32),
                               flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    grey = (cv2.cvtColor(view, cv2.COLOR_BGR2GRAY) if view.ndim == 3 else view).astype(np.float32)
    lo, hi = np.percentile(grey, (5, 95))
    return float((hi - lo) / max(hi, 1.0))


def middle_tells(style, pips: int, court: bool) -> bool:
    """Whether a face's middle shows its rank and suit (pips, an ace's symbol, a court's frame with the rank)."""
    return style.centre != "plain" and (court or pips == 1 or style.centre != "big")


def _face_chunk(args):
    seed, n, split, deck = args
    from vision.decks.faces import faces_for
    from vision.fonts import split_fonts
    from vision.suited_reader import deck_codes, drawn_card

    codes = deck_codes(deck)
    faces = faces_for(deck)
    fonts = split_fonts(split)
    nr = len(codes.ranks)
    rng = np.random.default_rng(seed)
    C, R, L = [], [], []

    def add(img, q, r, s):
        C.append(cr.crop_region(img, face_region(q)))
        R.append(r)
        L.append(s)

    for _ in range(n):
        r, s, style, pips, court, face, _iq, grey = drawn_card(rng, codes, faces, fonts, PIPS_SHARE)
        img, quad, _M = cr.camera_view(rng, face)
        if grey:
            img = cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
        q = cr._noisy(quad, rng)
        tells = middle_tells(style, pips, court)
        for turn in (0, 2):
            add(img, np.roll(q, -turn, axis=0), r if tells else nr, s if tells else -100)
        if rng.random() < 0.5:
            add(img, np.roll(q, -int(rng.choice((1, 3))), axis=0), nr, -100)
    return np.stack(C), np.array(R, np.int64), np.array(L, np.int64)


def gen_face_views(deck: str, n_cards: int, seed: int, split: str = "train", workers: int = 1):
    """Views of the middles of ``n_cards`` synthetic cards of ``deck`` in faces of font split ``split``: (uint8
    [N, 56, 42, 3], rank (len(ranks): the middle does not tell), suit (-100: none))."""
    return cr.run_chunks([(_face_chunk, (seed * 1000 + k, min(400, n_cards - k * 400), split, deck))
                          for k in range((n_cards + 399) // 400)], workers)


def face_path(deck_id: str, models: Path | None = None) -> Path:
    return Path(models or MODELS) / f"{deck_id}_face.int8.onnx"


def main(argv=None) -> int:
    import argparse

    import shutil

    import torch

    from companion.inputs import OneLineParser, cli_float, cli_int
    from vision.suited_gpu import _load_init
    from vision.suited_reader import go_on_from, init_temperature, net_kw, suited_deck

    ap = OneLineParser(prog="python -m vision.suited_face", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deck", required=True, help="standard52 or island54 (aliases: standard, island)")
    ap.add_argument("--cards", type=cli_int(1), default=20000, help="training cards (2-3 views each)")
    ap.add_argument("--calib-cards", type=cli_int(1), default=1500)
    ap.add_argument("--steps", type=cli_int(1), default=2000)
    ap.add_argument("--batch", type=cli_int(1, 4096), default=128)
    ap.add_argument("--lr", type=cli_float(0, 1, lo_open=True), default=1e-3)
    ap.add_argument("--data-seed", type=cli_int(0, 10**6), default=31)
    ap.add_argument("--workers", type=cli_int(1, 64), default=1)
    ap.add_argument("--threads", type=cli_int(1, 64), default=1)
    ap.add_argument("--init", default=None, help="where to start: a reader's state dict (default: "
                    "models/<deck>_reader.pt), or a face reader to go on from (its <deck>_face.pt, or its exported "
                    "<deck>_face.int8.onnx read back dequantized; the temperature from the .json beside it)")
    ap.add_argument("--out", default=None, help="folder for the face reader (default: models/)")
    ap.add_argument("--smoke", action="store_true", help="a few cards and steps (tests)")
    a = ap.parse_args(argv)
    try:
        deck = suited_deck(a.deck)
    except ValueError as e:
        ap.error(f"--deck: {e}")
    init = Path(a.init) if a.init else MODELS / f"{deck}_reader.pt"
    if not init.is_file():
        ap.error(f"--init: {init}: no such file")
    if a.smoke:
        a.cards, a.calib_cards, a.steps, a.batch = 24, 12, 3, 8
    out = Path(a.out) if a.out else MODELS
    try:
        if init.suffix == ".onnx":  # an exported face reader (the int8 file dequantized, its heads times T)
            extra = cr.reader_extra(init)
            start = cr.make_net(**net_kw(deck, extra))
            cr.load_onnx_weights(start, init)
            sd, T0 = start.state_dict(), 1.0
        else:
            sd, extra = _load_init(init)
            T0 = init_temperature(init, None)
    except ValueError as e:
        ap.error(f"--init: {e}")
    except Exception as e:  # onnx and torch each raise their own kinds for a file that is no reader
        ap.error(f"--init: {init}: not a reader ({type(e).__name__})")
    kw = net_kw(deck, extra)
    if any(tuple(getattr(sd.get(k), "shape", ()))[:1] != (n,) for k, n in (("rank.weight", kw["n_rank"]),
                                                                           ("letter.weight", kw["n_letter"]))):
        ap.error(f"--init: {init}: not a reader of {deck}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        ap.error(f"--out: {out}: {e.strerror or type(e).__name__}")
    rep = {"deck": deck, "recipe": {k: getattr(a, k) for k in ("cards", "calib_cards", "steps", "batch", "lr",
                                                                 "data_seed")},
           "face_box": FACE_BOX, "init": init.name, "extra": extra}
    with tempfile.TemporaryDirectory() as tmp:  # the float reader and its starting point: not kept
        work = Path(tmp)
        t0 = time.time()
        C, R, L = gen_face_views(deck, a.cards, a.data_seed, "train", a.workers)
        rep["train_views"], rep["gen_s"] = int(len(C)), round(time.time() - t0, 1)
        rep["train_views_telling"] = int((R < kw["n_rank"] - 1).sum())
        print(f"{deck}: {len(C)} face views ({rep['train_views_telling']} telling) in {rep['gen_s']} s", flush=True)
        go = work / "go_on.pt"
        if init.suffix == ".onnx":
            torch.save(sd, str(go))
        else:
            go_on_from(init, T0, go)
        onnx_path = work / f"{deck}_face.onnx"
        t0 = time.time()
        net = cr.train(cr.normalize(C), R, L, a.steps, onnx_path, batch=a.batch, lr=a.lr, threads=a.threads,
                       net_kw=kw, init=go, log=lambda m: print(f"{deck} face: {m}", flush=True))
        rep["train_s"] = round(time.time() - t0, 1)
        Cc, Rc, Lc = gen_face_views(deck, a.calib_cards, 12, "calibration", a.workers)
        Xc = cr.normalize(Cc)
        rng = np.random.default_rng(3)
        int8 = face_path(deck, out)
        rep.update(cr.calibrated_int8(net, onnx_path, int8, Xc, Rc, Lc,
                                      cr.normalize(C[rng.choice(len(C), min(len(C), 2048), replace=False)]), a.threads))
        rep["calibration_views_fp32"] = cr.evaluate_crops(onnx_path, Xc, Rc, Lc)
        rep["calibration_views_int8"] = cr.evaluate_crops(int8, Xc, Rc, Lc)
        rep["int8_bytes"] = int8.stat().st_size
        shutil.copyfile(onnx_path.with_suffix(".pt"), out / f"{deck}_face.pt")  # heads / T: for --init to go on from
    (out / f"{deck}_face.json").write_text(json.dumps(rep, indent=1) + "\n")
    print(deck, "face calibration_views_int8",
          json.dumps({x: y for x, y in rep["calibration_views_int8"].items() if x != "reliability"}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
