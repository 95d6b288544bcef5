# Sourced by benches/net.sh and benches/net_ab.sh (from the repository's root):
# builds net_channels and its Go twin, and defines `run`, which starts a server,
# waits for its "listening ADDR" line, runs the client against ADDR and prints
# the client's last line.
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
