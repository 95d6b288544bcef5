#!/usr/bin/env bash
# benches/compare.sh — run hoare's benchmark examples and their Go
# counterparts (benches/go) side by side and print a Markdown table of
# medians and the ratio hoare/Go, ready to paste into BENCHMARKS.md.
#
# Usage: benches/compare.sh [--quick] [--runs R] [--workers "1 2"]
#                           [--only REGEX] [--timeout SECONDS] [--no-build]
#                           [--out FILE]
#
#   --quick       small sizes (a smoke test; a few seconds per program)
#   --runs R      runs per program, benchmark and worker count (default 5);
#                 hoare and Go are run alternately, the table shows medians
#   --workers L   worker counts to run (default "1 2"); Go gets -workers N
#                 (GOMAXPROCS), hoare gets --workers N and HOARE_WORKERS=N
#   --only REGEX  only cases whose "bench params" text matches REGEX (grep -E)
#   --timeout S   kill a single run after S seconds (default 600)
#   --no-build    use the binaries already built
#   --out FILE    also write the table to FILE
#
# Programs: Go binaries are built into benches/go/bin/ (git-ignored), hoare's
# from `cargo build --release --examples` into target/release/examples/. Both
# take the same flags (Go: -name value; hoare: --name value) and print as their
# last stdout line `key=value` pairs; the metric keys read here are listed in
# the CASES table below. A hoare example that does not exist or does not build
# is skipped (noted in the table), never fatal. A cell reads "fail" when the
# program exited non-zero or timed out, or printed no such key; see the raw
# log (benches/go/bin/compare-raw.log) for its output.
#
# Ratios are hoare/Go: below 1 means hoare is faster (or smaller). For
# montecarlo the table adds the speedup of 2 workers over 1 (median ms at 1
# worker / median ms at 2) for each side; there a ratio above 1 means hoare
# scales better.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GODIR="$ROOT/benches/go"
GOBIN="$GODIR/bin"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
HOAREBIN="$TARGET/release/examples"

RUNS=5
QUICK=0
WORKERS="1 2"
ONLY=""
TIMEOUT=600
BUILD=1
OUT=""

die() { echo "compare.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --runs) RUNS="${2:?}"; shift ;;
        --runs=*) RUNS="${1#*=}" ;;
        --workers) WORKERS="${2:?}"; shift ;;
        --workers=*) WORKERS="${1#*=}" ;;
        --only) ONLY="${2:?}"; shift ;;
        --only=*) ONLY="${1#*=}" ;;
        --timeout) TIMEOUT="${2:?}"; shift ;;
        --timeout=*) TIMEOUT="${1#*=}" ;;
        --no-build) BUILD=0 ;;
        --out) OUT="${2:?}"; shift ;;
        --out=*) OUT="${1#*=}" ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
    shift
