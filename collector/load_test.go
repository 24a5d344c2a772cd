package collector

import (
	"context"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// TestLoadCurveFromOwnSpans: this instance's attempt spans say how many of
// its attempts were in flight at the target when each started
// (firstbyte.inflight); the tracker keeps the mean time to first byte by
// that level, fresh for loadFresh, and the target's LoadFactor reads it.
func TestLoadCurveFromOwnSpans(t *testing.T) {
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "me"})
	span := func(inflight int64, ttfb time.Duration) spanFixture {
		return attemptFixture("me", "groq", "llama", ttfb, t0).with(map[string]any{string(telemetry.KeyInflight): inflight})
	}
	td := buildTraces(t, span(1, 100*time.Millisecond), span(4, 400*time.Millisecond), span(4, 400*time.Millisecond))
	if err := agg.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	st := tr.StatsAt("groq", "llama", clock.Now())
	if st.Load[0] != 100*time.Millisecond || st.Load[3] != 400*time.Millisecond || st.Load[1] != 0 {
		t.Fatalf("load curve = %v, want 100ms at 1 and 400ms at 4", st.Load)
	}
	if f := st.LoadFactor(4); f != 4 {
		t.Errorf("LoadFactor(4) = %g, want 4", f)
	}
	if f := st.LoadFactor(2); f != 1 {
		t.Errorf("LoadFactor(2) = %g, want 1 (no level between 1 and 4 measured: read from idle)", f)
	}
	clock.Advance(loadFresh)
	if st := tr.StatsAt("groq", "llama", clock.Now()); st.Load != [len(st.Load)]time.Duration{} || st.Samples != 3 {
		t.Errorf("after %v: load curve %v with %d samples; want the curve forgotten, the samples kept", loadFresh, st.Load, st.Samples)
	}
}

// TestPeerInflightFromPeerSpans: a peer's span says how many of its
// attempts were in flight when it started, itself included; when it ends
// the rest still are, for peerLoadFor. Each peer counts once (its latest
// report), and this instance's next sample lands at the level its own and
// the peers' attempts made together.
func TestPeerInflightFromPeerSpans(t *testing.T) {
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "me"})
	peer := func(instance string, inflight int64, end time.Time) spanFixture {
		return attemptFixture(instance, "groq", "llama", 100*time.Millisecond, end).with(map[string]any{string(telemetry.KeyInflight): inflight})
	}
	td := buildTraces(t, peer("b", 5, t0.Add(-time.Second)), peer("b", 3, t0), peer("c", 2, t0))
	if err := agg.ConsumePeerTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if got := tr.StatsAt("groq", "llama", clock.Now()).PeerInflight; got != 3 {
		t.Fatalf("PeerInflight = %d, want 3 (b's latest 3-1, c's 2-1)", got)
	}
	if st := tr.StatsAt("groq", "llama", clock.Now()); st.Load != [len(st.Load)]time.Duration{} {
		t.Errorf("peers' samples moved the load curve %v; only this instance's say the load they met", st.Load)
	}
	own := attemptFixture("me", "groq", "llama", 300*time.Millisecond, t0).with(map[string]any{string(telemetry.KeyInflight): int64(1)})
	if err := agg.ConsumeTraces(context.Background(), buildTraces(t, own)); err != nil {
		t.Fatal(err)
	}
	if st := tr.StatsAt("groq", "llama", clock.Now()); st.Load[3] != 300*time.Millisecond {
		t.Errorf("own sample with 1 in flight and 3 of the peers': curve %v, want 300ms at level 4", st.Load)
	}
	clock.Advance(peerLoadFor)
	if got := tr.StatsAt("groq", "llama", clock.Now()).PeerInflight; got != 0 {
		t.Errorf("after %v PeerInflight = %d, want 0: the reports are stale", peerLoadFor, got)
	}

	// A span that says what was still in flight when it ended is read by
	// that: b started into a queue of 9 that has drained to 1 since.
	drained := peer("b", 9, clock.Now()).with(map[string]any{string(telemetry.KeyInflightAtEnd): int64(1)})
	if err := agg.ConsumePeerTraces(context.Background(), buildTraces(t, drained)); err != nil {
		t.Fatal(err)
	}
	if got := tr.StatsAt("groq", "llama", clock.Now()).PeerInflight; got != 1 {
		t.Errorf("PeerInflight = %d, want 1: what was in flight at the span's end, not at its start", got)
	}
}
