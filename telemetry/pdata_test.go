package telemetry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// tracesCollector is a TracesConsumer that keeps what it is given.
type tracesCollector struct {
	mu     sync.Mutex
	traces []ptrace.Traces
	err    error // returned from every ConsumeTraces
}

func (c *tracesCollector) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.traces = append(c.traces, td)
	return c.err
}

func (c *tracesCollector) spans() []ptrace.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ptrace.Span
	for _, td := range c.traces {
		out = append(out, allSpans(td)...)
	}
	return out
}

func allSpans(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				out = append(out, s)
			}
		}
	}
	return out
}

func testResource(instanceID string) *resource.Resource {
	return resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName("firstbyte"),
		semconv.ServiceInstanceID(instanceID),
	)
}

// attemptAttributes are the attributes of a successful attempt span, as the
// router sets them.
func attemptAttributes(target, model string, ttfb time.Duration) []attribute.KeyValue {
	return []attribute.KeyValue{
		KeyOperationName.String(OperationChat),
		KeyProviderName.String("openai"),
		KeyRequestModel.String(model),
		KeyServerAddress.String("api.example.com"),
		KeyServerPort.Int(443),
		KeyHTTPStatus.Int(200),
		KeyTarget.String(target),
		KeyRequestedModel.String("llama-3.3-70b"),
		KeyAttempt.Int(1),
		KeySelection.String(SelectionLeader),
		KeyOutcome.String(OutcomeSuccess),
		KeyTimeToFirstByte.Float64(ttfb.Seconds()),
	}
}

// recordSpans runs f with a tracer whose ended spans are returned.
func recordSpans(t *testing.T, res *resource.Resource, f func(tp *sdktrace.TracerProvider)) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	f(tp)
	return rec.Ended()
}

