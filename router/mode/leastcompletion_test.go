package mode

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// completionTable is a StatsSource and CompletionSource from tables keyed
// by target: TTFB p50 and output-rate p50; lengths holds the client
// model's answer lengths by max_tokens bucket (the tracker's rule of
// falling back to all answers is the collector's to test).
type completionTable struct {
	statsTable
	rates  map[string]float64
	tokens stats.OutputTokens
}

func (c completionTable) RateAt(target, _ string, _ time.Time) stats.Rate {
	r, ok := c.rates[target]
	if !ok {
		return stats.Rate{}
	}
	return stats.Rate{Samples: 1, P50: r, P75: r, P90: r, P99: r}
}

func (c completionTable) OutputTokensAt(string, int, time.Time) stats.OutputTokens { return c.tokens }

// throughputTargets are the (throughput) study's three targets: t1 starts
// in 100 ms at 30 tokens/s, t2 in 400 ms at 150, t3 in 250 ms at 60.
func throughputTargets(tokens float64) completionTable {
	ms := time.Millisecond
	c := completionTable{
		statsTable: p50s(map[string]time.Duration{"t1": 100 * ms, "t2": 400 * ms, "t3": 250 * ms}),
		rates:      map[string]float64{"t1": 30, "t2": 150, "t3": 60},
	}
	if tokens > 0 { // 0: no answer seen
		c.tokens = stats.OutputTokens{Median: tokens, Samples: 30}
	}
	return c
}

func TestLeastCompletionOrder(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	noRate := throughputTargets(600)
	delete(noRate.rates, "t3")
	noTTFB := throughputTargets(600)
	delete(noTTFB.statsTable, "t2")
	onlyFaults := throughputTargets(600)
	onlyFaults.statsTable = p50s(map[string]time.Duration{"t1": 100 * ms, "t2": 400 * ms})
	onlyFaults.statsTable["t3"] = stats.Target{Outcomes: 3, Faults: 3, FaultRate: 1}
	tests := []struct {
		name          string
		src           completionTable
		maxTokens     int
		rand          *scriptedRand
		want          []string
		wantSelection string
	}{
		// 600 tokens: t1 20.1 s, t2 4.4 s, t3 10.25 s.
		{"long answers: the fastest to finish leads", throughputTargets(600), 0,
			&scriptedRand{floats: []float64{0.99}}, []string{"t2", "t3", "t1"}, "leader"},
		// 2 tokens: t1 0.167 s, t2 0.413 s, t3 0.283 s.
		{"short answers: the fastest first byte leads", throughputTargets(2), 0,
			&scriptedRand{floats: []float64{0.99}}, []string{"t1", "t3", "t2"}, "leader"},
		// 20 tokens: t1 0.767 s, t2 0.533 s, t3 0.583 s.
		{"medium answers", throughputTargets(20), 0,
			&scriptedRand{floats: []float64{0.99}}, []string{"t2", "t3", "t1"}, "leader"},
		// History says 600, the request allows 2: t1 leads.
		{"the request's own limit caps the expected length", throughputTargets(600), 2,
			&scriptedRand{floats: []float64{0.99}}, []string{"t1", "t3", "t2"}, "leader"},
		{"no answer seen: the request's limit is the length", throughputTargets(0), 600,
			&scriptedRand{floats: []float64{0.99}}, []string{"t2", "t3", "t1"}, "leader"},
		{"TTFB samples but no rate sample: unmeasured, first", noRate, 0,
			&scriptedRand{}, []string{"t3", "t2", "t1"}, "cold"},
		{"no TTFB sample: unmeasured, first", noTTFB, 0,
			&scriptedRand{}, []string{"t2", "t3", "t1"}, "cold"},
		{"only faults: last", onlyFaults, 0,
			&scriptedRand{floats: []float64{0.99}}, []string{"t2", "t1", "t3"}, "leader"},
		// Short answers: the leader's (t1) first byte is 0.1 of its 0.167 s,
		// so a draw below 0.6/10 explores; IntN(2) = 1 picks the second
		// non-leader.
		{"explore a short answer: a random measured non-leader leads", throughputTargets(2), 0,
			&scriptedRand{floats: []float64{0.059}, ints: []int{1}}, []string{"t2", "t1", "t3"}, "explore"},
		{"a short answer explores less than least-latency", throughputTargets(2), 0,
			&scriptedRand{floats: []float64{0.061}}, []string{"t1", "t3", "t2"}, "leader"},
		// Long answers: t2's first byte is 0.4 of its 4.4 s: below 0.0091.
		{"a long answer rarely explores", throughputTargets(600), 0,
			&scriptedRand{floats: []float64{0.0092}}, []string{"t2", "t3", "t1"}, "leader"},
		{"explore a long answer", throughputTargets(600), 0,
			&scriptedRand{floats: []float64{0.009}, ints: []int{0}}, []string{"t3", "t2", "t1"}, "explore"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := New("least-completion", Deps{Stats: tt.src, Now: fixedNow, Rand: tt.rand})
			if err != nil {
				t.Fatal(err)
			}
			got, sel := OrderFor(s, nil, "m", tt.maxTokens, newCandidates("t1", "t2", "t3"))
			if !slices.Equal(names(got), tt.want) || sel != tt.wantSelection {
				t.Errorf("OrderFor = %v (%s), want %v (%s)", names(got), sel, tt.want, tt.wantSelection)
			}
		})
	}
}

