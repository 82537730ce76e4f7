#!/usr/bin/env bash
# The gRPC benchmark: IDs/s delivered to one client process over loopback
# by StreamIds from one node and from two, against HTTP /v1/ids?count=4096
# of the same build; the Rust client's next_id from a warm buffer; a cold
# NextIds round trip (p50, p99). See bench/src/bin/grpc.rs.
#
# Usage: bench/grpc.sh [SECONDS]     # default 5 s per measurement
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p snowmint-cli -p snowmint-bench --bin snowmint --bin grpc
exec target/release/grpc target/release/snowmint "${1:-5}"
