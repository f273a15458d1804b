"""CLI glue for the camera: `scan`, `print-deck`, `vision bench|train|fixtures`. Heavy imports inside functions."""

from __future__ import annotations

import argparse
import json
import sys

from companion.errors import PirateTableError
from companion.inputs import cli_int, cli_text



def _camera_decks() -> list[str]:
    """Names (ids and aliases) of the decks that have a camera model (companion.decks)."""
    from companion.decks import decks

    return sorted(n for d in decks() if d.camera_model for n in (d.id, *d.aliases))


def _printable_decks() -> list[str]:
    """Names (ids and aliases) of the decks that have a face renderer (companion.decks)."""
    from companion.decks import decks

    return sorted(n for d in decks() if d.faces for n in (d.id, *d.aliases))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scan", help="read the cards in a photo (JSON with --json)",
                       description="Find every face-up card in IMAGE and read its rank and letter (Pirate's Bluff) or "
                       "rank and suit (island54, standard52; corner indices of overlapping cards too). A card that "
                       "cannot be read with confidence is listed with card null, never guessed (a suited card's rank "
                       "alone is given where that is sure).")
    p.add_argument("image", type=cli_text(4096))
    p.add_argument("--deck", type=cli_text(64), default="pirates-bluff",
                   help="a deck with a camera model (" + ", ".join(_camera_decks()) + "), or a deck enrolled with "
                   "`pirate-table deck enroll` (a deck with no camera model yet is refused)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--first-bidder", action="store_true", help="add the lowest starting card and its position")
    p.add_argument("--players", type=cli_int(1, 99), default=None,
                   help="with --first-bidder: how many players lay a starting card (a card the camera does not find "
                   "then holds the answer back, as in the app)")
    p.add_argument("--backend", choices=["ort", "ort-fp32", "cv2", "ultralytics"], default="ort",
                   help="ort: onnxruntime, int8 models (the runtime path); ort-fp32 / cv2: the float detector "
                   "through onnxruntime / OpenCV DNN; ultralytics: the reference")
    p.add_argument("--models", type=cli_text(4096), default=None, help="folder with the models (card_det.int8.onnx + index_reader.int8.onnx; the float backends derive card_det.onnx from card_det.pt or the int8 file)")
    p.add_argument("--reader", choices=["index", "corner", "both"], default=None,
                   help="how whole cards are read: the fixed index boxes (default), the corner regions (other decks: "
                   "see docs/camera.md), or both")
    p.set_defaults(func=run_scan)

    p = sub.add_parser("deck", help="teach the camera your deck: enroll, list, remove",
                       description="Enrolled decks are read by `scan --deck NAME` with the deck's own profile.")
    ds = p.add_subparsers(dest="deck_cmd", metavar="SUB")
    e = ds.add_parser("enroll", help="enroll a deck from a photo per rank (pirates-bluff: 0.jpg ... 8.jpg, the eight "
                      "cards of that rank lettered A to H from left to right) or per suit (standard52: S.jpg H.jpg D.jpg "
                      "C.jpg, A to 7 above and 8 to K below; island54: anchors.jpg ... skulls.jpg, A to K in one row); "
                      "cards upright, apart",
                      description="The photos' layout is in docs/camera.md (Teach the camera your deck).")
    e.add_argument("name", type=cli_text(64))
    e.add_argument("--base", required=True, type=cli_text(64),
                   help="the deck this one stands for: pirates-bluff, standard52 or island54")
    e.add_argument("--rows", required=True, type=cli_text(4096), help="folder with the photos")
    e.add_argument("--again", action="store_true",
                   help="teach an enrolled deck again from new photos (its profile is replaced once the new one is "
                   "built; on any error it stays as it was)")
    e.add_argument("--models", type=cli_text(4096), default=None, help=argparse.SUPPRESS)
    e.set_defaults(func=run_deck_enroll)
    ls_ = ds.add_parser("list", help="enrolled decks")
    ls_.add_argument("--json", action="store_true")
    ls_.set_defaults(func=run_deck_list)
    rm = ds.add_parser("remove", help="forget an enrolled deck")
    rm.add_argument("name", type=cli_text(64))
    rm.set_defaults(func=run_deck_remove)
    p.set_defaults(func=lambda a: (p.print_help(), 0)[1])

    p = sub.add_parser("print-deck", help="write a printable deck (PDF, A4 or Letter, cut marks)",
                       description="Write DECK's faces to a PDF: 300 dpi, cards edge to edge with cut marks. "
                       "Card sizes (mm): poker 63x88, bridge 57x89, uno 56x87, mini 44x63.")
    p.add_argument("where", nargs="*", metavar="DECK [OUTPUT]", type=cli_text(4096),
                   help="the deck (" + ", ".join(_printable_decks()) + ") and, unless -o is given, the PDF to write")
    p.add_argument("--deck", default=None, type=cli_text(64), help="the deck (instead of the first positional)")
    p.add_argument("-o", "--output", default=None, type=cli_text(4096), help="the PDF to write")
    p.add_argument("--card-size", "--size", dest="card_size", default="poker", type=cli_text(16),
                   help="poker, bridge, uno or mini")
    p.add_argument("--paper", default="a4", type=cli_text(16), help="a4 or letter")
    p.set_defaults(func=run_print_deck)

    p = sub.add_parser("vision", help="camera models: benchmark, training, live camera")
    vs = p.add_subparsers(dest="vision_cmd", metavar="SUB")
    b = vs.add_parser("bench", help="accuracy and speed on held-out synthetic scenes")
    b.add_argument("--start-scenes", type=cli_int(0, 100_000), default=200)
    b.add_argument("--fan-scenes", type=cli_int(0, 100_000), default=100)
    b.add_argument("--seed", type=cli_int(0, 2**31 - 1), default=9_000_000)
    b.add_argument("--no-reference", action="store_true", help="skip the ultralytics reference timing")
    b.add_argument("--font-start-scenes", type=cli_int(0, 100_000), default=200, help="per font section (0: none)")
    b.add_argument("--font-fan-scenes", type=cli_int(0, 100_000), default=100)
    b.add_argument("--sections", type=cli_text(200), default="held_out_fonts,in_distribution",
                   help="font sections: held_out_fonts, in_distribution, calibration")
    b.add_argument("--no-float", action="store_true", help="skip the float detector's accuracy run")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=run_bench)
    t = vs.add_parser("train", help="generate data, train and export both models (python -m vision.train)")
    t.add_argument("--smoke", action="store_true")
    t.add_argument("--out", default=None)
    t.set_defaults(func=run_train)
    c = vs.add_parser("camera", help="live: read the table from an OpenCV camera when it is still")
    c.add_argument("--device", type=cli_text(4096), default="0")
    c.add_argument("--frames", type=cli_int(0, 10**9), default=0, help="stop after this many readings (0: run until Ctrl-C)")
    c.add_argument("--players", type=cli_int(1, 99), default=None,
                   help="how many players lay a starting card (a card the camera does not find then holds the first "
                   "bidder back, as in the app)")
    c.set_defaults(func=run_camera)
    p.set_defaults(func=lambda a: (p.print_help(), 0)[1])


