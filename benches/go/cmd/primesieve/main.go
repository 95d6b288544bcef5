// Command primesieve is the concurrent prime sieve (seed 001 §8.2.3 and its Go
// listing in Appendix B; the classic example from the Go tour) in Go.
//
// A generator goroutine sends 2, 3, 4, ... on an unbuffered channel. The main
// goroutine takes N primes: each number it receives is the next prime p, and
// it appends a filter goroutine for p that passes on only the numbers not
// divisible by p, so after i primes the daisy chain holds i filters. The
// clock runs from spawning the generator to receiving the N-th prime (the
// goroutines are left blocked; the program exits), and
//
//	us_per_prime = elapsed / N   (in microseconds)
//
// The thesis runs N = 10 ... 1000 and averages 10 runs. The N-th prime is
// checked against a sequential sieve; -debug prints all N primes.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"hoarebench/internal/benchutil"
)

func generate(ch chan<- int) {
	for i := 2; ; i++ {
		ch <- i
	}
}

func filter(in <-chan int, out chan<- int, prime int) {
	for i := range in {
		if i%prime != 0 {
			out <- i
		}
	}
}

// nthPrime returns the n-th prime (1-based) by a sequential sieve.
func nthPrime(n int) int {
	for limit := 32; ; limit *= 2 {
		composite := make([]bool, limit)
		count := 0
		for i := 2; i < limit; i++ {
			if composite[i] {
				continue
			}
			count++
			if count == n {
				return i
			}
			for j := i * i; j < limit; j += i {
				composite[j] = true
			}
		}
	}
}

func main() {
	workersF := benchutil.WorkersFlag()
	primes := flag.Int("primes", 1000, "number of primes N to find")
	debug := flag.Bool("debug", false, "print the primes found (to stderr)")
	flag.Parse()
	workers := benchutil.SetWorkers(*workersF)
	n := *primes
	if n < 1 {
		benchutil.Fail("-primes must be positive")
	}

	found := make([]int, 0, n)
	start := time.Now()
	ch := make(chan int)
	go generate(ch)
	for i := 0; i < n; i++ {
		prime := <-ch
		found = append(found, prime)
		ch1 := make(chan int)
		go filter(ch, ch1, prime)
		ch = ch1
	}
	elapsed := time.Since(start)

	if *debug {
		s := make([]string, len(found))
		for i, p := range found {
			s[i] = fmt.Sprint(p)
		}
		fmt.Fprintln(os.Stderr, strings.Join(s, " "))
	}
	last := found[n-1]
	if want := nthPrime(n); last != want {
		benchutil.Fail("prime %d is %d, want %d", n, last, want)
	}
	benchutil.Emit("bench", "primesieve", "workers", workers, "primes", n, "last", last,
		"us_per_prime", float64(elapsed.Nanoseconds())/1e3/float64(n))
}
