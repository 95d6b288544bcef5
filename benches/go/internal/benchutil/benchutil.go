// Package benchutil holds the few helpers shared by the Go side of the hoare
// benchmark comparison: the -workers flag (GOMAXPROCS), reading VmRSS and
// printing the final key=value line that benches/compare.sh parses.
package benchutil

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// WorkersFlag registers -workers N. N <= 0 means runtime.NumCPU().
func WorkersFlag() *int {
	return flag.Int("workers", runtime.NumCPU(), "number of OS threads running goroutines (sets GOMAXPROCS)")
}

// SetWorkers sets GOMAXPROCS to n (NumCPU if n <= 0) and returns the value set.
func SetWorkers(n int) int {
	if n <= 0 {
		n = runtime.NumCPU()
	}
	runtime.GOMAXPROCS(n)
	return n
}

// VmRSS returns the resident set size of this process in bytes, read from
// /proc/self/status (Linux only); -1 if it cannot be read.
func VmRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "VmRSS:") {
			continue
		}
		fields := strings.Fields(line[len("VmRSS:"):])
		if len(fields) == 0 {
			return -1
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return -1
		}
		return kb * 1024
	}
	return -1
}

// PerOp returns d divided by n in nanoseconds, as a float.
func PerOp(d time.Duration, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return float64(d.Nanoseconds()) / float64(n)
}

// Ms returns d in milliseconds, as a float.
func Ms(d time.Duration) float64 {
	return float64(d.Nanoseconds()) / 1e6
}

// Fail prints a message to stderr and exits with status 1.
func Fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "error: "+format+"\n", args...)
	os.Exit(1)
}

// Emit prints the result line: pairs of key, value, joined as "k=v k=v".
// It must be the last line the program prints on stdout. Floats are printed
// with %.3f (use a string value for other precisions).
func Emit(kv ...any) {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%v=", kv[i])
		switch v := kv[i+1].(type) {
		case float64:
			fmt.Fprintf(&b, "%.3f", v)
		default:
			fmt.Fprintf(&b, "%v", v)
		}
	}
	fmt.Println(b.String())
}
