package telemetry

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// otlpSink is a real OTLP/HTTP endpoint that decodes what it receives.
type otlpSink struct {
	*httptest.Server
	mu      sync.Mutex
	names   []string
	headers []http.Header
	status  atomic.Int32
}

func newOTLPSink(t *testing.T) *otlpSink {
	s := &otlpSink{}
	s.status.Store(200)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Errorf("bad gzip: %v", err)
				return
			}
			body = zr
		}
		data, _ := io.ReadAll(body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(data); err != nil {
			t.Errorf("sink could not decode the export: %v", err)
		}
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		rss := req.Traces().ResourceSpans()
		for i := range rss.Len() {
			if rss.At(i).Resource().Attributes().Len() == 0 {
				t.Errorf("resource lost its attributes")
			}
			sss := rss.At(i).ScopeSpans()
			for j := range sss.Len() {
				for k := range sss.At(j).Spans().Len() {
					s.names = append(s.names, sss.At(j).Spans().At(k).Name())
				}
			}
		}
		s.mu.Unlock()
		w.WriteHeader(int(s.status.Load()))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *otlpSink) got() ([]string, []http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.names...), s.headers
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestPdataExport: sampled spans reach a real OTLP endpoint as one valid
// request (concatenated TracesData), with headers and gzip as configured;
// unsampled spans stay home; shutdown flushes.
func TestPdataExport(t *testing.T) {
	t.Parallel()
	sink := newOTLPSink(t)
	var failed atomic.Int64
	sdk, shutdown, err := Setup(context.Background(), Options{
		OTLPEndpoint:  sink.URL,
		OnExportError: func(n int, _ error) { failed.Add(int64(n)) },
		Getenv: envOf(map[string]string{
			"OTEL_EXPORTER_OTLP_HEADERS":     "authorization=Bearer%20tok,x-tenant=a",
			"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
			"OTEL_TRACES_SAMPLER":            "parentbased_always_on",
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	tr := sdk.TracerProvider.Tracer("test")
	for _, name := range []string{"one", "two", "three"} {
		_, s := tr.Start(context.Background(), name)
		s.End()
	}
	// An unsampled parent: its child is recorded (the aggregator sees it)
	// but must not be exported.
	unsampled := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, Remote: true}))
	_, s := tr.Start(unsampled, "hidden")
	s.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	names, headers := sink.got()
	if len(names) != 3 || names[0] != "one" || names[2] != "three" {
		t.Errorf("exported %v, want [one two three] (never the unsampled span)", names)
	}
	if len(headers) != 1 {
		t.Fatalf("%d posts, want 1 batch at shutdown", len(headers))
	}
	h := headers[0]
	if h.Get("Authorization") != "Bearer tok" || h.Get("X-Tenant") != "a" || h.Get("Content-Type") != "application/x-protobuf" {
		t.Errorf("headers = %v", h)
	}
	if failed.Load() != 0 {
		t.Errorf("%d export failures against a healthy sink", failed.Load())
	}
}

// TestPdataExportFailuresCounted: an endpoint that refuses, or one that is
// gone, costs spans (counted) and never blocks the span's end.
func TestPdataExportFailuresCounted(t *testing.T) {
	t.Parallel()
	sink := newOTLPSink(t)
	sink.status.Store(503)
	var failed atomic.Int64
	sdk, shutdown, err := Setup(context.Background(), Options{
		OTLPEndpoint:  sink.URL + "/v1/traces",
		OnExportError: func(n int, _ error) { failed.Add(int64(n)) },
		Getenv:        envOf(map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "20", "OTEL_BSP_MAX_QUEUE_SIZE": "4"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	tr := sdk.TracerProvider.Tracer("test")
	start := time.Now()
	for range 10 { // more than the queue holds before a flush
		_, s := tr.Start(context.Background(), "x")
		s.End()
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("ending 10 spans took %v: export must never block", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for failed.Load() < 10 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := failed.Load(); n != 10 {
		t.Errorf("failed spans = %d, want all 10 (6 over the queue bound, 4 refused with 503)", n)
	}
}

func TestPdataEndpointChoice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    Options
		env  map[string]string
		want string
		ok   bool
	}{
		{"config base URL", Options{OTLPEndpoint: "http://127.0.0.1:4318"}, nil, "http://127.0.0.1:4318/v1/traces", true},
		{"config full URL", Options{OTLPEndpoint: "http://c:4318/v1/traces/"}, nil, "http://c:4318/v1/traces", true},
		{"env base", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, "http://c:4318/v1/traces", true},
		{"env traces endpoint as is", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:9/x"}, "http://c:9/x", true},
		{"grpc: SDK exporter", Options{OTLPEndpoint: "http://c:4317"}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "", false},
		{"client TLS: SDK exporter", Options{OTLPEndpoint: "https://c"}, map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca.pem"}, "", false},
		{"no endpoint: no export", Options{}, nil, "", false},
	}
	for _, tt := range tests {
		tt.o.Getenv = envOf(tt.env)
		if got, ok := pdataEndpoint(tt.o); got != tt.want || ok != tt.ok {
			t.Errorf("%s: pdataEndpoint = %q %v, want %q %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

var _ sdktrace.SpanProcessor = (*AggregatingProcessor)(nil)

// TestPdataExportReusesBuffersSafely: across many flushes (buffers swapped
// and reused), every span arrives once and intact.
func TestPdataExportReusesBuffersSafely(t *testing.T) {
	t.Parallel()
	sink := newOTLPSink(t)
	sdk, shutdown, err := Setup(context.Background(), Options{
		OTLPEndpoint: sink.URL,
		Getenv:       envOf(map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "5", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "7"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	tr := sdk.TracerProvider.Tracer("test")
	want := map[string]bool{}
	for i := range 300 {
		name := fmt.Sprintf("span-%03d", i)
		want[name] = true
		_, s := tr.Start(context.Background(), name)
		s.End()
		if i%40 == 0 {
			time.Sleep(10 * time.Millisecond) // let flushes interleave with appends
		}
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	names, posts := sink.got()
	seen := map[string]int{}
	for _, n := range names {
		seen[n]++
	}
	for n := range want {
		if seen[n] != 1 {
			t.Errorf("%s arrived %d times, want once", n, seen[n])
		}
	}
	if len(seen) != len(want) || len(posts) < 3 {
		t.Errorf("%d distinct spans in %d posts; want %d in several", len(seen), len(posts), len(want))
	}
}
