// Command ring is the thread-ring benchmark (Computer Language Benchmarks
// Game) in Go: P goroutines (503 by default) linked in a ring by unbuffered
// channels pass a token N times.
//
// Goroutine i (1-based) reads from channel i-1 and writes to channel i mod
// P. The main goroutine injects the token with value N into goroutine 1;
// each goroutine that receives a token t > 0 passes t-1 to its successor;
// the goroutine that receives 0 reports its id, which must be N mod P + 1
// (checked). That is exactly N hand-offs between ring goroutines, so
//
//	ns_per_hop = elapsed / N
//
// with the clock running from just before the injection to the report.
package main

import (
	"flag"
	"time"

	"hoarebench/internal/benchutil"
)

func main() {
	workersF := benchutil.WorkersFlag()
	procs := flag.Int("procs", 503, "goroutines in the ring")
	hops := flag.Int64("hops", 10_000_000, "token passes N")
	flag.Parse()
	workers := benchutil.SetWorkers(*workersF)
	p, n := *procs, *hops
	if p < 2 || n < 0 {
		benchutil.Fail("-procs must be at least 2 and -hops non-negative")
	}

	chs := make([]chan int64, p)
	for i := range chs {
		chs[i] = make(chan int64)
	}
	result := make(chan int)
	for i := 1; i <= p; i++ {
		id, in, out := i, chs[i-1], chs[i%p]
		go func() {
			for {
				t := <-in
				if t == 0 {
					result <- id
					return
				}
				out <- t - 1
			}
		}()
	}
	start := time.Now()
	chs[0] <- n
	last := <-result
	elapsed := time.Since(start)
	if want := int(n%int64(p)) + 1; last != want {
		benchutil.Fail("token ended at goroutine %d, want %d", last, want)
	}
	benchutil.Emit("bench", "ring", "workers", workers, "procs", p, "hops", n,
		"last", last, "ns_per_hop", benchutil.PerOp(elapsed, n))
}
