#!/usr/bin/env python3
"""Pool the turn logs scripts/turn_pairs.sh wrote: `turn_pairs.py OUT SIZE name...`.

Each process's first turn (cache fill) is left out, as the bench leaves it out of its figures.
The first name is the reference the ratios are taken against."""
import glob
import json
import math
import statistics
import sys

KEYS = ["context", "embedding", "topic", "intent", "triage", "routing", "act", "commit", "total"]


def quantile(values, q):
    v = sorted(values)
    return v[max(1, math.ceil(q * len(v))) - 1] if v else float("nan")


def main(out, size, names):
    pooled = {n: [] for n in names}
    stages = {n: {k: [] for k in KEYS} for n in names}
    rounds = {}
    for n in names:
        for path in glob.glob(f"{out}/{n}/r*/turns-{size}.jsonl"):
            rows = [json.loads(line) for line in open(path) if line.strip()][1:]
            turns = [r["deterministic"] for r in rows]
            rounds.setdefault(int(path.split("/")[-2][1:]), {})[n] = quantile(turns, 0.5)
            pooled[n] += turns
            for k in KEYS:
                stages[n][k] += [r["stages"][k] for r in rows if k in r["stages"]]
    base = names[0]
    print(f"| build | median ms | p99 ms | turns | per-round ratio to {base} (median, range) |")
    print("|---|---|---|---|---|")
    for n in names:
        ratios = [r[n] / r[base] for r in rounds.values() if n in r and base in r]
        spread = "-" if n == base or not ratios else (
            f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
        v = pooled[n]
        print(f"| {n} | {quantile(v, .5):.3f} | {quantile(v, .99):.3f} | {len(v)} | {spread} |")
    print()
    print("| build | " + " | ".join(KEYS) + " |")
    print("|---|" + "---|" * len(KEYS))
    for n in names:
        print(f"| {n} | " + " | ".join(f"{quantile(stages[n][k], .5):.3f}" for k in KEYS) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
