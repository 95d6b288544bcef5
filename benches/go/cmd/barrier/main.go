// Command barrier is the stressed barrier benchmark (seed 004 §3.3, Figure 7;
// the C++CSP source is examples/stressed_bar.cpp) in Go.
//
// G groups; group g has a local barrier of M+1 parties (M "syncer"
// goroutines plus one controller goroutine). A global barrier has G+1
// parties: the G controllers and a timer (the main goroutine). One round:
//
//	syncer:      local.Sync()
//	controller:  local.Sync(); global.Sync()
//	timer:       global.Sync()
//
// so every round synchronises all M*G+G+1 goroutines, and the timer sees
// one global sync per round. After one untimed warm-up round the timer
// times R rounds:
//
//	ms_per_sync = elapsed / R
//
// Go has no barrier type. This uses the idiomatic reusable barrier: a
// sync.Mutex plus a sync.Cond with a generation counter (the last party to
// arrive resets the count, bumps the generation and Broadcasts; the others
// Wait until the generation changes). -impl chan uses a channel-close
// generation barrier instead (the last arriver closes the current
// generation's channel), for reference. In Go the controllers are
// goroutines like the rest: there is no way to put each on its own kernel
// thread as the seed does, short of runtime.LockOSThread, which is not used.
package main

import (
	"flag"
	"sync"
	"time"

	"hoarebench/internal/benchutil"
)

// Barrier is a reusable barrier for a fixed number of parties.
type Barrier interface {
	Sync()
}

// condBarrier is the sync.Mutex + sync.Cond generation barrier.
type condBarrier struct {
	mu      sync.Mutex
	cond    *sync.Cond
	parties int
	waiting int
	gen     uint64
}

func newCondBarrier(parties int) *condBarrier {
	b := &condBarrier{parties: parties}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *condBarrier) Sync() {
	b.mu.Lock()
	gen := b.gen
	b.waiting++
	if b.waiting == b.parties {
		b.waiting = 0
		b.gen++
		b.cond.Broadcast()
		b.mu.Unlock()
		return
	}
	for gen == b.gen {
		b.cond.Wait()
	}
	b.mu.Unlock()
}

// chanBarrier releases each generation by closing that generation's channel.
type chanBarrier struct {
	mu      sync.Mutex
	parties int
	waiting int
	release chan struct{}
}

func newChanBarrier(parties int) *chanBarrier {
	return &chanBarrier{parties: parties, release: make(chan struct{})}
}

func (b *chanBarrier) Sync() {
	b.mu.Lock()
	b.waiting++
	if b.waiting == b.parties {
		b.waiting = 0
		close(b.release)
		b.release = make(chan struct{})
		b.mu.Unlock()
		return
	}
	ch := b.release
	b.mu.Unlock()
	<-ch
}

func main() {
	workersF := benchutil.WorkersFlag()
	groups := flag.Int("groups", 2, "groups G (controllers)")
	procs := flag.Int("procs", 4096, "syncer goroutines per group M")
	rounds := flag.Int("rounds", 100, "timed rounds R")
	impl := flag.String("impl", "cond", "barrier implementation: cond (Mutex+Cond) or chan (close a channel per generation)")
	flag.Parse()
	workers := benchutil.SetWorkers(*workersF)
	g, m, r := *groups, *procs, *rounds
	if g < 1 || m < 1 || r < 1 {
		benchutil.Fail("-groups, -procs and -rounds must be positive")
	}
	mk := func(n int) Barrier {
		if *impl == "chan" {
			return newChanBarrier(n)
		}
		return newCondBarrier(n)
	}
	if *impl != "cond" && *impl != "chan" {
		benchutil.Fail("-impl must be cond or chan")
	}

	total := r + 1 // one warm-up round
	global := mk(g + 1)
	for i := 0; i < g; i++ {
		local := mk(m + 1)
		for j := 0; j < m; j++ {
			go func() {
				for k := 0; k < total; k++ {
					local.Sync()
				}
			}()
		}
		go func() {
			for k := 0; k < total; k++ {
				local.Sync()
				global.Sync()
			}
		}()
	}
	global.Sync() // warm-up round: everyone has started
	start := time.Now()
	for k := 0; k < r; k++ {
		global.Sync()
	}
	elapsed := time.Since(start)
	benchutil.Emit("bench", "barrier", "workers", workers, "groups", g, "procs", m,
		"rounds", r, "impl", *impl, "total_procs", g*m+g+1,
		"ms_per_sync", benchutil.Ms(elapsed)/float64(r))
}
