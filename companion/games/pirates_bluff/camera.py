"""The first-bidder rule applied to what the table camera read: the camera (vision/) returns reads, this
module decides. The rule itself (the lowest starting card bids first: rank, wild 0 lowest, then the earlier
letter) is PBCard's order in companion/decks/pirates72.py, the same order rules.py uses.

A read is anything with ``kind`` ("card" for a whole card lying apart, "index" for a fanned index), ``rank`` and
``letter`` (None when unreadable), ``code``, ``center``, ``to_json()`` and ``probs``: the reader's posterior over
the deck's cards in ``pirates72.cards`` order (None: the read card is certain, or unknown when unreadable).
numpy is imported when the function runs (the package stays light; no cv2 here).

Two doors, one rule: :func:`first_bidder` (``reads_rule``: ``scan --first-bidder``, ``vision camera``, the bench) and
:func:`left_for_tap` (``reads_hold``: the app records the cards it reads and names the lowest recorded one, so where
the rule does not name the first bidder, a card that could name a wrong one is not recorded without a tap).
"""

from __future__ import annotations

from typing import Any, Sequence

from companion.decks.pirates72 import PIRATES72, PBCard

FB_MIN = 0.99  # the first bidder is named when P(that card is the lowest) is at least this
FB_UNREAD_MIX = 0.1  # an unreadable card's posterior is mixed this much with "any card"
# An unreadable card whose rank alone is this sure (the reader's posterior summed over the letters) counts its rank as
# read: its mix goes to the letters of that rank only, and when it is the lowest card and no other card can share its
# rank, the first bidder is named with the rank alone (the letter cannot change who bids first). Chosen on the
# calibration split (600 start scenes, 3,095 cards, session 37): of the cards not read whole, 143 have their rank this
# sure and none has it wrong (at 0.98: 255, none wrong); through the scan, first bidder named right 390 -> 422 of 600,
# never wrongly (0.98: 446, never wrongly). Kept above the blurred wild once seen as an 8 at 99.5 % on the calibration
# range.
FB_RANK_MIN = 0.999
# ... and such a card is named by its rank alone only when its top single card is at least this sure too (session 96,
# rule G). Session 95 saw, on fresh calibration deals, a sideways 4H whose index looked like an N: its rank was read 2
# at 0.9997 summed over the letters, with no letter standing out (top card 0.23), and "rank 2" was named at its place.
# Of the 58 unread cards named by their rank alone on those 3,600 deals it was the only one under 0.45 (the next,
# 0.48, right). The bar is chosen on that one event. Judged on 6,000 fresh calibration deals (9,209,000-9,214,999):
# it held back no naming there (4,469 right, 1 wrong, with or without it; the wrong one an A read G at 1.000), nor on
# the held-out bench (141 of 200). A card held back by it still holds others back as its rank.
FB_RANK_TOP = 0.3
# The letter guard (session 59, rule L). A card read sure can still carry the wrong letter: faces that draw capitals as
# small letters gave 0H read 0A at 0.993-1.000 on fresh calibration deals, naming a wrong first bidder. So the card
# named claims its letter only when read at least FB_LETTER_MIN sure. When another found card may share its rank (that
# card's own posterior gives the rank at least FB_SHARE_MIN), the letter decides who bids first, and the first bidder
# is not named without it; when none may, the card is named by its rank alone (the same seat). Judged on 1,200 fresh
# calibration deals: right 926 -> 917, never wrong; the 2 wrong namings S made in 1,200 other deals are both held.
FB_LETTER_MIN = 0.999
FB_SHARE_MIN = 0.01
# The app's own letter bar (session 96, rule T2): left_for_tap decides at this bar, so a card that may be the lowest
# and is read below it is left for a tap wherever the rule at this bar does not name the first bidder (a tap costs a
# second; a wrong first bidder is a silent refereeing error). The scan's rule keeps FB_LETTER_MIN. Judged on 6,000 fresh
# calibration deals (9,221,000-9,226,999): the scan identical, the app 5,953 right / 4 wrong either way, +0.059 taps a
# deal; it holds three wrong namings seen on used deals (a 0H read 0A at 0.999x, 2C read 0C at 0.9992, 0G read 0C at
# 0.9996; models/MODEL_CARD.md, session 96).
FB_TAP_MIN = 0.9999
# The unfamiliar frame (session 97, rule U; the app only, the scan's rule unchanged). Mistakes at 0.98-1.000 come in
# frames of unfamiliar faces, where few cards read sure: of 15 deals where the scan or the app named a wrong first
# bidder on 21,600 used calibration deals, 10 had at most a third of their cards read at 0.9999. So where at most a
# third of the found starting cards (share < FB_FAMILIAR_SHARE) have a top card at FB_FAMILIAR_BAR or surer,
# left_for_tap decides on every posterior tempered, p ** (1 / FB_UNFAMILIAR_T) renormalised: the reader's odds there
# are trusted less. Chosen on those used deals (app 9 -> 4 wrong, +0.041 taps a deal). Judged on 6,000 fresh
# calibration deals (9,227,000-9,232,999): the scan identical, the app 5,953 right / 2 wrong either way, +0.041 taps a
# deal; it held neither fresh wrong (both 0/8 confusions in familiar frames; models/MODEL_CARD.md, session 97).
FB_FAMILIAR_BAR = 0.9999
FB_FAMILIAR_SHARE = 0.34
FB_UNFAMILIAR_T = 1.3
# ... and the players are told why, with what helps: a taught deck reads its own faces (99.6 % exact, issue #16)
UNFAMILIAR_HINT = "; the camera does not know these faces: teach it your deck in Settings"
# ... unless the camera reads a deck the players taught it already (the Enroll screen's choice): then it says what
# helps there (a taught deck read unsure is most often one seen in other light, or taught from poor photos)
TAUGHT_HINT = "; the camera is unsure even of the deck taught to it: more light, or teach it again in Settings"
LETTERS_PER_RANK = PIRATES72.size // 9  # the posterior's codes, rank by rank (ranks 0-8, letters A-H)


