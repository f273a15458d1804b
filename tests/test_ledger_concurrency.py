"""20 writer processes append to one ledger while this process verifies it in a loop: no false tampering alarm
(verify reads one snapshot), no lost or duplicated entry, coins conserved; every head a writer was given stays in
the chain, and a truncation is caught by `verify --expect-head`."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from hostile import ROOT, assert_refused_cleanly, run_cli

from companion.ledger import Ledger, LedgerError

WRITERS = int(os.environ.get("LEDGER_WRITERS", "20"))
ACTIONS = int(os.environ.get("LEDGER_WRITER_ACTIONS", "12"))
PLAYERS = ["Ann", "Bo", "Cy", "Di"]

CHILD = r"""
import sys
from companion.ledger import Ledger
db, w, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
players = ["Ann", "Bo", "Cy", "Di"]
for i in range(n):
    with Ledger.open(db) as led:  # a fresh connection each time, as separate commands would
        p = players[(w + i) % 4]
        if i % 3 == 2:
            e = led.repay(p, 1, memo=f"w{w}-{i}")
        else:
            e = led.loan(p, 1 + (w + i) % 7, memo=f"w{w}-{i}")
    print(f"ack {w} {i} {e[-1].hash}", flush=True)
"""


def test_twenty_writers_and_a_verify_loop(tmp_path):
    db = tmp_path / "c.db"
    Ledger.create(db, PLAYERS, 50).close()
    for p in PLAYERS:  # something to repay from the first action on
        with Ledger.open(db) as led:
            led.loan(p, 5, memo=f"seed-{p}")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(db), str(w), str(ACTIONS)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(WRITERS)]
    verifies, seen_entries, alarms = 0, set(), []
    t0 = time.monotonic()
    while any(p.poll() is None for p in procs):
        try:
            with Ledger.open(db, readonly=True) as led:
                info = led.verify()
        except LedgerError as exc:
            alarms.append(str(exc))
            continue
        verifies += 1
        seen_entries.add(info["entries"])
        if verifies % 10 == 0:  # the CLI too, in this process
            code, out, err = run_cli("ledger", db, "verify")
            assert code == 0, err
    results = [p.communicate(timeout=120) for p in procs]
    elapsed = time.monotonic() - t0
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
    assert not alarms, alarms[:3]
    acks = [line.split() for out, _ in results for line in out.splitlines() if line.startswith("ack")]
    assert len(acks) == WRITERS * ACTIONS

    with Ledger.open(db, readonly=True) as led:
        info = led.verify()
        entries = led.entries()
        st = led.state()
    memos = [e.memo for e in entries if e.memo.startswith("w")]
    want = {f"w{w}-{i}" for w in range(WRITERS) for i in range(ACTIONS)}
    assert sorted(memos) == sorted(want), "an entry lost or written twice"
    hashes = {e.hash: e.id for e in entries}
    assert all(h in hashes for _, _, _, h in acks), "a head a writer was given is not in the chain"
    # coins conserved: on the table = bought in + lent - repaid
    coins = sum(st.bal(f"stack:{p}") for p in PLAYERS) + st.pot
    bought = -sum(st.bal(f"bank:{p}") for p in PLAYERS)
    lent = -sum(st.bal(f"loan:{p}") for p in PLAYERS)
    assert coins == bought + lent == info["coins_on_table"]
    expected_lent = 20 + sum(1 + (w + i) % 7 for w in range(WRITERS) for i in range(ACTIONS) if i % 3 != 2) \
        - sum(1 for w in range(WRITERS) for i in range(ACTIONS) if i % 3 == 2)
    assert lent == expected_lent
    print(f"\nconcurrency: {WRITERS} writers x {ACTIONS} actions = {len(acks)} appends in {elapsed:.1f} s while "
          f"{verifies} verifies ran (heads seen at {len(seen_entries)} lengths), 0 false alarms, "
          f"{info['entries']} entries")
    assert verifies >= 5 and len(seen_entries) >= 3  # the verifies did overlap the writers

    # truncation: drop the last entry; the shorter chain verifies alone, but not against the last head given out
    last_head = entries[-1].hash
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM postings WHERE entry_id = ?", (entries[-1].id,))
    conn.execute("DELETE FROM entries WHERE id = ?", (entries[-1].id,))
    conn.commit()
    conn.close()
    assert run_cli("ledger", db, "verify")[0] == 0
    code, out, err = run_cli("ledger", db, "verify", "--expect-head", last_head)
    assert_refused_cleanly(code, out, err)
    code, out, err = run_cli("ledger", db, "verify", "--expect-head", entries[-2].hash)
    assert code == 0 and "the expected head is the head" in out
