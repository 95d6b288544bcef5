#!/usr/bin/env bash
# The network rendezvous round trip of two builds of net_channels and the Go
# twin, alternating in one run (3 rounds), then the 100-channel throughput of
# both builds: for before/after figures on a noisy machine.
#
#   bash benches/net_ab.sh BEFORE_NET_CHANNELS_BINARY [VALUES]   (default 100000)
#
# "after" is this tree's build. 2 workers / GOMAXPROCS 2 per program.
set -euo pipefail
cd "$(dirname "$0")/.."
B=$1
V=${2:-100000}
cargo build --release --quiet --example net_channels
(cd benches/go && go build -o ../../target/release/go-netpingpong ./cmd/netpingpong)
A=target/release/examples/net_channels
G=target/release/go-netpingpong

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

for _ in 1 2 3; do
  echo -n "before: "; run "$B" --workers 2 --chans 1 --values "$V" -- "$B" --workers 2 --role server --chans 1
  echo -n "after:  "; run $A --workers 2 --chans 1 --values "$V" -- $A --workers 2 --role server --chans 1
  echo -n "go:     "; GOMAXPROCS=2 run $G -role client -values "$V" -- $G -role server
done
echo -n "before: "; run "$B" --workers 2 --chans 100 --values "$V" -- "$B" --workers 2 --role server --chans 100
echo -n "after:  "; run $A --workers 2 --chans 100 --values "$V" -- $A --workers 2 --role server --chans 100