func TestSpansToTracesCarriesEverything(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	end := start.Add(850 * time.Millisecond)
	linked := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0xaa, 1},
		SpanID:     trace.SpanID{0xbb, 2},
		TraceFlags: trace.FlagsSampled,
		Remote:     true,
	})
	var parentSC, childSC trace.SpanContext
	ended := recordSpans(t, testResource("inst-a"), func(tp *sdktrace.TracerProvider) {
		tr := tp.Tracer(TracerName, trace.WithInstrumentationVersion("v1.2.3"))
		ctx, parent := tr.Start(context.Background(), "POST /v1/chat/completions", trace.WithSpanKind(trace.SpanKindServer))
		parentSC = parent.SpanContext()
		_, child := tr.Start(ctx, "chat llama-3.3-70b-versatile",
			trace.WithSpanKind(trace.SpanKindClient),
			trace.WithTimestamp(start),
			trace.WithAttributes(attemptAttributes("groq", "llama-3.3-70b-versatile", 250*time.Millisecond)...),
			trace.WithAttributes(
				attribute.Bool("b", true),
				attribute.StringSlice("ss", []string{"x", "y"}),
				attribute.Int64Slice("is", []int64{1, 2, 3}),
				attribute.Float64Slice("fs", []float64{0.5}),
				attribute.BoolSlice("bs", []bool{true, false}),
			),
			trace.WithLinks(trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("why", "retry-of")}}),
		)
		childSC = child.SpanContext()
		child.AddEvent("first_chunk", trace.WithTimestamp(start.Add(250*time.Millisecond)), trace.WithAttributes(attribute.Int("bytes", 42)))
		child.SetStatus(codes.Error, "upstream broke")
		child.End(trace.WithTimestamp(end))
		parent.End()
	})

	td := SpansToTraces(ended)

	if got := td.ResourceSpans().Len(); got != 1 {
		t.Fatalf("ResourceSpans().Len() = %d, want 1 (both spans share a resource)", got)
	}
	rs := td.ResourceSpans().At(0)
	if got := rs.SchemaUrl(); got != semconv.SchemaURL {
		t.Errorf("resource schema URL = %q, want %q", got, semconv.SchemaURL)
	}
	if v, ok := rs.Resource().Attributes().Get(string(semconv.ServiceInstanceIDKey)); !ok || v.Str() != "inst-a" {
		t.Errorf("resource service.instance.id = %v (present %v), want %q", v.AsString(), ok, "inst-a")
	}
	if got := rs.ScopeSpans().Len(); got != 1 {
		t.Fatalf("ScopeSpans().Len() = %d, want 1 (both spans share a scope)", got)
	}
	ss := rs.ScopeSpans().At(0)
	if ss.Scope().Name() != TracerName || ss.Scope().Version() != "v1.2.3" {
		t.Errorf("scope = %q %q, want %q %q", ss.Scope().Name(), ss.Scope().Version(), TracerName, "v1.2.3")
	}
	if got := ss.Spans().Len(); got != 2 {
		t.Fatalf("Spans().Len() = %d, want 2", got)
	}
	child, parent := ss.Spans().At(0), ss.Spans().At(1) // in the order they ended

	if child.TraceID() != pcommon.TraceID(childSC.TraceID()) || child.SpanID() != pcommon.SpanID(childSC.SpanID()) {
		t.Errorf("child IDs = %v/%v, want %v/%v", child.TraceID(), child.SpanID(), childSC.TraceID(), childSC.SpanID())
	}
	if child.ParentSpanID() != pcommon.SpanID(parentSC.SpanID()) {
		t.Errorf("child ParentSpanID = %v, want %v", child.ParentSpanID(), parentSC.SpanID())
	}
	if !parent.ParentSpanID().IsEmpty() {
		t.Errorf("root ParentSpanID = %v, want empty", parent.ParentSpanID())
	}
	if got, want := child.Flags(), uint32(0x101); got != want { // sampled, parent known to be local
		t.Errorf("child Flags = %#x, want %#x", got, want)
	}
	if child.Name() != "chat llama-3.3-70b-versatile" || child.Kind() != ptrace.SpanKindClient {
		t.Errorf("child name, kind = %q, %v; want %q, %v", child.Name(), child.Kind(), "chat llama-3.3-70b-versatile", ptrace.SpanKindClient)
	}
	if parent.Kind() != ptrace.SpanKindServer {
		t.Errorf("parent kind = %v, want %v", parent.Kind(), ptrace.SpanKindServer)
	}
	if got := child.StartTimestamp().AsTime(); !got.Equal(start) {
		t.Errorf("child start = %v, want %v", got, start)
	}
	if got := child.EndTimestamp().AsTime(); !got.Equal(end) {
		t.Errorf("child end = %v, want %v", got, end)
	}
	if child.Status().Code() != ptrace.StatusCodeError || child.Status().Message() != "upstream broke" {
		t.Errorf("child status = %v %q, want %v %q", child.Status().Code(), child.Status().Message(), ptrace.StatusCodeError, "upstream broke")
	}

	wantAttrs := map[string]any{
		"gen_ai.operation.name":               "chat",
		"gen_ai.provider.name":                "openai",
		"gen_ai.request.model":                "llama-3.3-70b-versatile",
		"server.address":                      "api.example.com",
		"server.port":                         int64(443),
		"http.response.status_code":           int64(200),
		"firstbyte.target":                    "groq",
		"firstbyte.requested_model":           "llama-3.3-70b",
		"firstbyte.attempt":                   int64(1),
		"firstbyte.selection":                 "leader",
		"firstbyte.outcome":                   "success",
		"gen_ai.response.time_to_first_chunk": 0.25,
		"b":                                   true,
		"ss":                                  []any{"x", "y"},
		"is":                                  []any{int64(1), int64(2), int64(3)},
		"fs":                                  []any{0.5},
		"bs":                                  []any{true, false},
	}
	gotAttrs := child.Attributes().AsRaw()
	if len(gotAttrs) != len(wantAttrs) {
		t.Errorf("child has %d attributes, want %d: %v", len(gotAttrs), len(wantAttrs), gotAttrs)
	}
	for k, want := range wantAttrs {
		got, ok := child.Attributes().Get(k)
		wantV := pcommon.NewValueEmpty()
		if err := wantV.FromRaw(want); err != nil {
			t.Fatal(err)
		}
		if !ok || !got.Equal(wantV) {
			t.Errorf("attribute %q = %v (present %v), want %v", k, got.AsRaw(), ok, want)
		}
	}

	if child.Events().Len() != 1 {
		t.Fatalf("child Events().Len() = %d, want 1", child.Events().Len())
	}
	ev := child.Events().At(0)
	if ev.Name() != "first_chunk" || !ev.Timestamp().AsTime().Equal(start.Add(250*time.Millisecond)) {
		t.Errorf("event = %q at %v, want %q at %v", ev.Name(), ev.Timestamp().AsTime(), "first_chunk", start.Add(250*time.Millisecond))
	}
	if v, ok := ev.Attributes().Get("bytes"); !ok || v.Int() != 42 {
		t.Errorf("event attribute bytes = %v, want 42", v.AsRaw())
	}
	if child.Links().Len() != 1 {
		t.Fatalf("child Links().Len() = %d, want 1", child.Links().Len())
	}
	l := child.Links().At(0)
	if l.TraceID() != pcommon.TraceID(linked.TraceID()) || l.SpanID() != pcommon.SpanID(linked.SpanID()) {
		t.Errorf("link = %v/%v, want %v/%v", l.TraceID(), l.SpanID(), linked.TraceID(), linked.SpanID())
	}
	if got, want := l.Flags(), uint32(0x301); got != want { // sampled, known remote
		t.Errorf("link Flags = %#x, want %#x", got, want)
	}
	if v, ok := l.Attributes().Get("why"); !ok || v.Str() != "retry-of" {
		t.Errorf("link attribute why = %v, want retry-of", v.AsRaw())
	}
}

