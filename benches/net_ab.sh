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
# shellcheck source=benches/net_common.sh
source benches/net_common.sh
A=target/release/examples/net_channels
G=target/release/go-netpingpong

for _ in 1 2 3; do
  echo -n "before: "; run "$B" --workers 2 --chans 1 --values "$V" -- "$B" --workers 2 --role server --chans 1
  echo -n "after:  "; run $A --workers 2 --chans 1 --values "$V" -- $A --workers 2 --role server --chans 1
  echo -n "go:     "; GOMAXPROCS=2 run $G -role client -values "$V" -- $G -role server
done
echo -n "before: "; run "$B" --workers 2 --chans 100 --values "$V" -- "$B" --workers 2 --role server --chans 100
echo -n "after:  "; run $A --workers 2 --chans 100 --values "$V" -- $A --workers 2 --role server --chans 100
