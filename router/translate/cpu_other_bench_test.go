//go:build !unix

package translate

import (
	"testing"
	"time"
)

// processCPU is unknown here: cpu-ns/op reports 0.
func processCPU(testing.TB) time.Duration { return 0 }
