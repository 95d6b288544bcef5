#!/usr/bin/env bash
# The echo benchmark of issue 14: hoare's echo_server (one process per
# connection) and its Go twin (one goroutine per connection) under the same
# client (echo_client, a hoare program), one after the other in one run.
#
#   bash benches/echo.sh [CONNS] [SECS] [SIZE]     (defaults: 10000 5 64)
#
# Each server gets --workers/GOMAXPROCS 2 and the client 2 workers, all on this
# machine's cores. Prints one `bench=echo` line per server. Needs `ulimit -n`
# above CONNS + 100 (the client and each server hold CONNS sockets).
set -euo pipefail
cd "$(dirname "$0")/.."
CONNS=${1:-10000}
SECS=${2:-5}
SIZE=${3:-64}
ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -le $((CONNS + 100)) ]; then
  echo "echo.sh: ulimit -n is $(ulimit -n), too low for $CONNS connections" >&2
  exit 2
fi
cargo build --release --quiet --example echo_server --example echo_client
(cd benches/go && go build -o ../../target/release/go-echoserver ./cmd/echoserver)

run() { # label, server command...
  local label=$1; shift
  local out; out=$(mktemp)
  "$@" >"$out" &
  local pid=$!
  for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.05; done
  local addr; addr=$(awk '/listening/{print $2}' "$out")
  target/release/examples/echo_client --workers 2 --addr "$addr" --conns "$CONNS" \
    --secs "$SECS" --size "$SIZE" --server-pid "$pid" --label "$label" | tail -1
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -f "$out"
}

run hoare target/release/examples/echo_server --workers 2
run go target/release/go-echoserver -workers 2
