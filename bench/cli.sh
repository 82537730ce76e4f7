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
# Needs GNU time (/usr/bin/time: apt-get install time) and python3 (to write
# the random file).
#
# Usage: bench/cli.sh            prints a Markdown table
#        RUNS=3 bench/cli.sh     runs per measurement (default 5; the best
#                                is reported)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-5}
count=10000000
ceiling=4096000
dir=target/bench-cli
bin=target/release/snowmint

for tool in /usr/bin/time python3; do
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

# Runs a shell command $runs times under GNU time; prints the best wall
# time (s), the CPU time (user + system, s) of that run, and the largest
# peak resident memory (MiB) seen. The best of several runs is what the
# program can do; the machine is shared, and slower runs measure the others.
measure() {
  local best="" cpu="" rss=0
  for ((i = 0; i < runs; i++)); do
    local start end
    start=$(date +%s%N)
    /usr/bin/time -f '%U %S %M' -o "$dir/time.txt" bash -c "$1"
    end=$(date +%s%N)
    # GNU time's wall clock has 10 ms steps; the nanosecond clock around it
    # (which also counts starting bash and time, about 2 ms) is finer.
    wall=$(awk "BEGIN { printf \"%.3f\", ($end - $start) / 1e9 }")
    read -r user sys kib <"$dir/time.txt"
    if [[ -z $best ]] || awk "BEGIN { exit !($wall < $best) }"; then
      best=$wall
      cpu=$(awk "BEGIN { print $user + $sys }")
    fi
    ((kib > rss)) && rss=$kib
  done
  echo "$best $cpu $(awk "BEGIN { printf \"%.1f\", $rss / 1024 }")"
}

rate() { awk "BEGIN { printf \"%.2f M\", $count / $1 / 1e6 }"; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "| what | command | best wall (s) | IDs/s (wall) | CPU (s) | IDs/s (CPU) | peak RSS (MiB) |"
echo "|---|---|---|---|---|---|---|"
for file in log-ids random-ids; do
  for format in tsv json; do
    cmd="$bin decode --format $format < $dir/$file.txt > /dev/null"
    read -r wall cpu mib < <(measure "$cmd")
    echo "| decode $file to $format | \`$cmd\` | $wall | $(rate "$wall") | $cpu | $(rate "$cpu") | $mib |"
  done
done

cmd="$bin generate --datacenter 1 --machine 2 --count $count > /dev/null"
read -r wall cpu mib < <(measure "$cmd")
share=$(awk "BEGIN { printf \"%.2f\", 100 * $count / $wall / $ceiling }")
echo "| generate | \`$cmd\` | $wall | $(rate "$wall") = $share % of 4.096 M | $cpu | - | $mib |"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
