#!/usr/bin/env bash
# What bearer tokens (--auth-token-file) cost /v1/id: a node with tokens
# against one without, the same build side by side, wrk sending the
# token to both, in turns (bench/ab.sh).
#
# Usage: bench/auth.sh
#   DURATION=10s CONNECTIONS=16 THREADS=1 ROUNDS=5 bench/auth.sh
# Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
source bench/ab.sh
cargo build --release --quiet -p snowmint-cli
token=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
echo "$token" >"$work/tokens"
chmod 600 "$work/tokens"
HEADER="Authorization: Bearer $token"
serve target/release/snowmint none 1
open=$address
serve target/release/snowmint tokens 2 --auth-token-file "$work/tokens"
guarded=$address
compare none "http://$open/v1/id" tokens "http://$guarded/v1/id"
