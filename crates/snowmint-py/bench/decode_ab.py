"""decode_many before and after a change, in one run: the same cases,
timed in child interpreters that alternate between two installed copies
of the package (an earlier one in BEFORE_SITE, this one in the venv).

Usage: python decode_ab.py BEFORE_SITE [--rounds N] [--count N]
(crates/snowmint-py/bench/decode-ab builds both and runs this).
A benchmark, not a test: it reports and asserts no speed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, timeit
from array import array
import numpy as np
import snowmint
count = int(sys.argv[1])
column = np.random.default_rng(7).integers(0, 2**63 - 1, size=count, dtype=np.int64)
as_array = array("q", column.tobytes())
out = [np.empty(count, dtype=np.int64), np.empty(count, dtype=np.uint8),
       np.empty(count, dtype=np.uint8), np.empty(count, dtype=np.uint16)]
cases = {
    "NumPy int64 array, narrow columns (default)": lambda: snowmint.decode_many(column),
    "NumPy int64 array, `int64=True`": lambda: snowmint.decode_many(column, int64=True),
    "NumPy int64 array, `out=` NumPy buffers reused": lambda: snowmint.decode_many(column, out=out),
    "`array('q')`, narrow columns (default)": lambda: snowmint.decode_many(as_array),
}
# Both copies give the same answer before anything is timed.
check = snowmint.decode_many(column[:100_000])
answer = [getattr(check, k).tolist()[::997] for k in ("timestamp_ms", "datacenter", "machine", "sequence")]
times = {name: timeit.repeat(run, number=1, repeat=3) for name, run in cases.items()}
print(json.dumps({"file": snowmint.__file__, "answer": answer, "times": times}))
"""


def run(site, count):
    env = dict(os.environ)
    if site:
        env["PYTHONPATH"] = site
    else:
        env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "-c", CHILD, str(count)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before_site")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=10_000_000)
    args = parser.parse_args()
    times = {"before": {}, "after": {}}
    files = {}
    answers = {}
    for _ in range(args.rounds):
        for side, site in (("before", args.before_site), ("after", None)):
            got = run(site, args.count)
            files[side] = got["file"]
            answers[side] = got["answer"]
            for name, seconds in got["times"].items():
                times[side].setdefault(name, []).extend(seconds)
    assert files["before"] != files["after"], "both runs imported the same package"
    assert answers["before"] == answers["after"], "the two copies disagree"
    print(f"before: {files['before']}\nafter:  {files['after']}\n")
    print(f"decode_many of {args.count:,} IDs, {3 * args.rounds} calls per side"
          f" in {args.rounds} alternating rounds; IDs/s of the best call and of the median one\n")
    print("| input, output | before, best | after, best | after / before, best"
          " | before, median | after, median | after / before, median |")
    print("|---|---|---|---|---|---|---|")
    for name in times["after"]:
        row = [name]
        for pick in (min, statistics.median):
            before = args.count / pick(times["before"][name])
            after = args.count / pick(times["after"][name])
            row += [f"{before:,.0f}", f"{after:,.0f}", f"{after / before:.2f}"]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
