#!/usr/bin/env bash
# benches/ab.sh — A/B two builds of hoare's benchmark examples: runs each case
# alternately with the examples of directory A and of directory B (A, B, A,
# B, ...), so that both see the same machine load, and prints each case's
# medians, the ratio B/A and every run's figure.
#
# Usage: benches/ab.sh [--runs R] [--workers W] [--only REGEX] DIR_A DIR_B
#
#   DIR_A, DIR_B  directories holding built examples (target/release/examples
#                 of two worktrees, or copies of them)
#   --runs R      runs of each build per case (default 5)
#   --workers W   worker count (default 2): --workers W and HOARE_WORKERS=W
#   --only REGEX  only the cases whose "example args" text matches (grep -E)
#
# Each case is "example | arguments | metric key"; the figure is the metric
# read from the example's last line (key=value pairs). A run that fails or
# prints no such key shows as "fail" and is left out of the median.
#
# Example (main against a branch, 2 workers, the barrier cases only):
#   benches/ab.sh --runs 7 --only barrier \
#       ../main/target/release/examples target/release/examples
set -uo pipefail

RUNS=5
WORKERS=2
ONLY=""
die() { echo "ab.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS="${2:?}"; shift ;;
        --workers) WORKERS="${2:?}"; shift ;;
        --only) ONLY="${2:?}"; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown argument: $1 (try --help)" ;;
        *) break ;;
    esac
    shift
done
[ $# -eq 2 ] || die "two directories of examples expected (try --help)"
A=$1
B=$2
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer"
[[ "$WORKERS" =~ ^[1-9][0-9]*$ ]] || die "--workers must be a positive integer"
[ -d "$A" ] || die "not a directory: $A"
[ -d "$B" ] || die "not a directory: $B"

CASES=(
    "commstime|--delta seq --iters 1000000|ns_per_comm"
    "commstime|--delta par --iters 200000|ns_per_comm"
    "chain|--procs 1000 --iters 1000|ns_per_elem"
    "stressedalt|--chans 10 --writers 1 --iters 1000000|ns_per_alt"
    "stressedalt|--chans 10 --writers 100 --iters 1000000|ns_per_alt"
    "stressedalt|--chans 1 --writers 1024 --iters 1000000|ns_per_alt"
    "stressedalt|--chans 1024 --writers 1 --iters 20000|ns_per_alt"
    "ring|--procs 503 --hops 10000000|ns_per_hop"
    "stressed_barrier|--groups 2 --procs 4096 --rounds 100|ms_per_sync"
    "stressed_barrier|--groups 2 --procs 65536 --rounds 20|ms_per_sync"
    "primesieve|--primes 100|us_per_prime"
    "mandelbrot|--mode lines --size 1024 --maxiter 255|ms"
    "mandelbrot|--mode workers --size 1024 --maxiter 255|ms"
    "montecarlo|--samples 67108864 --tasks 64|ms"
    "spawn|--procs 100000|ns_per_spawn"
)

# One run: the metric's value, or "fail".
run() {
    local dir=$1 ex=$2 args=$3 key=$4 out
    # shellcheck disable=SC2086 # the arguments are words on purpose
    out=$(HOARE_WORKERS=$WORKERS timeout 600 "$dir/$ex" --workers "$WORKERS" $args 2>/dev/null | tail -1)
    grep -o "$key=[0-9.]*" <<< "$out" | cut -d= -f2 | grep . || echo fail
}

median() {
    printf '%s\n' "$@" | grep -v fail | sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "fail"}'
}

echo "| example | arguments | A | B | B/A | runs A | runs B |"
echo "|---|---|---:|---:|---:|---|---|"
for c in "${CASES[@]}"; do
    IFS='|' read -r ex args key <<< "$c"
    if [ -n "$ONLY" ] && ! grep -Eq -- "$ONLY" <<< "$ex $args"; then
        continue
    fi
    if [ ! -x "$A/$ex" ] || [ ! -x "$B/$ex" ]; then
        echo "| $ex | $args | missing | | | | |"
        continue
    fi
    va=()
    vb=()
    for _ in $(seq "$RUNS"); do
        va+=("$(run "$A" "$ex" "$args" "$key")")
        vb+=("$(run "$B" "$ex" "$args" "$key")")
    done
    ma=$(median "${va[@]}")
    mb=$(median "${vb[@]}")
    ratio=$(awk -v a="$ma" -v b="$mb" 'BEGIN {if (a + 0 > 0 && b != "fail") printf "%.3f", b / a; else print "-"}')
    echo "| $ex | $args | $ma | $mb | $ratio | ${va[*]} | ${vb[*]} |"
done
