#!/usr/bin/env bash
# Bulk `snowmint decode` in other families against Twitter's, in one run:
# the same file of random IDs (below 2^63, so that every layout reads
# them) decoded by each layout in turn, round after round in a rotating
# order, as CSV into /dev/null. Prints the median seconds and IDs/s per layout, and the ratio
# to Twitter's rate. A benchmark, not a test: it asserts no speed.
#
# Usage: bench/decode-families.sh [SNOWMINT_BIN] [ROUNDS] [COUNT]
#   default: target/release/snowmint, 7 rounds, 2,000,000 IDs
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/snowmint}
rounds=${2:-7}
count=${3:-2000000}
layouts=(twitter discord instagram sonyflake tsid)
ids=$(mktemp /tmp/snowmint-ids.XXXXXX)
trap 'rm -f "$ids"' EXIT
python3 - "$count" >"$ids" <<'PY'
import random, sys
rng = random.Random(7)
sys.stdout.write("".join(f"{rng.randrange(2**63)}\n" for _ in range(int(sys.argv[1]))))
PY
declare -A times
# The order rotates from round to round: no layout always runs first.
for ((round = 0; round < rounds; round++)); do
  shift_by=$((round % ${#layouts[@]}))
  for layout in "${layouts[@]:shift_by}" "${layouts[@]:0:shift_by}"; do
    start=$(date +%s.%N)
    "$bin" decode --layout "$layout" --format csv <"$ids" >/dev/null
    end=$(date +%s.%N)
    times[$layout]+="$(echo "$end - $start" | bc) "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(echo "${times[twitter]}" | median)
echo "bulk decode of $count IDs, --format csv; median of $rounds rounds"
echo "| layout | seconds | IDs/s | ratio to twitter |"
echo "|---|---|---|---|"
for layout in "${layouts[@]}"; do
  m=$(echo "${times[$layout]}" | median)
  printf '| `%s` | %.3f | %.0f | %.3f |\n' "$layout" "$m" "$(echo "$count / $m" | bc -l)" "$(echo "$base / $m" | bc -l)"
done
