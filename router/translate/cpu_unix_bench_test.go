//go:build unix

package translate

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time this process has used, all threads. On a shared
// machine ns/op counts the time a benchmark waits for a core; cpu-ns/op does
// not, so it is the steadier figure of what a translation costs.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