def _posterior(read: Any, np: Any, temper: float = 1.0) -> Any:
    """The read's posterior over the deck; ``temper`` > 1 flattens it (p ** (1 / temper), renormalised)."""
    n = PIRATES72.size
    if read.probs is not None:
        p = np.asarray(read.probs, dtype=float)
        if temper != 1.0:
            p = np.clip(p, 1e-30, 1.0) ** (1.0 / temper)
            p = p / p.sum()
        return p
    p = np.zeros(n)
    if read.rank is None:
        p[:] = 1 / n
    else:
        p[PIRATES72.cards.index(PBCard(read.rank, read.letter))] = 1.0
    return p


def _rank_read(read: Any, np: Any, rank_min: float, temper: float = 1.0) -> int | None:
    """The rank of an unreadable card whose posterior is at least ``rank_min`` sure of it, else None."""
    if read.probs is None:
        return None
    pr = _posterior(read, np, temper).reshape(-1, LETTERS_PER_RANK).sum(1)
    r = int(pr.argmax())
    return r if pr[r] >= rank_min else None


def first_bidder(reads: Sequence[Any], min_prob: float | None = None, mix: float | None = None,
                 rank_min: float | None = None, players: int | None = None, letter_min: float | None = None,
                 share_min: float | None = None, rank_top: float | None = None) -> dict[str, Any]:
    """Who bids first, from the camera's reads of the starting cards: the lowest card by PBCard order.

    From each card's posterior P_i over the deck (taken in PBCard order), P(card i is the lowest) =
    sum_c P_i(c) * prod_{j != i} P_j(card > c). A card that could not be read with confidence still counts when
    it is surely higher than the lowest (say a blurred 7 next to a clear wild). The answer is given only when
    that probability is >= FB_MIN and the lowest card itself is read, or its rank is (FB_RANK_MIN, with its top card
    at least ``rank_top``, FB_RANK_TOP: then ``card`` and ``letter`` are None, ``rank`` and ``position`` name it);
    otherwise ``card`` is None with the reason and there is no ``position``.

    A card that another card was also read as (``claimed``: the camera's reads keep the code a card in conflict
    claimed, see vision.detect.unique_cards) is never named: one of the two reads is wrong.

    ``letter_min`` / ``share_min`` (FB_LETTER_MIN / FB_SHARE_MIN; ``letter_min=0`` turns the guard off): the lowest
    card's letter is claimed only when it is read at least ``letter_min`` sure. Otherwise it is named by its rank alone
    when no other found card may share that rank, and not named at all when one may ("two cards may be rank r").

    ``players``: how many starting cards lie on the table (one per player), when known. A card the camera did not
    find then counts as a card of unknown code, so it holds the answer back unless the lowest card read is surely
    lower than any card; more cards found than players is not named at all (one of them is not a starting card).
    Without it, the cards found are taken to be all the starting cards (a far camera that misses one can then name
    a wrong first bidder: the app always knows its players, see companion/tablecam.py)."""
    return _decide(reads, min_prob, mix, rank_min, players, letter_min, share_min, rank_top)[0]


