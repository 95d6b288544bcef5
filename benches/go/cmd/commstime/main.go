// Command commstime is the classic CommsTime benchmark (seed 000 §3.1.1 and
// Table 1; seed 004 §3.1) in Go.
//
// Network (all channels unbuffered, i.e. rendezvous):
//
//	prefix --a--> delta --b--> succ --c--> prefix
//	               delta --d--> consumer
//
// prefix outputs 0, then copies c to a; succ outputs its input plus one; delta
// copies a to both b and d; the consumer reads d and checks that it sees the
// natural numbers 0, 1, 2, ... in order.
//
// Counting (as the seeds do): one loop of the cycle produces one number at the
// consumer and costs four channel communications (a, b, c, d), so
//
//	ns_per_comm = time for K numbers at the consumer / (4 * K).
//
// The clock is read by the consumer after it has received the first number
// (so network start-up is excluded) and again after K more numbers.
//
// -delta seq: delta writes b then d, one after the other.
// -delta par: delta writes b and d in parallel, occam PAR style, by spawning
// two fresh goroutines per round and joining them (sync.WaitGroup). This is
// what the seed's par_write does (a new process per output per round), so the
// difference par - seq estimates the cost of creating, scheduling and joining
// two processes. (-delta parpair uses a persistent pair of helper goroutines
// instead, for reference; it is not part of the comparison.)
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"hoarebench/internal/benchutil"
)

func main() {
	workersF := benchutil.WorkersFlag()
	iters := flag.Int64("iters", 1_000_000, "numbers the consumer receives (loops of the cycle) while timed")
	delta := flag.String("delta", "seq", "delta outputs: seq, par (two new goroutines per round) or parpair (persistent helpers)")
	debug := flag.Bool("debug", false, "print the first numbers received by the consumer")
	flag.Parse()
	workers := benchutil.SetWorkers(*workersF)
	if *iters <= 0 {
		benchutil.Fail("-iters must be positive")
	}

	a := make(chan int64)
	b := make(chan int64)
	c := make(chan int64)
	d := make(chan int64)

	// prefix
	go func() {
		a <- 0
		for {
			a <- <-c
		}
	}()
	// succ
	go func() {
		for {
			c <- <-b + 1
		}
	}()
	// delta
	switch *delta {
	case "seq":
		go func() {
			for {
				v := <-a
				b <- v
				d <- v
			}
		}()
	case "par":
		go func() {
			var wg sync.WaitGroup
			for {
				v := <-a
				wg.Add(2)
				go func() { b <- v; wg.Done() }()
				go func() { d <- v; wg.Done() }()
				wg.Wait()
			}
		}()
	case "parpair":
		go func() {
			tb := make(chan int64)
			td := make(chan int64)
			done := make(chan struct{})
			go func() {
				for v := range tb {
					b <- v
					done <- struct{}{}
				}
			}()
			go func() {
				for v := range td {
					d <- v
					done <- struct{}{}
				}
			}()
			for {
				v := <-a
				tb <- v
				td <- v
				<-done
				<-done
			}
		}()
	default:
		benchutil.Fail("-delta must be seq, par or parpair, not %q", *delta)
	}

	// consumer (runs in main)
	first := <-d
	if first != 0 {
		benchutil.Fail("consumer: first value %d, want 0", first)
	}
	start := time.Now()
	for i := int64(1); i <= *iters; i++ {
		v := <-d
		if v != i {
			benchutil.Fail("consumer: got %d, want %d", v, i)
		}
		if *debug && i < 10 {
			fmt.Fprintln(os.Stderr, "consumer:", v)
		}
	}
	elapsed := time.Since(start)
	benchutil.Emit("bench", "commstime", "delta", *delta, "workers", workers,
		"iters", *iters, "ns_per_comm", benchutil.PerOp(elapsed, 4**iters),
		"ns_per_loop", benchutil.PerOp(elapsed, *iters))
}