func TestLeastCompletionRankShowsParts(t *testing.T) {
	t.Parallel()
	s, _ := New("least-completion", Deps{Stats: throughputTargets(600), Now: fixedNow})
	ranked, leader := s.Rank(nil, "m", newCandidates("t1", "t2", "t3"))
	if got := rankedNames(ranked); !slices.Equal(got, []string{"t2", "t3", "t1"}) || leader != 0 {
		t.Fatalf("Rank = %v leader %d, want [t2 t3 t1] leader 0", got, leader)
	}
	p := ranked[0].Completion
	if p == nil || !p.Measured || p.TTFB != 0.4 || p.Rate != 150 || p.Tokens != 600 || math.Abs(p.Seconds-4.4) > 1e-9 {
		t.Errorf("Rank[0].Completion = %+v, want 0.4 s + 600 tokens / 150 tokens/s = 4.4 s", p)
	}
	if math.Abs(ranked[0].Score-4.4) > 1e-9 {
		t.Errorf("Rank[0].Score = %v, want 4.4", ranked[0].Score)
	}
}

func TestLeastCompletionSortUnmeasuredAfterMeasured(t *testing.T) {
	t.Parallel()
	src := throughputTargets(600)
	delete(src.rates, "t2")
	l := NewLeastCompletion(Deps{Stats: src, Now: fixedNow, Rand: &scriptedRand{}})
	if got := names(l.Sort(nil, "m", 0, newCandidates("t1", "t2", "t3"))); !slices.Equal(got, []string{"t3", "t1", "t2"}) {
		t.Errorf("Sort = %v, want [t3 t1 t2]", got)
	}
}

func TestLeastCompletionNeedsCompletionSource(t *testing.T) {
	t.Parallel()
	if _, err := New("least-completion", Deps{Stats: statsTable{}}); err == nil {
		t.Error("New(least-completion) over a source without rates: no error")
	}
}

func TestExpectedTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		ot        stats.OutputTokens
		maxTokens int
		want      float64
	}{
		{"median", stats.OutputTokens{Median: 300, Samples: 12}, 0, 300},
		{"capped by the request", stats.OutputTokens{Median: 300, Samples: 12}, 100, 100},
		{"below the cap", stats.OutputTokens{Median: 30, Samples: 12}, 100, 30},
		{"none seen: the cap", stats.OutputTokens{}, 64, 64},
		{"none seen, no cap", stats.OutputTokens{}, 0, 0},
	}
	for _, tt := range tests {
		if got := ExpectedTokens(tt.ot, tt.maxTokens); got != tt.want {
			t.Errorf("%s: ExpectedTokens(%+v, %d) = %v, want %v", tt.name, tt.ot, tt.maxTokens, got, tt.want)
		}
	}
}
