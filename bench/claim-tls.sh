#!/usr/bin/env bash
# What TLS with client certificates (mTLS) to etcd costs a node's claim:
# the time from starting `snowmint serve --coordinator etcd://...` to its
# first ID, against a cleartext etcd, in one run. Two etcd servers run
# side by side (one with --cert-file/--key-file/--trusted-ca-file
# --client-cert-auth); nodes start in turns, each in a fleet of its own
# (a first claim: no mark of an earlier holder to wait out) and with a
# fresh state directory, and stop (releasing their slot) before the next.
#
# Usage: bench/claim-tls.sh [STARTS]      # default 10 starts each way
# Needs etcd (Debian: etcd-server) and curl.
set -euo pipefail
cd "$(dirname "$0")/.."
starts=${1:-10}
for tool in etcd curl; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install ${tool/etcd/etcd-server}" >&2; exit 1; }
done
cargo build --release --quiet -p snowmint-cli -p snowmint-bench --bin snowmint --bin tls

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# The node certificate names 127.0.0.1: etcd serves with it, and the
# node presents it as its client certificate.
target/release/tls certs "$work"

# etcd NAME SCHEME [flags...]: starts one; its client URL's port in $port.
etcd_server() {
  local name=$1 scheme=$2 peer
  shift 2
  port=$(free_port) peer=$(free_port)
  etcd --name "$name" --data-dir "$work/$name" \
    --listen-client-urls "$scheme://127.0.0.1:$port" --advertise-client-urls "$scheme://127.0.0.1:$port" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "$name=http://127.0.0.1:$peer" "$@" >"$work/$name.log" 2>&1 &
  pids+=("$!")
  for _ in $(seq 200); do
    curl -s --cacert "$work/ca.pem" --cert "$work/node.crt" --key "$work/node.key" \
      "$scheme://127.0.0.1:$port/health" | grep -q '"health":"true"' && return
    sleep 0.05
  done
  cat "$work/$name.log" >&2
  exit 1
}
etcd_server plain http
plain=$port
etcd_server mtls https --cert-file "$work/node.crt" --key-file "$work/node.key" \
  --trusted-ca-file "$work/ca.pem" --client-cert-auth
mtls=$port

# start KIND N [flags...]: ms from starting the node to its first ID.
start() {
  local kind=$1 n=$2 begin end pid http=""
  shift 2
  begin=$(date +%s%N)
  target/release/snowmint serve --listen 127.0.0.1:0 --state-dir "$work/state-$kind-$n" \
    --fleet "$kind-$n" --log warn "$@" >"$work/node.out" 2>"$work/node.err" &
  pid=$!
  until [[ -n $http ]]; do
    http=$(sed -n 's|^listening on http://||p' "$work/node.out")
    kill -0 "$pid" 2>/dev/null || { cat "$work/node.err" >&2; exit 1; }
    sleep 0.002
  done
  until curl -sf "http://$http/v1/id" >/dev/null; do sleep 0.002; done
  end=$(date +%s%N)
  kill -TERM "$pid"
  wait "$pid" || true
  echo $(((end - begin) / 1000000))
}

echo "etcd $(etcd --version | head -1 | awk '{print $3}'), $(nproc) cores; start to first ID, ms"
echo "| start | cleartext | mTLS |"
echo "|---|---|---|"
: >"$work/plain.ms"
: >"$work/mtls.ms"
for n in $(seq "$starts"); do
  a=$(start plain "$n" --coordinator "etcd://127.0.0.1:$plain")
  b=$(start mtls "$n" --coordinator "etcd://127.0.0.1:$mtls" --coordinator-ca "$work/ca.pem" \
    --coordinator-cert "$work/node.crt" --coordinator-key "$work/node.key")
  echo "$a" >>"$work/plain.ms"
  echo "$b" >>"$work/mtls.ms"
  echo "| $n | $a | $b |"
done
median() { sort -n "$1" | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'; }
echo
echo "median: cleartext $(median "$work/plain.ms") ms, mTLS $(median "$work/mtls.ms") ms"
