package collector

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// logNormalSamples is n samples at the exact quantiles (i+0.5)/n of the
// log-normal of the given median and sigma, ascending.
func logNormalSamples(n int, median time.Duration, sigma float64) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		z := math.Sqrt2 * math.Erfinv(2*(float64(i)+0.5)/float64(n)-1)
		out[i] = time.Duration(float64(median) * math.Exp(sigma*z))
	}
	return out
}

// conditionalMean is E[T | T > x] of the log-normal (mu, sigma) of ln(T in
// ns), by numerical integration over the normal score: the closed form in
// censoredValue checked against a sum that does not use it.
func conditionalMean(mu, sigma float64, x time.Duration) float64 {
	z0 := (math.Log(float64(x)) - mu) / sigma
	const step = 1e-4
	var num, den float64
	for z := z0 + step/2; z < z0+40; z += step {
		w := math.Exp(-z * z / 2)
		num += w * math.Exp(mu+sigma*z)
		den += w
	}
	return num / den
}

func TestCensoredValue(t *testing.T) {
	ms := time.Millisecond
	if v, ok := censoredValue(nil, nil, 50*ms); ok {
		t.Errorf("no sample: %v, true; want nothing", v)
	}
	// Fewer than censoredMinSamples: no fit, the bound itself from the p50 up.
	few := []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms}
	if v, ok := censoredValue(few, nil, 30*ms); !ok || v != 30*ms {
		t.Errorf("few samples, waited the p50: %v, %v; want 30ms, true", v, ok)
	}
	if v, ok := censoredValue(few, nil, 29*ms); ok {
		t.Errorf("few samples, waited under the p50: %v, true; want nothing", v)
	}
	// No spread between p50 and p95: no fit either.
	flat := make([]time.Duration, 20)
	for i := range flat {
		flat[i] = 20 * ms
	}
	if v, ok := censoredValue(flat, nil, 60*ms); !ok || v != 60*ms {
		t.Errorf("no spread: %v, %v; want 60ms, true", v, ok)
	}

	// A log-normal target: the expected time of an attempt that had
	// waited, whatever it had waited, from well under its p50 to its tail.
	sorted := logNormalSamples(100, 20*ms, 0.9)
	p50, p95 := sorted[medianIndex(100)], sorted[quantileIndex(100, 0.95)]
	mu, sigma := math.Log(float64(p50)), math.Log(float64(p95)/float64(p50))/1.6448536269514722
	for _, waited := range []time.Duration{ms, 5 * ms, 20 * ms, 60 * ms, 150 * ms, 400 * ms} {
		v, ok := censoredValue(sorted, nil, waited)
		want := conditionalMean(mu, sigma, waited)
		if !ok || v < waited || math.Abs(float64(v)-want) > 1e-3*want {
			t.Errorf("waited %v: %v, %v; want E[T | T > waited] = %v, at least waited", waited, v, ok, time.Duration(want))
		}
	}
	// Beyond anything the fit gives mass to (a hang): the bound.
	if v, ok := censoredValue(sorted, nil, time.Hour); !ok || v != time.Hour {
		t.Errorf("waited an hour: %v, %v; want 1h, true", v, ok)
	}
}

// lostAttemptFixture is a hedge's loser on groq/llama as the router ends
// its span: cancelled after waited without a first byte, outcome and
// error.type hedge_lost, no fault, span status unset.
func lostAttemptFixture(instance string, waited time.Duration, end time.Time) spanFixture {
	f := attemptFixture(instance, "groq", "llama", 0, end).with(map[string]any{
		string(telemetry.KeyTimeToFirstByte): nil,
		string(telemetry.KeyHTTPStatus):      nil,
		string(telemetry.KeyErrorType):       "hedge_lost",
		string(telemetry.KeyOutcome):         telemetry.OutcomeHedgeLost,
		string(telemetry.KeyFault):           "none",
	})
	f.dur = waited
	return f
}

