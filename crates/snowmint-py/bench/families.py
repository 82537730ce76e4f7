"""decode_many in other families against Twitter's, in one run: the same
10,000,000 random IDs (below 2**63, so that every layout reads them),
decoded in turn by each layout, round after round in a rotating order, so
that the machine's load falls on all alike.

Usage: python families.py [--rounds N] [--count N]
(run with the venv of crates/snowmint-py/install; see BENCHMARKS.md).
A benchmark, not a test: it reports and asserts no speed.
"""

import argparse
import statistics
import time

import numpy as np

import snowmint
from snowmint import Layout

LAYOUTS = ["twitter", "discord", "instagram", "sonyflake", "tsid"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--count", type=int, default=10_000_000)
    args = parser.parse_args()
    column = np.random.default_rng(7).integers(0, 2**63 - 1, size=args.count, dtype=np.int64)
    layouts = {name: Layout.parse(name) for name in LAYOUTS}
    times = {name: [] for name in LAYOUTS}
    # One untimed pass first (the pages of the output, the code), then the
    # order rotates from round to round: no layout always runs first.
    for layout in layouts.values():
        snowmint.decode_many(column, layout)
    for round in range(args.rounds):
        order = LAYOUTS[round % len(LAYOUTS):] + LAYOUTS[: round % len(LAYOUTS)]
        for name in order:
            layout = layouts[name]
            start = time.perf_counter()
            snowmint.decode_many(column, layout)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["twitter"])
    print(f"decode_many of {args.count:,} IDs, NumPy int64, narrow columns; median of {args.rounds} rounds")
    print("| layout | IDs/s | ratio to twitter |")
    print("|---|---|---|")
    for name in LAYOUTS:
        median = statistics.median(times[name])
        print(f"| `{name}` | {args.count / median:,.0f} | {base / median:.3f} |")


if __name__ == "__main__":
    main()
