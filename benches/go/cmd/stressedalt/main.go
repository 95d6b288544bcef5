// Command stressedalt is the StressedAlt / stressed-select benchmark (seed 000
// §3.1.2 and Table 2, seed 004 §3.2 and Table 1) in Go.
//
// C unbuffered channels, W writer goroutines per channel (C*W writers in
// all), each writing to its channel forever; one reader (the main goroutine)
// performs K selects over all C channels, each select taking one value.
//
//	ns_per_alt = time for the K selects / K
//
// The writers are all spawned (and the spawn time reported as spawn_ms)
// before the clock starts; they may still be starting up during the first
// selects, as in the seeds where writers and reader start in one PAR.
//
// How the select is written (reported as select=...):
//   - switch: a hand-written Go select statement, available for C = 1, 2, 4,
//     8 and 10. For C = 1 the statement has a second case on a "quit"
//     channel that never becomes ready; without it the compiler turns a
//     one-case select into a plain receive, and this benchmark is about
//     alternation. So C = 1 measures a genuine two-case runtime select.
//   - reflect: reflect.Select over a []reflect.SelectCase built once, for any
//     C (much slower per case; Go has no other way to select over a number
//     of channels chosen at run time). reflect.Select refuses more than
//     65536 cases, so -chans above 65536 fails with a message.
//
// -select auto picks switch when available, reflect otherwise.
//
// Reading of seed 004 Table 1 ("2^k writers", k = 1..20): the C++CSP source
// of that experiment (examples/stressed_select.cpp in kevin-chalmers/cpp-csp)
// creates 2^k one2one channels with one writer each, and the reader alts over
// all 2^k guards. That is -chans 2^k -writers 1 here (reflect.Select over 2^k
// cases, which is O(2^k) per select in Go: locking every channel). Go's own
// idiom for "many writers, one reader" is a shared channel: -chans 1
// -writers 2^k, a two-case select whose cost does not depend on the writer
// count but whose sender queue holds 2^k blocked goroutines. compare.sh runs
// both shapes and labels them.
package main

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"time"

	"hoarebench/internal/benchutil"
)

func main() {
	workersF := benchutil.WorkersFlag()
	chans := flag.Int("chans", 10, "number of channels C the reader selects over")
	writers := flag.Int("writers", 1, "writers per channel W (C*W writer goroutines in all)")
	iters := flag.Int64("iters", 1_000_000, "selects performed by the reader while timed (K)")
	sel := flag.String("select", "auto", "select implementation: auto, switch or reflect")
	debug := flag.Bool("debug", false, "print how many values came from each channel (first 16)")
	flag.Parse()
	workers := benchutil.SetWorkers(*workersF)
	c, w, k := *chans, *writers, *iters
	if c < 1 || w < 1 || k < 1 {
		benchutil.Fail("-chans, -writers and -iters must be positive")
	}
	impl := *sel
	switchOK := c == 1 || c == 2 || c == 4 || c == 8 || c == 10
	switch impl {
	case "auto":
		impl = "reflect"
		if switchOK {
			impl = "switch"
		}
	case "switch":
		if !switchOK {
			benchutil.Fail("-select switch exists only for -chans 1, 2, 4, 8, 10")
		}
	case "reflect":
	default:
		benchutil.Fail("-select must be auto, switch or reflect")
	}

	if impl == "reflect" && c > maxReflectCases {
		benchutil.Fail("reflect.Select takes at most %d cases, not %d", maxReflectCases, c)
	}

	chs := make([]chan int64, c)
	for i := range chs {
		chs[i] = make(chan int64)
	}
	t0 := time.Now()
	for i := 0; i < c; i++ {
		ch := chs[i]
		for j := 0; j < w; j++ {
			go func() {
				for v := int64(0); ; v++ {
					ch <- v
				}
			}()
		}
	}
	spawn := time.Since(t0)

	counts := make([]int64, c)
	start := time.Now()
	if impl == "switch" {
		selectSwitch(chs, k, counts)
	} else {
		selectReflect(chs, k, counts)
	}
	elapsed := time.Since(start)

	var total int64
	served := 0
	for _, n := range counts {
		total += n
		if n > 0 {
			served++
		}
	}
	if total != k {
		benchutil.Fail("reader took %d values, want %d", total, k)
	}
	if *debug {
		for i := 0; i < c && i < 16; i++ {
			fmt.Fprintf(os.Stderr, "chan %d: %d\n", i, counts[i])
		}
		fmt.Fprintf(os.Stderr, "channels served: %d of %d\n", served, c)
	}
	benchutil.Emit("bench", "stressedalt", "workers", workers, "chans", c, "writers", w,
		"total_writers", c*w, "select", impl, "iters", k,
		"spawn_ms", benchutil.Ms(spawn), "ns_per_alt", benchutil.PerOp(elapsed, k))
}

