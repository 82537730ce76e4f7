#!/usr/bin/env bash
# Throughput and peak memory of the snowmint command line.
#
# - bulk decode of a 10,000,000-line file to TSV and to JSON, for two files:
#   the IDs of `snowmint generate` (one node, a few seconds of time, like a
#   log) and IDs spread uniformly over 0..2^63 (every line a different day:
#   the worst case for writing the time);
# - `snowmint generate --count 10000000`, against the format's ceiling of
#   4096 IDs per millisecond (4,096,000 IDs/s).
#
# Needs hyperfine (apt-get install hyperfine) and GNU time (/usr/bin/time,
# apt-get install time) and python3 (to write the random file).
#
# Usage: bench/cli.sh            prints a Markdown table
#        RUNS=3 bench/cli.sh     fewer runs per measurement (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-5}
count=10000000
ceiling=4096000
dir=target/bench-cli
bin=target/release/snowmint

for tool in hyperfine /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "bench/cli.sh needs $tool" >&2; exit 1; }
done

cargo build --release -p snowmint-cli >&2
mkdir -p "$dir"

if [[ ! -s $dir/log-ids.txt ]]; then
  echo "writing $dir/log-ids.txt" >&2
  "$bin" generate --datacenter 1 --machine 2 --count "$count" >"$dir/log-ids.txt"
fi
if [[ ! -s $dir/random-ids.txt ]]; then
  echo "writing $dir/random-ids.txt" >&2
  python3 - "$dir/random-ids.txt" "$count" <<'EOF'
import random, sys
path, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(2024)
with open(path, "w") as out:
    for _ in range(count // 100_000):
        out.write("".join(f"{rng.getrandbits(63)}\n" for _ in range(100_000)))
EOF
fi

# Mean wall time in seconds of a shell command, over $runs runs.
mean_seconds() {
  local json=$dir/hyperfine.json
  hyperfine --style none --warmup 1 --runs "$runs" --export-json "$json" "$1" >/dev/null
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"])' "$json"
}

# Peak resident memory in MiB of a shell command.
peak_mib() {
  /usr/bin/time -f '%M' -o "$dir/time.txt" bash -c "$1"
  awk '{ printf "%.1f", $1 / 1024 }' "$dir/time.txt"
}

echo "| what | command | time (s) | IDs/s | peak RSS (MiB) |"
echo "|---|---|---|---|---|"
for file in log-ids random-ids; do
  for format in tsv json; do
    cmd="$bin decode --format $format < $dir/$file.txt > /dev/null"
    secs=$(mean_seconds "$cmd")
    mib=$(peak_mib "$cmd")
    rate=$(python3 -c "print(f'{$count / $secs:,.0f}')")
    echo "| decode $file to $format | \`$cmd\` | $(printf '%.3f' "$secs") | $rate | $mib |"
  done
done

cmd="$bin generate --datacenter 1 --machine 2 --count $count > /dev/null"
secs=$(mean_seconds "$cmd")
mib=$(peak_mib "$cmd")
rate=$(python3 -c "print(f'{$count / $secs:,.0f} ({100 * $count / $secs / $ceiling:.2f}% of the ceiling)')")
echo "| generate | \`$cmd\` | $(printf '%.3f' "$secs") | $rate | $mib |"
