// Command chain is the extended CommsTime benchmark of ProXC++ (seed 001
// §8.2.1 and its Go listing in Appendix B) in Go.
//
// Network (all channels unbuffered):
//
//	prefix --> delta --> chain[P-1] --> ... --> chain[0] --> prefix
//	           delta --> consumer
//
// prefix outputs 0, then outputs each value it receives plus one; delta sends
// each value first to the consumer, then into the chain (as in the thesis's
// Go code); each of the P chain processes copies its input to its output. The
// cycle therefore has P+2 processes and P+2 channels, and the consumer sees
// 0, 1, 2, ... (checked).
//
// Timing follows the thesis: the clock starts before the P+3 goroutines are
// spawned and stops when the consumer has received K numbers, so start-up is
// included, and the result is divided by the chain length:
//
//	ns_per_elem = elapsed / (K * P)   (time per number per chain process)
//
// The thesis uses K = 100, averaged over 50 runs, for P = 1 ... 1000.
package main

import (
	"flag"
	"time"

	"hoarebench/internal/benchutil"
)

func main() {
	workersF := benchutil.WorkersFlag()
	procs := flag.Int("procs", 100, "chain length P (number of copy processes between delta and prefix)")
	iters := flag.Int64("iters", 1000, "numbers the consumer receives (K)")
	flag.Parse()
	workers := benchutil.SetWorkers(*workersF)
	if *procs < 1 || *iters < 1 {
		benchutil.Fail("-procs and -iters must be positive")
	}
	p := *procs

	start := time.Now()
	chs := make([]chan int64, p+1)
	for i := range chs {
		chs[i] = make(chan int64)
	}
	toDelta := make(chan int64)
	consume := make(chan int64)
	// prefix: reads chs[0], writes toDelta
	go func() {
		toDelta <- 0
		for {
			toDelta <- <-chs[0] + 1
		}
	}()
	// delta: reads toDelta, writes consume then chs[p]
	go func() {
		for {
			v := <-toDelta
			consume <- v
			chs[p] <- v
		}
	}()
	// chain: process i copies chs[i+1] to chs[i]
	for i := 0; i < p; i++ {
		in, out := chs[i+1], chs[i]
		go func() {
			for {
				out <- <-in
			}
		}()
	}
	// consumer
	for i := int64(0); i < *iters; i++ {
		if v := <-consume; v != i {
			benchutil.Fail("consumer: got %d, want %d", v, i)
		}
	}
	elapsed := time.Since(start)
	benchutil.Emit("bench", "chain", "workers", workers, "procs", p, "iters", *iters,
		"ns_per_elem", benchutil.PerOp(elapsed, *iters*int64(p)))
}