def _decide(reads: Sequence[Any], min_prob: float | None, mix: float | None, rank_min: float | None,
            players: int | None, letter_min: float | None, share_min: float | None,
            rank_top: float | None = None, temper: float = 1.0) -> tuple[dict[str, Any], list]:
    """first_bidder's answer, and for each found starting card (``reads``' whole cards, in order) its index in
    ``reads``, P(it is the lowest) and whether its read code is sure to ``letter_min`` (:func:`left_for_tap`).
    ``temper``: every posterior is tempered so first (:func:`_posterior`; the unfamiliar frame, left_for_tap)."""
    import numpy as np

    def post(read: Any) -> Any:  # this decision's posteriors, tempered as asked
        return _posterior(read, np, temper)

    min_prob = FB_MIN if min_prob is None else min_prob
    mix = FB_UNREAD_MIX if mix is None else mix
    rank_min = FB_RANK_MIN if rank_min is None else rank_min
    letter_min = FB_LETTER_MIN if letter_min is None else letter_min
    share_min = FB_SHARE_MIN if share_min is None else share_min
    rank_top = FB_RANK_TOP if rank_top is None else rank_top
    if players is not None and (isinstance(players, bool) or not isinstance(players, int) or players < 1):
        raise ValueError(f"players: {players!r} is not a positive number of players")
    starting = [c for c in reads if c.kind == "card"]
    if not starting:
        return {"card": None, "reason": "no cards found"}, []
    n = PIRATES72.size
    order = sorted(range(n), key=lambda i: PIRATES72.cards[i])  # the rule's order over the reader's codes
    # the reader's odds on a card it could not read are not to be trusted far: part of its weight goes to every card
    # an index whose card the camera did not find (``unseen_card``: set by the camera's corner reader, which reads
    # other decks) counts as a starting card of unknown code
    unseen = [c for c in reads if c.kind == "index" and getattr(c, "unseen_card", False)]
    found = len(starting) + len(unseen)
    said = f"found {found} starting card{'s' if found != 1 else ''} for {players} players"
    # more cards found than players: not named (one of them is not a starting card), but each found card's P(it is
    # the lowest) is still worked out (no card missing), so left_for_tap leaves the unsure ones that may be the lowest
    # for a tap as whenever the rule does not name (session 96, rule F: deal 9,211,693 found 9 cards for 8 players,
    # nothing was left for a tap, and the app recorded a 0G read 0A at 0.990 and named a wrong first bidder)
    too_many = players is not None and found > players
    missing = 0 if players is None or too_many else players - found  # starting cards the camera did not find: any card
    ranks = [c.rank if c.rank is not None else _rank_read(c, np, rank_min, temper) for c in starting]

    def hedged(c: Any, r: int | None) -> Any:
        if c.rank is not None:
            return post(c)
        spread = np.full(n, 1 / n)
        if r is not None:  # the rank is sure: the mix goes to that rank's letters
            spread = np.zeros(n)
            spread[r * LETTERS_PER_RANK:(r + 1) * LETTERS_PER_RANK] = 1 / LETTERS_PER_RANK
        return (1 - mix) * post(c) + mix * spread

    P = np.stack([hedged(c, r) for c, r in zip(starting, ranks)]
                 + [np.full(n, 1 / n) for _ in range(len(unseen) + missing)])[:, order]
    above = np.clip(1 - np.cumsum(P, axis=1), 0, 1)  # P_j(card > c)
    lowest = np.empty(len(P))
    for i in range(len(P)):
        others = np.prod(np.delete(above, i, axis=0), axis=0)
        lowest[i] = float((P[i] * others).sum())
    n_start = len(starting)
    at = [i for i, c in enumerate(reads) if c.kind == "card"]
    cs = [letter_min <= 0 or (c.rank is not None and float(
        post(c)[PIRATES72.cards.index(PBCard(c.rank, c.letter))]) >= letter_min) for c in starting]
    info = [(at[k], float(lowest[k]), cs[k]) for k in range(n_start)]
    starting = starting + unseen
    best = int(lowest.argmax())
    # every card that might be the lowest, with P(it is): the players decide on these when none is named; the cards
    # the camera did not find have no position, and count together
    cands = [{"position": [round(float(v), 1) for v in starting[i].center],
              "card": starting[i].code if i < n_start else None, "rank": ranks[i] if i < n_start else None,
              "p_lowest": round(float(lowest[i]), 4)}
             for i in np.argsort(-lowest[:found]) if lowest[i] >= 0.01]
    p_missing = float(lowest[found:].sum())
    if p_missing >= 0.01:
        cands.append({"position": None, "card": None, "rank": None, "p_lowest": round(p_missing, 4), "not_found": missing})
    if too_many:
        return {"card": None, "reason": f"{said}: lay each starting card face up, apart, and nothing else",
                "candidates": cands}, info
    if best >= n_start or ranks[best] is None or lowest[best] < min_prob:
        why = "a starting card that may be the lowest is unreadable"
        if missing and p_missing >= 0.01:
            why = f"{said}: a card the camera did not find may be the lowest"
        return {"card": None, "reason": why,
                "probability": round(float(lowest[best]), 4), "candidates": cands}, info
    c = starting[best]
    if c.rank is not None and c.code in {getattr(o, "claimed", None) for o in starting[:n_start]}:
        # codes are unique: another card was read as this one too, so one of the two is read wrong (session 58: a 0H
        # read 0A at 1.000 beside the true 0A, whose reading it took, named the first bidder at the 0H's place)
        return {"card": None, "reason": f"two cards were read as {c.code}",
                "probability": round(float(lowest[best]), 4), "candidates": cands}, info
    r = ranks[best]
    if c.rank is None and float(np.max(post(c))) < rank_top:  # the rank-alone guard (FB_RANK_TOP)
        return {"card": None, "reason": f"a card may be rank {r}, but no letter of it stands out",
                "probability": round(float(lowest[best]), 4), "candidates": cands}, info
    if not cs[best]:  # the letter guard (FB_LETTER_MIN): is the letter needed to say who bids first?
        shared = any(float(post(o).reshape(-1, LETTERS_PER_RANK).sum(1)[r]) >= share_min
                     for k, o in enumerate(starting[:n_start]) if k != best)
        if shared:
            return {"card": None, "reason": f"two cards may be rank {r} and a letter is not sure",
                    "probability": round(float(lowest[best]), 4), "candidates": cands}, info
        if c.rank is not None:  # named by its rank alone, as an unread card whose rank is sure is
            return {"card": None, "rank": r, "letter": None, "position": [round(float(v), 1) for v in c.center],
                    "corners": c.to_json()["corners"], "probability": round(float(lowest[best]), 4), "candidates": cands}, info
    return {"card": c.code, "rank": ranks[best], "letter": c.letter, "position": [round(float(v), 1) for v in c.center],
            "corners": c.to_json()["corners"], "probability": round(float(lowest[best]), 4), "candidates": cands}, info