// The strongest check of faithfulness available: the OTel Go OTLP/HTTP
// exporter, sending the same spans to a real HTTP server, must produce the
// same OTLP request as SpansToTraces.
func TestSpansToTracesMatchesOTLPExporter(t *testing.T) {
	t.Parallel()
	bodies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading export body: %v", err)
		}
		bodies <- b
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()

	ended := recordSpans(t, testResource("inst-a"), func(tp *sdktrace.TracerProvider) {
		tr := tp.Tracer(TracerName, trace.WithInstrumentationVersion("v0.1.0"),
			trace.WithInstrumentationAttributes(attribute.String("scope.attr", "x")))
		ctx, parent := tr.Start(context.Background(), "POST /v1/messages", trace.WithSpanKind(trace.SpanKindServer))
		_, a := tr.Start(ctx, "chat claude", trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attemptAttributes("anthropic", "claude", 400*time.Millisecond)...),
			trace.WithAttributes(attribute.StringSlice("ss", []string{"p", "q"}), attribute.Bool("b", false)))
		a.AddEvent("e", trace.WithAttributes(attribute.Float64("f", 1.5)))
		a.SetStatus(codes.Ok, "")
		a.End()
		parent.SetStatus(codes.Error, "all failed")
		parent.End()
	})

	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), ended); err != nil {
		t.Fatalf("ExportSpans: %v", err)
	}
	_ = exp.Shutdown(context.Background())

	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(<-bodies); err != nil {
		t.Fatalf("unmarshal exporter body: %v", err)
	}
	want, err := req.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ptraceotlp.NewExportRequestFromTraces(SpansToTraces(ended)).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("SpansToTraces differs from the OTLP exporter's request\n got: %s\nwant: %s", got, want)
	}
}

func TestSpansToTracesGroupsByResourceAndScope(t *testing.T) {
	t.Parallel()
	var ended []sdktrace.ReadOnlySpan
	for _, inst := range []string{"inst-a", "inst-b"} {
		ended = append(ended, recordSpans(t, testResource(inst), func(tp *sdktrace.TracerProvider) {
			for _, scope := range []string{"scope-1", "scope-2", "scope-1"} {
				_, s := tp.Tracer(scope).Start(context.Background(), "op")
				s.End()
			}
		})...)
	}
	ended = append(ended, nil) // skipped, not a crash

	td := SpansToTraces(ended)

	if got := td.SpanCount(); got != 6 {
		t.Errorf("SpanCount() = %d, want 6", got)
	}
	if got := td.ResourceSpans().Len(); got != 2 {
		t.Fatalf("ResourceSpans().Len() = %d, want 2", got)
	}
	for i, inst := range []string{"inst-a", "inst-b"} {
		rs := td.ResourceSpans().At(i)
		v, _ := rs.Resource().Attributes().Get(string(semconv.ServiceInstanceIDKey))
		if v.Str() != inst {
			t.Errorf("ResourceSpans[%d] instance = %q, want %q", i, v.Str(), inst)
		}
		if got := rs.ScopeSpans().Len(); got != 2 {
			t.Fatalf("ResourceSpans[%d].ScopeSpans().Len() = %d, want 2", i, got)
		}
		for j, want := range []struct {
			name  string
			spans int
		}{{"scope-1", 2}, {"scope-2", 1}} {
			ss := rs.ScopeSpans().At(j)
			if ss.Scope().Name() != want.name || ss.Spans().Len() != want.spans {
				t.Errorf("ResourceSpans[%d].ScopeSpans[%d] = %q with %d spans, want %q with %d",
					i, j, ss.Scope().Name(), ss.Spans().Len(), want.name, want.spans)
			}
		}
	}
}

