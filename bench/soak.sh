#!/usr/bin/env bash
# Soak test of `snowmint serve`: wrk at saturation against /v1/id and
# /v1/ids?count=4096 at the same time for DURATION (10 minutes), on
# loopback, against the release binary with a fresh state directory.
#
# - Errors: wrk's socket errors and non-2xx answers must be zero.
# - Duplicates: a sample of the IDs handed out is checked for repeats. The
#   batch wrk keeps one response body in SAMPLE_EVERY (a Lua script), and
#   a curl loop takes single IDs all along; every sampled ID goes into one
#   list, which must hold no ID twice, and each source's IDs must increase.
# - Memory: the service's resident set (VmRSS) is read every 10 s; start
#   (after a short warm-up under load) and end figures are reported, with
#   the minimum and maximum in between.
#
# Usage: bench/soak.sh
#   DURATION=10m ID_CONNECTIONS=16 BATCH_CONNECTIONS=8 SAMPLE_EVERY=500 bench/soak.sh
# Needs wrk (Debian: apt-get install wrk) and curl.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10m}
ID_CONNECTIONS=${ID_CONNECTIONS:-16}
BATCH_CONNECTIONS=${BATCH_CONNECTIONS:-8}
SAMPLE_EVERY=${SAMPLE_EVERY:-500}

for tool in wrk curl; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install $tool" >&2; exit 1; }
done
cargo build --release --quiet -p snowmint-cli

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

target/release/snowmint serve --datacenter 0 --machine 0 --listen 127.0.0.1:0 --state-dir "$work/state" \
  >"$work/stdout" 2>"$work/stderr" &
server=$!
pids+=("$server")
address=""
for _ in $(seq 100); do
  address=$(sed -n 's|^listening on http://||p' "$work/stdout")
  [[ -n $address ]] && break
  sleep 0.1
done
[[ -n $address ]] || { cat "$work/stderr" >&2; exit 1; }
base="http://$address"

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$server/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

seconds=$(awk -v d="$DURATION" 'BEGIN {
  n = d + 0; u = substr(d, length(d));
  print (u == "m" ? n * 60 : u == "h" ? n * 3600 : n) }')
echo "snowmint serve (pid $server) on $address; wrk for $DURATION (${seconds}s)" >&2
echo "idle RSS: $(mib "$(rss_kib)") MiB" >&2
idle_rss=$(rss_kib)

# Memory, every 10 s: "seconds-since-start KiB".
(
  start=$(date +%s)
  while kill -0 "$server" 2>/dev/null; do
    echo "$(($(date +%s) - start)) $(rss_kib)"
    sleep 10
  done
) >"$work/rss" 2>/dev/null &
pids+=("$!")

# The single-ID sample, all along.
(
  while kill -0 "$server" 2>/dev/null; do
    curl -s --max-time 5 "$base/v1/id" || true
    echo
  done
) >"$work/single-sample" 2>/dev/null &
sampler=$!
pids+=("$sampler")

SOAK_DIR=$work SOAK_SAMPLE_EVERY=$SAMPLE_EVERY \
  wrk -t1 -c"$BATCH_CONNECTIONS" -d"$DURATION" --latency -s bench/soak-sample.lua \
  "$base/v1/ids?count=4096" >"$work/wrk-ids" 2>&1 &
wrk_ids=$!
wrk -t1 -c"$ID_CONNECTIONS" -d"$DURATION" --latency "$base/v1/id" >"$work/wrk-id" 2>&1 &
wrk_id=$!
pids+=("$wrk_ids" "$wrk_id")
wait "$wrk_id" "$wrk_ids"
end_rss=$(rss_kib)
kill "$sampler" 2>/dev/null || true

summary() {
  awk '
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = $2 } $1 == "99%" { p99 = $2 }
    /requests in/ { requests = $1 }
    /Socket errors/ { errors = $0; sub(/^ *Socket errors: */, "", errors) }
    /Non-2xx/ { non2xx = $NF }
    END {
      printf "%s %s %s %s %s|%s\n", requests, rps, p50, p99, (non2xx == "" ? 0 : non2xx),
        (errors == "" ? "none" : errors) }' "$1"
}
IFS='|' read -r id_line id_errors <<<"$(summary "$work/wrk-id")"
IFS='|' read -r ids_line ids_errors <<<"$(summary "$work/wrk-ids")"
read -r id_requests id_rps id_p50 id_p99 id_non2xx <<<"$id_line"
read -r ids_requests ids_rps ids_p50 ids_p99 ids_non2xx <<<"$ids_line"

