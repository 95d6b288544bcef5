#!/usr/bin/env bash
# benches/before_after.sh — issue 16's figures for two builds of hoare and Go,
# in one run: for each figure, R rounds of (before, after, Go) in turn, then a
# Markdown table of medians and the ratios to Go.
#
# Usage: benches/before_after.sh [--runs R] [--only REGEX] DIR_BEFORE DIR_AFTER [GO_DIR]
#
#   DIR_BEFORE, DIR_AFTER  directories holding built examples (copies of two
#                          worktrees' target/release/examples)
#   GO_DIR                 Go's benchmark binaries (default benches/go/bin)
#   --runs R               rounds per figure (default 5)
#   --only REGEX           only figures whose "program workers args" matches
#
# Example (the code the issue measured against main):
#   git worktree add ../base 6050e0d && (cd ../base && cargo build --release --examples)
#   benches/before_after.sh ../base/target/release/examples target/release/examples
set -euo pipefail

RUNS=5
ONLY=""
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=$2; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    sed -n '2,17p' "$0" >&2
    exit 2
fi
B=$1
A=$2
G=${3:-$(dirname "$0")/go/bin}

FIGURES=(
    "commstime|1|--delta seq --iters 1000000|ns_per_comm"
    "commstime|2|--delta seq --iters 1000000|ns_per_comm"
    "ring|1|--procs 503 --hops 10000000|ns_per_hop"
    "ring|2|--procs 503 --hops 10000000|ns_per_hop"
    "stressedalt|2|--chans 10 --writers 1 --iters 1000000|ns_per_alt"
    "stressedalt|2|--chans 1 --writers 1024 --iters 1000000|ns_per_alt"
    "spawn|1|--procs 100000|ns_per_spawn"
    "spawn|2|--procs 100000|ns_per_spawn"
)

# One run's figure (or nothing): the metric from the program's last line.
one() {
    local key=$1; shift
    timeout 600 "$@" 2>/dev/null | tail -1 | grep -o "$key=[0-9.]*" | cut -d= -f2 || true
}

median() {
    printf '%s\n' "$@" | grep . | sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "fail"}'
}

ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN {if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-"}'
}

echo "| program | workers | arguments | before | after | Go | before/Go | after/Go | runs (before; after; Go) |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---|"
for f in "${FIGURES[@]}"; do
    IFS='|' read -r prog w args key <<< "$f"
    if [ -n "$ONLY" ] && ! grep -Eq -- "$ONLY" <<< "$prog $w $args"; then
        continue
    fi
    # Go's programs take the same flags with one dash.
    gargs=${args//--/-}
    b=(); a=(); g=()
    for _ in $(seq "$RUNS"); do
        # shellcheck disable=SC2086 # the arguments are words
        b+=("$(HOARE_WORKERS=$w one "$key" "$B/$prog" --workers "$w" $args)")
        # shellcheck disable=SC2086
        a+=("$(HOARE_WORKERS=$w one "$key" "$A/$prog" --workers "$w" $args)")
        # shellcheck disable=SC2086
        g+=("$(one "$key" "$G/$prog" -workers "$w" $gargs)")
    done
    mb=$(median "${b[@]}"); ma=$(median "${a[@]}"); mg=$(median "${g[@]}")
    echo "| $prog | $w | $args | $mb | $ma | $mg | $(ratio "$mb" "$mg") | $(ratio "$ma" "$mg") | ${b[*]}; ${a[*]}; ${g[*]} |"
done