func TestSpansToTracesEmpty(t *testing.T) {
	t.Parallel()
	if got := SpansToTraces(nil).ResourceSpans().Len(); got != 0 {
		t.Errorf("SpansToTraces(nil).ResourceSpans().Len() = %d, want 0", got)
	}
}

// An attempt that export sampling drops must still reach the aggregator: the
// sampler records what it does not sample, the exporter (behind a
// SimpleSpanProcessor, which honours the sampled flag) never sees it, and the
// aggregating processor does, before End returns.
func TestAggregatingProcessorSeesSpansNotSampledForExport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		sampler sdktrace.Sampler
	}{
		{"AlwaysRecord(NeverSample)", sdktrace.AlwaysRecord(sdktrace.NeverSample())},
		{"AlwaysRecord(TraceIDRatioBased(0))", sdktrace.AlwaysRecord(sdktrace.TraceIDRatioBased(0))},
		{"RecordOnly sampler", recordOnlySampler{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agg := &tracesCollector{}
			exported := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(
				sdktrace.WithSampler(tc.sampler),
				sdktrace.WithSpanProcessor(NewSplitProcessor(agg, nil, 0, nil)),
				sdktrace.WithSyncer(exported),
			)
			defer func() { _ = tp.Shutdown(context.Background()) }()

			_, span := tp.Tracer(TracerName).Start(context.Background(), "chat m",
				trace.WithAttributes(attemptAttributes("groq", "m", 300*time.Millisecond)...))
			if span.SpanContext().IsSampled() {
				t.Fatalf("span is sampled; the test needs one that is not")
			}
			span.End()

			got := agg.spans() // no waiting: delivery is synchronous
			if len(got) != 1 {
				t.Fatalf("aggregator got %d spans right after End, want 1", len(got))
			}
			if v, ok := got[0].Attributes().Get(string(KeyTarget)); !ok || v.Str() != "groq" {
				t.Errorf("aggregated span firstbyte.target = %q, want %q", v.AsString(), "groq")
			}
			if n := len(exported.GetSpans()); n != 0 {
				t.Errorf("exporter got %d spans, want 0 (not sampled)", n)
			}
		})
	}
}

// recordOnlySampler records every span and samples none.
type recordOnlySampler struct{}

func (recordOnlySampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return sdktrace.SamplingResult{
		Decision:   sdktrace.RecordOnly,
		Tracestate: trace.SpanContextFromContext(p.ParentContext).TraceState(),
	}
}

func (recordOnlySampler) Description() string { return "RecordOnly" }

// A consumer's error is dropped (a span processor has no one to return it
// to): the next span is consumed all the same.
func TestAggregatingProcessorGoesOnAfterConsumerErrors(t *testing.T) {
	t.Parallel()
	c := &tracesCollector{err: errors.New("boom")}
	p := &AggregatingProcessor{Consumer: c}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	for range 2 {
		_, s := tp.Tracer(TracerName).Start(context.Background(), "op")
		s.End()
	}

	if got := len(c.spans()); got != 2 {
		t.Errorf("consumer got %d spans, want 2 (each call returned an error)", got)
	}
}

func TestAggregatingProcessorNoOps(t *testing.T) {
	t.Parallel()
	p := NewSplitProcessor(nil, nil, 0, nil)
	p.OnEnd(nil) // must not panic
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Errorf("ForceFlush() = %v, want nil", err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown() = %v, want nil", err)
	}
}

