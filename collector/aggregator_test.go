package collector

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// spanFixture describes one span of a hand-built trace.
type spanFixture struct {
	instance string        // service.instance.id of its resource
	service  string        // service.name of its resource; "" : firstbyte
	dur      time.Duration // zero: one second
	name     string
	kind     ptrace.SpanKind
	status   ptrace.StatusCode
	end      time.Time      // zero: no end timestamp
	attrs    map[string]any // pcommon.Value.FromRaw types
}

// attemptFixture is a successful chat attempt on target for upstream model,
// as the router's attempt span carries it, ending at end.
func attemptFixture(instance, target, model string, ttfb time.Duration, end time.Time) spanFixture {
	return spanFixture{
		instance: instance,
		name:     "chat " + model,
		kind:     ptrace.SpanKindClient,
		end:      end,
		attrs: map[string]any{
			string(telemetry.KeyOperationName):   telemetry.OperationChat,
			string(telemetry.KeyProviderName):    "openai",
			string(telemetry.KeyRequestModel):    model,
			string(telemetry.KeyServerAddress):   "api.example.com",
			string(telemetry.KeyServerPort):      int64(443),
			string(telemetry.KeyHTTPStatus):      int64(200),
			string(telemetry.KeyTarget):          target,
			string(telemetry.KeyRequestedModel):  "llama-3.3-70b",
			string(telemetry.KeyAttempt):         int64(1),
			string(telemetry.KeySelection):       telemetry.SelectionLeader,
			string(telemetry.KeyOutcome):         telemetry.OutcomeSuccess,
			string(telemetry.KeyTimeToFirstByte): ttfb.Seconds(),
		},
	}
}

// with returns f with attributes set (a nil value deletes the attribute).
func (f spanFixture) with(attrs map[string]any) spanFixture {
	f.attrs = mergeAttrs(f.attrs, attrs)
	return f
}

func mergeAttrs(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// buildTraces builds the ptrace.Traces an SDK or a collector would send,
// one ResourceSpans per instance, in first-seen order:
//
//	Traces
//	├── ResourceSpans  service.name=firstbyte service.instance.id=<instance A>
//	│   └── ScopeSpans github.com/firstbyte-dev/firstbyte
//	│       ├── Span "chat <model>"  CLIENT  firstbyte.target=… gen_ai.…
//	│       └── Span …                        (every fixture of instance A)
//	└── ResourceSpans  service.instance.id=<instance B>
//	    └── …
func buildTraces(t testing.TB, spans ...spanFixture) ptrace.Traces {
	t.Helper()
	td := ptrace.NewTraces()
	byInstance := map[string]ptrace.SpanSlice{}
	for i, f := range spans {
		dst, ok := byInstance[f.instance]
		if !ok {
			rs := td.ResourceSpans().AppendEmpty()
			service := f.service
			if service == "" {
				service = "firstbyte"
			}
			rs.Resource().Attributes().PutStr("service.name", service)
			rs.Resource().Attributes().PutStr("service.instance.id", f.instance)
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(telemetry.TracerName)
			dst = ss.Spans()
			byInstance[f.instance] = dst
		}
		s := dst.AppendEmpty()
		s.SetTraceID(pcommon.TraceID{1, byte(i)})
		s.SetSpanID(pcommon.SpanID{2, byte(i)})
		s.SetName(f.name)
		s.SetKind(f.kind)
		s.Status().SetCode(f.status)
		if !f.end.IsZero() {
			dur := f.dur
			if dur == 0 {
				dur = time.Second
			}
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(f.end.Add(-dur)))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(f.end))
		}
		if err := s.Attributes().FromRaw(f.attrs); err != nil {
			t.Fatalf("fixture %d attributes: %v", i, err)
		}
	}
	return td
}

