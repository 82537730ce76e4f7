# Shared by bench/tls.sh and bench/limits.sh (sourced, not run): two nodes
# side by side, hit in turn by wrk, the ratio B : A taken in each round
# (same minute, same load on the machine) and its median reported.
#
# The caller sets work (a temporary directory), then calls serve and
# compare. The settings, from the environment (HEADER: one request header
# wrk sends to both nodes, if set):
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-5}
GRPC_SECONDS=${GRPC_SECONDS:-5}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
servers=()
cleanup() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# serve BINARY NAME MACHINE [flags...]: starts a node; its address in $address.
serve() {
  local binary=$1 name=$2 machine=$3
  shift 3
  "$binary" serve --listen 127.0.0.1:0 --machine "$machine" \
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

# run NAME URL: one wrk run; "req/s p50 p99" appended to $work/NAME.runs.
run() {
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency ${HEADER:+-H "$HEADER"} "$2" >"$work/wrk.out"
  if grep -q "Non-2xx\|Socket errors" "$work/wrk.out"; then
    echo "$1: errors:" >&2; cat "$work/wrk.out" >&2; exit 1
  fi
  awk '/Requests\/sec/ { rps = $2 } $1 == "50%" { p50 = $2 } $1 == "99%" { p99 = $2 }
       END { print rps, p50, p99 }' "$work/wrk.out" >>"$work/$1.runs"
}

median() { sort -n "$1" | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'; }
median_run() { sort -n -k1,1 "$work/$1.runs" | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }' | sed 's/ / | /g'; }

# compare A URL_A B URL_B: ROUNDS rounds of wrk on A then B, per round and
# median; A and B name the runs in the output.
compare() {
  local a=$1 url_a=$2 b=$3 url_b=$4 round x y ratio
  echo "HTTP /v1/id, keep-alive, wrk -t$THREADS -c$CONNECTIONS, $DURATION per run, $ROUNDS rounds"
  echo "per round, req/s: $a, $b; $b : $a"
  for round in $(seq "$ROUNDS"); do
    run "$a" "$url_a"
    run "$b" "$url_b"
    x=$(tail -n 1 "$work/$a.runs" | cut -d' ' -f1)
    y=$(tail -n 1 "$work/$b.runs" | cut -d' ' -f1)
    ratio=$(awk -v a="$y" -v b="$x" 'BEGIN { printf "%.1f", 100 * a / b }')
    echo "round $round: $x $y; $ratio%"
    echo "$ratio" >>"$work/ratios"
  done
  echo
  echo "| /v1/id | req/s | p50 | p99 |"
  echo "|---|---|---|---|"
  echo "| $a | $(median_run "$a") |"
  echo "| $b | $(median_run "$b") |"
  echo
  echo "$b : $a = $(median "$work/ratios")% (median of the per-round ratios)"
  echo
}
