package keyratelimitprocessor

import (
	"fmt"
	"testing"
	"time"
)

// clock is a fake time source the tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newClock() *clock { return &clock{t: time.Unix(1_700_000_000, 0)} }

// offer sends n spans of k, one every gap, and counts those that pass.
func offer(l *limiter, c *clock, k key, n int, gap time.Duration) int {
	passed := 0
	for range n {
		l.batch(c.now(), func(allow allowFunc) {
			if allow(k) {
				passed++
			}
		})
		c.advance(gap)
	}
	return passed
}

func TestLimiter(t *testing.T) {
	a, b := key{"groq", "llama"}, key{"openai", "gpt-4o-mini"}
	tests := []struct {
		name             string
		rate, burst      float64
		spans            int
		gap              time.Duration
		wantMin, wantMax int
	}{
		// 100 spans a second for 10 s at 10 a second: the burst, then the rate.
		{name: "overload passes the rate", rate: 10, burst: 10, spans: 1000, gap: 10 * time.Millisecond, wantMin: 108, wantMax: 110},
		// Under the rate every span passes.
		{name: "under the rate passes all", rate: 10, burst: 1, spans: 50, gap: 200 * time.Millisecond, wantMin: 50, wantMax: 50},
		// A burst arriving at once: only the bucket's size.
		{name: "a burst at once", rate: 5, burst: 3, spans: 100, gap: 0, wantMin: 3, wantMax: 3},
		// Fractional rates: one every 4 s over 60 s, plus the first.
		{name: "below one a second", rate: 0.25, burst: 1, spans: 600, gap: 100 * time.Millisecond, wantMin: 15, wantMax: 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			l := newLimiter(tt.rate, tt.burst, 10)
			got := offer(l, c, a, tt.spans, tt.gap)
			if got < tt.wantMin || got > tt.wantMax {
				t.Errorf("passed %d of %d spans, want %d..%d", got, tt.spans, tt.wantMin, tt.wantMax)
			}
		})
	}

	t.Run("keys are limited apart", func(t *testing.T) {
		c := newClock()
		l := newLimiter(10, 10, 10)
		// a floods; b sends at its rate in between, and loses nothing.
		passedA, passedB := 0, 0
		for i := range 1000 {
			l.batch(c.now(), func(allow allowFunc) {
				if allow(a) {
					passedA++
				}
				if i%20 == 0 && allow(b) {
					passedB++
				}
			})
			c.advance(5 * time.Millisecond)
		}
		if passedB != 50 {
			t.Errorf("b passed %d of 50 while a flooded, want all", passedB)
		}
		if passedA < 55 || passedA > 60 {
			t.Errorf("a passed %d in 5 s at 10/s with a burst of 10, want 55..60", passedA)
		}
	})
}

// Keys beyond MaxKeys share one bucket: invented keys cannot grow the
// state, nor pass more than one key would. Buckets that refilled give
// their places back.
func TestLimiterBoundsKeys(t *testing.T) {
	c := newClock()
	l := newLimiter(2, 2, 3)
	passed := 0
	for i := range 1000 {
		l.batch(c.now(), func(allow allowFunc) {
			if allow(key{target: fmt.Sprintf("t%d", i), model: "m"}) {
				passed++
			}
		})
		c.advance(time.Millisecond)
	}
	if n := l.keys(); n > 3 {
		t.Errorf("%d buckets after 1000 keys, want at most MaxKeys 3", n)
	}
	// The first 3 keys' one span each, then the shared bucket: its burst
	// (2) and 2/s for the second, less the token still accruing.
	if passed < 5 || passed > 7 {
		t.Errorf("1000 distinct keys in 1 s passed %d spans, want 5..7 (3 keys of their own, then one shared bucket)", passed)
	}

	c.advance(2 * time.Second) // every bucket is full again
	fresh := key{target: "late", model: "m"}
	if got := offer(l, c, fresh, 2, 0); got != 2 {
		t.Errorf("a new key after the others went idle passed %d of its burst 2, want 2 (a bucket of its own)", got)
	}
	if n := l.keys(); n != 1 {
		t.Errorf("%d buckets after the idle ones were swept, want 1", n)
	}
}

func TestBucketBoundaries(t *testing.T) {
	start := time.Unix(0, 0)
	b := bucket{tokens: 0, last: start}
	if b.take(start, 1, 1) {
		t.Error("an empty bucket gave a token")
	}
	if b.take(start.Add(999*time.Millisecond), 1, 1) {
		t.Error("a bucket at 0.999 tokens gave one")
	}
	if !b.take(start.Add(1000*time.Millisecond), 1, 1) {
		t.Error("a bucket at exactly 1 token refused it")
	}
	// A clock that steps back neither adds nor removes tokens.
	b = bucket{tokens: 1, last: start}
	if !b.take(start.Add(-time.Hour), 1, 5) || b.tokens != 0 || !b.last.Equal(start) {
		t.Errorf("after a step back: %+v, want the token spent and the time kept", b)
	}
	// Never above the burst, however long the wait.
	b = bucket{tokens: 0, last: start}
	b.take(start.Add(24*time.Hour), 10, 3)
	if b.tokens != 2 {
		t.Errorf("after a day at burst 3, one taken: %v tokens, want 2", b.tokens)
	}
}
