package router_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// fanOut hands this instance's spans to its own aggregator and, as a
// collector fanning spans out would, to a peer's.
type fanOut struct{ self, peer *collector.Aggregator }

func (f fanOut) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	_ = f.self.ConsumeTraces(ctx, td)
	return f.peer.ConsumePeerTraces(ctx, td)
}

// TestFollowUpOnAnotherReplica: replica 1 stores the responses; replica 2
// never saw them stored, only replica 1's attempt spans (as pdata, the
// way a peer's spans reach the ingest), and sends each follow-up to the
// account that stored it at once.
//
//	client ──create──> replica 1 ──> account a | b
//	                       └─spans (gen_ai.response.id)─> replica 2's aggregator
//	client ──follow-up──> replica 2 ──> the account that stored it
func TestFollowUpOnAnotherReplica(t *testing.T) {
	t.Parallel()
	a, b := startAccount(t, "a"), startAccount(t, "b")
	cfg, err := config.Parse([]byte(twoAccounts(a, b)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}

	tracker2 := collector.NewTracker(collector.TrackerOptions{})
	agg2 := collector.NewAggregator(tracker2, collector.AggregatorOptions{InstanceID: "replica-2"})
	agg2.SetTargets([]collector.Target{{Name: "a", Model: "gpt-4.1"}, {Name: "b", Model: "gpt-4.1"}})
	agg1 := collector.NewAggregator(collector.NewTracker(collector.TrackerOptions{}), collector.AggregatorOptions{InstanceID: "replica-1"})
	sdk1, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{
		InstanceID: "replica-1", Aggregator: fanOut{self: agg1, peer: agg2}, Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })

	replica1 := httptest.NewServer(newGatewayFromConfig(t, cfg, router.Options{TracerProvider: sdk1.TracerProvider}).Handler())
	t.Cleanup(replica1.Close)
	replica2 := httptest.NewServer(newGatewayFromConfig(t, cfg, router.Options{ResponseHomes: tracker2}).Handler())
	t.Cleanup(replica2.Close)

	var convs []created
	for i := range 8 {
		convs = append(convs, createResponse(t, replica1.URL, i%2 == 1))
	}
	// Replica 2's own turn, so its round-robin would send each follow-up
	// to the other account.
	createResponse(t, replica2.URL, false)
	for i, prev := range convs {
		followUp(t, replica2.URL, prev, i%3 == 0)
	}
	if n := a.notFounds() + b.notFounds(); n != 0 {
		t.Errorf("previous_response_not_found answered %d times, want 0", n)
	}
}