done
WORKERS=${WORKERS//,/ }
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer"
for w in $WORKERS; do [[ "$w" =~ ^[1-9][0-9]*$ ]] || die "bad worker count: $w"; done

log() { echo "[compare] $*" >&2; }

# ---------------------------------------------------------------------------
# Cases: bench | params (name value ...) | metrics (comma-separated keys)
# bench is the Go binary name; HOARE_NAME maps it to hoare's example.
declare -A HOARE_NAME=(
    [commstime]=commstime [chain]=chain [stressedalt]=stressedalt
    [spawn]=spawn [ring]=ring [barrier]=stressed_barrier
    [montecarlo]=montecarlo [mandelbrot]=mandelbrot [primesieve]=primesieve
)
if [ "$QUICK" = 1 ]; then
    CASES=(
        "commstime|delta seq iters 20000|ns_per_comm"
        "commstime|delta par iters 5000|ns_per_comm"
        "chain|procs 10 iters 200|ns_per_elem"
        "chain|procs 1000 iters 20|ns_per_elem"
        "stressedalt|chans 10 writers 1 iters 20000|ns_per_alt"
        "stressedalt|chans 1 writers 1024 iters 20000|ns_per_alt"
        "stressedalt|chans 1024 writers 1 iters 200|ns_per_alt"
        "spawn|procs 10000|ns_per_spawn,bytes_per_proc"
        "ring|procs 503 hops 100000|ns_per_hop"
        "barrier|groups 2 procs 256 rounds 20|ms_per_sync"
        "montecarlo|samples 4194304 tasks 64|ms"
        "mandelbrot|mode workers size 256 maxiter 255|ms"
        "mandelbrot|mode lines size 256 maxiter 255|ms"
        "primesieve|primes 10|us_per_prime"
        "primesieve|primes 100|us_per_prime"
    )
else
    CASES=(
        "commstime|delta seq iters 1000000|ns_per_comm"
        "commstime|delta par iters 200000|ns_per_comm"
        "chain|procs 1 iters 10000|ns_per_elem"
        "chain|procs 100 iters 2000|ns_per_elem"
        "chain|procs 1000 iters 1000|ns_per_elem"
        "stressedalt|chans 10 writers 1 iters 1000000|ns_per_alt"
        "stressedalt|chans 10 writers 100 iters 1000000|ns_per_alt"
        "stressedalt|chans 1 writers 1024 iters 1000000|ns_per_alt"
        "stressedalt|chans 1 writers 1048576 iters 2000000|ns_per_alt"
        "stressedalt|chans 1024 writers 1 iters 20000|ns_per_alt"
        "stressedalt|chans 1048576 writers 1 iters 1000|ns_per_alt"
        "spawn|procs 100000|ns_per_spawn,bytes_per_proc"
        "spawn|procs 1000000|ns_per_spawn,bytes_per_proc"
        "ring|procs 503 hops 10000000|ns_per_hop"
        "barrier|groups 2 procs 4096 rounds 100|ms_per_sync"
        "barrier|groups 2 procs 65536 rounds 20|ms_per_sync"
        "barrier|groups 3 procs 65536 rounds 10|ms_per_sync"
        "montecarlo|samples 67108864 tasks 64|ms"
        "mandelbrot|mode workers size 1024 maxiter 255|ms"
        "mandelbrot|mode lines size 1024 maxiter 255|ms"
        "mandelbrot|mode lines size 1000 maxiter 1000|ms"
        "primesieve|primes 10|us_per_prime"
        "primesieve|primes 100|us_per_prime"
        "primesieve|primes 1000|us_per_prime"
    )
fi

# ---------------------------------------------------------------------------
# Build.
mkdir -p "$GOBIN"
RAW="$GOBIN/compare-raw.log"
: > "$RAW"
declare -A HOARE_OK=()    # example name -> 1 if usable
declare -A HOARE_WHY=()   # example name -> reason it is skipped

if [ "$BUILD" = 1 ]; then
    log "building Go programs into $GOBIN"
    (cd "$GODIR" && go build -o "$GOBIN/" ./cmd/...) || die "go build failed"
    log "building hoare examples (cargo build --release --examples)"
    if (cd "$ROOT" && cargo build --release --examples) >>"$RAW" 2>&1; then
        for ex in "${HOARE_NAME[@]}"; do
            if [ -x "$HOAREBIN/$ex" ]; then HOARE_OK[$ex]=1; else HOARE_WHY[$ex]="no hoare example"; fi
        done
    else
        # One broken example fails the whole build: build ours one by one.
        log "cargo build --examples failed; building the benchmark examples one by one"
        for ex in "${HOARE_NAME[@]}"; do
            out=$(cd "$ROOT" && cargo build --release --example "$ex" 2>&1)
            rc=$?
            printf '%s\n' "$out" >>"$RAW"
            if [ $rc -eq 0 ] && [ -x "$HOAREBIN/$ex" ]; then
                HOARE_OK[$ex]=1
            elif grep -q "no example target named" <<<"$out"; then
                HOARE_WHY[$ex]="no hoare example"
            else
                HOARE_WHY[$ex]="hoare example does not build"
            fi
        done
    fi
else
    for ex in "${HOARE_NAME[@]}"; do
        if [ -x "$HOAREBIN/$ex" ]; then HOARE_OK[$ex]=1; else HOARE_WHY[$ex]="no hoare example"; fi
    done
fi
for b in "${!HOARE_NAME[@]}"; do
    [ -x "$GOBIN/$b" ] || die "missing Go binary $GOBIN/$b"
done

# ---------------------------------------------------------------------------
# Running.
RES=$(mktemp -d)
trap 'rm -rf "$RES"' EXIT

# lastkv LINE KEY -> value of KEY in a "k=v k=v" line (empty if absent)
lastkv() {
    awk -v k="$2" '{ for (i = 1; i <= NF; i++) { n = index($i, "="); if (n > 1 && substr($i, 1, n - 1) == k) { print substr($i, n + 1); exit } } }' <<<"$1"
}

# run_one SIDE BIN "ARGS" W ID METRICS : runs once, appends metric values to
# $RES/ID.SIDE.W.METRIC, failures to $RES/ID.SIDE.W.fail
run_one() {
    local side=$1 bin=$2 args=$3 w=$4 id=$5 metrics=$6
    local out err rc line m v
    err="$RES/stderr"
    log "$side w=$w: $(basename "$bin") $args"
    if [ "$side" = hoare ]; then
        out=$(HOARE_WORKERS=$w timeout --kill-after=5 "$TIMEOUT" "$bin" $args 2>"$err")
    else
        out=$(timeout --kill-after=5 "$TIMEOUT" "$bin" $args 2>"$err")
    fi
    rc=$?
    line=$(printf '%s\n' "$out" | awk 'NF { l = $0 } END { print l }')
    {
        echo "== $side w=$w rc=$rc: $bin $args"
        tail -n 3 "$err"
        echo "$line"
    } >>"$RAW"
    if [ $rc -ne 0 ]; then
        local why="exit $rc"
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && why="timeout ${TIMEOUT}s"
        local msg
        msg=$(grep -v '^[[:space:]]*$' "$err" | head -n 1 | cut -c1-120)
        [ -n "$msg" ] && why="$why: $msg"
        echo "$why" >"$RES/$id.$side.$w.fail"
        return
    fi
    IFS=, read -r -a ms <<<"$metrics"
    for m in "${ms[@]}"; do
        v=$(lastkv "$line" "$m")
        if [[ "$v" =~ ^[-+0-9.eE]+$ ]]; then
            echo "$v" >>"$RES/$id.$side.$w.$m"
        else
            echo "no $m= in last line" >"$RES/$id.$side.$w.fail"
        fi
    done
    # keep Go's choice of select implementation for the notes column
    v=$(lastkv "$line" select)
    [ -n "$v" ] && echo "$v" >"$RES/$id.$side.select"
    return 0
}

# median FILE -> median of the numbers in FILE (one per line), or empty
median() {
    [ -s "$1" ] || return 0
    sort -g "$1" | awk '{ a[NR] = $1 } END { if (NR % 2) m = a[(NR + 1) / 2]; else m = (a[NR / 2] + a[NR / 2 + 1]) / 2; print m }'
}

# fmtnum X -> X with sensible precision
fmtnum() {
    awk -v x="$1" 'BEGIN { if (x == "") { print ""; exit } a = x < 0 ? -x : x;
        if (a >= 1000) printf "%.0f", x; else if (a >= 100) printf "%.1f", x;
        else if (a >= 10) printf "%.2f", x; else printf "%.3f", x }'
}

ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "–"; else printf "%.2f", a / b }'
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
id=0
declare -a IDS=()
declare -A C_BENCH=() C_ARGS=() C_METRICS=()
for c in "${CASES[@]}"; do
    IFS='|' read -r bench params metrics <<<"$c"
    if [ -n "$ONLY" ] && ! grep -Eq -- "$ONLY" <<<"$bench $params"; then continue; fi
    id=$((id + 1))
    IDS+=("$id")
    C_BENCH[$id]=$bench
    C_ARGS[$id]=$params
    C_METRICS[$id]=$metrics
