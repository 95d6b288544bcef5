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
# shellcheck source=benches/net_common.sh
source benches/net_common.sh

H=target/release/examples/net_channels
G=target/release/go-netpingpong
run $H --workers 2 --chans 1 --values "$VALUES" -- $H --workers 2 --role server --chans 1
GOMAXPROCS=2 run $G -role client -values "$VALUES" -- $G -role server
run $H --workers 2 --chans 100 --values "$VALUES" -- $H --workers 2 --role server --chans 100
