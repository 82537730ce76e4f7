"""Benchmarks of the snowmint Python package against Python peers.

- Generating: IDs per second from one thread and from four threads sharing
  one generator, for snowmint and for snowflake-id, snowflake-id-toolkit,
  sonyflake-turbo and tsidpy (from PyPI), each in the same run and the same
  harness, with the ratio to the format's ceiling (4,096,000/s for
  Twitter's layout and TSID's 12-bit counter, 25,600/s for Sonyflake's:
  256 IDs per 10 ms).
- The lead (issue 36), at the same full load: how far each ID's timestamp
  runs ahead of the wall clock read right after the ID came back (the
  start of its unit, in the generator's own layout, epoch and unit, minus
  `time.time_ns()`; 0 if the unit had started), the clock read after every
  Nth ID of each thread (`--lead-every`, default 16).
- Decoding: one ID, and a column of 10 million, against pure Python
  shift-and-mask and a NumPy shift-and-mask expression.

Run it with crates/snowmint-py/bench/run (which builds and installs what it
needs); the figures go to BENCHMARKS.md. This is a benchmark, not a test: it
checks the IDs it made are distinct, and reports, but asserts no speed.
"""

import argparse
import math
import os
import platform
import sys
import threading
import time
import timeit
from array import array
from importlib.metadata import version

import numpy as np

import snowmint

TWITTER_EPOCH = 1288834974657
TWITTER_CEILING = 4_096_000
SONYFLAKE_CEILING = 25_600


def snowmint_maker():
    generator = snowmint.Generator(datacenter=1, machine=2)
    return generator.next_id


def snowflake_id_maker():
    # snowflake-id: a Python iterator that returns None when the millisecond
    # is used up (or the clock is behind), leaving the retry to the caller;
    # it has no lock, so threads sharing it can collide.
    from snowflake import SnowflakeGenerator

    generator = SnowflakeGenerator(42, epoch=TWITTER_EPOCH)

    def next_id():
        while True:
            id = next(generator)
            if id is not None:
                return id

    return next_id


def toolkit_maker():
    # snowflake-id-toolkit: pure Python with a threading.Lock; spins for
    # the next millisecond.
    from snowflake_id_toolkit.twitter import TwitterSnowflakeIDGenerator

    generator = TwitterSnowflakeIDGenerator(42, epoch=TWITTER_EPOCH)
    return generator.generate_next_id


def tsidpy_maker():
    # tsidpy: TSID (tsid-creator's algorithm) in pure Python, with a
    # threading.Lock: 10 node bits, a 12-bit counter that starts at a random
    # value each millisecond and, when it overflows, moves the time on by
    # one millisecond instead of waiting: it borrows future time.
    from tsidpy import TSIDGenerator

    generator = TSIDGenerator(node=42)
    return lambda: generator.create().number


def sonyflake_maker():
    # sonyflake-turbo: C; Sonyflake's format (10 ms ticks, 8-bit sequence).
    from sonyflake_turbo import SonyFlake

    generator = SonyFlake(0x1337)
    return generator.__next__


CONTENDERS = [
    ("snowmint", snowmint_maker, TWITTER_CEILING),
    ("snowflake-id", snowflake_id_maker, TWITTER_CEILING),
    ("snowflake-id-toolkit", toolkit_maker, TWITTER_CEILING),
    ("sonyflake-turbo", sonyflake_maker, SONYFLAKE_CEILING),
    ("tsidpy", tsidpy_maker, TWITTER_CEILING),
]

# TSID's epoch, 2020-01-01T00:00:00Z, in Unix ms.
TSID_EPOCH = 1577836800000
# Sonyflake's default start time, 2014-09-01T00:00:00Z, in Unix ms.
SONYFLAKE_EPOCH = 1409529600000

