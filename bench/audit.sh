#!/usr/bin/env bash
# What `snowmint audit` costs: 10,000,000 IDs read from a file, judged
# against a claim history of 1,024 slots x 16 claims on a real etcd, in
# one run. Reports IDs per second (wall time; and the CPU time, user and
# system, which a shared machine's load does not stretch) and the
# process's peak memory (maximum resident set, from /usr/bin/time), with
# the default memory limit
# (64 MiB: the sort spills two chunks to disk and merges three) and with
# one large enough to sort in memory; and the same file without the
# coordinator (the history's share).
#
# The IDs and the history are made by bench/audit-data.py from the
# format's formula: every slot held by 16 claims in turn, each for an
# hour; about 610 IDs per claim, at times inside it, so that each ID is
# judged against its slot's records; 1,000 of them planted twice, 100
# dated in no claim.
#
# Usage: bench/audit.sh [IDS]      # default 10000000
# Needs etcd (Debian: etcd-server), curl and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
ids=${1:-10000000}
for tool in etcd curl /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "$tool is missing" >&2; exit 1; }
done
cargo build --release --quiet -p snowmint-cli --bin snowmint

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

port=$(free_port) peer=$(free_port)
etcd --name audit --data-dir "$work/etcd" \
  --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
  --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
  --initial-cluster "audit=http://127.0.0.1:$peer" >"$work/etcd.log" 2>&1 &
pids+=("$!")
for _ in $(seq 200); do
  curl -s "http://127.0.0.1:$port/health" | grep -q '"health":"true"' && break
  sleep 0.05
done

python3 bench/audit-data.py "$work/ids.txt" "http://127.0.0.1:$port" "$ids"
ls -l "$work/ids.txt" | awk '{ printf "input: %.0f MB\n", $5 / 1e6 }'

# run LABEL ARGS...: one audit, its wall time and peak memory.
run() {
  local label=$1
  shift
  /usr/bin/time -f '%e %M %U %S' -o "$work/time" target/release/snowmint audit "$work/ids.txt" \
    --temp-dir "$work" --now 2100-01-01T00:00:00Z --format json "$@" >"$work/report.json" || [[ $? == 3 ]]
  # GNU time puts "Command exited with non-zero status 3" first.
  read -r seconds kib user sys < <(tail -1 "$work/time")
  python3 - "$work/report.json" "$label" "$seconds" "$kib" "$user" "$sys" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
label, seconds, kib = sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
cpu = float(sys.argv[5]) + float(sys.argv[6])
print(f"{label}: {report['ids']:,} IDs in {seconds:.2f} s ({cpu:.2f} s CPU) = {report['ids'] / seconds / 1e6:.2f} M IDs/s, "
      f"peak {kib / 1024:.0f} MiB; {report['spilled_runs']} chunks spilled; "
      f"{report['duplicates']['count']} duplicates, {report['no_known_holder']['count']} with no known holder")
EOF
}
coordinator=(--coordinator "etcd://127.0.0.1:$port" --fleet audit)
for round in 1 2 3; do
  run "round $round, history of 1,024 x 16 claims, --memory-limit 64MiB (default)" "${coordinator[@]}"
  run "round $round, history of 1,024 x 16 claims, --memory-limit 1GiB" "${coordinator[@]}" --memory-limit 1GiB
  run "round $round, no coordinator, --memory-limit 64MiB" --layout twitter
done
