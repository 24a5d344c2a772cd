package router_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"

	"github.com/firstbyte-dev/firstbyte/router/config"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
)

// failureRow is one row of the failure model's one table
// (internal/fault/testdata/failure_model.json), which the classification's and
// the aggregator's tests read too.
type failureRow struct {
	Name      string `json:"name"`
	Status    int    `json:"status"`
	ErrorType string `json:"error_type"`
	Fault     string `json:"fault"`
	Failover  bool   `json:"failover"`
	Body      string `json:"body"` // what the provider's answer says, when the row needs it
}

func failureTable(t *testing.T) []failureRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "internal", "fault", "testdata", "failure_model.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []failureRow
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// upstreamFor answers as the row says a provider did; ok is false for rows
// no upstream of a unary chat request can produce (SDK class names seen on
// applications' spans, a client that leaves, a stream cut).
func upstreamFor(row failureRow) (http.HandlerFunc, bool) {
	switch row.ErrorType {
	case "":
		return jsonAnswer(200, `{"ok":true}`), true
	case fault.ErrorContextOverflow:
		return jsonAnswer(row.Status, `{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`), true
	case fault.ErrorInvalidResponse:
		return jsonAnswer(200, `{"choices":[{"message":`), true // cut short
	case fault.ErrorResponseTooLarge:
		return jsonAnswer(200, `{"pad":"`+strings.Repeat("x", 2048)+`"}`), true // the gateway caps answers at 1KiB here
	case fault.ErrorResponseBufferFull:
		// 600 KiB without a Content-Length, beside the 448 KiB another
		// answer holds (budgetHolder): its blocks and contiguous copy need
		// more than the 1MiB of max_buffered in rowLimits leaves.
		return chunkedAnswer(padJSON(600 << 10)), true
	case fault.ErrorTimeout:
		return func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, true
	case fault.ErrorAuth, fault.ErrorQuota, fault.ErrorModelAccess, fault.ErrorConfig, fault.ErrorPreviousResponseNotFound:
		body := row.Body
		if body == "" {
			body = `{"error":{"message":"status ` + strconv.Itoa(row.Status) + `","type":"test"}}`
		}
		return jsonAnswer(row.Status, body), true
	case fault.ErrorTransport:
		return func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, true
	}
	if _, err := strconv.Atoi(row.ErrorType); err == nil {
		return func(w http.ResponseWriter, r *http.Request) {
			if row.Status >= 300 && row.Status < 400 {
				w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
			}
			body := row.Body
			if body == "" {
				body = `{"error":{"message":"status ` + row.ErrorType + `","type":"test"}}`
			}
			jsonAnswer(row.Status, body)(w, r)
		}, true
	}
	return nil, false
}

// rowLimits is the gateway's limits for a row: answers capped at 1KiB,
// except where the row needs the budget of held answers spent.
func rowLimits(row failureRow) string {
	if row.ErrorType == fault.ErrorResponseBufferFull {
		return "limits: {max_response: 1MiB, max_buffered: 1MiB}"
	}
	return "limits: {max_response: 1KiB}"
}

// TestPipelineFollowsTheFailureModel: every row the pipeline can meet, end
// to end: it fails over exactly when the table says, and the attempt span
// carries the table's verdict.
func TestPipelineFollowsTheFailureModel(t *testing.T) {
	tried := 0
	for _, row := range failureTable(t) {
		handle, ok := upstreamFor(row)
		if !ok {
			continue
		}
		tried++
		t.Run(row.Name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer tp.Shutdown(context.Background())
			a := newUpstream(t, handle)
			b := newUpstream(t, jsonAnswer(200, `{"from":"b"}`))
			o := router.Options{TracerProvider: tp}
			if row.ErrorType == fault.ErrorResponseBufferFull {
				// Alone, an answer is never refused: another holds some.
				holder, _, finish := budgetHolder(t, rowLimits(row))
				defer finish()
				o.Previous = holder
			}
			gw := newGatewayWith(t, "fallback", rowLimits(row), o,
				target{name: "a", url: a.URL, firstByte: "200ms"}, target{name: "b", url: b.URL})
			srv := httptest.NewServer(gw.Handler())
			defer srv.Close()

			resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
			body := readAll(t, resp.Body)
			failedOver := b.hits.Load() == 1
			if failedOver != row.Failover {
				t.Errorf("failed over %v (status %d, body %.80s), want %v", failedOver, resp.StatusCode, body, row.Failover)
			}
			if !row.Failover && row.ErrorType != "" && resp.StatusCode != row.Status {
				t.Errorf("client got %d, want the provider's %d unchanged", resp.StatusCode, row.Status)
			}
			var fault string
			for _, s := range waitForSpans(t, exp, 2+int(b.hits.Load())) {
				if s.SpanKind != trace.SpanKindClient {
					continue
				}
				attrs := attrMap(s.Attributes)
				if attrs["firstbyte.target"].AsString() == "a" {
					fault = attrs["firstbyte.fault"].AsString()
					if row.ErrorType != "" && attrs["error.type"].AsString() != row.ErrorType {
						t.Errorf("error.type = %q, want %q", attrs["error.type"].AsString(), row.ErrorType)
					}
					if _, ok := attrs["gen_ai.response.time_to_first_chunk"]; ok && row.Failover {
						t.Error("an attempt that failed over carries a time to first chunk: it would teach the tracker a latency")
					}
				}
			}
			if fault != row.Fault {
				t.Errorf("a's span says firstbyte.fault=%q, want %q", fault, row.Fault)
			}
		})
	}
	if tried < 20 {
		t.Errorf("only %d rows exercised", tried)
	}
}

