#!/usr/bin/env bash
# Configures (Release, Ninja) hoare's C++ API into cpp/build, builds the static
# library (through cargo), the examples and the tests, and runs ctest.
#   cpp/run_tests.sh [extra ctest args]
# Env: HOARE_CARGO_FLAGS (e.g. --offline), CARGO_TARGET_DIR (default target/cxx).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="$here/build"
target="${CARGO_TARGET_DIR:-$root/target/cxx}"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DHOARE_CARGO_TARGET_DIR="$target" \
  -DHOARE_CARGO_FLAGS="${HOARE_CARGO_FLAGS:-}"
cmake --build "$build"
cd "$build"
ctest --output-on-failure "$@"
