"""Child process of the ledger crash test (tests/test_ledger_crash.py); not a test module itself.

``python ledger_crash_child.py DB SEED`` opens the ledger, prints ``ready``, then loops forever: action k (k =
actions so far since creation) is ``step(seed, k, ledger)``, committed in one transaction, then acknowledged
with ``ack K HASH`` (HASH: the last entry the action wrote). The parent SIGKILLs it at a random moment.
"""

from __future__ import annotations

import random
import sys


def step(seed: int, k: int, led) -> list:
    """Action k of the deterministic script: a ruling against the current balances, or now and then an undo
    or a loan. Deterministic given (seed, k, the ledger's state)."""
    rng = random.Random(seed * 1_000_003 + k)
    if k % 11 == 10:
        return led.undo()
    if k % 7 == 6:
        p = rng.choice(led.table()["players"])
        return led.loan(p, rng.randint(1, 9))
    t = led.table()
    ps = t["players"]
    entries = [{"kind": "ante", "postings": {**{p: -1 for p in ps}, "pot": len(ps)}, "memo": "ante"}]
    pot = t["pot_carry"] + len(ps)
    a, b = rng.sample(ps, 2)
    n = rng.randint(1, 30)  # sometimes more than a stack holds: an automatic loan
    entries.append({"kind": "penalty", "postings": {a: -n, b: n}, "memo": f"{a} pays {b} {n}"})
    if rng.random() < 0.3:
        entries.append({"kind": "countdown_coin", "postings": {**{p: -1 for p in ps if p != a}, a: len(ps) - 1},
                        "memo": "going, going, dead"})
    winners = rng.sample(ps, rng.choice([1, 1, 2]))
    share = pot // len(winners)  # odd coins stay in the pot
    award = {p: share for p in winners}
    if share:
        entries.append({"kind": "pot_award", "postings": {**award, "pot": -share * len(winners)}, "memo": "pot"})
    ruling = {"players": ps, "stacks_before": t["stacks"], "pot_carry_before": t["pot_carry"], "entries": entries}
    return led.apply_ruling(ruling)


def main() -> None:
    from companion.ledger import Ledger

    db, seed = sys.argv[1], int(sys.argv[2])
    led = Ledger.open(db)
    k = led.state().last_action - 1
    print("ready", flush=True)
    while True:
        written = step(seed, k, led)
        print(f"ack {k} {written[-1].hash}", flush=True)
        k += 1


if __name__ == "__main__":
    main()