# Where the unit (millisecond, or Sonyflake's 10 ms) of an ID starts, in
# Unix ns, by each layout's published formula.
UNIT_START_NS = {
    "snowmint": lambda id: ((id >> 22) + TWITTER_EPOCH) * 1_000_000,
    "snowflake-id": lambda id: ((id >> 22) + TWITTER_EPOCH) * 1_000_000,
    "snowflake-id-toolkit": lambda id: ((id >> 22) + TWITTER_EPOCH) * 1_000_000,
    "sonyflake-turbo": lambda id: ((id >> 24) * 10 + SONYFLAKE_EPOCH) * 1_000_000,
    "tsidpy": lambda id: ((id >> 22) + TSID_EPOCH) * 1_000_000,
}


def generate(make, threads, seconds):
    """IDs per second from `threads` threads sharing one generator for
    `seconds`, and how many of the IDs were duplicates."""
    next_id = make()
    stop = threading.Event()
    made = [None] * threads
    start_line = threading.Barrier(threads + 1)

    def work(slot):
        ids = []
        append = ids.append
        start_line.wait()
        while not stop.is_set():
            for _ in range(256):
                append(next_id())
        made[slot] = ids

    workers = [threading.Thread(target=work, args=(slot,)) for slot in range(threads)]
    for worker in workers:
        worker.start()
    start_line.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - began
    total = sum(len(ids) for ids in made)
    distinct = len({int(id) for ids in made for id in ids})
    return total / elapsed, total - distinct


def leads(make, unit_start_ns, threads, seconds, every):
    """The lead, in ns, of every `every`-th ID of `threads` threads sharing
    one generator for `seconds`, against the clock read right after it."""
    next_id = make()
    stop = threading.Event()
    samples = [None] * threads
    start_line = threading.Barrier(threads + 1)
    now = time.time_ns
    skip = range(every - 1)

    def work(slot):
        pairs = []
        append = pairs.append
        start_line.wait()
        while not stop.is_set():
            for _ in skip:
                next_id()
            id = next_id()
            append((id, now()))
        samples[slot] = pairs

    workers = [threading.Thread(target=work, args=(slot,)) for slot in range(threads)]
    for worker in workers:
        worker.start()
    start_line.wait()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    return [
        max(0, unit_start_ns(int(id)) - clock) for pairs in samples for id, clock in pairs
    ]


def bench_leads(seconds, rounds, every):
    print(
        f"\n## The lead at full load, {seconds:g} s per run, {rounds} runs, the clock read"
        f" after every {every}th ID\n"
    )
    print(
        "| generator | threads | IDs sampled | share with a lead > 0 | p99 lead, ms"
        " | p99.9 lead, ms | max lead, ms |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|")
    for threads in (1, 4):
        for name, make, _ in CONTENDERS:
            all_leads = []
            for _ in range(rounds):
                all_leads += leads(make, UNIT_START_NS[name], threads, seconds, every)
            all_leads.sort()

            def at(q):
                rank = min(len(all_leads), max(1, math.ceil(q * len(all_leads))))
                return all_leads[rank - 1] / 1e6

            ahead = sum(1 for lead in all_leads if lead > 0)
            print(
                f"| {name} | {threads} | {len(all_leads):,} | {ahead / len(all_leads):.2%} |"
                f" {at(0.99):.3f} | {at(0.999):.3f} | {all_leads[-1] / 1e6:.3f} |"
            )
            sys.stdout.flush()


def bench_generators(seconds, rounds):
    print(f"\n## next_id() from Python, {seconds:g} s per run, best of {rounds}\n")
    print("| generator | threads | IDs/s | ratio to its format's ceiling | duplicates |")
    print("|---|---|---|---|---|")
    for threads in (1, 4):
        for name, make, ceiling in CONTENDERS:
            best, duplicates = 0.0, 0
            for _ in range(rounds):
                rate, dup = generate(make, threads, seconds)
                best = max(best, rate)
                duplicates += dup
            print(
                f"| {name} | {threads} | {best:,.0f} | {best / ceiling:.3f} of {ceiling:,} |"
                f" {duplicates:,} |"
            )
            sys.stdout.flush()


def python_decode(id):
    return (
        (id >> 22) + TWITTER_EPOCH,
        (id >> 17) & 31,
        (id >> 12) & 31,
        id & 4095,
    )


