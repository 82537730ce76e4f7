#!/usr/bin/env bash
# What the `dist` profile (scripts/dist's: one codegen unit, fat LTO, no
# debug information, stripped; see Cargo.toml) gives against `release`,
# in one run:
#
# - the size of the `snowmint` binary: release as built (with line
#   tables), release stripped (`strip`), and dist;
# - the generator benchmark built by both profiles, run one after the
#   other, never side by side, by bench/profiles.sh's runner
#   (target/release/profiles), as one side-by-side table.
#
# Usage: bench/dist.sh [ARGS]   ARGS go to target/release/profiles
#                               (default: --sustained snowmint; see
#                               target/release/profiles --help)
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --locked --release -p snowmint-cli >&2
cargo build --locked --profile dist -p snowmint-cli >&2
strip -o target/release/snowmint.stripped target/release/snowmint
size() { stat -c %s "$1"; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1000000 }'; }
release=$(size target/release/snowmint)
stripped=$(size target/release/snowmint.stripped)
dist=$(size target/dist/snowmint)
echo "| snowmint binary | bytes | MB | × dist |"
echo "|---|--:|--:|--:|"
for row in "release:$release" "release, stripped:$stripped" "dist:$dist"; do
  name=${row%%:*} bytes=${row#*:}
  echo "| $name | $bytes | $(mb "$bytes") | $(awk -v a="$bytes" -v b="$dist" 'BEGIN { printf "%.2f", a / b }') |"
done
echo

for profile in release dist; do
  cargo build --locked --profile "$profile" -p snowmint-bench --bin generator >&2
done
cargo build --locked --release -p snowmint-bench --bin profiles >&2
(($#)) || set -- --sustained snowmint
exec target/release/profiles "$@" release=target/release/generator dist=target/dist/generator
