//go:build unix

package router

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time this process has used, all threads: on a shared
// machine it moves far less with other processes' load than ns/op does.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
