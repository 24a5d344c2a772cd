package relay

import (
	"net/http"
	"testing"
	"time"
)

// TestDate: the header is net/http's format of the second it is asked in,
// the same value within a second and a new one the next.
func TestDate(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 16, 10, 5, 100, time.FixedZone("CET", 3600))
	want := t0.UTC().Format(http.TimeFormat)
	first := Date(t0)
	if len(first) != 1 || first[0] != want || cap(first) != 1 {
		t.Fatalf("Date(%v) = %q (cap %d), want [%q] with no room to append into", t0, first, cap(first), want)
	}
	if again := Date(t0.Add(800 * time.Millisecond)); &again[0] != &first[0] {
		t.Errorf("within the second: a new value %q, want the one formatted", again)
	}
	next := t0.Add(time.Second)
	if got := Date(next); got[0] != next.UTC().Format(http.TimeFormat) {
		t.Errorf("the next second: %q, want %q", got[0], next.UTC().Format(http.TimeFormat))
	}
	if first[0] != want {
		t.Errorf("an earlier value changed to %q", first[0])
	}
}
