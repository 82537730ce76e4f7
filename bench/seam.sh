#!/usr/bin/env bash
# What the one front-end seam of issue 34 costs a node, measured in one
# run against the build before it: HTTP /v1/id with keep-alive (wrk),
# gRPC StreamIds (target/release/tls builds) and memcached `get`
# (target/release/memcached builds), both nodes in cleartext with default
# settings, side by side, in turns (bench/ab.sh).
#
# Usage: bench/seam.sh [BEFORE]
#   BEFORE  the commit to compare with (default e5a891b, the last one
#           before issue 34); built in a temporary worktree into
#           target/bench-before (kept, stamped with its commit, for the
#           next run)
#   DURATION=10s CONNECTIONS=16 THREADS=1 ROUNDS=5 GRPC_SECONDS=5 bench/seam.sh
# Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."

BEFORE=${1:-e5a891b}
work=$(mktemp -d)
source bench/ab.sh
cargo build --release --quiet -p snowmint-cli -p snowmint-bench --bin snowmint --bin tls --bin memcached
commit=$(git rev-parse --verify "$BEFORE^{commit}")
if [[ $(cat target/bench-before/commit 2>/dev/null) != "$commit" || ! -x target/bench-before/release/snowmint ]]; then
  git worktree add --detach --quiet "$work/before" "$commit"
  CARGO_TARGET_DIR=$PWD/target/bench-before cargo build --release --quiet \
    --manifest-path "$work/before/Cargo.toml" -p snowmint-cli
  git worktree remove --force "$work/before"
  echo "$commit" >target/bench-before/commit
fi
before=target/bench-before/release/snowmint
echo "before: $BEFORE ($(git log -1 --format='%h %s' "$BEFORE" | cut -c1-60)); after: $(git log -1 --format='%h' HEAD)$(git diff --quiet HEAD || echo ' with local changes')"
echo
serve "$before" before 1
old=$address
serve target/release/snowmint after 2
new=$address
compare before "http://$old/v1/id" after "http://$new/v1/id"
target/release/tls builds "$before" target/release/snowmint "$GRPC_SECONDS" "$ROUNDS"
echo
target/release/memcached builds "$before" target/release/snowmint "$GRPC_SECONDS" "$ROUNDS"