// hedgedSpans is n attempt spans on groq/llama from start, 10 ms apart,
// alternating: an answer in 20 ms, then a loser cancelled at 60 ms (a
// target whose every other attempt would take 200 ms, and a hedge beats
// each at 60 ms). Every fourth pair comes from a peer, whose spans teach
// the same.
func hedgedSpans(n int, start time.Time) []spanFixture {
	var spans []spanFixture
	for i := range n {
		end := start.Add(time.Duration(i) * 10 * time.Millisecond)
		instance := "inst-a"
		if i%4 >= 2 {
			instance = "inst-b"
		}
		if i%2 == 0 {
			spans = append(spans, attemptFixture(instance, "groq", "llama", 20*time.Millisecond, end))
		} else {
			spans = append(spans, lostAttemptFixture(instance, 60*time.Millisecond, end))
		}
	}
	return spans
}

// consumeEach gives the aggregator the spans one by one, in order: each
// loser is judged against what came before it, as it would be live.
func consumeEach(t *testing.T, agg *Aggregator, spans []spanFixture) {
	t.Helper()
	for _, s := range spans {
		if err := agg.ConsumeTraces(context.Background(), buildTraces(t, s)); err != nil {
			t.Fatalf("ConsumeTraces: %v", err)
		}
	}
}

// TestAggregatorCountsHedgeLosers: a target whose slow attempts hedges
// keep beating must not look as fast as its answers. Through real pdata
// spans, from this instance and from a peer (hedgedSpans): the answers
// alone make its EWMA 20 ms. With fewer than censoredMinSamples there is
// no fit, so each loser counts at what it had waited and the EWMA is the
// fold of 20 and 60 ms alternating; later ones count at their expected
// time under the fit, above 60 ms, and the estimate stays bounded (the
// values a fit gives feed the next fit). The losers are not answers: the
// sample count, the answers' quantiles, the origins and the fault rate
// are the answers' alone; each is an attempt without a sample and, past
// the p95, a late; CensoredP99 shows them.
func TestAggregatorCountsHedgeLosers(t *testing.T) {
	ms := time.Millisecond
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a"})
	start := t0.Add(-time.Minute)
	spans := hedgedSpans(8, start)
	consumeEach(t, agg, spans)
	var want float64
	for i := range 8 {
		v := float64(20 * ms)
		if i%2 == 1 {
			v = float64(60 * ms)
		}
		if i == 0 {
			want = v
		} else {
			want += EWMAAlpha * (v - want)
		}
	}
	st := tr.StatsAt("groq", "llama", clock.Now())
	if math.Abs(float64(st.EWMA)-want) > 1 {
		t.Errorf("EWMA %v, want %v: the fold of the answers and the losers at what they waited", st.EWMA, time.Duration(want))
	}
	if st.Samples != 4 || st.P50 != 20*ms || st.P99 != 20*ms || st.SelfSamples+st.PeerSamples != 4 || st.CensoredP99 != 60*ms {
		t.Errorf("samples %d (self %d, peer %d), p50 %v, p99 %v, censored p99 %v; want the 4 answers of 20ms alone, the losers' 60ms in CensoredP99",
			st.Samples, st.SelfSamples, st.PeerSamples, st.P50, st.P99, st.CensoredP99)
	}

	// Without the losers the same answers read 20 ms: what the tracker
	// learned before, a target that loses races looking as fast as its
	// answers.
	tr2 := newTestTracker(newFakeClock(t0))
	agg2 := NewAggregator(tr2, AggregatorOptions{InstanceID: "inst-a"})
	for i, s := range spans {
		if i%2 == 0 {
			consumeEach(t, agg2, []spanFixture{s})
		}
	}
	if st2 := tr2.StatsAt("groq", "llama", t0); st2.EWMA != 20*ms || st2.CensoredP99 != 20*ms {
		t.Errorf("without the losers: EWMA %v, censored p99 %v; want 20ms, 20ms", st2.EWMA, st2.CensoredP99)
	}

	// A long run: the fit values the losers above what they waited, and
	// what it gives stays bounded.
	consumeEach(t, agg, hedgedSpans(1000, start.Add(time.Second)))
	st = tr.StatsAt("groq", "llama", clock.Now())
	if st.EWMA <= 40*ms || st.EWMA > 200*ms || st.CensoredP99 <= 60*ms || st.CensoredP99 > 200*ms {
		t.Errorf("after 1000 attempts: EWMA %v, censored p99 %v; want above 40ms and 60ms, at most 200ms", st.EWMA, st.CensoredP99)
	}
	if st.P50 != 20*ms || st.P99 != 20*ms || st.FaultRate != 0 || st.Outcomes != DefaultWindow {
		t.Errorf("p50 %v, p99 %v, fault rate %v over %d; want the answers' 20ms, no fault over a full window", st.P50, st.P99, st.FaultRate, st.Outcomes)
	}
	if st.Late == 0 || st.LateSeconds != 0.06 || st.Unsampled != 3 {
		t.Errorf("late %d (%v s), unsampled %d; want lates of 0.06 s, 3 (ColdTries) attempts without a sample", st.Late, st.LateSeconds, st.Unsampled)
	}

	// Expired with the window: the losers leave with the answers.
	clock.Advance(DefaultMaxAge + time.Minute)
	if st := tr.StatsAt("groq", "llama", clock.Now()); st.EWMA != 0 || st.Samples != 0 || st.Late != 0 || st.CensoredP99 != 0 {
		t.Errorf("after max age: EWMA %v, samples %d, late %d, censored p99 %v; want nothing", st.EWMA, st.Samples, st.Late, st.CensoredP99)
	}
}

