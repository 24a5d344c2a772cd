package router

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/collector"
)

// reliability is one target's row in a reliabilities table.
type reliability struct {
	p50     time.Duration // exp(logMean)
	logStd  float64
	samples int
	errRate float64
}

// reliabilities is a reliabilityAt from a table keyed by target (model
// ignored): the tracker's contract without its window maths, which the
// collector tests. Keyed by target alone so a lookup does not allocate.
type reliabilities map[string]reliability

func (r reliabilities) P50(target, _ string) (time.Duration, int, bool) {
	x, ok := r[target]
	return x.p50, x.samples, ok
}

func (r reliabilities) ReliabilityAt(target, _ string, _ time.Time) (logMean, logStd float64, samples int, errRate float64, ok bool) {
	x, ok := r[target]
	if !ok {
		return 0, 0, 0, 0, false
	}
	if x.samples < 0 { // failures only: an error rate but no latency sample
		return 0, 0, 0, x.errRate, false
	}
	return math.Log(x.p50.Seconds()), x.logStd, max(x.samples, 1), x.errRate, true
}

// Uniform pairs (u1, u2) that make standardNormal exactly 0, about +1 and
// about -1.
var (
	zZero  = []float64{0, 0}
	zPlus  = []float64{1 - math.Exp(-0.5), 0}
	zMinus = []float64{1 - math.Exp(-0.5), 0.5}
)

func draws(zs ...[]float64) []float64 { return slices.Concat(zs...) }

func TestErrorPenalty(t *testing.T) {
	for _, tt := range []struct {
		errRate, want float64
	}{
		{-0.1, 1}, {0, 1}, {0.5, 2}, {0.75, 4},
		{0.9, 10}, {0.95, 10}, {1, 10}, {1.5, 10}, {math.NaN(), 10},
	} {
		if got := errorPenalty(tt.errRate); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("errorPenalty(%v) = %v, want %v", tt.errRate, got, tt.want)
		}
	}
}

func TestStandardNormal(t *testing.T) {
	for _, tt := range []struct {
		name   string
		u1, u2 float64
		want   float64
	}{
		{"u1 = 0 gives 0", 0, 0.3, 0},
		{"radius 1, angle 0", zPlus[0], zPlus[1], 1},
		{"radius 1, angle pi", zMinus[0], zMinus[1], -1},
		{"radius 1, angle pi/2", zPlus[0], 0.25, 0},
		{"largest u1 is finite", math.Nextafter(1, 0), 0, math.Sqrt(-2 * math.Log(math.Pow(2, -53)))},
	} {
		if got := standardNormal(tt.u1, tt.u2); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: standardNormal(%v, %v) = %v, want %v", tt.name, tt.u1, tt.u2, got, tt.want)
		}
	}
}

func TestStandardNormalMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 100_000
	var sum, sumSq float64
	for range n {
		z := standardNormal(r.Float64(), r.Float64())
		sum += z
		sumSq += z * z
	}
	mean, variance := sum/n, sumSq/n-(sum/n)*(sum/n)
	if math.Abs(mean) > 0.02 || math.Abs(variance-1) > 0.03 {
		t.Errorf("mean, variance = %.4f, %.4f; want about 0, 1", mean, variance)
	}
}

