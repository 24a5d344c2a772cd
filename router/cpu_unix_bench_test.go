//go:build unix

package router_test

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time this process has used, all threads: what a
// benchmark's ns/op misses when work leaves the timed goroutine (the span
// batcher exporting, the garbage collector's background workers).
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