// TestHalfOpenProbeAlwaysResolves: whatever ends the probe (a context
// overflow, a full queue, the client leaving), the circuit never sticks:
// the next request can probe, and a success closes it.
func TestHalfOpenProbeAlwaysResolves(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		after string // circuit state once the probe ended
		probe func(t *testing.T, srv string, a *upstreamStub, mode *atomic.Int32)
	}{
		// The provider answered, properly: it is up.
		{"context overflow answer", "closed", func(t *testing.T, srv string, _ *upstreamStub, mode *atomic.Int32) {
			mode.Store(modeOverflow)
			readAll(t, post(t, srv, "/v1/chat/completions", chatBody, router.HeaderProviderOrder, "a").Body)
		}},
		// Nothing learned: the next request probes.
		{"client cancels", "half_open", func(t *testing.T, srv string, a *upstreamStub, mode *atomic.Int32) {
			mode.Store(modeHang)
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv+"/v1/chat/completions", strings.NewReader(chatBody))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(router.HeaderProviderOrder, "a")
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			router.WaitUntil(t, "a's three answers", func() bool { return a.hits.Load() >= 3 })
			cancel()
			<-done
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mode atomic.Int32
			mode.Store(modeFail)
			a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				switch mode.Load() {
				case modeFail:
					jsonAnswer(503, `{}`)(w, r)
				case modeOverflow:
					jsonAnswer(400, `{"error":{"message":"prompt is too long","type":"invalid_request_error"}}`)(w, r)
				case modeHang:
					<-r.Context().Done()
				default:
					jsonAnswer(200, `{"from":"a"}`)(w, r)
				}
			})
			b := newUpstream(t, jsonAnswer(200, `{"from":"b"}`))
			clock := router.NewFakeClock()
			gw := newGatewayFromYAML(t, breakerYAML(a.URL, b.URL), router.Options{Now: clock.Now})
			srv := httptest.NewServer(gw.Handler())
			defer srv.Close()
			for range 2 {
				readAll(t, post(t, srv.URL, "/v1/chat/completions", chatBody).Body)
			}
			if s := routingOf(gw, "a").Circuit; s != "open" {
				t.Fatalf("circuit %s after 2 faults, want open", s)
			}
			clock.Advance(11 * time.Second)
			tc.probe(t, srv.URL, a, &mode)
			// The probe ends when the gateway resolves it, which for a
			// client that left can be just after the client's call
			// returned: wait for that, not for the client.
			router.WaitUntil(t, "the probe's end", func() bool { return routingOf(gw, "a").Note != router.SkipCircuitOpen })
			if s := routingOf(gw, "a").Circuit; s != tc.after {
				t.Fatalf("after the probe: circuit %s, want %s", s, tc.after)
			}
			mode.Store(modeOK)
			resp := post(t, srv.URL, "/v1/chat/completions", chatBody, router.HeaderProviderOrder, "a")
			if got := readAll(t, resp.Body); got != `{"from":"a"}` {
				t.Errorf("the next probe got %s, want a's answer", got)
			}
			if s := routingOf(gw, "a").Circuit; s != "closed" {
				t.Errorf("after a successful probe: circuit %s, want closed", s)
			}
		})
	}
}

const (
	modeFail int32 = iota
	modeOverflow
	modeHang
	modeOK
)

func newGatewayFromConfig(t *testing.T, cfg *config.Config, o router.Options) *router.Gateway {
	t.Helper()
	if o.Stats == nil {
		o.Stats = newTrackerFor(o.Now)
	}
	gw, err := router.New(cfg, o)
	if err != nil {
		t.Fatalf("router.New: %v", err)
	}
	return gw
}

func newTrackerFor(now func() time.Time) *collector.Tracker {
	return collector.NewTracker(collector.TrackerOptions{Now: now})
}

// TestCostOptimizedReadsPricing: the provider's rate card for each target's
// upstream model orders the targets, cheapest first, unpriced last.
func TestCostOptimizedReadsPricing(t *testing.T) {
	t.Parallel()
	cheap := newUpstream(t, jsonAnswer(200, `{"from":"cheap"}`))
	dear := newUpstream(t, jsonAnswer(200, `{"from":"dear"}`))
	free := newUpstream(t, jsonAnswer(200, `{"from":"unpriced"}`))
	cfg := `strategy: {mode: cost-optimized}
providers:
  dear:     {base_url: "` + dear.URL + `/v1", pricing: {big: {input: 3, output: 15}}}
  unpriced: {base_url: "` + free.URL + `/v1"}
  cheap:    {base_url: "` + cheap.URL + `/v1", pricing: {small: {input: 0.1, output: 0.4}}}
targets:
  - {virtual_key: dear, model_map: {m: big}}
  - {virtual_key: unpriced, model_map: {m: other}}
  - {virtual_key: cheap, model_map: {m: small}}
`
	parsed, err := config.Parse([]byte(cfg), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := parsed.Validate(); err != nil {
		t.Fatal(err)
	}
	gw := newGatewayFromConfig(t, parsed, router.Options{})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
	if got := readAll(t, resp.Body); got != `{"from":"cheap"}` {
		t.Errorf("served %s, want the cheapest", got)
	}
	wantHeaders(t, resp, "cheap", "1", "order")
	var order []string
	for _, tr := range gw.Routing()[0].Targets {
		order = append(order, tr.Target)
	}
	if want := []string{"cheap", "dear", "unpriced"}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("ranking %v, want %v", order, want)
	}
	if lead := gw.Routing()[0].Targets[0]; !lead.Leader || lead.Score == nil || *lead.Score != 0.5 {
		t.Errorf("leader %+v, want cheap at 0.5 USD per million tokens", lead)
	}
}