done
[ ${#IDS[@]} -gt 0 ] || die "no case matches --only '$ONLY'"

for i in "${IDS[@]}"; do
    bench=${C_BENCH[$i]}
    ex=${HOARE_NAME[$bench]}
    # params "a 1 b 2" -> Go "-a 1 -b 2", hoare "--a 1 --b 2"
    read -r -a p <<<"${C_ARGS[$i]}"
    goargs="" hoareargs=""
    for ((j = 0; j + 1 < ${#p[@]}; j += 2)); do
        goargs+=" -${p[j]} ${p[j+1]}"
        hoareargs+=" --${p[j]} ${p[j+1]}"
    done
    for w in $WORKERS; do
        for ((r = 1; r <= RUNS; r++)); do
            if [ -n "${HOARE_OK[$ex]:-}" ]; then
                run_one hoare "$HOAREBIN/$ex" "--workers $w$hoareargs" "$w" "$i" "${C_METRICS[$i]}"
            fi
            run_one go "$GOBIN/$bench" "-workers $w$goargs" "$w" "$i" "${C_METRICS[$i]}"
        done
    done
done

# ---------------------------------------------------------------------------
# Table.
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
[ -n "$cpu" ] || cpu=$(uname -m)
gov=$(go version 2>/dev/null | sed 's/^go version //')
rustv=$(rustc --version 2>/dev/null)
mode=full
[ "$QUICK" = 1 ] && mode=quick
hoare_built=$(for ex in "${!HOARE_OK[@]}"; do echo "$ex"; done | sort | paste -sd' ' -)

table() {
    echo "### hoare vs Go ($mode sizes, median of $RUNS runs)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- kernel: $(uname -r); nproc: $(nproc); CPU: $cpu"
    echo "- go: $gov; rustc: ${rustv:-unknown}"
    echo "- load average before the runs: $LOAD0; after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- hoare examples run: ${hoare_built:-none}"
    echo "- ratio = hoare/Go (below 1: hoare faster or smaller), except speedup rows (above 1: hoare scales better)"
    echo
    echo "| benchmark | parameters | workers | metric | hoare | Go | hoare/Go | notes |"
    echo "|---|---|---:|---|---:|---:|---:|---|"
    local i bench ex params w m h g note sel hf gf
    for i in "${IDS[@]}"; do
        bench=${C_BENCH[$i]}
        ex=${HOARE_NAME[$bench]}
        params=$(awk '{ s = ""; for (j = 1; j < NF; j += 2) s = s (s == "" ? "" : " ") $j "=" $(j + 1); print s }' <<<"${C_ARGS[$i]}")
        IFS=, read -r -a ms <<<"${C_METRICS[$i]}"
        for w in $WORKERS; do
            for m in "${ms[@]}"; do
                note=""
                if [ -n "${HOARE_OK[$ex]:-}" ]; then
                    h=$(median "$RES/$i.hoare.$w.$m")
                    if [ -z "$h" ]; then
                        h=fail
                        [ -f "$RES/$i.hoare.$w.fail" ] && note="hoare: $(cat "$RES/$i.hoare.$w.fail")"
                    fi
                else
                    h="–"
                    note="skipped: ${HOARE_WHY[$ex]:-no hoare example} ($ex)"
                fi
                g=$(median "$RES/$i.go.$w.$m")
                if [ -z "$g" ]; then
                    g=fail
                    [ -f "$RES/$i.go.$w.fail" ] && note="${note:+$note; }Go: $(cat "$RES/$i.go.$w.fail")"
                fi
                sel=""
                [ -f "$RES/$i.go.select" ] && sel="Go select: $(cat "$RES/$i.go.select")"
                [ -n "$sel" ] && note="${note:+$note; }$sel"
                hf=$h gf=$g
                [[ "$h" =~ ^[-+0-9.eE]+$ ]] && hf=$(fmtnum "$h") || h=""
                [[ "$g" =~ ^[-+0-9.eE]+$ ]] && gf=$(fmtnum "$g") || g=""
                note=${note//|/\\|}
                echo "| $bench | $params | $w | $m | $hf | $gf | $(ratio "$h" "$g") | $note |"
            done
        done
        # montecarlo: speedup of 2 workers over 1
        if [ "$bench" = montecarlo ] && [[ " $WORKERS " == *" 1 "* ]] && [[ " $WORKERS " == *" 2 "* ]]; then
            local h1 h2 g1 g2 hs="" gs=""
            h1=$(median "$RES/$i.hoare.1.ms"); h2=$(median "$RES/$i.hoare.2.ms")
            g1=$(median "$RES/$i.go.1.ms"); g2=$(median "$RES/$i.go.2.ms")
            [ -n "$h1" ] && [ -n "$h2" ] && hs=$(ratio "$h1" "$h2")
            [ -n "$g1" ] && [ -n "$g2" ] && gs=$(ratio "$g1" "$g2")
            note=""
            [ -z "${HOARE_OK[$ex]:-}" ] && note="skipped: ${HOARE_WHY[$ex]:-no hoare example} ($ex)"
            echo "| $bench | $params | 2 vs 1 | speedup | ${hs:-–} | ${gs:-–} | $(ratio "$hs" "$gs") | $note |"
        fi
    done
    echo
    echo "Raw output: benches/go/bin/compare-raw.log"
}

if [ -n "$OUT" ]; then
    table | tee "$OUT"
else
    table
fi
