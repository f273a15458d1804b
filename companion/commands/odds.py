"""`pirate-table odds`: the exact chance that a Pirate's Bluff bid holds, and the whole count distribution."""

from __future__ import annotations

import argparse
import json
import sys

from companion.inputs import cli_int, cli_text

MC_MAX = 2_000_000  # ~2.5 s; the standard error is then below 0.0004


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "odds",
        help="exact chance that a Pirate's Bluff bid holds (and the distribution of the count)",
        description="Exact P(count >= quantity) for a bid, under a uniformly random deal of the unseen cards, "
        "and the whole distribution of the count of the rank in play. Example: pirate-table odds --players 5 "
        "--starting 2C,2D,3A,4B,7E --hand 7E,2A,7A,7B,8A,0A,1C --bid 7x7. Bad input: one-line error, exit 2.",
    )
    p.add_argument("--players", type=cli_int(3, 8), help="number of players, 3-8 (default: the number of starting cards)")
    p.add_argument("--starting", type=cli_text(1000), help="face-up starting cards in seat order, e.g. 2C,2D,3A,4B,7E")
    p.add_argument("--hand", type=cli_text(1000), help="one player's full hand, starting card included, e.g. 7E,2A,7A,7B,8A,0A,1C")
    p.add_argument("--seat", type=cli_int(1, 8), help="whose hand --hand is (1 = first seat); default: the seat whose "
                   "starting card the hand holds")
    p.add_argument("--bid", type=cli_text(100), help="QUANTITYxRANK, e.g. 7x7 for seven Sevens")
    p.add_argument("--super-wilds", action="store_true", help="Super Wilds variant: each wild counts as many "
                   "as its hand's naturals")
    p.add_argument("--json", action="store_true", help="print JSON (probability, exact fraction, distribution)")
    p.add_argument("--mc", type=cli_int(1, MC_MAX), metavar="DEALS",
                   help=f"also estimate by Monte Carlo with DEALS random deals (1-{MC_MAX})")
    p.add_argument("--seed", type=cli_int(0, 2**63 - 1), help="seed for --mc / --bench")
    p.add_argument("--bench", action="store_true", help="benchmark: median query time for 8 players and the "
                   "speed ratio against Monte Carlo at equal accuracy")
    p.add_argument("--queries", type=cli_int(1, 100_000), default=300, help="queries per benchmark group (default 300)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from companion.errors import PirateTableError
    from companion.games import registry

    # the odds calculator of the game that has one (Pirate's Bluff): its arguments are that game's
    odds = registry.with_odds()[0].odds_module()

    if args.bench:
        from companion.odds_bench import run_bench

        if args.queries < 1:
            raise PirateTableError(f"--queries must be at least 1, got {args.queries}")
        return run_bench(queries=args.queries, seed=0 if args.seed is None else args.seed, as_json=args.json)
    if not args.starting:
        raise PirateTableError("give --starting (the face-up starting cards in seat order) and --bid, or --bench")
    if not args.bid:
        raise PirateTableError("give --bid QUANTITYxRANK, e.g. --bid 7x7")
    starting = odds.parse_card_list(args.starting, "--starting")
    players = args.players if args.players is not None else len(starting)
    seat = None
    if args.seat is not None:
        if not 1 <= args.seat <= max(players, 1):
            raise PirateTableError(f"--seat must be 1-{players}, got {args.seat}")
        seat = args.seat - 1
    hand = odds.parse_card_list(args.hand, "--hand") if args.hand is not None else None
    if args.mc is not None and args.mc < 1:
        raise PirateTableError(f"--mc needs a positive number of deals, got {args.mc}")
    res = odds.bid_odds(players, starting, args.bid, hand=hand, super_wilds=args.super_wilds, seat=seat)
    mc = None
    if args.mc:
        mc = odds.monte_carlo(players, starting, args.bid, hand=hand, super_wilds=args.super_wilds, seat=seat,
                              samples=args.mc, seed=args.seed)
    if args.json:
        out = res.as_dict()
        out["starting"] = [str(c) for c in starting]
        out["hand"] = None if hand is None else [str(c) for c in hand]
        if mc is not None:
            out["monte_carlo"] = {
                "deals": mc.samples,
                "probability": mc.probability,
                "stderr": mc.stderr(res.quantity),
                "distribution": list(mc.distribution),
            }
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    name = odds.describe_bid(res.quantity, res.rank)
    w(f"Bid: {name} ({res.quantity}x{res.rank}); {res.players} players, {res.hand_size} cards each; "
      f"{'Super Wilds' if res.super_wilds else 'plain wilds'}\n")
    w(f"Starting cards: {' '.join(str(c) for c in starting)}\n")
    if hand is not None:
        w(f"Known hand (seat {res.seat + 1}): {' '.join(str(c) for c in hand)}\n")
    w(f"P(at least {name} in play) = {res.probability:.12f}  ({100 * res.probability:.2f}%)\n")
    w(f"Mean count: {res.mean:.6f}\n")
    if mc is not None:
        w(f"Monte Carlo ({mc.samples} deals): {mc.probability:.6f} +/- {mc.stderr(res.quantity):.6f} (1 s.e.)\n")
    w("count   P(count = c)      P(count >= c)\n")
    for c, p in enumerate(res.distribution):
        mark = "  <- bid" if c == res.quantity else ""
        w(f"{c:5d}   {p:.12f}   {res.at_least(c):.12f}{mark}\n")
    if res.quantity > res.max_count:
        w(f"(no deal puts {name} in play: the most possible here is {res.max_count})\n")
    return 0
