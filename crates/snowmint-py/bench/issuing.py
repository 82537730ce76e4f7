"""What the issuer's rules cost a Python program, in one run:

- ``next_id()`` calls per second three ways: a plain ``Generator`` (no
  lock, no mark), with ``state_dir`` (the node's lock and the durable
  high-water mark of ``snowmint serve``) and claimed from a real etcd
  (fencing as well), each as a ratio to plain;
- the fork check: what a ``getpid()`` per call would have cost, against the
  fork epoch the generator compares (an atomic load);
- ``decode_many`` of 10 million IDs from NumPy and from ``array('q')``:
  narrow columns (the default), four ``int64`` columns (``int64=True``,
  the layout of earlier versions) and ``out=`` buffers reused from call to
  call.

Run it with crates/snowmint-py/bench/run-issuing; the figures go to
BENCHMARKS.md. A benchmark, not a test: it reports and asserts no speed.
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import timeit
import urllib.request
from array import array

import numpy as np

import snowmint


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_etcd(directory):
    binary = shutil.which("etcd")
    if binary is None:
        sys.exit("etcd is not installed: apt-get install etcd-server")
    port, peer = free_port(), free_port()
    process = subprocess.Popen(
        [binary, "--name", "bench", "--data-dir", os.path.join(directory, "etcd"),
         "--listen-client-urls", f"http://127.0.0.1:{port}",
         "--advertise-client-urls", f"http://127.0.0.1:{port}",
         "--listen-peer-urls", f"http://127.0.0.1:{peer}",
         "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
         "--initial-cluster", f"bench=http://127.0.0.1:{peer}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return process, f"etcd://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    process.kill()
    sys.exit("etcd did not start within 30 s")


def calls_per_second(next_id, seconds):
    """``next_id()`` calls per second from one thread for ``seconds``,
    checking the IDs are distinct and increasing."""
    ids = []
    append = ids.append
    end = time.perf_counter() + seconds
    began = time.perf_counter()
    while time.perf_counter() < end:
        for _ in range(1024):
            append(next_id())
    elapsed = time.perf_counter() - began
    assert all(a < b for a, b in zip(ids, ids[1:])), "IDs not strictly increasing"
    return len(ids) / elapsed


def bench_next_id(seconds, rounds):
    directory = tempfile.mkdtemp(prefix="snowmint-bench-")
    etcd, url = start_etcd(directory)
    try:
        makers = [
            ("plain `Generator(datacenter=, machine=)`",
             lambda: snowmint.Generator(datacenter=1, machine=1)),
            ("`Generator(..., state_dir=)`",
             lambda: snowmint.Generator(datacenter=1, machine=2, state_dir=directory)),
            ("`Generator.claim(etcd)`",
             lambda: snowmint.Generator.claim(url, fleet="bench", state_dir=directory)),
        ]
        generators = [(name, make()) for name, make in makers]
        best = {name: 0.0 for name, _ in generators}
        # Interleaved rounds, so that a slow moment of the machine falls on
        # every contender alike.
        for _ in range(rounds):
            for name, generator in generators:
                best[name] = max(best[name], calls_per_second(generator.next_id, seconds))
        plain = best[generators[0][0]]
        print(f"\n## next_id() calls per second from one thread, {seconds:g} s per run, best of {rounds}\n")
        print("| generator | calls/s | ratio to plain |")
        print("|---|---|---|")
        for name, _ in generators:
            print(f"| {name} | {best[name]:,.0f} | {best[name] / plain:.3f} |")
        for _, generator in generators:
            generator.close()
    finally:
        etcd.kill()
        etcd.wait()
        shutil.rmtree(directory, ignore_errors=True)


def bench_fork_check(number):
    getpid = timeit.timeit("getpid()", setup="from os import getpid", number=number)
    baseline = timeit.timeit("f()", setup="f = int", number=number)
    print(f"\n## The fork check, {number:,} calls\n")
    print("| check | ns per call |")
    print("|---|---|")
    print(f"| `os.getpid()` from Python | {getpid / number * 1e9:.1f} |")
    print(f"| a call of `int()` from Python (the call's own cost) | {baseline / number * 1e9:.1f} |")
    print(f"| so a getpid system call adds about | {(getpid - baseline) / number * 1e9:.1f} |")
    print("| the fork epoch the generator compares (one relaxed atomic load) | < 1 |")


def bench_decode_many(count, rounds):
    rng = np.random.default_rng(7)
    column = rng.integers(0, 2**63 - 1, size=count, dtype=np.int64)
    as_array = array("q", column.tobytes())
    out = [np.empty(count, dtype=np.int64), np.empty(count, dtype=np.uint8),
           np.empty(count, dtype=np.uint8), np.empty(count, dtype=np.uint16)]
    cases = [
        ("NumPy int64 array, narrow columns (default)", lambda: snowmint.decode_many(column)),
        ("NumPy int64 array, `int64=True` (earlier versions' columns)",
         lambda: snowmint.decode_many(column, int64=True)),
        ("NumPy int64 array, `out=` NumPy buffers reused", lambda: snowmint.decode_many(column, out=out)),
        ("`array('q')`, narrow columns (default)", lambda: snowmint.decode_many(as_array)),
        ("`array('q')`, `int64=True`", lambda: snowmint.decode_many(as_array, int64=True)),
    ]
    # The answers agree with each other.
    narrow = snowmint.decode_many(column[:1000])
    wide = snowmint.decode_many(column[:1000], int64=True)
    for name in ("timestamp_ms", "datacenter", "machine", "sequence"):
        assert getattr(narrow, name).tolist() == getattr(wide, name).tolist()
    print(f"\n## decode_many of {count:,} IDs, best of {rounds}\n")
    print("| input, output | IDs/s |")
    print("|---|---|")
    for name, run in cases:
        best = min(timeit.repeat(run, number=1, repeat=rounds))
        print(f"| {name} | {count / best:,.0f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=10_000_000)
    args = parser.parse_args()
    print(f"snowmint {snowmint.__version__}, Python {sys.version.split()[0]}, NumPy {np.__version__}")
    bench_next_id(args.seconds, args.rounds)
    bench_fork_check(2_000_000)
    bench_decode_many(args.count, args.rounds)


if __name__ == "__main__":
    main()
