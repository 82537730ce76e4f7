#!/usr/bin/env bash
# The generator benchmark under three cargo profiles in one run, printed as
# one side-by-side table (markdown, as BENCHMARKS.md quotes it):
#
# - release:    the workspace's release profile (16 codegen units, no LTO);
# - bench-thin: release with codegen-units = 1 and lto = "thin";
# - bench-lto:  release with codegen-units = 1 and lto = "fat".
#
# The two LTO profiles are in the root Cargo.toml; they build what a user
# who turns LTO on for their own binary gets from snowmint.
#
# Usage: bench/profiles.sh [ARGS]   ARGS go to target/release/profiles
#                                   (--passes, --rounds, --sustained-rounds,
#                                   --seconds, --sustained, --only; see
#                                   target/release/profiles --help)
set -euo pipefail
cd "$(dirname "$0")/.."

profiles=(release bench-thin bench-lto)
binaries=()
for profile in "${profiles[@]}"; do
  cargo build --locked --profile "$profile" -p snowmint-bench --bin generator >&2
  binaries+=("$profile=target/$profile/generator")
done
cargo build --locked --release -p snowmint-bench --bin profiles >&2
exec target/release/profiles "$@" "${binaries[@]}"