def python_decode_many(ids):
    timestamps, datacenters, machines, sequences = [], [], [], []
    for id in ids:
        timestamps.append((id >> 22) + TWITTER_EPOCH)
        datacenters.append((id >> 17) & 31)
        machines.append((id >> 12) & 31)
        sequences.append(id & 4095)
    return timestamps, datacenters, machines, sequences


def numpy_decode_many(ids):
    return (
        (ids >> 22) + TWITTER_EPOCH,
        (ids >> 17) & 31,
        (ids >> 12) & 31,
        ids & 4095,
    )


def best_of(rounds, call):
    best = float("inf")
    for _ in range(rounds):
        began = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - began)
    return best


def bench_decoding(count, rounds):
    print("\n## Decoding one ID (Twitter layout)\n")
    print("| how | ns per ID | IDs/s |")
    print("|---|---|---|")
    id = 1724551110457221119
    layout = snowmint.Layout.TWITTER
    for name, call in (
        ("snowmint `Layout.TWITTER.decode(id)` (a `Parts`)", lambda: layout.decode(id)),
        ("pure Python shift-and-mask (a tuple)", lambda: python_decode(id)),
    ):
        loops = 1_000_000
        seconds = min(timeit.repeat(call, number=loops, repeat=rounds)) / loops
        print(f"| {name} | {seconds * 1e9:.0f} | {1 / seconds:,.0f} |")

    rng = np.random.default_rng(1)
    column = rng.integers(0, 2**63, size=count, dtype=np.int64)
    as_array = array("q", column.tobytes())
    as_list = column.tolist()
    # Every way agrees before anything is timed.
    expected = numpy_decode_many(column[:1000])
    decoded = snowmint.decode_many(column[:1000])
    for mine, theirs in zip(
        (decoded.timestamp_ms, decoded.datacenter, decoded.machine, decoded.sequence), expected
    ):
        assert np.array_equal(np.asarray(mine), theirs)

    print(f"\n## Decoding a column of {count:,} random IDs (Twitter layout), best of {rounds}\n")
    print("| how | seconds | IDs/s |")
    print("|---|---|---|")
    cases = [
        ("snowmint `decode_many(numpy int64 array)`", lambda: snowmint.decode_many(column)),
        ("snowmint `decode_many(array('q'))`", lambda: snowmint.decode_many(as_array)),
        ("snowmint `decode_many(list)`", lambda: snowmint.decode_many(as_list)),
        ("NumPy shift-and-mask expression", lambda: numpy_decode_many(column)),
        ("pure Python shift-and-mask loop over the list", lambda: python_decode_many(as_list)),
        # The floor under decode_many: the new memory its columns fill.
        (f"(only allocating decode_many's output: `bytearray({32 * count:,})`)", lambda: bytearray(32 * count)),
    ]
    for name, call in cases:
        times = rounds if "pure Python" not in name else 1
        seconds = best_of(times, call)
        print(f"| {name} | {seconds:.3f} | {count / seconds:,.0f} |")
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per generator run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count", type=int, default=10_000_000, help="IDs to decode at once")
    parser.add_argument("--lead-every", type=int, default=16, help="read the clock after every Nth ID")
    parser.add_argument(
        "--part", choices=("all", "generate", "lead", "decode"), default="all"
    )
    args = parser.parse_args()
    if not 1 <= args.lead_every <= 65536:
        parser.error(f"--lead-every {args.lead_every} is out of range (1..=65536)")
    print(f"Load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs;"
        f" snowmint {version('snowmint')}, NumPy {np.__version__}; peers:"
        f" snowflake-id {version('snowflake-id')},"
        f" snowflake-id-toolkit {version('snowflake-id-toolkit')},"
        f" sonyflake-turbo {version('sonyflake-turbo')}, tsidpy {version('tsidpy')}"
    )
    if args.part in ("all", "generate"):
        bench_generators(args.seconds, args.rounds)
    if args.part in ("all", "lead"):
        bench_leads(args.seconds, args.rounds, args.lead_every)
    if args.part in ("all", "decode"):
        bench_decoding(args.count, args.rounds)
    print(f"\nLoad average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
