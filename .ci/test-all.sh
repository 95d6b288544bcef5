#!/usr/bin/env bash
# Runs every test of hoare: style, Rust unit/integration/doc tests, loom models,
# benchmark compilation, and the C++ tests. This is the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "rustfmt"
cargo fmt --all -- --check

step "clippy (workspace, all targets)"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy --workspace --all-targets --features cxx -- -D warnings

step "rustdoc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

step "Rust tests (release: the stress tests run real process networks)"
cargo test --workspace --release

step "loom models (LOOM_MAX_PREEMPTIONS=${LOOM_MAX_PREEMPTIONS:=2})"
export LOOM_MAX_PREEMPTIONS
loom_tests=$(cd crates/hoare-core/tests && ls loom_*.rs 2>/dev/null | sed 's/\.rs$//' | sed 's/^/--test /' | tr '\n' ' ')
if [ -n "$loom_tests" ]; then
  # shellcheck disable=SC2086
  CARGO_TARGET_DIR=target/loom RUSTFLAGS="--cfg loom" \
    cargo test -p hoare-core --release $loom_tests
fi

step "the README's main example and the other teaching examples run"
for ex in pipeline hello request_reply dining_philosophers; do
  cargo run --release --quiet --example "$ex" >/dev/null
done

step "benchmarks compile"
cargo bench --workspace --no-run

if [ -x cpp/run_tests.sh ]; then
  step "C++ API tests"
  CARGO_TARGET_DIR="$PWD/target" cpp/run_tests.sh
fi

if [ -f benches/go/go.mod ] && command -v go >/dev/null; then
  step "Go comparison programs build and vet"
  (cd benches/go && go vet ./... && go build ./...)
fi