def unfamiliar(reads: Sequence[Any]) -> bool:
    """Whether the found starting cards (``reads``' whole cards) look like unfamiliar faces: fewer than
    FB_FAMILIAR_SHARE of them (at most a third) have a top card at FB_FAMILIAR_BAR or surer (a read card without a
    posterior counts as sure, an unread one as unsure). No whole card: not unfamiliar (nothing to decide)."""
    import numpy as np

    starting = [c for c in reads if c.kind == "card"]
    if not starting:
        return False
    sure = sum(float(_posterior(c, np).max()) >= FB_FAMILIAR_BAR for c in starting)
    return sure / len(starting) < FB_FAMILIAR_SHARE


def left_for_tap(reads: Sequence[Any], players: int | None = None, taught: bool = False) -> dict[int, str]:
    """The starting cards the app should leave for a tap rather than record as read (indices into ``reads`` -> why).

    The app records the cards it reads and the rules name the lowest recorded card (after the players tapped the
    unread ones), so a card read at the card bar but wrong names a wrong first bidder where this module's rule
    abstained. So, when :func:`first_bidder` does not name the first bidder, every found card that may be the lowest
    (P >= 0.01) and whose code is read below FB_LETTER_MIN is left for a tap too. Session 60 (rule T), 3,600
    calibration deals with the players' taps simulated by the truth: the app named a wrong first bidder in 5 deals
    (an H read A beside an unread card of its rank, a 6 read 0 at 0.983, ...), in 2 with this rule, for 0.05 more
    taps per deal; on 1,200 fresh deals see models/MODEL_CARD.md. When the rule names the first bidder, or a card is
    read at FB_LETTER_MIN or surer, nothing more is asked. The same holds where more cards are found than players
    (session 96, rule F: before, nothing was left for a tap there). Since session 96 (rule T2) the app decides at its
    own, stricter letter bar FB_TAP_MIN (0.9999) in place of FB_LETTER_MIN: "the rule" and "read sure" above are
    at that bar. Since session 97 (rule U) a frame of unfamiliar faces (:func:`unfamiliar`) is decided on tempered
    posteriors (FB_UNFAMILIAR_T): the reader's odds there are trusted less, and the reason given says so and what
    helps (UNFAMILIAR_HINT: teach the camera the deck; TAUGHT_HINT where ``taught``: the camera reads a deck the
    players taught it, ScanRequest.taught)."""
    odd = unfamiliar(reads)
    fb, info = _decide(reads, None, None, None, players, FB_TAP_MIN, None, temper=FB_UNFAMILIAR_T if odd else 1.0)
    if fb.get("position") is not None:
        return {}
    why = "it may bid first and is not read sure" + ((TAUGHT_HINT if taught else UNFAMILIAR_HINT) if odd else "")
    return {i: why for i, p, sure in info
            if reads[i].rank is not None and not sure and p >= 0.01}
