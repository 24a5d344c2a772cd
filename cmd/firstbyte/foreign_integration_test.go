//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// What an application's chat span looks like when the OpenTelemetry
// project's OpenAI instrumentation for Node makes it. Recorded from the real
// thing by TestFleetAppTeachesAnIdleGateway, which fails if the
// instrumentation (pinned in examples/clients/node-fleet) ever emits
// something else, so that this fixture, TestForeignSpansShapedLikeNodeApp
// and docs/fleet.md stay true.
const (
	jsScopeName    = "@opentelemetry/instrumentation-openai"
	jsScopeVersion = "0.21.0"
	jsSDKVersion   = "2.12.1" // @opentelemetry/sdk-trace-node
)

// jsChatSpan is the fixture: a unary chat completion at 127.0.0.1:port for
// model, started at start, taking took. errorType "" is an answered call;
// else the SDK's error class name (RateLimitError, InternalServerError,
// APIConnectionError, ...), which the instrumentation sets with status
// Error and none of the response attributes. The instrumentation never sets
// gen_ai.provider.name, gen_ai.request.stream (not even on streamed calls),
// gen_ai.response.time_to_first_chunk or http.response.status_code.
func jsChatSpan(spans ptrace.SpanSlice, port int, model string, start time.Time, took time.Duration, errorType string, n int) {
	s := spans.AppendEmpty()
	s.SetName("chat " + model)
	s.SetKind(ptrace.SpanKindClient)
	var id [16]byte
	copy(id[:], fmt.Sprintf("%016d", n))
	s.SetTraceID(pcommon.TraceID(id))
	s.SetSpanID(pcommon.SpanID([8]byte(id[8:])))
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(took)))
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.request.model", model)
	a.PutStr("gen_ai.system", "openai")
	a.PutStr("server.address", "127.0.0.1")
	a.PutInt("server.port", int64(port))
	if errorType != "" {
		s.Status().SetCode(ptrace.StatusCodeError)
		s.Status().SetMessage("429 Rate limited.")
		a.PutStr("error.type", errorType)
		return
	}
	a.PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")
	a.PutStr("gen_ai.response.id", fmt.Sprintf("chatcmpl-%d", n))
	a.PutStr("gen_ai.response.model", model)
	a.PutInt("gen_ai.usage.input_tokens", 18)
	a.PutInt("gen_ai.usage.output_tokens", 1)
}

// jsResourceSpans starts one export's worth of an application's spans: its
// resource as the Node SDK describes it and the instrumentation's scope.
func jsResourceSpans(td ptrace.Traces, service string) ptrace.SpanSlice {
	rs := td.ResourceSpans().AppendEmpty()
	r := rs.Resource().Attributes()
	r.PutStr("service.name", service)
	r.PutStr("telemetry.sdk.language", "nodejs")
	r.PutStr("telemetry.sdk.name", "opentelemetry")
	r.PutStr("telemetry.sdk.version", jsSDKVersion)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(jsScopeName)
	ss.Scope().SetVersion(jsScopeVersion)
	return ss.Spans()
}

// attrShape is an attribute set as names and value types, to compare a
// recorded span with the fixture.
func attrShape(m pcommon.Map) string {
	var kv []string
	for k, v := range m.All() {
		kv = append(kv, k+":"+v.Type().String())
	}
	sort.Strings(kv)
	return strings.Join(kv, " ")
}

// foreignRouting is /debug/routing with what foreign learning adds.
type foreignRouting struct {
	Models []struct {
		Model   string `json:"model"`
		Targets []struct {
			Target         string  `json:"target"`
			Rank           int     `json:"rank"`
			Leader         bool    `json:"leader"`
			P50Seconds     float64 `json:"p50_seconds"`
			Samples        int     `json:"samples"`
			SamplesSelf    int     `json:"samples_self"`
			SamplesPeers   int     `json:"samples_peers"`
			SamplesForeign int     `json:"samples_foreign"`
			FaultRate      float64 `json:"fault_rate"`
			Outcomes       int     `json:"outcomes"`
		} `json:"targets"`
	} `json:"models"`
	ForeignServices []struct {
		Service string `json:"service"`
		Spans   int64  `json:"spans"`
	} `json:"foreign_services"`
}