// maxReflectCases is reflect.Select's limit on the number of cases.
const maxReflectCases = 65536

// selectReflect performs k selects over chs with reflect.Select.
func selectReflect(chs []chan int64, k int64, counts []int64) {
	cases := make([]reflect.SelectCase, len(chs))
	for i, ch := range chs {
		cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)}
	}
	for i := int64(0); i < k; i++ {
		chosen, _, _ := reflect.Select(cases)
		counts[chosen]++
	}
}

// selectSwitch performs k selects over chs with a hand-written select
// statement; len(chs) must be 1, 2, 4, 8 or 10.
func selectSwitch(chs []chan int64, k int64, counts []int64) {
	var sink int64
	switch len(chs) {
	case 1:
		c0 := chs[0]
		quit := make(chan int64) // never ready: keeps this a real select
		for i := int64(0); i < k; i++ {
			select {
			case v := <-c0:
				sink += v
				counts[0]++
			case v := <-quit:
				sink += v
			}
		}
	case 2:
		c0, c1 := chs[0], chs[1]
		for i := int64(0); i < k; i++ {
			select {
			case v := <-c0:
				sink += v
				counts[0]++
			case v := <-c1:
				sink += v
				counts[1]++
			}
		}
	case 4:
		c0, c1, c2, c3 := chs[0], chs[1], chs[2], chs[3]
		for i := int64(0); i < k; i++ {
			select {
			case v := <-c0:
				sink += v
				counts[0]++
			case v := <-c1:
				sink += v
				counts[1]++
			case v := <-c2:
				sink += v
				counts[2]++
			case v := <-c3:
				sink += v
				counts[3]++
			}
		}
	case 8:
		c0, c1, c2, c3 := chs[0], chs[1], chs[2], chs[3]
		c4, c5, c6, c7 := chs[4], chs[5], chs[6], chs[7]
		for i := int64(0); i < k; i++ {
			select {
			case v := <-c0:
				sink += v
				counts[0]++
			case v := <-c1:
				sink += v
				counts[1]++
			case v := <-c2:
				sink += v
				counts[2]++
			case v := <-c3:
				sink += v
				counts[3]++
			case v := <-c4:
				sink += v
				counts[4]++
			case v := <-c5:
				sink += v
				counts[5]++
			case v := <-c6:
				sink += v
				counts[6]++
			case v := <-c7:
				sink += v
				counts[7]++
			}
		}
	case 10:
		c0, c1, c2, c3, c4 := chs[0], chs[1], chs[2], chs[3], chs[4]
		c5, c6, c7, c8, c9 := chs[5], chs[6], chs[7], chs[8], chs[9]
		for i := int64(0); i < k; i++ {
			select {
			case v := <-c0:
				sink += v
				counts[0]++
			case v := <-c1:
				sink += v
				counts[1]++
			case v := <-c2:
				sink += v
				counts[2]++
			case v := <-c3:
				sink += v
				counts[3]++
			case v := <-c4:
				sink += v
				counts[4]++
			case v := <-c5:
				sink += v
				counts[5]++
			case v := <-c6:
				sink += v
				counts[6]++
			case v := <-c7:
				sink += v
				counts[7]++
			case v := <-c8:
				sink += v
				counts[8]++
			case v := <-c9:
				sink += v
				counts[9]++
			}
		}
	default:
		panic("selectSwitch: unsupported channel count")
	}
	if sink < 0 {
		fmt.Fprintln(os.Stderr, sink) // keeps sink live
	}
}
