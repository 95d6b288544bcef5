#!/usr/bin/env bash
# The network channel figures of issue 14 (N1), in one run: the round trip of a
# network rendezvous (send + acknowledgement) over loopback, hoare's
# net_channels (one channel) against its Go twin netpingpong (the same frames
# between two Go programs), then hoare's one-way throughput of small values on
# one channel and on 100 channels multiplexed over one connection.
#
#   bash benches/net.sh [VALUES]        (default 100000)
#
# Every program gets 2 workers / GOMAXPROCS 2. Prints one bench= line each.
set -euo pipefail
cd "$(dirname "$0")/.."
VALUES=${1:-100000}
cargo build --release --quiet --example net_channels
(cd benches/go && go build -o ../../target/release/go-netpingpong ./cmd/netpingpong)

run() { # client args, then -- and the server command
  local client=() server=()
  while [ "$1" != -- ]; do client+=("$1"); shift; done
  shift; server=("$@")
  local out; out=$(mktemp)
  "${server[@]}" >"$out" &
  local pid=$!
  for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.05; done
  local addr; addr=$(awk '/listening/{print $2}' "$out")
  "${client[@]}" --addr "$addr" | tail -1
  kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
  rm -f "$out"
}

H=target/release/examples/net_channels
G=target/release/go-netpingpong
run $H --workers 2 --chans 1 --values "$VALUES" -- $H --workers 2 --role server --chans 1
GOMAXPROCS=2 run $G -role client -values "$VALUES" -- $G -role server
run $H --workers 2 --chans 100 --values "$VALUES" -- $H --workers 2 --role server --chans 100
