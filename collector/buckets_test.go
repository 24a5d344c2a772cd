package collector

import (
	"slices"
	"testing"
)

// The TTFB histogram's boundaries are the GenAI conventions' advice for
// time to first chunk, exactly: a dashboard comparing firstbyte's
// histogram with a GenAI-instrumented client's relies on it.
func TestTTFBBucketsAreTheGenAIAdvice(t *testing.T) {
	t.Parallel()
	want := []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	if !slices.Equal(TTFBBuckets, want) {
		t.Errorf("TTFBBuckets = %v, want %v", TTFBBuckets, want)
	}
}

// Request durations share the TTFB boundaries (a request is at least its
// first byte) and extend them to the 10-minute default total timeout.
func TestDurationBucketsExtendTTFB(t *testing.T) {
	t.Parallel()
	if !slices.Equal(DurationBuckets[:len(TTFBBuckets)], TTFBBuckets) {
		t.Errorf("DurationBuckets %v do not start with TTFBBuckets %v", DurationBuckets, TTFBBuckets)
	}
	if last := DurationBuckets[len(DurationBuckets)-1]; last != 600 {
		t.Errorf("DurationBuckets end at %v, want 600 (the default total timeout)", last)
	}
	if !slices.IsSorted(DurationBuckets) || len(slices.Compact(slices.Clone(DurationBuckets))) != len(DurationBuckets) {
		t.Errorf("DurationBuckets %v are not strictly increasing", DurationBuckets)
	}
}
