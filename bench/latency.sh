#!/usr/bin/env bash
# Tail latency of one node's front ends at a fixed rate, measured from each
# request's scheduled send so that a stall counts in full (issue 36, item 3):
# HTTP/1.1 GET /v1/id (keep-alive), gRPC NextIds(1) and memcached `get`,
# each at 10,000 and 50,000 requests/s, against one `snowmint serve` with
# all three front ends on free loopback ports. See bench/src/bin/latency.rs.
#
# Usage: bench/latency.sh [SECONDS]          # default 10 s per measurement
#   CONNECTIONS=8 RATES=10000,50000 WARMUP=1 bench/latency.sh
#   FRONTS=http,control-threads bench/latency.sh 5   # some columns only
# Prints the machine's load before and after, then the markdown tables.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p snowmint-cli -p snowmint-bench --bin snowmint --bin latency
echo "commit: $(git log -1 --format='%h' HEAD)$(git diff --quiet HEAD || echo ' with local changes'); $(nproc) CPUs"
echo "before: $(uptime)"
echo
target/release/latency target/release/snowmint "${1:-10}"
echo
echo "after: $(uptime)"