// TestHedgeLoserUnderItsP50SaysNothing: with too few answers to fit a
// spread, a loser cancelled before the target's p50 (the hedge that
// started late and lost at once) is not counted in the EWMA: it would
// pull the estimate down for a time the target may well have beaten. With
// no answer at all it counts only as an attempt without a sample.
func TestHedgeLoserUnderItsP50SaysNothing(t *testing.T) {
	ms := time.Millisecond
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a"})
	end := t0.Add(-time.Second)
	consume := func(s spanFixture) {
		t.Helper()
		if err := agg.ConsumeTraces(context.Background(), buildTraces(t, s)); err != nil {
			t.Fatalf("ConsumeTraces: %v", err)
		}
	}
	consume(lostAttemptFixture("inst-a", 5*ms, end.Add(-time.Second)))
	if st := tr.StatsAt("groq", "llama", clock.Now()); st.EWMA != 0 || st.Samples != 0 || st.Unsampled != 1 {
		t.Fatalf("a loser with no answer: EWMA %v, samples %d, unsampled %d; want 0, 0, 1", st.EWMA, st.Samples, st.Unsampled)
	}
	consume(attemptFixture("inst-a", "groq", "llama", 40*ms, end))
	consume(lostAttemptFixture("inst-a", 5*ms, end.Add(ms)))
	if st := tr.StatsAt("groq", "llama", clock.Now()); st.EWMA != 40*ms {
		t.Errorf("a loser under the p50: EWMA %v, want the answer's 40ms alone", st.EWMA)
	}
}

// TestUnionAt: element i of the union of two ascending slices, against
// sorting the union, for every i and every split of a few shapes.
func TestUnionAt(t *testing.T) {
	for _, tc := range [][2][]time.Duration{
		{{1, 2, 3}, nil},
		{nil, {1, 2, 3}},
		{{1, 3, 5, 7}, {2, 4, 6}},
		{{1, 1, 1}, {1, 1}},
		{{10, 20, 30, 40, 50, 60, 70, 80}, {5, 55}},
		{{5, 55}, {10, 20, 30, 40, 50, 60, 70, 80}},
	} {
		all := append(append([]time.Duration{}, tc[0]...), tc[1]...)
		slices.Sort(all)
		for i, want := range all {
			if got := unionAt(tc[0], tc[1], i); got != want {
				t.Errorf("unionAt(%v, %v, %d) = %v, want %v", tc[0], tc[1], i, got, want)
			}
		}
	}
}
