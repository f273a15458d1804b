"""The first-bidder rule applied to what the table camera read: the camera (vision/) returns reads, this
module decides. The rule itself (the lowest starting card bids first: rank, wild 0 lowest, then the earlier
letter) is PBCard's order in companion/decks/pirates72.py, the same order rules.py uses.

A read is anything with ``kind`` ("card" for a whole card lying apart, "index" for a fanned index), ``rank`` and
``letter`` (None when unreadable), ``code``, ``center``, ``to_json()`` and ``probs``: the reader's posterior over
the deck's cards in ``pirates72.cards`` order (None: the read card is certain, or unknown when unreadable).
numpy is imported when the function runs (the package stays light; no cv2 here).
"""

from __future__ import annotations

from typing import Any, Sequence

from companion.decks.pirates72 import PIRATES72, PBCard

FB_MIN = 0.99  # the first bidder is named when P(that card is the lowest) is at least this
FB_UNREAD_MIX = 0.1  # an unreadable card's posterior is mixed this much with "any card"


def _posterior(read: Any, np: Any) -> Any:
    n = PIRATES72.size
    if read.probs is not None:
        return np.asarray(read.probs, dtype=float)
    p = np.zeros(n)
    if read.rank is None:
        p[:] = 1 / n
    else:
        p[PIRATES72.cards.index(PBCard(read.rank, read.letter))] = 1.0
    return p


def first_bidder(reads: Sequence[Any], min_prob: float | None = None, mix: float | None = None) -> dict[str, Any]:
    """Who bids first, from the camera's reads of the starting cards: the lowest card by PBCard order.

    From each card's posterior P_i over the deck (taken in PBCard order), P(card i is the lowest) =
    sum_c P_i(c) * prod_{j != i} P_j(card > c). A card that could not be read with confidence still counts when
    it is surely higher than the lowest (say a blurred 7 next to a clear wild). The answer is given only when
    that probability is >= FB_MIN and the lowest card itself is read; otherwise ``card`` is None with the
    reason."""
    import numpy as np

    min_prob = FB_MIN if min_prob is None else min_prob
    mix = FB_UNREAD_MIX if mix is None else mix
    starting = [c for c in reads if c.kind == "card"]
    if not starting:
        return {"card": None, "reason": "no cards found"}
    n = PIRATES72.size
    order = sorted(range(n), key=lambda i: PIRATES72.cards[i])  # the rule's order over the reader's codes
    # the reader's odds on a card it could not read are not to be trusted far: part of its weight goes to every card
    # an index whose card the camera did not find (``unseen_card``: set by the camera's corner reader, which reads
    # other decks) counts as a starting card of unknown code
    unseen = [c for c in reads if c.kind == "index" and getattr(c, "unseen_card", False)]
    P = np.stack([_posterior(c, np) if c.rank is not None else (1 - mix) * _posterior(c, np) + mix / n
                  for c in starting] + [np.full(n, 1 / n) for _ in unseen])[:, order]
    above = np.clip(1 - np.cumsum(P, axis=1), 0, 1)  # P_j(card > c)
    lowest = np.empty(len(P))
    for i in range(len(P)):
        others = np.prod(np.delete(above, i, axis=0), axis=0)
        lowest[i] = float((P[i] * others).sum())
    n_start = len(starting)
    starting = starting + unseen
    best = int(lowest.argmax())
    c = starting[best]
    # every card that might be the lowest, with P(it is): the players decide on these when none is named
    cands = [{"position": [round(float(v), 1) for v in starting[i].center],
              "card": starting[i].code if i < n_start else None, "p_lowest": round(float(lowest[i]), 4)}
             for i in np.argsort(-lowest) if lowest[i] >= 0.01]
    if best >= n_start or c.rank is None or lowest[best] < min_prob:
        return {"card": None, "reason": "a starting card that may be the lowest is unreadable",
                "probability": round(float(lowest[best]), 4), "candidates": cands}
    return {"card": c.code, "position": [round(float(v), 1) for v in c.center], "corners": c.to_json()["corners"],
            "probability": round(float(lowest[best]), 4), "candidates": cands}
