"""What a game asks of the table camera, and the camera's reads mapped to the seats (no Kivy, no cv2, no numpy).

One camera interface for every game: the game's screen for the moment says what it wants read in a
:class:`ScanRequest` (its ``scan_request()``), the camera service (companion/ui/camservice.py) reads the table
until the reading is still and agreed, maps it with :func:`map_reading`, and the screen applies the
:class:`SeatReading` through the game's own inputs (its ``apply_scan``), the same doors as a tap. Touch stays
the fallback: a card the camera could not read with confidence is never guessed, its seat is left for a tap.

Seats: the tablet stands at the table's edge by seat 1 with the camera looking over the table, so seat 1 is at
6 o'clock in the frame and the other seats follow clockwise as seen from above (the order of play).

- ``layout="apart"``: cards lying apart, one per player (Pirate's Bluff starting cards): seat 1's card is the
  first clockwise from 6 o'clock around the cards' centre, the others follow clockwise.
- ``layout="seats"``: each card lies in front of its player (a Whist trick, the two cards of a fight): the
  seats stand evenly around the table and each card goes to the seat nearest to it (the assignment with the
  least angular distance in all; the table's centre is the cards' centre when every seat has a card, the
  frame's centre otherwise). A reading with a card per seat but two cards nearer one seat than any other still
  gets one card per seat; a reading with more cards than seats is refused.
- ``layout="new"``: the cards on the table the game has not recorded yet (``known``), left to right (a
  Powderkeg card turned up). With ``row`` (cards already recorded that lie in one row, in order: the Powderkeg
  hand turned up so far), the new cards are the row's next cards: ordered along the row, going on away from the
  recorded ones (the row may lie in any direction in the frame). Several new cards with no recorded card of the
  row in view have no order to read, and are refused (never guessed).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

LAYOUTS = ("apart", "seats", "new")


@dataclass(frozen=True)
class ScanRequest:
    """What the game's screen wants read now.

    ``deck``: the registry's deck id (its camera model reads); ``seats``: the players in seat order around the
    table (seat 1 by the tablet); ``layout``: see the module doc; ``count``: how many cards (``seats``/``apart``:
    one per seat unless given); ``known``: cards already recorded (``new``); ``title``: what the Scan screen says
    is being read; ``demo``: the cards the simulated table camera lays out (per seat, and in the middle) when no
    camera is there (``--demo``); ``one_deck``: one deck on the table, so the same card read twice is a misread
    (both left for a tap); ``hold``: the game's rule of cards read but to be left for a tap,
    ``hold(reads, players, taught=...) -> {index into reads: why}`` (Pirate's Bluff's starting cards:
    ``companion.games.pirates_bluff.camera.left_for_tap``, a card that could name a wrong first bidder); ``taught``:
    the camera reads a deck the players taught it (the Enroll screen's choice; the camera service sets it), so a
    game's hold does not tell them to teach it."""

    deck: str
    seats: tuple[str, ...]
    layout: str = "apart"
    count: int | None = None
    known: tuple[str, ...] = ()
    title: str = "starting cards"
    demo: tuple[tuple[str, ...], ...] = ()
    demo_middle: tuple[str, ...] = ()
    one_deck: bool = True  # False: two decks at the table (the same card twice is no misread)
    row: tuple[str, ...] = ()  # ``new``: recorded cards lying in a row, in order; the new cards go on from them
    hold: Callable[..., dict] | None = None  # the game's cards to leave for a tap (see above)
    taught: bool = False  # the camera reads a taught deck (see above)

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout: {self.layout!r} is not one of {', '.join(LAYOUTS)}")

    @property
    def wanted(self) -> int | None:
        """How many whole cards make a complete reading (None: any number, ``new``)."""
        if self.layout == "new":
            return self.count
        return len(self.seats) if self.count is None else self.count


@dataclass
class SeatReading:
    """A complete reading mapped for the game. ``cards``: player -> card text (the deck's notation) or None
    (unreadable: enter by touch); empty when the reading does not fit the request (``note`` says why).
    ``new``: the cards not known yet, left to right (``layout="new"``). ``placed``: read index -> seat number (for
    the preview). ``held``: the reads (indices into the reads mapped) that were read but are left for a tap by the
    request's ``hold``; ``asked``: their players (in ``unreadable`` too: the card is entered by a tap)."""

    cards: dict = field(default_factory=dict)
    found: int = 0
    unreadable: list = field(default_factory=list)
    note: str = ""
    frame: object = None  # the annotated BGR frame of the reading
    new: list = field(default_factory=list)
    placed: dict = field(default_factory=dict)
    held: list = field(default_factory=list)
    asked: list = field(default_factory=list)


def read_text(read: Any) -> str | None:
    """A read's card in its deck's notation (None: unreadable)."""
    return read.to_json().get("card")


def seat_order(centers: Sequence[Sequence[float]]) -> list[int]:
    """Indices of the cards (their centres, image x right / y down) in seat order: the first clockwise from
    6 o'clock around the centroid, then clockwise (increasing image angle, y down)."""
    pts = [(float(x), float(y)) for x, y in centers]
    if not pts:
        return []
    cx = sum(p[0] for p in pts) / len(pts)
    cy = sum(p[1] for p in pts) / len(pts)

    def key(i: int) -> float:
        x, y = pts[i]
        return (math.atan2(y - cy, x - cx) - math.pi / 2) % (2 * math.pi)

    return sorted(range(len(pts)), key=key)


def nearest_seats(centers: Sequence[Sequence[float]], n_seats: int,
                  frame_size: tuple[float, float] | None = None) -> list[int]:
    """The seat (0-based) of each card lying in front of its player, ``n_seats`` evenly around the table (seat 0
    at 6 o'clock, clockwise): the one-card-per-seat assignment with the least angular distance in all. ValueError
    with more cards than seats."""
    pts = [(float(x), float(y)) for x, y in centers]
    m = len(pts)
    if m > n_seats:
        raise ValueError(f"{m} cards for {n_seats} seats")
    if m == 0:
        return []
    if m == n_seats or frame_size is None:
        cx = sum(p[0] for p in pts) / m
        cy = sum(p[1] for p in pts) / m
    else:
        cx, cy = frame_size[0] / 2, frame_size[1] / 2
    ang = [math.atan2(y - cy, x - cx) for x, y in pts]
    seat_ang = [math.pi / 2 + 2 * math.pi * k / n_seats for k in range(n_seats)]

    def dist(a: float, b: float) -> float:
        d = abs(a - b) % (2 * math.pi)
        return min(d, 2 * math.pi - d)

    best, best_cost = None, math.inf
    for perm in itertools.permutations(range(n_seats), m):  # at most 8!/(8-m)! assignments
        cost = sum(dist(ang[i], seat_ang[s]) ** 2 for i, s in enumerate(perm))
        if cost < best_cost - 1e-12:
            best, best_cost = perm, cost
    return list(best)


def row_order(row_centres: Sequence[Sequence[float]], new: list, new_centres: Sequence[Sequence[float]]
              ) -> tuple[list, str]:
    """The new cards in the order they go on the row (``row_centres``: the recorded cards of the row in view, in
    their order), or ([], why) when that order cannot be told: no recorded card of the row in view, the cards not
    in one row, or the recorded cards not lying in their order along it."""
    if not row_centres:
        return [], (f"{len(new)} new cards and none of the cards turned up before in view: leave the turned-up "
                    "cards in their row beside them and read again, or tap the cards in order.")
    pts = [(float(x), float(y)) for x, y in list(row_centres) + list(new_centres)]
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    syy = sum((y - my) ** 2 for _, y in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    a = 0.5 * math.atan2(2 * sxy, sxx - syy)  # the row's axis: the principal direction of the centres
    ux, uy = math.cos(a), math.sin(a)
    along = [(x - mx) * ux + (y - my) * uy for x, y in pts]
    across = [abs(-(x - mx) * uy + (y - my) * ux) for x, y in pts]
    ts = sorted(along)
    step = min(b - a_ for a_, b in zip(ts, ts[1:]))  # the closest two cards along the row
    if step <= 0 or max(across) > 0.35 * step:  # a card off the line (a hand laid out by hand stays well within)
        return [], "The cards do not lie in one row: lay the hand out in a row and read again, or tap the cards."
    k = len(row_centres)
    t_row, t_new = along[:k], along[k:]
    sign = 1.0 if sum(t_new) / len(t_new) >= sum(t_row) / k else -1.0  # the new cards go on away from the row
    t_row, t_new = [sign * t for t in t_row], [sign * t for t in t_new]
    if any(b <= a_ for a_, b in zip(t_row, t_row[1:])) or (t_row and min(t_new) <= max(t_row)):
        return [], ("The turned-up cards and the new ones are not in the hand's order along the row: read again, "
                    "or tap the cards in order.")
    return [c for _, c in sorted(zip(t_new, new), key=lambda z: z[0])], ""


FAR_HINT = "The cards look small in the picture: bring the camera closer to the table."


def map_reading(reads: Sequence[Any], request: ScanRequest, frame_size: tuple[float, float] | None = None,
                far: bool = False) -> SeatReading:
    """The camera's agreed reads (whole cards, ``kind == "card"``; lone corner indices are not placed) mapped
    for ``request``. The same card twice on one deck is a misread (read twice, or one read and another left unread
    because it was read as that card too): both left unread, never guessed.
    ``frame_size`` (width, height): the table's centre when not every seat has a card (``layout="seats"``).
    ``far``: the camera saw the cards small (``vision.detect.Detector.looked_far``: a camera further from the table
    than the tablet over it misses cards and reads fewer): a reading that is not complete says so (FAR_HINT)."""
    res = _map_reading(reads, request, frame_size)
    if far and (res.unreadable or not (res.cards or res.new)):
        res.note = f"{res.note} {FAR_HINT}"
    return res


def _map_reading(reads: Sequence[Any], request: ScanRequest, frame_size: tuple[float, float] | None) -> SeatReading:
    whole = [i for i, c in enumerate(reads) if c.kind == "card"]
    cards = [reads[i] for i in whole]
    texts = [read_text(c) for c in cards]
    twice: list = []
    if request.one_deck:
        # the camera gives a code two cards were read as to the surer read and leaves the other unread with the code
        # it claimed (``claimed``, vision.detect.unique_cards): that too is the same card twice
        claimed = {getattr(c, "claimed", None) for c in cards} - {None}
        twice = sorted({t for t in texts if t is not None and (texts.count(t) > 1 or t in claimed)})
        texts = [None if t in twice else t for t in texts]
    hold = {}  # the game's rule: cards read but left for a tap (after the misreads above, which it does not undo)
    if request.hold is not None and request.layout != "new" and len(cards) == request.wanted:
        said = request.hold(reads, len(request.seats), taught=request.taught)
        hold = {whole[k]: said[whole[k]] for k, t in enumerate(texts) if t is not None and whole[k] in said}
        texts = [None if whole[k] in hold else t for k, t in enumerate(texts)]
    players = list(request.seats)
    if request.layout == "new":
        known = set(request.known) | set(request.row)
        order = sorted(range(len(cards)), key=lambda i: float(cards[i].center[0]))
        fresh = [i for i in order if texts[i] not in known]
        unread = [i for i in fresh if texts[i] is None]
        new = [texts[i] for i in fresh if texts[i] is not None]
        if unread:
            return SeatReading({}, len(cards), [], f"{len(unread)} card{'s' if len(unread) > 1 else ''} on the "
                               "table could not be read: straighten it and read again, or tap it.")
        if request.count is not None and len(new) != request.count:
            return SeatReading({}, len(cards), [], f"Found {len(new)} new card{'s' if len(new) != 1 else ''}, "
                               f"expected {request.count}: read again, or tap the card.")
        if request.row and len(new) > 1:
            ranked = [(texts[i], request.row.index(texts[i])) for i in range(len(cards)) if texts[i] in request.row]
            at = {t: cards[i].center for i, t in enumerate(texts) if t is not None}
            new, why = row_order([at[t] for t, _ in sorted(ranked, key=lambda r: r[1])], new, [at[t] for t in new])
            if why:
                return SeatReading({}, len(cards), [], why)
        return SeatReading({}, len(cards), [], f"Read {', '.join(new) if new else 'no new card'}.", new=new)
    want = request.wanted
    if len(cards) != want:
        what = "lay each starting card face up, apart," if request.layout == "apart" else \
            "lay each card face up in front of its player"
        return SeatReading({}, len(cards), [], f"Found {len(cards)} card{'s' if len(cards) != 1 else ''} for {want} "
                           f"{'players' if want == len(players) else 'cards'}: {what} and scan again (or enter "
                           "them by touch).")
    if request.layout == "apart":
        order = seat_order([c.center for c in cards])
        placed = {i: k for k, i in enumerate(order)}
    else:
        seats = nearest_seats([c.center for c in cards], len(players), frame_size)
        placed = dict(enumerate(seats))
    out, bad, asked = {}, [], []
    for i, k in sorted(placed.items(), key=lambda kv: kv[1]):
        out[players[k]] = texts[i]
        if texts[i] is None:
            bad.append(players[k])
            if whole[i] in hold:
                asked.append(players[k])
    note = f"Read {len(out) - len(bad)} of {len(out)} {request.title}."
    unread = [p for p in bad if p not in asked]
    if unread:
        note += f" Unreadable ({', '.join(unread)}): enter by touch."
    if asked:
        why = sorted(set(hold.values()))
        note += f" Not sure enough ({', '.join(asked)}: {'; '.join(why)}): enter by touch."
    if twice:
        note += f" Two cards looked like {' and like '.join(twice)}: check them."
    return SeatReading(out, len(cards), bad, note, placed={i: k + 1 for i, k in placed.items()},
                       held=sorted(hold), asked=asked)
