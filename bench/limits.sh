#!/usr/bin/env bash
# What the bounded resources of issue 24 (part 0: connection cap,
# deadlines, stream and call limits, batches taking turns) cost a node,
# measured in one run against the build before them: HTTP /v1/id with
# keep-alive (wrk) and gRPC StreamIds (target/release/tls builds), both
# nodes in cleartext with default settings, side by side, in turns
# (bench/ab.sh).
#
# Usage: bench/limits.sh [BEFORE]
#   BEFORE  the commit to compare with (default 31a4eaf^, the last one
#           without the limits); built in a temporary worktree into
#           target/bench-before
#   DURATION=10s CONNECTIONS=16 THREADS=1 ROUNDS=5 GRPC_SECONDS=5 bench/limits.sh
# Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."

BEFORE=${1:-31a4eaf^}
work=$(mktemp -d)
source bench/ab.sh
cargo build --release --quiet -p snowmint-cli -p snowmint-bench --bin snowmint --bin tls
# The earlier build is kept, stamped with its commit, for the next run.
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
