// Command spawn measures process creation in Go: the time to spawn P
// goroutines that each block on a channel, release them all and join them,
// and the resident memory each blocked goroutine costs.
//
// Steps:
//  1. runtime.GC(); rss0 = VmRSS (from /proc/self/status).
//  2. Clock starts. Spawn P goroutines; each signals "started" (a
//     sync.WaitGroup) and blocks receiving from one shared release channel.
//     Wait until all P have started (so all are blocked, none has exited).
//  3. Clock pauses. runtime.GC(); rss1 = VmRSS while all P are blocked.
//  4. Clock resumes. close(release) wakes all P; each calls Done on a second
//     WaitGroup, which the main goroutine waits on (join). Clock stops.
//
// Reported:
//
//	ns_per_spawn   = (time of step 2 + time of step 4) / P
//	bytes_per_proc = (rss1 - rss0) / P
//
// A goroutine's initial stack is 2 KiB (Go may pick a larger starting size
// from the average stack use it has seen), plus its g descriptor (~400 B).
package main

import (
	"flag"
	"runtime"
	"sync"
	"time"

	"hoarebench/internal/benchutil"
)

func main() {
	workersF := benchutil.WorkersFlag()
	procs := flag.Int("procs", 100_000, "number of goroutines P spawned and blocked at once")
	flag.Parse()
	workers := benchutil.SetWorkers(*workersF)
	p := *procs
	if p < 1 {
		benchutil.Fail("-procs must be positive")
	}

	release := make(chan struct{})
	var started, done sync.WaitGroup

	runtime.GC()
	rss0 := benchutil.VmRSS()

	t0 := time.Now()
	started.Add(p)
	done.Add(p)
	for i := 0; i < p; i++ {
		go func() {
			started.Done()
			<-release
			done.Done()
		}()
	}
	started.Wait()
	spawnT := time.Since(t0)

	runtime.GC()
	rss1 := benchutil.VmRSS()

	t1 := time.Now()
	close(release)
	done.Wait()
	joinT := time.Since(t1)

	benchutil.Emit("bench", "spawn", "workers", workers, "procs", p,
		"spawn_ms", benchutil.Ms(spawnT), "join_ms", benchutil.Ms(joinT),
		"ns_per_spawn", benchutil.PerOp(spawnT+joinT, int64(p)),
		"bytes_per_proc", float64(rss1-rss0)/float64(p))
}
