package collector

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/firstbyte-dev/firstbyte/internal/homes"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// storedFixture is a peer's Responses attempt on target that stored
// response id, ending at end.
func storedFixture(instance, target, id string, end time.Time) spanFixture {
	f := attemptFixture(instance, target, "gpt-4.1", 300*time.Millisecond, end)
	f.name = "chat gpt-4.1"
	return f.with(map[string]any{string(telemetry.KeyResponseID): id})
}

// TestAggregatorLearnsResponseHomes: the id an attempt span carries
// (gen_ai.response.id) names the target that stored that response, for
// the provider's retention, whoever's span it is; a span that names a
// target this instance does not route to, or that failed, teaches none.
func TestAggregatorLearnsResponseHomes(t *testing.T) {
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "self"})
	agg.SetTargets([]Target{{Name: "a", Model: "gpt-4.1"}, {Name: "b", Model: "gpt-4.1"}})
	failed := storedFixture("peer-1", "a", "resp_failed", t0).with(map[string]any{
		string(telemetry.KeyHTTPStatus): int64(503), string(telemetry.KeyOutcome): telemetry.OutcomeFailover,
		string(telemetry.KeyTimeToFirstByte): nil})
	failed.status = ptrace.StatusCodeError
	_ = agg.ConsumePeerTraces(context.Background(), buildTraces(t,
		storedFixture("peer-1", "a", "resp_a", t0),
		storedFixture("peer-2", "b", "resp_b", t0),
		storedFixture("peer-1", "x", "resp_x", t0), // x is no target of this instance
		failed))
	_ = agg.ConsumeTraces(context.Background(), buildTraces(t, storedFixture("self", "b", "resp_own", t0)))

	for _, tt := range []struct {
		id, want string
		at       time.Time
	}{
		{"resp_a", "a", t0},
		{"resp_b", "b", t0},
		{"resp_own", "b", t0},
		{"resp_x", "", t0},
		{"resp_failed", "", t0},
		{"resp_unknown", "", t0},
		{"resp_a", "a", t0.Add(homes.Retention - time.Second)},
		{"resp_b", "", t0.Add(homes.Retention)}, // the provider has deleted it
	} {
		got, ok := tr.ResponseHome(tt.id, tt.at)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("ResponseHome(%s) at +%v = %q, %v; want %q", tt.id, tt.at.Sub(t0), got, ok, tt.want)
		}
	}
}
