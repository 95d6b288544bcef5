// Command mandelbrot is the concurrent Mandelbrot benchmark of ProXC++ (seed
// 001 §8.2.2 and its Go listings in Appendix B; also seed 000 §3.2.2) in Go.
//
// The set is computed on x in [-2.1, 1.0], y in [-1.3, 1.3] at D x D points:
// line l has y = -1.3 + l*(2.6/D); along a line x starts at -2.1 and grows by
// 3.1/D per point (accumulated, as in the thesis). A point iterates
// z = z^2 + c from z = 0 while |z|^2 < 4 and count < maxiter, and its value
// is count/maxiter as a float64; a line's points are iterated two at a time
// (see escapePair), as in the Rust port. A line is a packet {line, []float64
// of D}, sent over an unbuffered channel to the consumer (the main
// goroutine), which stores it at its index.
//
//   - -mode workers: hard-coded number of workers (ProXC++'s "optimal"
//     distribution): a producer goroutine sends the line indices 0..D-1 on one
//     channel (one-to-any), -nworkers worker goroutines (default: the -workers
//     value, as the thesis uses the number of logical cores) each take a line,
//     compute it and send it to the consumer (any-to-one).
//   - -mode lines: one goroutine per line, all D spawned at once (ProXC++'s
//     "dynamic" distribution); each sends its line to the consumer.
//
// ms = wall time from creating the network until the consumer has all D lines,
// averaged over -rounds runs (the thesis averages 100). checksum = the sum of
// all iteration counts (recovered from the values after timing), for checking
// a port; explicit float64 conversions keep Go from fusing multiply-adds so
// the counts do not depend on the CPU.
package main

import (
	"flag"
	"math"
	"time"

	"hoarebench/internal/benchutil"
)

const (
	xMin = -2.1
	xMax = 1.0
	yMin = -1.3
	yMax = 1.3
)

type packet struct {
	line   int
	values []float64
}

// escapeFrom iterates z = z^2 + c for c = x + iy from z = x1 + iy1, count
// iterations already done, while |z|^2 < 4, up to maxIter iterations in all,
// and returns the count. From z = 0 and count 0 it is the escape time of c.
func escapeFrom(x1, y1, x, y float64, count, maxIter int) int {
	for count < maxIter && float64(x1*x1)+float64(y1*y1) < 4.0 {
		count++
		x1n := float64(x1*x1) - float64(y1*y1) + x
		y1 = float64(2.0*x1*y1) + y
		x1 = x1n
	}
	return count
}

// escapePair returns the escape times of two points of one line, xa + iy and
// xb + iy, each exactly as escapeFrom computes it from z = 0. The two points'
// chains of dependent multiplies and adds are independent, so stepping both
// in one loop overlaps their latencies. When either escapes (or maxIter is
// reached) the loop ends and each point finishes on its own. The Rust port
// has the same structure.
func escapePair(xa, xb, y float64, maxIter int) (int, int) {
	ax, ay, bx, by := 0.0, 0.0, 0.0, 0.0
	count := 0
	for ; count < maxIter; count++ {
		ax2, ay2, bx2, by2 := float64(ax*ax), float64(ay*ay), float64(bx*bx), float64(by*by)
		if !(ax2+ay2 < 4.0 && bx2+by2 < 4.0) {
			break
		}
		axn := ax2 - ay2 + xa
		ay = float64(2.0*ax*ay) + y
		ax = axn
		bxn := bx2 - by2 + xb
		by = float64(2.0*bx*by) + y
		bx = bxn
	}
	return escapeFrom(ax, ay, xa, y, count, maxIter), escapeFrom(bx, by, xb, y, count, maxIter)
}

func computeLine(line, dim, maxIter int) packet {
	dx := (xMax - xMin) / float64(dim)
	dy := (yMax - yMin) / float64(dim)
	p := packet{line, make([]float64, dim)}
	y := yMin + float64(line)*dy
	iters := float64(maxIter)
	x := xMin
	// Points two at a time (x still accumulated one step at a time).
	col := 0
	for ; col+1 < dim; col += 2 {
		xb := x + dx
		a, b := escapePair(x, xb, y, maxIter)
		p.values[col] = float64(a) / iters
		p.values[col+1] = float64(b) / iters
		x = xb + dx
	}
	if col < dim {
		p.values[col] = float64(escapeFrom(0, 0, x, y, 0, maxIter)) / iters
	}
	return p
}

func run(mode string, dim, maxIter, nworkers int) [][]float64 {
	data := make(chan packet)
	switch mode {
	case "workers":
		lines := make(chan int)
		go func() {
			for l := 0; l < dim; l++ {
				lines <- l
			}
			close(lines)
		}()
		for w := 0; w < nworkers; w++ {
			go func() {
				for l := range lines {
					data <- computeLine(l, dim, maxIter)
				}
			}()
		}
	case "lines":
		for l := 0; l < dim; l++ {
			go func() { data <- computeLine(l, dim, maxIter) }()
		}
	}
	result := make([][]float64, dim)
	for i := 0; i < dim; i++ {
		p := <-data
		result[p.line] = p.values
	}
	return result
}

func main() {
	workersF := benchutil.WorkersFlag()
	mode := flag.String("mode", "workers", "workers (fixed pool fed by a producer) or lines (one goroutine per line)")
	size := flag.Int("size", 1024, "image dimension D (D x D points, D lines)")
	maxIter := flag.Int("maxiter", 255, "maximum iterations per point")
	nworkersF := flag.Int("nworkers", 0, "worker goroutines in -mode workers (0: the -workers value)")
	rounds := flag.Int("rounds", 1, "runs averaged")
	flag.Parse()
	workers := benchutil.SetWorkers(*workersF)
	dim, mi, r := *size, *maxIter, *rounds
	nworkers := *nworkersF
	if nworkers <= 0 {
		nworkers = workers
	}
	if dim < 1 || mi < 1 || r < 1 {
		benchutil.Fail("-size, -maxiter and -rounds must be positive")
	}
	if *mode != "workers" && *mode != "lines" {
		benchutil.Fail("-mode must be workers or lines")
	}

	var total time.Duration
	var img [][]float64
	for i := 0; i < r; i++ {
		start := time.Now()
		img = run(*mode, dim, mi, nworkers)
		total += time.Since(start)
	}
	var checksum int64
	for _, line := range img {
		for _, v := range line {
			checksum += int64(math.Round(v * float64(mi)))
		}
	}
	kv := []any{"bench", "mandelbrot", "workers", workers, "mode", *mode, "size", dim,
		"maxiter", mi}
	if *mode == "workers" {
		kv = append(kv, "nworkers", nworkers)
	}
	kv = append(kv, "checksum", checksum, "ms", benchutil.Ms(total)/float64(r))
	benchutil.Emit(kv...)
}
