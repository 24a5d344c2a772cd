package router_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// A target whose answers teach nothing must not lead forever: a wrong
// base_url is a provider fault that fails over with one warning, and a
// target tried stats.ColdTries times without a sample, whatever the
// outcomes, ranks after the sampled ones. End to end: real upstreams, the
// real SDK, aggregator and tracker, least-latency; the clock and the
// random source are injected (unscripted draws keep declaration order, so
// the target that teaches nothing, declared first, leads while cold).

// coldGateway is a least-latency gateway learning through its spans, over
// first (whose base_url is used as given) and a healthy second, both
// serving model m; its log lines go to logs.
func coldGateway(t *testing.T, firstURL, secondURL string, clock *router.FakeClock, logs *lockedWriter) string {
	t.Helper()
	tracker := collector.NewTracker(collector.TrackerOptions{Now: clock.Now})
	agg := collector.NewAggregator(tracker, collector.AggregatorOptions{InstanceID: "self"})
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{
		InstanceID: "self", Aggregator: agg, Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })
	yaml := fmt.Sprintf("providers:\n  first: {base_url: %q, api_key: key-first}\n  second: {base_url: %q}\n"+
		"targets:\n  - {virtual_key: first, model_map: {m: m}}\n  - {virtual_key: second, model_map: {m: m}}\n", firstURL, secondURL)
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := router.New(cfg, router.Options{Stats: tracker, Rand: &scriptRand{}, TracerProvider: sdk.TracerProvider,
		Now: clock.Now, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestWrongBaseURLFailsOverWithOneWarning: a provider whose base_url lacks
// /v1 answers every request 404 "Unknown request URL". The first request
// tries it (it is cold and declared first), logs one warning naming the URL
// called, and is served by the healthy target; every later request is
// served by the healthy target without trying it again.
func TestWrongBaseURLFailsOverWithOneWarning(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	bad := newUpstream(t, jsonAnswer(404, `{"error":{"message":"Unknown request URL: POST /chat/completions. Please check the URL for typos, or see the docs at https://console.groq.com/docs/","type":"invalid_request_error","code":"unknown_url"}}`))
	good := startSimProvider(t, "good", 10*time.Millisecond, clock, &hitLog{})
	logs := &lockedWriter{w: &bytes.Buffer{}}
	url := coldGateway(t, bad.URL+"/openai", good.srv.URL+"/v1", clock, logs)

	for i := range 20 {
		a := ask(t, url, "m")
		if a.status != 200 || a.target != "second" {
			t.Fatalf("request %d: %d from %q (%s), want 200 from second", i, a.status, a.target, a.body)
		}
	}
	if n := bad.hits.Load(); n != 1 {
		t.Errorf("the wrong base_url was tried %d times in 20 requests, want once", n)
	}
	var warnings []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "does not exist") {
			warnings = append(warnings, line)
		}
	}
	wantURL := "url=" + bad.URL + "/openai/chat/completions"
	if len(warnings) != 1 || !strings.Contains(warnings[0], "level=WARN") || !strings.Contains(warnings[0], "target=first") ||
		!strings.Contains(warnings[0], wantURL) || strings.Contains(warnings[0], "key-first") {
		t.Errorf("warnings = %q, want one WARN naming target=first and %s, without the key", warnings, wantURL)
	}
}

// TestUnsampledTargetStopsLeading: a target that answers every request with
// a refusal the client gets as its own (a 403 content-policy error: no
// fault, no sample) leads while cold, but only for stats.ColdTries
// requests; then the healthy target, cold too, is tried and leads.
func TestUnsampledTargetStopsLeading(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	refuser := newUpstream(t, jsonAnswer(403, `{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","code":"content_policy_violation"}}`))
	good := startSimProvider(t, "good", 10*time.Millisecond, clock, &hitLog{})
	url := coldGateway(t, refuser.URL+"/v1", good.srv.URL+"/v1", clock, &lockedWriter{w: &bytes.Buffer{}})

	for i := range 10 {
		a := ask(t, url, "m")
		want, wantStatus := "second", 200
		if i < 3 {
			want, wantStatus = "first", 403
		}
		if a.status != wantStatus || a.target != want {
			t.Fatalf("request %d: %d from %q (selection %s), want %d from %s", i, a.status, a.target, a.selection, wantStatus, want)
		}
	}
	if n := refuser.hits.Load(); n != 3 {
		t.Errorf("the target without a sample was tried %d times, want 3", n)
	}
}