type foreignTarget struct {
	rank                                    int
	leader                                  bool
	p50                                     time.Duration
	samples, self, peers, foreign, outcomes int
	faultRate                               float64
}

// foreignState reads /debug/routing: model's targets by name, and the
// foreign services with their span counts.
func foreignState(t *testing.T, admin, model string) (map[string]foreignTarget, map[string]int64) {
	t.Helper()
	raw := httpGetText(t, "http://"+admin+"/debug/routing", "")
	var fr foreignRouting
	if err := json.Unmarshal([]byte(raw), &fr); err != nil {
		t.Fatalf("/debug/routing: %v\n%s", err, raw)
	}
	services := map[string]int64{}
	for _, s := range fr.ForeignServices {
		services[s.Service] = s.Spans
	}
	for _, m := range fr.Models {
		if m.Model != model {
			continue
		}
		out := map[string]foreignTarget{}
		for _, tg := range m.Targets {
			out[tg.Target] = foreignTarget{
				rank: tg.Rank, leader: tg.Leader, p50: time.Duration(tg.P50Seconds * float64(time.Second)),
				samples: tg.Samples, self: tg.SamplesSelf, peers: tg.SamplesPeers, foreign: tg.SamplesForeign,
				outcomes: tg.Outcomes, faultRate: tg.FaultRate,
			}
		}
		return out, services
	}
	t.Fatalf("/debug/routing has no model %q:\n%s", model, raw)
	return nil, nil
}

// firstRequestLeads sends a gateway's first client request for model and
// checks that the ranking it learned led it: X-Firstbyte-Selection leader
// to fastest. least-latency lets a runner-up lead one request in ten on
// purpose (explore); when the first request is such a one, it must still
// not be cold and must go to a runner-up, and the next request the ranking
// leads must go to fastest. It returns the first request's selection.
func firstRequestLeads(t *testing.T, gw *gatewayProc, model, fastest string) string {
	t.Helper()
	first := ""
	for i := range 10 {
		r := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody(model, false))
		if r.status != http.StatusOK {
			t.Fatalf("request %d = %d, want 200: %s", i+1, r.status, r.body)
		}
		if a := r.header.Get("X-Firstbyte-Attempts"); a != "1" {
			t.Errorf("request %d: X-Firstbyte-Attempts = %q, want 1", i+1, a)
		}
		if i == 0 {
			first = r.selection()
		}
		switch r.selection() {
		case "leader":
			if r.target() != fastest {
				t.Errorf("request %d: leader %s, want the fleet's fastest, %s", i+1, r.target(), fastest)
			}
			return first
		case "explore":
			t.Logf("request %d explored %s (least-latency explores one request in ten); the next one shows the leader", i+1, r.target())
			if r.target() == fastest {
				t.Errorf("request %d explored the leader %s, want a runner-up", i+1, fastest)
			}
		default:
			t.Fatalf("request %d: X-Firstbyte-Selection = %q to %s, want leader (the fleet measured every target)", i+1, r.selection(), r.target())
		}
	}
	t.Fatalf("10 requests in a row explored: exploration is one request in ten")
	return ""
}

// postOTLP sends td to the gateway's ingest as an OpenTelemetry Collector's
// otlp_http exporter would.
func postOTLP(t *testing.T, admin, token string, td ptrace.Traces) {
	t.Helper()
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+admin+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := apiClient.Do(req)
	if err != nil {
		t.Fatalf("POST /v1/traces: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/traces = %d, want 200", resp.StatusCode)
	}
}

