#!/usr/bin/env bash
# Load test of `snowmint serve` with wrk, on loopback.
#
# Starts the release binary on a free port with a fresh state directory and
# drives it with wrk: /healthz (the HTTP stack's own baseline, same
# process), /v1/id (JSON and text/plain) and /v1/ids?count=4096 (IDs/s =
# req/s * 4096, against the format's ceiling of 4,096,000 IDs/s per node).
# The endpoints are measured in alternation for ROUNDS rounds; the table
# gives the median round of each, and the /v1/id : /healthz ratio is the
# median of the per-round ratios, so that load from other programs on the
# machine hits both sides alike.
#
# Usage: bench/serve.sh
#   DURATION=10s CONNECTIONS=16 THREADS=1 ROUNDS=5 BATCH_CONNECTIONS=8 bench/serve.sh
# Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
BATCH_CONNECTIONS=${BATCH_CONNECTIONS:-8}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-5}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
cargo build --release --quiet -p snowmint-cli

work=$(mktemp -d)
: >"$work/stdout"
target/release/snowmint serve --datacenter 0 --machine 0 --listen 127.0.0.1:0 --state-dir "$work/state" \
  >"$work/stdout" 2>"$work/stderr" &
server=$!
cleanup() { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

for _ in $(seq 100); do
  address=$(sed -n 's|^listening on http://||p' "$work/stdout" || true)
  [[ -n $address ]] && break
  sleep 0.1
done
[[ -n ${address:-} ]] || { cat "$work/stderr" >&2; exit 1; }

# run NAME CONNECTIONS URL [wrk options...]: one wrk run, summarized as
# "req/s p50 p90 p99" in $work/NAME.runs (one line per round).
run() {
  local name=$1 connections=$2 url=$3
  shift 3
  wrk -t"$THREADS" -c"$connections" -d"$DURATION" --latency "$@" "$url" >"$work/wrk.out"
  if grep -q "Non-2xx" "$work/wrk.out"; then
    echo "$name: some answers were not 2xx:" >&2; cat "$work/wrk.out" >&2; exit 1
  fi
  awk '
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = $2 } $1 == "90%" { p90 = $2 } $1 == "99%" { p99 = $2 }
    END { print rps, p50, p90, p99 }' "$work/wrk.out" >>"$work/$name.runs"
}

base="http://$address"
echo "snowmint serve on $address; wrk -t$THREADS, $DURATION per run, $ROUNDS rounds" >&2
for round in $(seq "$ROUNDS"); do
  echo "round $round/$ROUNDS" >&2
  run healthz "$CONNECTIONS" "$base/healthz"
  run id "$CONNECTIONS" "$base/v1/id"
  run id_text "$CONNECTIONS" "$base/v1/id" -H "Accept: text/plain"
  run ids "$BATCH_CONNECTIONS" "$base/v1/ids?count=4096"
done

# The median round of a series, by req/s.
median() { sort -n -k1,1 "$work/$1.runs" | awk '{ line[NR] = $0 } END { print line[int((NR + 1) / 2)] }'; }

echo
echo "| endpoint | connections | req/s | p50 | p90 | p99 | IDs/s |"
echo "|---|---|---|---|---|---|---|"
row() {
  local label=$1 name=$2 connections=$3 per_request=$4
  read -r rps p50 p90 p99 <<<"$(median "$name")"
  local ids="-"
  [[ $per_request == - ]] || ids=$(awk -v r="$rps" -v n="$per_request" 'BEGIN { printf "%.0f", r * n }')
  echo "| $label | $connections | $rps | $p50 | $p90 | $p99 | $ids |"
}
row "/healthz" healthz "$CONNECTIONS" -
row "/v1/id" id "$CONNECTIONS" 1
row "/v1/id (text/plain)" id_text "$CONNECTIONS" 1
row "/v1/ids?count=4096" ids "$BATCH_CONNECTIONS" 4096

echo
echo "Per round, req/s: /healthz, /v1/id, /v1/id (text/plain), /v1/ids?count=4096; /v1/id : /healthz"
paste -d' ' "$work/healthz.runs" "$work/id.runs" "$work/id_text.runs" "$work/ids.runs" |
  awk '{ printf "round %d: %s %s %s %s; %.1f%%\n", NR, $1, $5, $9, $13, 100 * $5 / $1 }'

ratio=$(paste -d' ' "$work/id.runs" "$work/healthz.runs" | awk '{ print $1 / $5 }' | sort -n |
  awk '{ r[NR] = $1 } END { printf "%.1f", 100 * r[int((NR + 1) / 2)] }')
share=$(median ids | awk '{ printf "%.1f", 100 * $1 * 4096 / 4096000 }')
echo
echo "/v1/id : /healthz = $ratio% (median of per-round ratios; target >= 90%)"
echo "/v1/ids?count=4096 delivers $share% of 4,096,000 IDs/s (target >= 95%)"
