"""Settle-up: the fewest transfers that square everyone.

Given net results that sum to zero, a set of transfers squares everyone iff it squares every connected group
of the transfer graph on its own, and a connected group of k people needs at least k - 1 transfers. So the
minimum number of transfers is ``n - g`` where n counts the people whose net is not zero and g is the largest
number of disjoint zero-sum groups they can be split into. ``g`` is found exactly by a DP over subsets:
``best[mask] = max_i best[mask without i] + (1 if sum(mask) == 0 else 0)`` (any ordering that removes the
members of one zero-sum group after another is one path of the DP). Each group is then squared with k - 1
transfers by matching the largest debtor with the largest creditor until the group is square.
"""

from __future__ import annotations

from companion.ledger.errors import LedgerError

MAX_EXACT = 16  # 2**16 masks * 16: well under a second; the games seat at most 8


def max_zero_sum_groups(values: list[int]) -> tuple[int, list[list[int]]]:
    """Largest number of disjoint zero-sum groups covering all of ``values`` (which sum to 0), and one such
    partition as lists of indices. Values must all be non-zero."""
    n = len(values)
    if n == 0:
        return 0, []
    if sum(values) != 0:
        raise LedgerError(f"nets sum to {sum(values)}, not 0: nobody can square that")
    if n > MAX_EXACT:
        raise LedgerError(f"settle-up is exact for up to {MAX_EXACT} people with a non-zero result, got {n}")
    full = (1 << n) - 1
    sums = [0] * (full + 1)
    for mask in range(1, full + 1):
        low = mask & -mask
        sums[mask] = sums[mask ^ low] + values[low.bit_length() - 1]
    best = [0] * (full + 1)
    for mask in range(1, full + 1):
        top = 0
        m = mask
        while m:
            low = m & -m
            v = best[mask ^ low]
            if v > top:
                top = v
            m ^= low
        best[mask] = top + (1 if sums[mask] == 0 else 0)
    # Walk one optimal path back from the full set: each time the remaining set sums to zero a group closes.
    groups: list[list[int]] = []
    current: list[int] = []
    mask = full
    while mask:
        gain = 1 if sums[mask] == 0 else 0
        if gain and current:
            groups.append(current)
            current = []
        m = mask
        while m:
            low = m & -m
            if best[mask ^ low] + gain == best[mask]:
                break
            m ^= low
        current.append(low.bit_length() - 1)
        mask ^= low
    if current:
        groups.append(current)
    return best[full], groups


def settle(nets: dict[str, int]) -> list[tuple[str, str, int]]:
    """Fewest transfers (payer, payee, coins) that bring every net to zero. Deterministic for equal input."""
    names = sorted(p for p, v in nets.items() if v != 0)
    values = [nets[p] for p in names]
    if sum(nets.values()) != 0:
        raise LedgerError(f"results sum to {sum(nets.values())}, not 0: nobody can square that")
    _, groups = max_zero_sum_groups(values)
    transfers: list[tuple[str, str, int]] = []
    for group in groups:
        owed = {names[i]: values[i] for i in group}
        while any(owed.values()):
            payer = min(owed, key=lambda p: (owed[p], p))  # most negative: owes the most
            payee = max(owed, key=lambda p: (owed[p], p))
            amount = min(-owed[payer], owed[payee])
            transfers.append((payer, payee, amount))
            owed[payer] += amount
            owed[payee] -= amount
    return transfers
