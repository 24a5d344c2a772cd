//go:build !unix

package router

import (
	"testing"
	"time"
)

// cpuTime is unknown here: cpu-ns/op reports 0.
func cpuTime(testing.TB) time.Duration { return 0 }