def _scanner(args, profile=None):
    from pathlib import Path

    from vision.detect import MODELS, Scanner

    models = Path(args.models) if getattr(args, "models", None) else MODELS
    backend = getattr(args, "backend", "ort")
    # the float detector card_det.onnx is derived from card_det.pt, or from the int8 file, when needed
    # (vision.detect.float_detector)
    need = ("card_det.int8.onnx", "index_reader.int8.onnx") if backend == "ort" else ("card_det.int8.onnx", "index_reader.onnx")
    for f in need:
        if not (models / f).exists() and not (f == "card_det.int8.onnx" and backend != "ort" and any(
                (models / g).exists() for g in ("card_det.onnx", "card_det.pt"))):
            raise PirateTableError(f"model file missing: {models / f} (train with `pirate-table vision train`)")
    if profile is not None and not (models / "corner_reader.onnx").exists():
        raise PirateTableError(f"model file missing: {models / 'corner_reader.onnx'} (an enrolled deck needs the corner reader)")
    return loaded(models, lambda: Scanner(backend, models, reader=getattr(args, "reader", None), profile=profile))


def loaded(models, make):
    """``make()``: a scanner built from the model files in ``models``. A file there that no runtime can load (a
    truncated copy, another file under a model's name) is refused in one line naming it, not a traceback."""
    import re

    try:
        return make()
    except PirateTableError:
        raise
    except Exception as e:  # onnxruntime's own errors (InvalidProtobuf, Fail, ...), a detector not recoverable
        lines = [ln for ln in str(e).splitlines() if ln.strip()] or [type(e).__name__]
        said = re.sub(r"^\[ONNXRuntimeError\] : \d+ : [A-Z_]+ : ", "", lines[0].strip())[:300]
        raise PirateTableError(f"model file in {models} cannot be loaded: {said}") from None


