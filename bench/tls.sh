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

work=$(mktemp -d)
source bench/ab.sh
cargo build --release --quiet -p snowmint-cli -p snowmint-bench --bin snowmint --bin tls
target/release/tls certs "$work"
serve target/release/snowmint cleartext 1
plain=$address
serve target/release/snowmint TLS 2 --tls-cert "$work/node.crt" --tls-key "$work/node.key"
secure=$address
compare cleartext "http://$plain/v1/id" TLS "https://$secure/v1/id"
target/release/tls grpc target/release/snowmint "$work" "$GRPC_SECONDS" "$ROUNDS"
