//go:build !unix

package benchutil

import (
	"testing"
	"time"
)

// ProcessCPU is unknown here: cpu-ns/op reports 0.
func ProcessCPU(testing.TB) time.Duration { return 0 }