def camera_deck(name: str):
    """The deck value called ``name`` that a camera model reads, or PirateTableError("--deck: ...")."""
    from companion.decks import get_deck
    from companion.errors import CardError

    try:
        deck = get_deck(name)
    except CardError as e:
        raise PirateTableError(f"--deck: {e}") from None
    if not deck.camera_model:
        raise PirateTableError(f"--deck {name}: no camera model for this deck yet ({deck.title}; the camera reads "
                               f"{', '.join(_camera_decks())})")
    return deck


def _suited_scan(args, deck, img, t0: float, profile=None) -> dict:
    """``scan`` for a suited deck (standard52, island54): its own reader (vision/suited_reader.py)."""
    import time
    from pathlib import Path

    from vision.detect import MODELS
    from vision.suited_reader import SUITED_DETECTOR, SuitedScanner

    if args.backend != "ort":
        raise PirateTableError(f"--backend {args.backend}: the {deck.id} reader runs on onnxruntime in int8 only (ort)")
    if args.reader is not None:
        raise PirateTableError(f"--reader {args.reader}: the {deck.id} reader reads whole corner regions; no --reader choice")
    models = Path(args.models) if args.models else MODELS
    reader = models / f"{deck.camera_model}_reader.int8.onnx"
    if not reader.exists():
        raise PirateTableError(f"model file missing: {reader} (train with `python -m vision.suited_reader --deck "
                               f"{deck.id}`)")
    det = f"{SUITED_DETECTOR}.int8.onnx"
    if not (models / det).exists() and not (MODELS / det).exists():
        raise PirateTableError(f"model file missing: {MODELS / det}")
    scanner = loaded(models, lambda: SuitedScanner(deck.camera_model, models, profile=profile))
    t1 = time.perf_counter()
    reads = scanner.scan(img)
    t2 = time.perf_counter()
    return {"image": args.image, "width": img.shape[1], "height": img.shape[0], "deck": args.deck,
            "cards": [r.to_json() for r in reads],
            "timing_ms": {"load": round(1000 * (t1 - t0), 1), "scan": round(1000 * (t2 - t1), 1)}}


def run_scan(args) -> int:
    import time

    from vision.imageio import load_image

    from companion.decks import get_deck
    from companion.errors import CardError

    from companion.games import registry

    t0 = time.perf_counter()
    registry.load_all()  # every game's deck is registered (Bluff Pirate's accessory deck comes with its game)
    profile = None
    base = args.deck
    deck = None
    try:
        get_deck(args.deck)
    except CardError:  # not a deck of the registry: a deck enrolled with `deck enroll`
        from vision.enroll import load

        from pathlib import Path

        profile = load(args.deck, Path(args.models) if getattr(args, "models", None) else None)
        base = profile.base
        if base != "pirates-bluff":  # a taught suited deck: its reader with the deck's heads
            deck = get_deck(base)
    else:
        deck = camera_deck(args.deck)  # a registered deck without a camera model is refused in one line
    from companion.games import registry

    players = getattr(args, "players", None)
    if players is not None:
        if not args.first_bidder:
            raise PirateTableError("--players: only with --first-bidder (it is how many starting cards to expect)")
        _check_players(players, base)
    if deck is not None and deck.camera_model != "pirates72":
        first_bidder = registry.reads_rule_for_deck(base) if args.first_bidder else None
        img = load_image(args.image)
        out = _suited_scan(args, deck, img, t0, profile)
        if args.first_bidder:
            out["first_bidder"] = first_bidder(out["cards"], players=players)
    else:
        img = load_image(args.image)  # size checked from the header before decoding; one-line errors
        first_bidder = registry.reads_rule_for_deck(base)  # the camera reads; the game decides
        t1 = time.perf_counter()
        cards, _ = _scanner(args, profile).scan(img)
        out = {"image": args.image, "width": img.shape[1], "height": img.shape[0], "deck": args.deck,
               "cards": [c.to_json() for c in cards]}
        if args.first_bidder:
            out["first_bidder"] = first_bidder(cards, players=players)
        out["timing_ms"] = {"load": round(1000 * (t1 - t0), 1), "scan": round(1000 * (time.perf_counter() - t1), 1)}
    out["timing_ms"]["total"] = round(1000 * (time.perf_counter() - t0), 1)
    if args.json:
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for c in out["cards"]:
            name = c["card"] or "unreadable"
            print(f"{c['kind']:5s} {name:10s} conf {c['confidence']:.3f} corners {c['corners']}")
        if args.first_bidder:
            print(f"first bidder: {out['first_bidder']}")
    return 0


