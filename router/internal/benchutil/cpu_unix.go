//go:build unix

package benchutil

import (
	"syscall"
	"testing"
	"time"
)

// ProcessCPU is the CPU time this process has used, all threads. On a
// shared machine ns/op counts the time a benchmark waits for a core;
// cpu-ns/op does not, so it moves far less with other processes' load, and
// it counts what ns/op misses when work leaves the timed goroutine (the span
// batcher exporting, the garbage collector's background workers).
func ProcessCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