func TestPosteriorDraw(t *testing.T) {
	for _, tt := range []struct {
		name            string
		logMean, logStd float64
		n               int
		u               []float64
		want            float64
	}{
		{"z = 0 is the mean", 2, 0.5, 10, zZero, 2},
		{"spread logStd/sqrt(n)", 2, 0.4, 4, zPlus, 2.2},
		{"one sample, spread 0: floored at 0.1", 2, 0, 1, zMinus, 1.9},
		{"spread below the floor", 2, 0.05, 1, zPlus, 2.1},
		{"n = 0 taken as 1", 2, 0.3, 0, zPlus, 2.3},
	} {
		if got := posteriorDraw(tt.logMean, tt.logStd, tt.n, tt.u[0], tt.u[1]); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: posteriorDraw = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestReliableLatencyOrder(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name          string
		rel           reliabilities
		rand          *scriptedRand
		want          []string
		wantSelection string
	}{
		{"a target that has only failed ranks last, not first as an unmeasured one would",
			reliabilities{"groq": {samples: -1, errRate: 1}, "openai": {p50: 250 * ms}, "anthropic": {p50: 900 * ms}},
			&scriptedRand{floats: draws(zZero, zZero)},
			[]string{"openai", "anthropic", "groq"}, "leader"},
		{"unmeasured first, then the failing ones in declaration order",
			reliabilities{"groq": {samples: -1, errRate: 1}, "openai": {samples: -1, errRate: 0.5}},
			&scriptedRand{},
			[]string{"anthropic", "groq", "openai"}, "cold"},
		{"only failing targets: declaration order, the first leads",
			reliabilities{"groq": {samples: -1, errRate: 1}, "openai": {samples: -1, errRate: 0.5}, "anthropic": {samples: -1, errRate: 1}},
			&scriptedRand{},
			[]string{"groq", "openai", "anthropic"}, "leader"},
		{"failing faster target loses to a slightly slower reliable one",
			reliabilities{"groq": {p50: 200 * ms, errRate: 0.5}, "openai": {p50: 250 * ms}, "anthropic": {p50: 900 * ms}},
			&scriptedRand{floats: draws(zZero, zZero, zZero)},
			[]string{"openai", "groq", "anthropic"}, "leader"},
		{"a low error rate does not outweigh a clear lead: 0.1 is x1.11",
			reliabilities{"groq": {p50: 200 * ms, errRate: 0.1}, "openai": {p50: 250 * ms}, "anthropic": {p50: 900 * ms}},
			&scriptedRand{floats: draws(zZero, zZero, zZero)},
			[]string{"groq", "openai", "anthropic"}, "leader"},
		{"penalty capped at 10x: always failing 100ms ranks as 1s",
			reliabilities{"groq": {p50: 100 * ms, errRate: 1}, "openai": {p50: 900 * ms}, "anthropic": {p50: 1100 * ms}},
			&scriptedRand{floats: draws(zZero, zZero, zZero)},
			[]string{"openai", "groq", "anthropic"}, "leader"},
		{"draw puts the runner-up first: explore",
			// groq 300ms*e^0.1 = 331.6ms; openai 330ms*e^-0.1 = 298.6ms.
			reliabilities{"groq": {p50: 300 * ms}, "openai": {p50: 330 * ms}, "anthropic": {p50: 900 * ms}},
			&scriptedRand{floats: draws(zPlus, zMinus, zZero)},
			[]string{"openai", "groq", "anthropic"}, "explore"},
		{"more samples narrow the draw: the leader stays first",
			// groq 300ms*e^(0.1/10) = 303ms; openai 330ms*e^(-0.1/10) = 326.7ms.
			reliabilities{"groq": {p50: 300 * ms, samples: 100}, "openai": {p50: 330 * ms, samples: 100}, "anthropic": {p50: 900 * ms}},
			&scriptedRand{floats: draws(zPlus, zMinus, zZero)},
			[]string{"groq", "openai", "anthropic"}, "leader"},
		{"unsampled first (anthropic just added), the rest by draw",
			reliabilities{"groq": {p50: 300 * ms}, "openai": {p50: 600 * ms}},
			&scriptedRand{floats: draws(zZero, zZero)},
			[]string{"anthropic", "groq", "openai"}, "cold"},
		{"nothing sampled: all cold, shuffled by the injected source",
			reliabilities{},
			&scriptedRand{ints: []int{0, 0}},
			[]string{"openai", "anthropic", "groq"}, "cold"},
		{"ties keep declaration order",
			reliabilities{"groq": {p50: 500 * ms}, "openai": {p50: 500 * ms}, "anthropic": {p50: 100 * ms}},
			&scriptedRand{floats: draws(zZero, zZero, zZero)},
			[]string{"anthropic", "groq", "openai"}, "leader"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewReliableLatency(tt.rel, tt.rand)
			got, sel := s.Order(nil, "m", newCandidates("groq", "openai", "anthropic"))
			if !slices.Equal(names(got), tt.want) || sel != tt.wantSelection {
				t.Errorf("Order = %v %s, want %v %s", names(got), sel, tt.want, tt.wantSelection)
			}
		})
	}
}

func TestReliableLatencySingleTarget(t *testing.T) {
	s := NewReliableLatency(reliabilities{"a": {p50: time.Second, errRate: 1}}, &scriptedRand{floats: zPlus})
	got, sel := s.Order(nil, "m", newCandidates("a"))
	if !slices.Equal(names(got), []string{"a"}) || sel != "leader" {
		t.Errorf("Order = %v %s, want [a] leader", names(got), sel)
	}
	if got, sel := s.Order(nil, "m", nil); len(got) != 0 || sel != "cold" {
		t.Errorf("Order(no candidates) = %v %s, want [] cold", names(got), sel)
	}
}

// exploreShare orders n requests and returns the share led by another
// target than the best estimate, and how often each target led.
func exploreShare(t *testing.T, rel reliabilities, n int) (float64, map[string]int) {
	t.Helper()
	s := NewReliableLatency(rel, rand.New(rand.NewPCG(1, 2)))
	cands := newCandidates("groq", "openai", "anthropic")
	explored, leadBy := 0, map[string]int{}
	for range n {
		got, sel := s.Order(nil, "m", cands)
		leadBy[got[0].Target]++
		switch sel {
		case "explore":
			explored++
		case "leader":
		default:
			t.Fatalf("selection %q, want leader or explore", sel)
		}
	}
	return float64(explored) / float64(n), leadBy
}