func TestAggregatorLearnsFromAttemptSpans(t *testing.T) {
	end := t0.Add(-time.Minute) // the clock reads t0
	good := attemptFixture("inst-a", "groq", "llama", 250*time.Millisecond, end)

	for _, tc := range []struct {
		name string
		span spanFixture
		want time.Duration // 0: no sample
	}{
		{"successful attempt", good, 250 * time.Millisecond},
		{"ttfb as int seconds", good.with(map[string]any{string(telemetry.KeyTimeToFirstByte): int64(2)}), 2 * time.Second},
		{"ttfb rounds to the nanosecond", good.with(map[string]any{string(telemetry.KeyTimeToFirstByte): 0.3}), 300 * time.Millisecond},
		{"ttfb of an hour", good.with(map[string]any{string(telemetry.KeyTimeToFirstByte): 3600.0}), time.Hour},
		{"no http status (another GenAI client)", good.with(map[string]any{string(telemetry.KeyHTTPStatus): nil}), 250 * time.Millisecond},
		{"http status 204", good.with(map[string]any{string(telemetry.KeyHTTPStatus): int64(204)}), 250 * time.Millisecond},
		{"http status as string 200", good.with(map[string]any{string(telemetry.KeyHTTPStatus): "200"}), 250 * time.Millisecond},
		{"no operation name", good.with(map[string]any{string(telemetry.KeyOperationName): nil}), 250 * time.Millisecond},
		{"embeddings", good.with(map[string]any{string(telemetry.KeyOperationName): telemetry.OperationEmbeddings}), 250 * time.Millisecond},
		{"server kind", func() spanFixture { f := good; f.kind = ptrace.SpanKindServer; return f }(), 250 * time.Millisecond},
		{"internal kind", func() spanFixture { f := good; f.kind = ptrace.SpanKindInternal; return f }(), 250 * time.Millisecond},
		{"status ok", func() spanFixture { f := good; f.status = ptrace.StatusCodeOk; return f }(), 250 * time.Millisecond},

		{"count_tokens", good.with(map[string]any{string(telemetry.KeyOperationName): telemetry.OperationCountTokens}), 0},
		{"http status 503", good.with(map[string]any{string(telemetry.KeyHTTPStatus): int64(503)}), 0},
		{"http status 429", good.with(map[string]any{string(telemetry.KeyHTTPStatus): int64(429)}), 0},
		{"http status 199", good.with(map[string]any{string(telemetry.KeyHTTPStatus): int64(199)}), 0},
		{"http status 300", good.with(map[string]any{string(telemetry.KeyHTTPStatus): int64(300)}), 0},
		{"http status as string 503", good.with(map[string]any{string(telemetry.KeyHTTPStatus): "503"}), 0},
		{"http status unreadable", good.with(map[string]any{string(telemetry.KeyHTTPStatus): "ok"}), 0},
		{"status error", func() spanFixture { f := good; f.status = ptrace.StatusCodeError; return f }(), 0},
		{"no target", good.with(map[string]any{string(telemetry.KeyTarget): nil}), 0},
		{"empty target", good.with(map[string]any{string(telemetry.KeyTarget): ""}), 0},
		{"target not a string", good.with(map[string]any{string(telemetry.KeyTarget): int64(7)}), 0},
		{"no model", good.with(map[string]any{string(telemetry.KeyRequestModel): nil}), 0},
		{"empty model", good.with(map[string]any{string(telemetry.KeyRequestModel): ""}), 0},
		{"no ttfb", good.with(map[string]any{string(telemetry.KeyTimeToFirstByte): nil}), 0},
		{"ttfb NaN", good.with(map[string]any{string(telemetry.KeyTimeToFirstByte): math.NaN()}), 0},
		{"ttfb +Inf", good.with(map[string]any{string(telemetry.KeyTimeToFirstByte): math.Inf(1)}), 0},
		{"ttfb -Inf", good.with(map[string]any{string(telemetry.KeyTimeToFirstByte): math.Inf(-1)}), 0},
		{"ttfb negative", good.with(map[string]any{string(telemetry.KeyTimeToFirstByte): -0.1}), 0},
		{"ttfb over an hour", good.with(map[string]any{string(telemetry.KeyTimeToFirstByte): 3600.001}), 0},
		{"ttfb in milliseconds by mistake", good.with(map[string]any{string(telemetry.KeyTimeToFirstByte): int64(250_000_000)}), 0},
		{"ttfb as string", good.with(map[string]any{string(telemetry.KeyTimeToFirstByte): "0.25"}), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker(newFakeClock(t0))
			agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a"})

			if err := agg.ConsumeTraces(context.Background(), buildTraces(t, tc.span)); err != nil {
				t.Fatalf("ConsumeTraces: %v", err)
			}

			got, n, ok := tr.P50("groq", "llama")
			if tc.want == 0 {
				if ok || len(tr.All()) != 0 {
					t.Errorf("P50(%q,%q) = %v, %d, %v and All() = %v; want no sample", "groq", "llama", got, n, ok, tr.All())
				}
				return
			}
			if !ok || got != tc.want || n != 1 {
				t.Errorf("P50(%q,%q) = %v, %d, %v; want %v, 1, true", "groq", "llama", got, n, ok, tc.want)
			}
		})
	}
}

func TestAggregatorSampleTakenAtSpanEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		end     time.Time
		wantAge time.Duration
	}{
		{"end timestamp", t0.Add(-90 * time.Second), 90 * time.Second},
		{"no end timestamp: now", time.Time{}, 0},
		{"end in the future: now", t0.Add(time.Hour), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker(newFakeClock(t0))
			agg := NewAggregator(tr, AggregatorOptions{})
			_ = agg.ConsumeTraces(context.Background(), buildTraces(t, attemptFixture("inst-a", "groq", "llama", time.Second, tc.end)))
			st, ok := tr.Stats("groq", "llama")
			if !ok || st.OldestAge != tc.wantAge {
				t.Errorf("Stats(%q,%q).OldestAge = %v (ok %v), want %v", "groq", "llama", st.OldestAge, ok, tc.wantAge)
			}
		})
	}
}

func TestAggregatorOwnSpansOnPeerPath(t *testing.T) {
	own := attemptFixture("inst-a", "groq", "llama", 100*time.Millisecond, t0)
	peer := attemptFixture("inst-b", "together", "llama", 200*time.Millisecond, t0)
	anonymous := attemptFixture("", "fireworks", "llama", 300*time.Millisecond, t0)
	anonymous.instance = "" // a resource without service.instance.id: a peer

	for _, tc := range []struct {
		name       string
		instanceID string
		peerPath   bool
		want       []string // targets learned
	}{
		{"local path takes our own", "inst-a", false, []string{"fireworks", "groq", "together"}},
		{"peer path skips our own", "inst-a", true, []string{"fireworks", "together"}},
		{"peer path without an instance id skips none", "", true, []string{"fireworks", "groq", "together"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker(newFakeClock(t0))
			agg := NewAggregator(tr, AggregatorOptions{InstanceID: tc.instanceID})
			td := buildTraces(t, own, peer, anonymous)
			consume := agg.ConsumeTraces
			if tc.peerPath {
				consume = agg.ConsumePeerTraces
			}
			if err := consume(context.Background(), td); err != nil {
				t.Fatalf("consume: %v", err)
			}
			if got := learnedTargets(tr); !slices.Equal(got, tc.want) {
				t.Errorf("targets learned = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAggregatorSetInstanceID(t *testing.T) {
	tr := newTestTracker(newFakeClock(t0))
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "chosen"})
	agg.SetInstanceID("from-env")
	td := buildTraces(t,
		attemptFixture("chosen", "groq", "llama", time.Second, t0),
		attemptFixture("from-env", "together", "llama", time.Second, t0))

	_ = agg.ConsumePeerTraces(context.Background(), td)

	if got, want := learnedTargets(tr), []string{"groq"}; !slices.Equal(got, want) {
		t.Errorf("targets learned after SetInstanceID(%q) = %v, want %v", "from-env", got, want)
	}
}

func learnedTargets(tr *Tracker) []string {
	var out []string
	for _, ks := range tr.All() {
		out = append(out, ks.Target)
	}
	return out
}

// TestRedirectIsAFaultOnEveryPath: a span with HTTP status 302 and a time
// to first chunk, with span status Unset and no error.type or
// firstbyte.fault (as an instrumentation that only marks >= 400 sends it),
// is the failure model's full fault and never a latency sample, whether it
// is this instance's attempt, a peer's or an application's (foreign).
func TestRedirectIsAFaultOnEveryPath(t *testing.T) {
	if got := fault.Classify(302, ""); got != fault.Full {
		t.Fatalf("Classify(302, \"\") = %v, want full: the test's premise", got)
	}
	redirect := map[string]any{
		string(telemetry.KeyHTTPStatus):      int64(302),
		string(telemetry.KeyTimeToFirstByte): 0.05,
	}
	gateway := attemptFixture("inst-b", "openai", "gpt-4o-mini", 0, t0.Add(-time.Second)).with(redirect)
	for _, tc := range []struct {
		name    string
		consume func(*Aggregator) func(context.Context, ptrace.Traces) error
		span    spanFixture
	}{
		{"own span", func(a *Aggregator) func(context.Context, ptrace.Traces) error { return a.ConsumeTraces }, gateway},
		{"peer span", func(a *Aggregator) func(context.Context, ptrace.Traces) error { return a.ConsumePeerTraces }, gateway},
		{"foreign span", func(a *Aggregator) func(context.Context, ptrace.Traces) error { return a.ConsumePeerTraces },
			appSpan("app", mergeAttrs(redirect, map[string]any{"gen_ai.request.stream": true}))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agg, tr, _ := newForeignAggregator(t, ForeignOptions{Enabled: true})
			if err := tc.consume(agg)(context.Background(), buildTraces(t, tc.span)); err != nil {
				t.Fatal(err)
			}
			st := tr.StatsAt("openai", "gpt-4o-mini", t0)
			if st.Samples != 0 || st.Outcomes != 1 || st.FaultRate != 1 {
				t.Errorf("stats %+v, want no sample and one full fault", st)
			}
		})
	}
}

// order ranks targets by ascending p50, as least-latency does for sampled
// targets.
func order(tr *Tracker, model string, targets ...string) []string {
	out := slices.Clone(targets)
	slices.SortStableFunc(out, func(a, b string) int {
		pa, _, _ := tr.P50(a, model)
		pb, _, _ := tr.P50(b, model)
		return int(pa - pb)
	})
	return out
}

func TestPeerTraceChangesTheOrder(t *testing.T) {
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a"})

	// This instance has seen groq at 300 ms and together at 200 ms.
	var local []spanFixture
	for i := range 3 {
		end := t0.Add(-time.Duration(3-i) * time.Second)
		local = append(local,
			attemptFixture("inst-a", "groq", "llama", 300*time.Millisecond, end),
			attemptFixture("inst-a", "together", "llama", 200*time.Millisecond, end))
	}
	_ = agg.ConsumeTraces(context.Background(), buildTraces(t, local...))
	if got, want := order(tr, "llama", "groq", "together"), []string{"together", "groq"}; !slices.Equal(got, want) {
		t.Fatalf("order before the peer's spans = %v, want %v", got, want)
	}

	// A peer has seen groq answer in 100 ms four times.
	var peer []spanFixture
	for i := range 4 {
		peer = append(peer, attemptFixture("inst-b", "groq", "llama", 100*time.Millisecond, t0.Add(-time.Duration(i)*time.Millisecond)))
	}
	if err := agg.ConsumePeerTraces(context.Background(), buildTraces(t, peer...)); err != nil {
		t.Fatalf("ConsumePeerTraces: %v", err)
	}

	// groq: [100 100 100 100 300 300 300] -> element 3 = 100 ms.
	if got, _, _ := tr.P50("groq", "llama"); got != 100*time.Millisecond {
		t.Errorf("P50(%q,%q) = %v, want 100ms", "groq", "llama", got)
	}
	if got, want := order(tr, "llama", "groq", "together"), []string{"groq", "together"}; !slices.Equal(got, want) {
		t.Errorf("order after the peer's spans = %v, want %v", got, want)
	}
}

// failureModelCase is one row of the failure model's one table
// (internal/fault/testdata/failure_model.json), which the pipeline's and the
// classification's tests read too.
type failureModelCase struct {
	Name      string `json:"name"`
	Status    int    `json:"status"`
	ErrorType string `json:"error_type"`
	Fault     string `json:"fault"`
}

func loadFailureModel(t *testing.T) []failureModelCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "internal", "fault", "testdata", "failure_model.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []failureModelCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestAggregatorReadsTheFailureModel: a span from a client that does not
// set firstbyte.fault (an application, an older gateway) is judged from its
// status and error.type by the same table as the pipeline's attempts; a span
// that does carry the verdict is taken at its word.
func TestAggregatorReadsTheFailureModel(t *testing.T) {
	end := t0.Add(-time.Minute)
	for _, tc := range loadFailureModel(t) {
		if tc.Fault == "none" && tc.ErrorType == "" {
			continue // the success row: a sample, tested elsewhere
		}
		want := map[string]float64{"none": 0, "half": 0.5, "full": 1}[tc.Fault]
		for _, v := range []struct {
			carried bool // firstbyte.fault on the span
			unset   bool // span status Unset, as clients that only mark some failures send it
			noType  bool // no error.type: it only repeated the HTTP status
		}{{false, false, false}, {true, false, false}, {false, true, false}, {false, true, true}} {
			if v.noType && tc.ErrorType != strconv.Itoa(tc.Status) {
				continue
			}
			t.Run(fmt.Sprintf("%s/%+v", tc.Name, v), func(t *testing.T) {
				f := failedAttemptFixture(int64(tc.Status), tc.ErrorType, end)
				if v.carried {
					f = f.with(map[string]any{string(telemetry.KeyFault): tc.Fault})
				}
				if v.unset {
					f.status = ptrace.StatusCodeUnset
				}
				if v.noType {
					f = f.with(map[string]any{string(telemetry.KeyErrorType): nil})
				}
				tr := newTestTracker(newFakeClock(t0))
				agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a"})
				if err := agg.ConsumeTraces(context.Background(), buildTraces(t, f)); err != nil {
					t.Fatalf("ConsumeTraces: %v", err)
				}
				st := tr.StatsAt("groq", "llama", t0)
				if st.Samples != 0 || st.FaultRate != want || (want > 0) != (st.Outcomes == 1) {
					t.Errorf("status %d error.type %q: samples %d, fault rate %v over %d; want 0, %v", tc.Status, tc.ErrorType, st.Samples, st.FaultRate, st.Outcomes, want)
				}
			})
		}
	}
}

// failedAttemptFixture is a chat attempt on groq/llama that failed with HTTP
// status (0: none) and error.type errorType, as the router ends it: no time
// to first chunk, span status Error.
func failedAttemptFixture(status int64, errorType string, end time.Time) spanFixture {
	f := attemptFixture("inst-a", "groq", "llama", 0, end).with(map[string]any{
		string(telemetry.KeyTimeToFirstByte): nil,
		string(telemetry.KeyHTTPStatus):      nil,
		string(telemetry.KeyErrorType):       errorType,
		string(telemetry.KeyOutcome):         telemetry.OutcomeFailover,
	})
	if status != 0 {
		f = f.with(map[string]any{string(telemetry.KeyHTTPStatus): status})
	}
	f.status = ptrace.StatusCodeError
	return f
}

func TestAggregatorLearnsFailures(t *testing.T) {
	end := t0.Add(-time.Minute) // the clock reads t0
	for _, tc := range []struct {
		name string
		span spanFixture
		want float64 // error rate of groq/llama afterwards; 0: nothing recorded
	}{
		{"503", failedAttemptFixture(503, "503", end), 1},
		{"429", failedAttemptFixture(429, "429", end), 1},
		{"529 (Anthropic overloaded)", failedAttemptFixture(529, "529", end), 1},
		{"status as string", failedAttemptFixture(0, "502", end).with(map[string]any{string(telemetry.KeyHTTPStatus): "502"}), 1},
		{"timeout, no status", failedAttemptFixture(0, "timeout", end), 1},
		{"transport, no status", failedAttemptFixture(0, "transport", end), 1},
		{"provider 400 (client_error, status unset)", func() spanFixture {
			f := failedAttemptFixture(400, "400", end).with(map[string]any{string(telemetry.KeyOutcome): telemetry.OutcomeClientError})
			f.status = ptrace.StatusCodeUnset
			return f
		}(), 0.5},
		{"provider 422", failedAttemptFixture(422, "422", end), 0.5},

		{"504", failedAttemptFixture(504, "504", end), 1},
		{"408", failedAttemptFixture(408, "408", end), 1},
		{"404 is not counted", failedAttemptFixture(404, "404", end), 0},
		{"open circuit is not the provider's failure", failedAttemptFixture(0, "circuit_open", end), 0},
		{"canceled client", failedAttemptFixture(0, "canceled", end), 0},
		{"count_tokens", failedAttemptFixture(503, "503", end).with(map[string]any{string(telemetry.KeyOperationName): telemetry.OperationCountTokens}), 0},
		{"no target", failedAttemptFixture(503, "503", end).with(map[string]any{string(telemetry.KeyTarget): nil}), 0},
		{"no model", failedAttemptFixture(503, "503", end).with(map[string]any{string(telemetry.KeyRequestModel): nil}), 0},
		{"unreadable status", failedAttemptFixture(0, "timeout", end).with(map[string]any{string(telemetry.KeyHTTPStatus): "bad"}), 0},
		{"the carried verdict wins", failedAttemptFixture(503, "503", end).with(map[string]any{string(telemetry.KeyFault): "half"}), 0.5},
		{"expired", failedAttemptFixture(503, "503", t0.Add(-DefaultMaxAge)), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker(newFakeClock(t0))
			agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a"})
			if err := agg.ConsumeTraces(context.Background(), buildTraces(t, tc.span)); err != nil {
				t.Fatalf("ConsumeTraces: %v", err)
			}
			st := tr.StatsAt("groq", "llama", t0)
			if st.Samples != 0 || st.FaultRate != tc.want {
				t.Errorf("StatsAt(groq, llama) = samples %d, fault rate %v; want 0, %v", st.Samples, st.FaultRate, tc.want)
			}
			if tc.want > 0 && st.FaultSeconds != 1 {
				t.Errorf("fault cost %v s, want the span's 1 s", st.FaultSeconds)
			}
		})
	}
}

// TestAggregatorErrorRateMixesOutcomes: successes (samples) and failures
// of the same key make one error rate; the samples alone make the latency.
//
//	groq/llama: 200 ms ok, 503, 400, 200 ms ok  -> error rate (1 + 0.5) / 4
func TestAggregatorErrorRateMixesOutcomes(t *testing.T) {
	end := t0.Add(-time.Minute)
	tr := newTestTracker(newFakeClock(t0))
	agg := NewAggregator(tr, AggregatorOptions{})
	td := buildTraces(t,
		attemptFixture("inst-a", "groq", "llama", ms(200), end),
		failedAttemptFixture(503, "503", end),
		failedAttemptFixture(400, "400", end),
		attemptFixture("inst-a", "groq", "llama", ms(200), end),
	)
	if err := agg.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatalf("ConsumeTraces: %v", err)
	}
	st := tr.StatsAt("groq", "llama", t0)
	if st.Samples != 2 || math.Abs(st.LogMean-math.Log(0.2)) > 1e-12 || st.LogStd != 0 || st.FaultRate != 0.375 {
		t.Errorf("StatsAt = %+v; want 2 samples, ln 0.2, std 0, fault rate 0.375", st)
	}
}