// TestForeignSpansShapedLikeNodeApp: without Node and without a collector,
// spans shaped exactly like the Node instrumentation's (jsChatSpan) posted
// to an idle gateway's ingest. With the application listed in
// unary_services its spans' durations rank the targets and the first
// request is led to the fastest; without it they teach nothing, because
// the instrumentation never says a call was unary (nor streamed), and the
// first request is cold. A rate-limited call is a fault of its target.
func TestForeignSpansShapedLikeNodeApp(t *testing.T) {
	t.Parallel()
	pace := sim.Pace{Chunks: 1}
	// The gateway's own first request goes to a real provider; the spans
	// below say how fast each one is.
	slow := startSimProvider(t, sim.Provider{Name: "slow", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace})
	medium := startSimProvider(t, sim.Provider{Name: "medium", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace})
	fast := startSimProvider(t, sim.Provider{Name: "fast", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace})
	ports := map[string]int{"slow": int(simPort(t, slow)), "medium": int(simPort(t, medium)), "fast": int(simPort(t, fast))}
	took := map[string]time.Duration{"slow": 150 * time.Millisecond, "medium": 60 * time.Millisecond, "fast": 20 * time.Millisecond}
	const (
		token   = "it-ingest-token"
		app     = "checkout"
		model   = "gpt-4o-mini"
		calls   = 15
		limited = 3 // rate-limited calls at slow, besides its answered ones
	)

	for _, tc := range []struct {
		name    string
		foreign string // the gateway's telemetry.ingest.foreign
		samples bool   // the answered calls' durations are samples
		faults  bool   // the rate-limited calls are faults
	}{
		{"the application is unary", fmt.Sprintf("{enabled: true, services: [%s], unary_services: [%s]}", app, app), true, true},
		{"unary_services unset: answered calls teach nothing, faults still count", fmt.Sprintf("{enabled: true, services: [%s]}", app), false, true},
		{"another application only", "{enabled: true, services: [search], unary_services: [search]}", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
providers:
  slow:   {kind: openai, base_url: %q, api_key: test-key}
  medium: {kind: openai, base_url: %q, api_key: test-key}
  fast:   {kind: openai, base_url: %q, api_key: test-key}
targets:
  - {virtual_key: slow,   model_map: {m1: %[4]s}}
  - {virtual_key: medium, model_map: {m1: %[4]s}}
  - {virtual_key: fast,   model_map: {m1: %[4]s}}
telemetry:
  ingest:
    enabled: true
    token: %[5]s
    foreign: %[6]s
`, slow.URL(), medium.URL(), fast.URL(), model, token, tc.foreign))

			// What the application's exporter sent over the last seconds, in
			// turns as the Node app calls, the newest ending now.
			td := ptrace.NewTraces()
			spans := jsResourceSpans(td, app)
			start := time.Now().Add(-10 * time.Second)
			n := 0
			for range calls {
				for _, name := range []string{"slow", "medium", "fast"} {
					n++
					jsChatSpan(spans, ports[name], model, start, took[name], "", n)
					start = start.Add(took[name] + 5*time.Millisecond)
				}
			}
			for range limited {
				n++
				jsChatSpan(spans, ports["slow"], model, start, 2*time.Millisecond, "RateLimitError", n)
			}
			postOTLP(t, gw.admin, token, td)

			ts, services := foreignState(t, gw.admin, "m1")
			foreign := scrapeMetric(t, gw.admin, "firstbyte_spans_consumed_total", `source="foreign"`)
			wantSpans := 0
			for name, s := range ts {
				wantSamples, wantOutcomes := 0, 0
				if tc.samples {
					wantSamples, wantOutcomes = calls, calls
				}
				if tc.faults && name == "slow" {
					wantOutcomes += limited
				}
				wantSpans += wantOutcomes
				if s.samples != wantSamples || s.foreign != wantSamples || s.self != 0 || s.peers != 0 || s.outcomes != wantOutcomes {
					t.Errorf("%s: samples %d (self %d, peers %d, foreign %d), outcomes %d; want %d foreign samples, %d outcomes",
						name, s.samples, s.self, s.peers, s.foreign, s.outcomes, wantSamples, wantOutcomes)
				}
				if tc.samples && s.p50 != took[name] {
					t.Errorf("%s: p50 %v, want the spans' duration %v", name, s.p50, took[name])
				}
				if tc.faults && name == "slow" && s.faultRate <= 0 {
					t.Errorf("slow: fault rate %v, want the RateLimitErrors counted as faults", s.faultRate)
				}
			}
			if services[app] != int64(wantSpans) || foreign != float64(wantSpans) {
				t.Errorf(`foreign_services %v, firstbyte_spans_consumed_total{source="foreign"} = %v; want %s: %d`, services, foreign, app, wantSpans)
			}
			if !tc.samples {
				r := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", false))
				if r.status != http.StatusOK || r.selection() != "cold" {
					t.Errorf("first request = %d, selection %q, want 200 cold (nothing measured)", r.status, r.selection())
				}
				return
			}
			firstRequestLeads(t, gw, "m1", "fast")
		})
	}
}
