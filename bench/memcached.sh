#!/usr/bin/env bash
# The memcached benchmark: IDs/s from memcached `get` over 8 connections,
# against HTTP `GET /v1/id` of the same process over 8 connections (and
# memcached `gets` of 100 keys for reference). See bench/src/bin/memcached.rs.
#
# Usage: bench/memcached.sh [SECONDS] [ROUNDS]     # default 5 s per run, 3 rounds
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p snowmint-cli -p snowmint-bench --bin snowmint --bin memcached
exec target/release/memcached target/release/snowmint "${1:-5}" "${2:-3}"
