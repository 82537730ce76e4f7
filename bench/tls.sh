#!/usr/bin/env bash
# What TLS costs a node, measured in one run against cleartext of the same
# build: HTTP /v1/id with keep-alive (wrk, over https:// and http://), and
# gRPC StreamIds (target/release/tls, bench/src/bin/tls.rs).
#
# Two release nodes run side by side, one in cleartext and one with a
# certificate made for the run; wrk hits each in turn, ROUNDS rounds of
# DURATION, and the ratio TLS : cleartext is taken in each round (same
# minute, same load) and its median reported.
#
# Usage: bench/tls.sh
#   DURATION=10s CONNECTIONS=16 THREADS=1 ROUNDS=5 GRPC_SECONDS=5 bench/tls.sh
# Needs wrk (Debian: apt-get install wrk; its https is OpenSSL's).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-5}
GRPC_SECONDS=${GRPC_SECONDS:-5}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
cargo build --release --quiet -p snowmint-cli -p snowmint-bench --bin snowmint --bin tls

work=$(mktemp -d)
servers=()
cleanup() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
target/release/tls certs "$work"

# serve NAME MACHINE [flags...]: starts a node; its address in $address.
serve() {
  local name=$1 machine=$2
  shift 2
  target/release/snowmint serve --listen 127.0.0.1:0 --machine "$machine" \
    --state-dir "$work/state-$name" --log warn "$@" >"$work/$name.out" 2>"$work/$name.err" &
  servers+=("$!")
  address=""
  for _ in $(seq 100); do
    address=$(sed -n 's|^listening on https\?://||p' "$work/$name.out" || true)
    [[ -n $address ]] && return
    sleep 0.1
  done
  cat "$work/$name.err" >&2
  exit 1
}
serve plain 1
plain=$address
serve tls 2 --tls-cert "$work/node.crt" --tls-key "$work/node.key"
secure=$address

# run NAME URL: one wrk run; "req/s p50 p99" appended to $work/NAME.runs.
run() {
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$2" >"$work/wrk.out"
  if grep -q "Non-2xx\|Socket errors" "$work/wrk.out"; then
    echo "$1: errors:" >&2; cat "$work/wrk.out" >&2; exit 1
  fi
  awk '/Requests\/sec/ { rps = $2 } $1 == "50%" { p50 = $2 } $1 == "99%" { p99 = $2 }
       END { print rps, p50, p99 }' "$work/wrk.out" >>"$work/$1.runs"
}

echo "HTTP /v1/id, keep-alive, wrk -t$THREADS -c$CONNECTIONS, $DURATION per run, $ROUNDS rounds"
echo "per round, req/s: cleartext, TLS; TLS : cleartext"
for round in $(seq "$ROUNDS"); do
  run plain "http://$plain/v1/id"
  run tls "https://$secure/v1/id"
  clear=$(tail -n 1 "$work/plain.runs" | cut -d' ' -f1)
  tls=$(tail -n 1 "$work/tls.runs" | cut -d' ' -f1)
  ratio=$(awk -v a="$tls" -v b="$clear" 'BEGIN { printf "%.1f", 100 * a / b }')
  echo "round $round: $clear $tls; $ratio%"
  echo "$ratio" >>"$work/ratios"
done
median() { sort -n "$1" | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'; }
echo
echo "| /v1/id | req/s | p50 | p99 |"
echo "|---|---|---|---|"
echo "| cleartext | $(sort -n -k1,1 "$work/plain.runs" | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }' | tr ' ' '|' | sed 's/|/ | /g') |"
echo "| TLS | $(sort -n -k1,1 "$work/tls.runs" | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }' | tr ' ' '|' | sed 's/|/ | /g') |"
echo
echo "TLS : cleartext = $(median "$work/ratios")% (median of the per-round ratios)"
echo
target/release/tls grpc target/release/snowmint "$work" "$GRPC_SECONDS" "$ROUNDS"