// A reused buffer must carry nothing over from the span it held before: each
// refill must equal a fresh conversion of the same span.
func TestSpanBufferRefillMatchesFreshConversion(t *testing.T) {
	t.Parallel()
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{9}, SpanID: trace.SpanID{9}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	ts, err := trace.ParseTraceState("vendor=x")
	if err != nil {
		t.Fatal(err)
	}
	remote = remote.WithTraceState(ts)
	var spans []sdktrace.ReadOnlySpan
	for _, inst := range []string{"inst-a", "inst-b"} {
		spans = append(spans, recordSpans(t, testResource(inst), func(tp *sdktrace.TracerProvider) {
			tr := tp.Tracer(TracerName)
			other := tp.Tracer("other", trace.WithInstrumentationVersion("v2"),
				trace.WithInstrumentationAttributes(attribute.Int("n", 1)))
			attempt := func(tr trace.Tracer, ctx context.Context, target string, extra ...attribute.KeyValue) {
				_, s := tr.Start(ctx, "chat m", trace.WithSpanKind(trace.SpanKindClient),
					trace.WithAttributes(attemptAttributes(target, "m", 200*time.Millisecond)...),
					trace.WithAttributes(extra...))
				s.End()
			}
			// A rich span: remote parent with trace state, event, link, error.
			ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
			_, rich := tr.Start(ctx, "rich", trace.WithLinks(trace.Link{SpanContext: remote}))
			rich.AddEvent("e", trace.WithAttributes(attribute.String("k", "v")))
			rich.SetAttributes(attribute.StringSlice("ss", []string{"a"}))
			rich.SetStatus(codes.Error, "bad")
			rich.End()
			// Attempts of the same shape, then of other shapes.
			attempt(tr, context.Background(), "groq")
			attempt(tr, context.Background(), "together")
			attempt(tr, context.Background(), "groq", attribute.Bool("extra", true))
			_, failed := tr.Start(context.Background(), "chat m", trace.WithAttributes(
				KeyTarget.String("groq"), KeyHTTPStatus.String("503"), KeyErrorType.String("503")))
			failed.End()
			attempt(other, context.Background(), "groq")
			_, bare := tr.Start(context.Background(), "bare")
			bare.End()
		})...)
	}

	if len(spans) != 14 {
		t.Fatalf("recorded %d spans, want 14", len(spans))
	}
	buf := newSpanBuffer()
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1, 0}, {1, 8, 2, 9, 0, 13, 7, 10}} {
		for _, i := range order {
			want, err := ptraceotlp.NewExportRequestFromTraces(SpansToTraces(spans[i : i+1])).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			got, err := ptraceotlp.NewExportRequestFromTraces(buf.fill(spans[i])).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("refilled buffer with span %d (%s)\n got: %s\nwant: %s", i, spans[i].Name(), got, want)
			}
		}
	}
}

func TestAggregatingProcessorDropsBufferMarkedReadOnly(t *testing.T) {
	t.Parallel()
	var names []string
	p := NewSplitProcessor(consumerFunc(func(td ptrace.Traces) {
		names = append(names, allSpans(td)[0].Name())
		td.MarkReadOnly()
	}), nil, 0, nil)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	for _, name := range []string{"one", "two"} {
		_, s := tp.Tracer(TracerName).Start(context.Background(), name)
		s.End() // would panic refilling a read-only buffer
	}

	if len(names) != 2 || names[0] != "one" || names[1] != "two" {
		t.Errorf("consumed spans = %v, want [one two]", names)
	}
}

type consumerFunc func(ptrace.Traces)

func (f consumerFunc) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	f(td)
	return nil
}

// BenchmarkSpanToTraces measures the conversion alone of one attempt span:
// "fresh" builds a new ptrace.Traces as SpansToTraces does, "reused" refills
// a buffer as the AggregatingProcessor does. The end-to-end benchmark (span,
// conversion, tracker) lives in package collector, which may import this one.
func BenchmarkSpanToTraces(b *testing.B) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(testResource("inst-a")), sdktrace.WithSpanProcessor(rec))
	_, s := tp.Tracer(TracerName).Start(context.Background(), "chat m", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attemptAttributes("groq", "m", 300*time.Millisecond)...))
	s.End()
	spans := rec.Ended()

	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if SpansToTraces(spans).SpanCount() != 1 {
				b.Fatal("lost the span")
			}
		}
	})
	b.Run("reused", func(b *testing.B) {
		buf := newSpanBuffer()
		b.ReportAllocs()
		for b.Loop() {
			if buf.fill(spans[0]).SpanCount() != 1 {
				b.Fatal("lost the span")
			}
		}
	})
}