# The duplicate check over every sampled ID.
grep -ohE '[0-9]{6,19}' "$work"/sample-*.json >"$work/batch-ids" || true
grep -ohE '[0-9]{6,19}' "$work/single-sample" >"$work/single-ids" || true
# IDs do not fit awk's doubles: compare them as text, by length first.
before='function before(a, b) { return length(a) < length(b) || (length(a) == length(b) && (a "") < (b "")) }'
increasing() { awk "$before"' NR > 1 && !before(last, $1) { bad++ } { last = $1 } END { print bad + 0 }' "$1"; }
# Within each sampled batch (batches from different connections may finish
# out of order, so only a batch's own order is checked).
batch_disorder=$(cat "$work"/sample-*.json 2>/dev/null | awk "$before"' {
    n = split($0, part, /[^0-9]+/); last = ""
    for (i = 1; i <= n; i++) if (part[i] != "") { if (last != "" && !before(last, part[i])) bad++; last = part[i] }
  } END { print bad + 0 }')
single_disorder=$(increasing "$work/single-ids")
sampled=$(cat "$work/batch-ids" "$work/single-ids" | wc -l)
duplicates=$(cat "$work/batch-ids" "$work/single-ids" | sort | uniq -d | wc -l)
single_failed=$(grep -cv '^{"id":"[0-9]*"}$' "$work/single-sample" || true)

read -r rss_min rss_max < <(awk 'NR == 1 { min = $2; max = $2 }
  { if ($2 < min) min = $2; if ($2 > max) max = $2 } END { print min, max }' "$work/rss")
warm_rss=$(awk '$1 >= 10 { print $2; exit }' "$work/rss")
issued=$(curl -s "$base/metrics" | awk '/^snowmint_ids_issued_total / { printf "%.0f", $2 }')

echo
echo "| endpoint | connections | requests | req/s | p50 | p99 | IDs/s | non-2xx | socket errors |"
echo "|---|---|---|---|---|---|---|---|---|"
echo "| /v1/id | $ID_CONNECTIONS | $id_requests | $id_rps | $id_p50 | $id_p99 | $(printf '%.0f' "$id_rps") | $id_non2xx | $id_errors |"
echo "| /v1/ids?count=4096 | $BATCH_CONNECTIONS | $ids_requests | $ids_rps | $ids_p50 | $ids_p99 | $(awk -v r="$ids_rps" 'BEGIN { printf "%.0f", r * 4096 }') | $ids_non2xx | $ids_errors |"
echo
echo "IDs issued in all (snowmint_ids_issued_total): $issued"
echo "sampled IDs checked: $sampled ($(wc -l <"$work/batch-ids") from $(ls "$work"/sample-*.json 2>/dev/null | wc -l) batch sample files, $(wc -l <"$work/single-ids") single); duplicates: $duplicates; out of order: $((batch_disorder + single_disorder)); failed single requests: $single_failed"
echo "RSS: idle $(mib "$idle_rss") MiB, start (10 s into the load) $(mib "$warm_rss") MiB, end $(mib "$end_rss") MiB, min $(mib "$rss_min") MiB, max $(mib "$rss_max") MiB"
echo "RSS every 10 s (MiB): $(awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $2 / 1024 }' "$work/rss")"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

status=0
if [[ $id_non2xx != 0 || $ids_non2xx != 0 || $id_errors != none || $ids_errors != none ]]; then
  echo "FAILED: wrk saw errors" >&2
  status=1
fi
if ((duplicates || batch_disorder || single_disorder)); then
  echo "FAILED: duplicate or out-of-order IDs in the sample" >&2
  status=1
fi
if grep -q panicked "$work/stderr"; then
  echo "FAILED: the service panicked" >&2
  status=1
fi
exit "$status"
