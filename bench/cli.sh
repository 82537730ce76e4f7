#!/usr/bin/env bash
# Throughput and peak memory of the snowmint command line.
#
# - bulk decode of a 10,000,000-line file to TSV and to JSON, for two files:
#   the IDs of `snowmint generate` (one node, a few seconds of time, like a
#   log) and IDs spread uniformly over 0..2^63 (every line a different day:
#   the worst case for writing the time);
# - `snowmint generate --count 10000000`, against the format's ceiling of
#   4096 IDs per millisecond (4,096,000 IDs/s);
# - `snowmint inspect` over 1,000,000 lines of mixed pasted text (links,
#   Discord mentions and timestamps, log lines with ULIDs and UUIDs, JSON
#   with ObjectIds, bare IDs in several encodings, prose without IDs), as
#   aligned text, as JSON, and as JSON of each token's best reading
#   (--top 1): lines per second.
#
# Needs GNU time (/usr/bin/time: apt-get install time) and python3 (to write
# the random file).
#
# Usage: bench/cli.sh            prints a Markdown table
#        RUNS=3 bench/cli.sh     runs per measurement (default 5; the best
#                                is reported)
#        BASELINE=PATH bench/cli.sh
#                                also runs the inspect measurements with
#                                the binary at PATH (an older build), each
#                                right before the same one with this
#                                build's, so that the two read as a ratio
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
lines=1000000
if [[ ! -s $dir/pasted.txt ]]; then
  echo "writing $dir/pasted.txt" >&2
  python3 - "$dir/pasted.txt" "$lines" <<'EOF'
import random, sys, uuid
path, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(2026)
crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
def snowflake(epoch):
    ms = rng.randrange(1_500_000_000_000, 1_750_000_000_000) - epoch
    return (ms << 22) | rng.getrandbits(22)
def ulid():
    value = (rng.randrange(1_500_000_000_000, 1_750_000_000_000) << 80) | rng.getrandbits(80)
    return "".join(crockford[(value >> (5 * i)) & 31] for i in reversed(range(26)))
shapes = [
    lambda: f"https://x.com/someone/status/{snowflake(1288834974657)}",
    lambda: f"https://discord.com/channels/{snowflake(1420070400000)}/{snowflake(1420070400000)}/{snowflake(1420070400000)}",
    lambda: f"hey <@{snowflake(1420070400000)}> see <#{snowflake(1420070400000)}> at <t:{rng.randrange(1_500_000_000, 1_750_000_000)}:R>",
    lambda: f"2025-06-15T10:00:00Z INFO request {ulid()} user={uuid.UUID(int=rng.getrandbits(128), version=4)} done in 12 ms",
    lambda: f'{{"_id": {{"$oid": "{rng.getrandbits(96):024x}"}}, "order": "{snowflake(1288834974657)}", "n": 12}}',
    lambda: str(snowflake(1288834974657)),
    lambda: f"0x{snowflake(1288834974657):016x}",
    lambda: "nothing to see here, just words and a year like 2024 and a count of 42",
]
with open(path, "w") as out:
    for _ in range(count // 10_000):
        out.write("".join(rng.choice(shapes)() + "\n" for _ in range(10_000)))
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

rate() { awk "BEGIN { printf \"%.2f M\", ${2:-$count} / $1 / 1e6 }"; }

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

echo
echo "| what | command | best wall (s) | lines/s (wall) | CPU (s) | lines/s (CPU) | peak RSS (MiB) |"
echo "|---|---|---|---|---|---|---|"
for how in "text" "json" "json --top 1"; do
  for which in ${BASELINE:+"$BASELINE"} "$bin"; do
    cmd="$which inspect --now 2025-06-15T00:00:00Z --format $how < $dir/pasted.txt > /dev/null"
    read -r wall cpu mib < <(measure "$cmd")
    echo "| inspect pasted text as $how | \`$cmd\` | $wall | $(rate "$wall" "$lines") | $cpu | $(rate "$cpu" "$lines") | $mib |"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
