// Command montecarlo is the Monte Carlo pi benchmark (seed 000 §3.2.1, Listing
// 26 and Table 3) in Go: S samples are split between T worker goroutines
// (T = 64 by default), each counts the samples that fall inside the quarter
// circle and sends its count over one shared channel (any-to-one) to the
// collector (the main goroutine), which computes pi = 4 * hits / S.
// Reported: wall time in ms from spawning the tasks to having all counts;
// compare.sh derives the speedup of 2 workers over 1.
//
// The random numbers are fully specified so that hoare's Rust port computes
// the same hits (and the same pi) bit for bit:
//
//   - Task t (t = 0 .. T-1) takes S/T samples, plus one more if t < S mod T.
//   - Its generator state is splitmix64(t + 1), i.e. with wrapping uint64
//     arithmetic:
//     z = (t+1) * 0x9E3779B97F4A7C15
//     z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
//     z = (z ^ (z >> 27)) * 0x94D049BB133111EB
//     z = z ^ (z >> 31)
//     (and 1 if that is 0, which it is not for any t in range).
//   - next() is Marsaglia's xorshift64 with shifts 13, 7, 17:
//     x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x
//   - One sample draws x = next() >> 33 then y = next() >> 33 (31-bit
//     integers, so x*x + y*y < 2^63 fits a uint64) and is a hit when
//     x*x + y*y < 2^62 (integer arithmetic only: no float rounding or fused
//     multiply-add can make two ports disagree).
//
// Test vectors for a port: S = 2^26, T = 64 gives hits = 52713243
// (pi = 3.141954124); S = 1000, T = 3 gives hits = 781. -check fails the run
// unless |pi - math.Pi| < max(0.001, 8/sqrt(S)) (about five sigma).
package main

import (
	"flag"
	"fmt"
	"math"
	"time"

	"hoarebench/internal/benchutil"
)

func splitmix64(v uint64) uint64 {
	z := v * 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	z ^= z >> 31
	if z == 0 {
		z = 1
	}
	return z
}

// task counts the hits among n samples drawn by task t's generator.
func task(t int, n int64) int64 {
	x := splitmix64(uint64(t) + 1)
	var hits int64
	for i := int64(0); i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		a := x >> 33
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b := x >> 33
		if a*a+b*b < 1<<62 {
			hits++
		}
	}
	return hits
}

func main() {
	workersF := benchutil.WorkersFlag()
	samples := flag.Int64("samples", 1<<26, "total samples S")
	tasks := flag.Int("tasks", 64, "worker goroutines T the samples are split between")
	check := flag.Bool("check", true, "fail unless |pi - math.Pi| < max(0.001, 8/sqrt(S))")
	flag.Parse()
	workers := benchutil.SetWorkers(*workersF)
	s, tn := *samples, *tasks
	if s < 1 || tn < 1 {
		benchutil.Fail("-samples and -tasks must be positive")
	}

	start := time.Now()
	results := make(chan int64)
	for t := 0; t < tn; t++ {
		n := s / int64(tn)
		if int64(t) < s%int64(tn) {
			n++
		}
		go func() { results <- task(t, n) }()
	}
	var hits int64
	for t := 0; t < tn; t++ {
		hits += <-results
	}
	elapsed := time.Since(start)
	pi := 4 * float64(hits) / float64(s)
	if tol := math.Max(1e-3, 8/math.Sqrt(float64(s))); *check && math.Abs(pi-math.Pi) > tol {
		benchutil.Fail("pi = %.6f, too far from %.6f", pi, math.Pi)
	}
	benchutil.Emit("bench", "montecarlo", "workers", workers, "samples", s, "tasks", tn,
		"hits", hits, "ms", benchutil.Ms(elapsed), "pi", fmt.Sprintf("%.9f", pi))
}
