package study

import (
	"testing"
	"time"
)

func TestStudyGeneration(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		b      Behaviour
		tokens int
		want   time.Duration
	}{
		{Behaviour{Rate: 30}, 600, 20 * time.Second},
		{Behaviour{Rate: 150}, 600, 4 * time.Second},
		{Behaviour{Rate: 60}, 2, 33333333 * time.Nanosecond},
		{Behaviour{}, 1, time.Millisecond}, // ShortAnswerRate
		{Behaviour{Rate: 30}, 0, 0},
	} {
		if got := generation(tt.b, tt.tokens); got != tt.want {
			t.Errorf("generation(rate %g, %d tokens) = %v, want %v", tt.b.Rate, tt.tokens, got, tt.want)
		}
	}
}

// A streamed answer ends at its last token: under fallback every request
// goes to t1 (100 ms, 30 tokens/s), so each length's time to the last
// token is its TTFB plus its tokens at 30 a second, and the TTFB stays
// the first byte's. A 600-token answer holds its client 20 s: the
// measured time is long enough for every length to start.
func TestStudyStreamsAnswers(t *testing.T) {
	t.Parallel()
	st := runStudy(t, Options{Seed: 1, Duration: 25 * time.Second, Scenarios: []string{"throughput"}, Modes: []string{"fallback"}})
	r := st.Result("throughput", "fallback")
	if mean := r.Mean(); mean < 90*time.Millisecond || mean > 110*time.Millisecond {
		t.Errorf("mean TTFB = %v, want about t1's 100 ms", mean)
	}
	for _, n := range ThroughputLengths {
		want := 100*time.Millisecond + generation(Behaviour{Rate: 30}, n)
		got := r.MeanLastToken(n)
		if len(r.LastTokenBy[n]) == 0 || got < want-15*time.Millisecond || got > want+15*time.Millisecond {
			t.Errorf("%d tokens: mean time to the last token %v over %d answers, want about %v", n, got, len(r.LastTokenBy[n]), want)
		}
	}
}
