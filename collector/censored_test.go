package collector

import (
	"context"
	"math"
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
	if v, ok := censoredValue(nil, 50*ms); ok {
		t.Errorf("no sample: %v, true; want nothing", v)
	}
	// Fewer than censoredMinSamples: no fit, the bound itself from the p50 up.
	few := []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms}
	if v, ok := censoredValue(few, 30*ms); !ok || v != 30*ms {
		t.Errorf("few samples, waited the p50: %v, %v; want 30ms, true", v, ok)
	}
	if v, ok := censoredValue(few, 29*ms); ok {
		t.Errorf("few samples, waited under the p50: %v, true; want nothing", v)
	}
	// No spread between p50 and p95: no fit either.
	flat := make([]time.Duration, 20)
	for i := range flat {
		flat[i] = 20 * ms
	}
	if v, ok := censoredValue(flat, 60*ms); !ok || v != 60*ms {
		t.Errorf("no spread: %v, %v; want 60ms, true", v, ok)
	}

	// A log-normal target: the expected time of an attempt that had
	// waited, whatever it had waited, from well under its p50 to its tail.
	sorted := logNormalSamples(100, 20*ms, 0.9)
	p50, p95 := sorted[medianIndex(100)], sorted[quantileIndex(100, 0.95)]
	mu, sigma := math.Log(float64(p50)), math.Log(float64(p95)/float64(p50))/1.6448536269514722
	for _, waited := range []time.Duration{ms, 5 * ms, 20 * ms, 60 * ms, 150 * ms, 400 * ms} {
		v, ok := censoredValue(sorted, waited)
		want := conditionalMean(mu, sigma, waited)
		if !ok || v < waited || math.Abs(float64(v)-want) > 1e-3*want {
			t.Errorf("waited %v: %v, %v; want E[T | T > waited] = %v, at least waited", waited, v, ok, time.Duration(want))
		}
	}
	// Beyond anything the fit gives mass to (a hang): the bound.
	if v, ok := censoredValue(sorted, time.Hour); !ok || v != time.Hour {
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

// TestAggregatorCountsHedgeLosers: a target whose slow attempts hedges
// keep beating must not look as fast as its answers. Half its attempts
// answer in 20 ms; the other half would take 200 ms, and a hedge beats
// each of them at 60 ms. Through real pdata spans, from this instance and
// from a peer: the answers alone would make its EWMA 20 ms; each loser
// counts in it at what it had waited (no spread to fit: every answer took
// 20 ms), so the EWMA is the fold of 20 and 60 ms alternating. The losers
// are not answers: the sample count, the quantiles, the origins and the
// fault rate are the answers' alone; each is an attempt without a sample
// and, past the p95, a late.
func TestAggregatorCountsHedgeLosers(t *testing.T) {
	ms := time.Millisecond
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a"})
	start := t0.Add(-time.Minute)
	var spans []spanFixture
	var want float64
	for i := range 40 {
		end := start.Add(time.Duration(i) * 10 * ms)
		instance := "inst-a"
		if i%4 >= 2 {
			instance = "inst-b" // a peer's spans teach the same
		}
		v := 20 * ms
		if i%2 == 0 {
			spans = append(spans, attemptFixture(instance, "groq", "llama", v, end))
		} else {
			v = 60 * ms
			spans = append(spans, lostAttemptFixture(instance, v, end))
		}
		if i == 0 {
			want = float64(v)
		} else {
			want += EWMAAlpha * (float64(v) - want)
		}
	}
	// One by one, in order: each loser is judged against the answers
	// before it, as it would be live.
	for _, s := range spans {
		if err := agg.ConsumeTraces(context.Background(), buildTraces(t, s)); err != nil {
			t.Fatalf("ConsumeTraces: %v", err)
		}
	}
	st := tr.StatsAt("groq", "llama", clock.Now())
	if math.Abs(float64(st.EWMA)-want) > 1 {
		t.Errorf("EWMA %v, want %v: the fold of the answers and the losers at what they waited", st.EWMA, time.Duration(want))
	}
	if st.Samples != 20 || st.P50 != 20*ms || st.P99 != 20*ms || st.SelfSamples+st.PeerSamples != 20 {
		t.Errorf("samples %d (self %d, peer %d), p50 %v, p99 %v; want the 20 answers of 20ms alone", st.Samples, st.SelfSamples, st.PeerSamples, st.P50, st.P99)
	}
	if st.Outcomes != 20 || st.FaultRate != 0 {
		t.Errorf("outcomes %d, fault rate %v; want the 20 answers, no fault", st.Outcomes, st.FaultRate)
	}
	if st.Late != 20 || st.LateSeconds != 0.06 || st.Unsampled != 3 {
		t.Errorf("late %d (%v s), unsampled %d; want 20 lates of 0.06 s, 3 (ColdTries) attempts without a sample", st.Late, st.LateSeconds, st.Unsampled)
	}

	// Without the losers the same answers read 20 ms: what the tracker
	// learned before, a target that loses races looking as fast as its
	// answers.
	tr2 := newTestTracker(newFakeClock(t0))
	agg2 := NewAggregator(tr2, AggregatorOptions{InstanceID: "inst-a"})
	for i, s := range spans {
		if i%2 == 0 {
			if err := agg2.ConsumeTraces(context.Background(), buildTraces(t, s)); err != nil {
				t.Fatalf("ConsumeTraces: %v", err)
			}
		}
	}
	if st2 := tr2.StatsAt("groq", "llama", t0); st2.EWMA != 20*ms || st.EWMA <= 40*ms {
		t.Errorf("EWMA without the losers %v, with them %v; want 20ms, and above 40ms", st2.EWMA, st.EWMA)
	}

	// Expired with the window: the losers leave the EWMA with the answers.
	clock.Advance(DefaultMaxAge)
	if st := tr.StatsAt("groq", "llama", clock.Now()); st.EWMA != 0 || st.Samples != 0 || st.Late != 0 {
		t.Errorf("after max age: EWMA %v, samples %d, late %d; want nothing", st.EWMA, st.Samples, st.Late)
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
