#!/usr/bin/env bash
# Runs every test of hoare: style (rustfmt, clang-format), Rust unit/integration/doc
# tests, loom models, benchmark compilation, and the C++ tests. This is the
# README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "rustfmt"
cargo fmt --all -- --check
# The C++ example's crate of its own (not a workspace member).
cargo fmt --manifest-path cpp/examples/my_procs/Cargo.toml -- --check

# clang-format, whichever the machine has (Debian: clang-format, or clang-format-NN).
clang_format() {
  local c
  for c in clang-format $(compgen -c clang-format- | grep -E '^clang-format-[0-9]+$' | sort -t- -k3 -rn); do
    command -v "$c" >/dev/null && { echo "$c"; return; }
  done
}
if cf=$(clang_format) && [ -n "$cf" ]; then
  step "clang-format (cpp/, style cpp/.clang-format)"
  find cpp -path cpp/build -prune -o \( -name '*.cpp' -o -name '*.hpp' \) -print0 |
    xargs -0 "$cf" --style=file --dry-run --Werror
else
  echo "clang-format not found: C++ formatting not checked (.ci/run installs it)" >&2
fi

step "clippy (workspace, all targets)"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy --workspace --all-targets --features cxx -- -D warnings
cargo clippy --workspace --all-targets --features cxx-test-hooks -- -D warnings
cargo clippy --workspace --all-targets --features check -- -D warnings
cargo clippy --workspace --all-targets --features tls -- -D warnings
CARGO_TARGET_DIR="$PWD/target" \
  cargo clippy --manifest-path cpp/examples/my_procs/Cargo.toml --all-targets -- -D warnings

# The declared minimum Rust version (rust-version in Cargo.toml) builds: checked with
# that toolchain when the machine has it (.ci/run tries to install it; a machine
# without access to the Rust release server skips this step and says so).
msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
if cargo "+$msrv" --version >/dev/null 2>&1; then
  step "minimum Rust version $msrv (cargo check, every target and feature)"
  CARGO_TARGET_DIR=target/msrv cargo "+$msrv" check --workspace --all-targets --features check,cxx-test-hooks --quiet
else
  echo "Rust $msrv not installed: the minimum Rust version is not checked" >&2
fi

step "rustdoc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
# What docs.rs builds ([package.metadata.docs.rs]: the cxx feature too).
RUSTDOCFLAGS="-D warnings" cargo doc -p hoare --features cxx --no-deps --quiet
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --features check --quiet
RUSTDOCFLAGS="-D warnings" cargo doc -p hoare --no-deps --features tls --quiet

step "cargo package (the three crates, verified; nothing is uploaded)"
# Packs hoare-core, hoare-runtime and hoare in dependency order and builds each from
# its package, against the packages of the others. --allow-dirty: the suite runs on
# work trees with changes not yet committed. Cargo unpacks the packages it verifies
# against into its registry cache under a name that does not change with their
# content (hoare-core-0.1.0), and reuses a stale copy from an earlier run: remove
# those copies of our own crates first.
rm -rf target/package-verify
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/hoare-core-* \
  "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/hoare-runtime-*
# Verified in a target directory of its own, made afresh: cargo never rebuilds a
# registry package whose version did not change, so a shared one keeps stale
# builds of our crates from earlier runs.
CARGO_TARGET_DIR=target/package-verify cargo package --workspace --allow-dirty --quiet

step "Rust tests (release: the stress tests run real process networks)"
cargo test --workspace --release

step "TLS for network channels (feature tls: two programs over TLS, plaintext refused; the doc tests of hoare::net)"
cargo test --release --features tls --test net_programs tls
cargo test --release --features tls --doc net::

step "the checking runtime (feature check: its tests, and the doc tests of hoare::check)"
cargo test --release --features check --test check
cargo test --release -p hoare-runtime --features check --doc check
cargo test --release -p hoare-core --features check --doc step

step "loom models (LOOM_MAX_PREEMPTIONS=${LOOM_MAX_PREEMPTIONS:=2})"
export LOOM_MAX_PREEMPTIONS
# The models live inside the core, in crates/hoare-core/src/loom_tests/.
CARGO_TARGET_DIR=target/loom RUSTFLAGS="--cfg loom" \
  cargo test -p hoare-core --release --lib loom_tests

step "the README's main example and the other teaching examples run"
for ex in pipeline hello request_reply dining_philosophers; do
  cargo run --release --quiet --example "$ex" >/dev/null
done
cargo run --release --quiet --features check --example check_college >/dev/null

# The runtime switches stacks with its own assembly for x86_64 and aarch64
# (crates/hoare-runtime/src/ctx.rs): the aarch64 half is cross-built and run under
# qemu-user when the machine has the target, the cross linker and qemu (.ci/run
# tries to install them; otherwise this step is skipped and says so). Tests that
# run a child process of their own, or hold wall-clock bounds, stay on x86_64:
# qemu-user without binfmt cannot exec the child, and it runs several times slower.
if rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu &&
  command -v qemu-aarch64 >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null; then
  step "aarch64 (cross-built, run under qemu-aarch64): the examples and the process tests"
  (
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
    a64=(--release --target aarch64-unknown-linux-gnu)
    cargo test "${a64[@]}" --test runtime --test channels --test alt --test migration \
      --test large_values --test broadcast --test barriers --test par_comm -- \
      --skip hoare_workers_env_is_respected --skip stack_overflow_is_reported_and_aborts \
      --skip stack_overflow_after_many_spawns_is_reported_and_aborts
    cargo run "${a64[@]}" --quiet --example pipeline >/dev/null
    cargo run "${a64[@]}" --quiet --example commstime -- --workers 2 --iters 20000 >/dev/null
    cargo run "${a64[@]}" --quiet --example ring -- --workers 2 --procs 503 --hops 20000 >/dev/null
    cargo run "${a64[@]}" --quiet --example yields -- --workers 1 --iters 20000 >/dev/null
  )
else
  echo "aarch64 target, aarch64-linux-gnu-gcc or qemu-aarch64 missing: the aarch64 context switch is not tested" >&2
fi

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