def run_deck_enroll(args) -> int:
    from pathlib import Path

    from vision.enroll import enroll

    meta = enroll(args.name, args.base, args.rows, Path(args.models) if args.models else None, again=args.again)
    other = "letter" if meta["base"] == "pirates-bluff" else "suit"
    print(f"{'taught again' if args.again else 'enrolled'} deck {meta['name']} ({meta['base']}, {meta['cards']} cards; check on jittered crops: rank "
          f"{100 * meta['check_rank_accuracy']:.1f} %, {other} {100 * meta['check_letter_accuracy']:.1f} %; "
          f"{meta['cpu_s']} s CPU)")
    return 0


def run_deck_list(args) -> int:
    from vision.enroll import list_decks

    decks = list_decks()
    if args.json:
        json.dump(decks, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for d in decks:
            stale = "" if d["current"] else ("\tteach again: taught to an earlier camera reader (`pirate-table deck "
                                             f"enroll {d['name']} --base {d['base']} --rows DIR --again`)")
            print(f"{d['name']}\t{d['base']}\tenrolled {d['enrolled']}{stale}")
    return 0


def run_deck_remove(args) -> int:
    from vision.enroll import remove

    remove(args.name)
    print(f"removed deck {args.name}")
    return 0


def run_print_deck(args) -> int:
    from vision.decks.printing import print_deck

    where = list(args.where)
    deck, output = args.deck, args.output
    if where and deck is None:
        if where[0].lower().endswith(".pdf") and len(where) == 1 and output is None:
            raise PirateTableError(f"print-deck: name the deck before the file: print-deck DECK {where[0]}")
        deck = where.pop(0)
    if where and output is None:
        output = where.pop(0)
    if where:
        raise PirateTableError(f"print-deck: unexpected argument {where[0]!r} (usage: print-deck DECK -o OUT.pdf)")
    r = print_deck(deck if deck is not None else "pirates72", output, args.paper, args.card_size)
    w, h = r["card_mm"]
    print(f"wrote {r['output']} ({r['pages']} pages, {r['cards']} cards, {r['card_size']} {w:g}x{h:g} mm, "
          f"{r['per_page']} per {r['paper']} page, cut marks)")
    return 0


def run_bench(args) -> int:
    from vision.bench import bench

    say = (lambda m: print(m, file=sys.stderr)) if args.json else print  # --json: stdout is JSON only
    secs = tuple(x for x in args.sections.split(",") if x)
    from vision.bench import sections

    for x in secs:
        if x not in sections():
            raise PirateTableError(f"--sections: unknown section {x!r} (known: {', '.join(sections())})")
    res = bench(args.start_scenes, args.fan_scenes, args.seed, reference=not args.no_reference, out=say,
                font_start=args.font_start_scenes, font_fan=args.font_fan_scenes, font_sections=secs,
                float_detector=not args.no_float)
    if args.json:
        json.dump(res, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0


def run_train(args) -> int:
    from vision.train import main

    argv = (["--smoke"] if args.smoke else []) + (["--out", args.out] if args.out else [])
    return main(argv)


def _check_players(players: int, deck: str) -> None:
    """``--players``: within the player range of the game that decides from reads of ``deck``."""
    from companion.games import registry

    game = registry.reads_game_for_deck(deck)
    if not game.min_players <= players <= game.max_players:
        raise PirateTableError(f"--players {players}: {game.title} is played by {game.min_players} to "
                               f"{game.max_players} players")


def run_camera(args) -> int:
    from vision.camera import run_live

    if args.players is not None:
        _check_players(args.players, "pirates72")
    dev = int(args.device) if args.device.isascii() and args.device.isdigit() else args.device
    return run_live(dev, args.frames, args.players)