func TestReliableLatencyExploreShare(t *testing.T) {
	ms := time.Millisecond
	t.Run("close estimates: both leaders and explorations", func(t *testing.T) {
		share, leadBy := exploreShare(t, reliabilities{
			"groq":      {p50: 300 * ms, logStd: 0.3, samples: 5},
			"openai":    {p50: 320 * ms, logStd: 0.3, samples: 5},
			"anthropic": {p50: 340 * ms, logStd: 0.3, samples: 5},
		}, 2000)
		if share <= 0.1 || share >= 0.9 {
			t.Errorf("explore share = %.3f, want well inside (0, 1)", share)
		}
		if leadBy["groq"] <= leadBy["anthropic"] {
			t.Errorf("led by %v: want the best estimate (groq) to lead most", leadBy)
		}
	})
	t.Run("far apart: the leader wins", func(t *testing.T) {
		share, leadBy := exploreShare(t, reliabilities{
			"groq":      {p50: 300 * ms, logStd: 0.3, samples: 20},
			"openai":    {p50: 3 * time.Second, logStd: 0.3, samples: 20},
			"anthropic": {p50: 100 * ms, logStd: 0.3, samples: 20, errRate: 0.95}, // 1s with the cap
		}, 2000)
		if share > 0.01 || leadBy["groq"] < 1980 {
			t.Errorf("explore share = %.3f, led by %v; want groq to lead nearly always", share, leadBy)
		}
	})
}

func TestReliableLatencyOrderDoesNotAllocate(t *testing.T) {
	rel := reliabilities{"groq": {p50: 300 * time.Millisecond}, "openai": {p50: 600 * time.Millisecond}, "anthropic": {p50: 900 * time.Millisecond}}
	s := NewReliableLatency(rel, rand.New(rand.NewPCG(1, 2)))
	cands := newCandidates("groq", "openai", "anthropic")
	buf := make([]*Candidate, 0, 16)
	if allocs := testing.AllocsPerRun(100, func() { s.Order(buf[:0], "m", cands) }); allocs != 0 {
		t.Errorf("Order allocates %v times per call, want 0", allocs)
	}
}

// TestReliableLatencyMoreThanRankedCap: past the stack buffers, the order
// is still complete and sorted.
func TestReliableLatencyMoreThanRankedCap(t *testing.T) {
	rel := reliabilities{}
	specs := make([]string, 20)
	for i := range specs {
		specs[i] = string(rune('a' + i))
		rel[specs[i]] = reliability{p50: time.Duration(20-i) * time.Second, samples: 100}
	}
	got, _ := NewReliableLatency(rel, &scriptedRand{}).Order(nil, "m", newCandidates(specs...))
	want := slices.Clone(specs)
	slices.Reverse(want)
	if !slices.Equal(names(got), want) {
		t.Errorf("Order = %v, want %v", names(got), want)
	}
}

func TestReliableLatencyRegistered(t *testing.T) {
	s, ok := NewStrategy("reliable-latency", StrategyDeps{Latency: reliabilities{}})
	if _, isRL := s.(*ReliableLatency); !ok || !isRL {
		t.Fatalf("NewStrategy(reliable-latency) = %T, %v; want *ReliableLatency", s, ok)
	}
	// A source with only a p50: least-latency's behaviour.
	s, ok = NewStrategy("reliable-latency", StrategyDeps{Latency: latencies{}})
	if _, isLL := s.(*LeastLatency); !ok || !isLL {
		t.Errorf("NewStrategy(reliable-latency, p50 only) = %T, %v; want *LeastLatency", s, ok)
	}
}

// TestReliableLatencyOverTracker wires the strategy to the collector's
// tracker as cmd/firstbyte does, and checks that errors recorded there move
// a faster target behind a reliable one.
func TestReliableLatencyOverTracker(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tr := collector.NewTracker(collector.TrackerOptions{Now: clock})
	for i := range 20 {
		at := now.Add(-time.Duration(20-i) * time.Second)
		tr.Record("groq", "m", 200*time.Millisecond, at)
		tr.Record("openai", "m", 260*time.Millisecond, at)
		tr.RecordOutcome("groq", "m", collector.WeightFailure, at) // groq fails half its attempts
	}
	s, _ := NewStrategy("reliable-latency", StrategyDeps{Latency: tr, Rand: rand.New(rand.NewPCG(5, 6)), Now: clock})
	got, sel := s.Order(nil, "m", newCandidates("groq", "openai"))
	if !slices.Equal(names(got), []string{"openai", "groq"}) || sel != "leader" {
		t.Errorf("Order = %v %s, want [openai groq] leader", names(got), sel)
	}
}

// TestReliableLatencyConcurrentOrder runs Order from many goroutines on one
// strategy, as requests do (run with -race).
func TestReliableLatencyConcurrentOrder(t *testing.T) {
	rel := reliabilities{"groq": {p50: 300 * time.Millisecond}, "openai": {p50: 320 * time.Millisecond}}
	s := NewReliableLatency(rel, nil)
	cands := newCandidates("groq", "openai", "anthropic")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var buf [16]*Candidate
			for range 500 {
				if got, _ := s.Order(buf[:0], "m", cands); len(got) != 3 {
					t.Errorf("Order returned %d candidates, want 3", len(got))
					return
				}
			}
		})
	}
	wg.Wait()
}
