package router_test

// Benchmarks of the gateway's own cost on the request path, with the real
// telemetry path wired as cmd/firstbyte wires it: every attempt span goes
// through the aggregating processor into a collector.Tracker and the
// span-derived Prometheus metrics before the handler returns.
//
//	BenchmarkUnaryProxied  client -> [gateway | ReverseProxy | nothing] -> upstream, all on loopback:
//	                       the differences between the sub-benchmarks are what a proxy adds.
//	BenchmarkUnaryHandler  gw.Handler().ServeHTTP with an in-memory upstream transport: no
//	                       sockets, so ns/op and allocs/op are the gateway's alone.
//	BenchmarkStreamRelay   the same for an SSE stream of N chunks; ns/chunk is per chunk relayed.
//
// Run with: go test -run '^$' -bench 'Unary|Stream' -benchmem ./router/

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/internal/benchutil"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// benchChatRequest is a small but realistic chat request: what an SDK sends
// for a one-turn prompt.
const benchChatRequest = `{"model":"m","messages":[{"role":"system","content":"You are a helpful assistant."},` +
	`{"role":"user","content":"Say hello in one short sentence, please."}],"temperature":0.2,"max_tokens":64}`

// benchChatStreamRequest is the same request asking for SSE.
const benchChatStreamRequest = `{"model":"m","stream":true,"messages":[{"role":"system","content":"You are a helpful assistant."},` +
	`{"role":"user","content":"Say hello in one short sentence, please."}],"temperature":0.2,"max_tokens":64}`

// benchChatResponse is a typical unary chat.completion answer.
var benchChatResponse = []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"m",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"Hello! How can I help you today?"},` +
	`"finish_reason":"stop"}],"usage":{"prompt_tokens":24,"completion_tokens":9,"total_tokens":33}}`)

// benchTelemetry wires spans, aggregator, tracker and metrics as
// cmd/firstbyte/stack.go does. otlp, when set, adds the batching OTLP/HTTP
// exporter, which is how a production gateway runs.
func benchTelemetry(b *testing.B, otlp string) (trace.TracerProvider, *collector.Tracker) {
	return benchTelemetryWith(b, otlp, 0)
}

// slowConsumer is metrics whose every span first sleeps: a slow observer.
type slowConsumer struct {
	next  telemetry.TracesConsumer
	sleep time.Duration
}

func (s slowConsumer) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	time.Sleep(s.sleep) // the slowness under test, not a wait
	return s.next.ConsumeTraces(ctx, td)
}

// benchTelemetryWith is benchTelemetry wired as the binary wires it (the
// tracker learns synchronously; metrics and export on the processor's own
// goroutine), with every span's metrics delayed by sleep.
func benchTelemetryWith(b *testing.B, otlp string, sleep time.Duration) (trace.TracerProvider, *collector.Tracker) {
	b.Helper()
	reg := prometheus.NewRegistry()
	metrics := collector.NewMetrics(reg)
	tracker := collector.NewTracker(collector.TrackerOptions{})
	agg := collector.NewAggregator(tracker, collector.AggregatorOptions{OnSpan: metrics.SpanConsumed})
	var observers telemetry.TracesConsumer = metrics
	if sleep > 0 {
		observers = slowConsumer{next: metrics, sleep: sleep}
	}
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{
		ServiceName:   "firstbyte-bench",
		OTLPEndpoint:  otlp,
		Aggregator:    agg,
		Observers:     observers,
		OnDrop:        metrics.SpansDropped,
		OnExportError: func(n int, _ error) { metrics.ExportFailed(n) },
		// The process environment must not switch exporters or samplers
		// under the benchmark.
		Getenv: func(string) string { return "" },
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = shutdown(ctx)
	})
	return sdk.TracerProvider, tracker
}

// benchOTLPSink accepts OTLP/HTTP exports and answers 200 with an empty
// (valid) ExportTraceServiceResponse, standing in for a collector.
func benchOTLPSink(b *testing.B) string {
	b.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	b.Cleanup(s.Close)
	return s.URL
}

// benchGateway builds a least-latency gateway with one target, "up",
// serving client model "m" at baseURL (which ends before /v1).
func benchGateway(b *testing.B, baseURL string, o router.Options) *router.Gateway {
	b.Helper()
	return benchGatewayYAML(b, fmt.Sprintf("strategy: {mode: least-latency}\n"+
		"providers:\n  up: {base_url: %q, api_key: key-up, models: [m]}\n"+
		"targets:\n  - {virtual_key: up}\n", baseURL+"/v1"), o)
}

// benchGatewayYAML is a gateway of the config yaml.
func benchGatewayYAML(b *testing.B, yaml string, o router.Options) *router.Gateway {
	b.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	if o.Stats == nil { // no spans: nothing is learned, but the mode reads a tracker
		o.Stats = collector.NewTracker(collector.TrackerOptions{})
	}
	gw, err := router.New(cfg, o)
	if err != nil {
		b.Fatal(err)
	}
	return gw
}

// benchUpstreamHandler is the fastest honest upstream: it reads the request
// and answers the fixed completion.
func benchUpstreamHandler(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(benchChatResponse))}
	_, _ = w.Write(benchChatResponse)
}

// benchClient keeps its connections so every op is a keep-alive round trip.
func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns: 64, MaxIdleConnsPerHost: 64, DisableCompression: true, IdleConnTimeout: time.Minute,
	}}
}

func benchPost(b *testing.B, c *http.Client, url, body string) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header["Content-Type"] = []string{"application/json"}
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("POST %s: status %d", url, resp.StatusCode)
	}
}

// reportCPU adds cpu-ns/op: the process's CPU time over the loop per op,
// which counts what ns/op does not (work on other goroutines and threads:
// the span exporter, GC workers, the servers of the network benchmarks).
func reportCPU(b *testing.B, start time.Duration) {
	if start == 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64(benchutil.ProcessCPU(b)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkUnaryProxied is one unary chat completion at a time over
// loopback HTTP/1.1 keep-alive connections. allocs/op counts the client,
// proxy and upstream together (they share the process); compare the
// sub-benchmarks with each other, not with BenchmarkUnaryHandler.
func BenchmarkUnaryProxied(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(benchUpstreamHandler))
	defer up.Close()

	b.Run("direct", func(b *testing.B) {
		c := benchClient()
		defer c.CloseIdleConnections()
		url := up.URL + "/v1/chat/completions"
		b.ReportAllocs()
		cpu := benchutil.ProcessCPU(b)
		for b.Loop() {
			benchPost(b, c, url, benchChatRequest)
		}
		reportCPU(b, cpu)
	})

	b.Run("reverseproxy", func(b *testing.B) {
		target, _ := url.Parse(up.URL)
		rp := &httputil.ReverseProxy{
			Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
			Transport: upstream.NewTransport(), // same pool settings as the gateway
		}
		px := httptest.NewServer(rp)
		defer px.Close()
		c := benchClient()
		defer c.CloseIdleConnections()
		url := px.URL + "/v1/chat/completions"
		b.ReportAllocs()
		cpu := benchutil.ProcessCPU(b)
		for b.Loop() {
			benchPost(b, c, url, benchChatRequest)
		}
		reportCPU(b, cpu)
	})

	for _, tc := range []struct {
		name   string
		spans  bool
		export bool
		sleep  time.Duration // every span's metrics first sleep this long
	}{
		{"gateway-no-telemetry", false, false, 0},
		{"gateway", true, false, 0},
		{"gateway-otlp-export", true, true, 0},
		// Telemetry off the client's path: metrics that take 30 ms a span
		// must not show in the client's time (compare with "gateway").
		{"gateway-metrics-sleep-30ms", true, false, 30 * time.Millisecond},
	} {
		b.Run(tc.name, func(b *testing.B) {
			o := router.Options{}
			if tc.spans {
				otlp := ""
				if tc.export {
					otlp = benchOTLPSink(b)
				}
				tp, tracker := benchTelemetryWith(b, otlp, tc.sleep)
				o.TracerProvider, o.Stats = tp, tracker
			}
			gw := httptest.NewServer(benchGateway(b, up.URL, o).Handler())
			defer gw.Close()
			c := benchClient()
			defer c.CloseIdleConnections()
			url := gw.URL + "/v1/chat/completions"
			b.ReportAllocs()
			cpu := benchutil.ProcessCPU(b)
			for b.Loop() {
				benchPost(b, c, url, benchChatRequest)
			}
			reportCPU(b, cpu)
		})
	}
}

// memTransport answers every upstream request in memory, so a handler
// benchmark measures the gateway and not the loopback stack. It drains the
// request body as a real transport would. Its own cost per request is the
// Response, its Header map and the body reader: 3 allocations.
type memTransport struct {
	status int
	header http.Header // copied per response: the gateway may keep it
	body   func() io.ReadCloser
}

func (t *memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: t.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: t.header.Clone(), Body: t.body(), ContentLength: -1, Request: req,
	}, nil
}

func unaryMemTransport() *memTransport {
	return &memTransport{
		status: http.StatusOK,
		header: http.Header{
			"Content-Type":   {"application/json"},
			"Content-Length": {strconv.Itoa(len(benchChatResponse))},
		},
		body: func() io.ReadCloser { return io.NopCloser(bytes.NewReader(benchChatResponse)) },
	}
}

// rewindBody is a request body the benchmark re-arms per op without
// allocating, so the op's allocations are the gateway's.
type rewindBody struct {
	r   bytes.Reader
	src []byte
}

func (b *rewindBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *rewindBody) Close() error               { return nil }
func (b *rewindBody) rewind()                    { b.r.Reset(b.src) }

// benchRequest is a client request whose body can be re-armed; the mux
// and the handler only read it (the handler works on a WithContext copy).
func benchRequest(body string) (*http.Request, *rewindBody) {
	rb := &rewindBody{src: []byte(body)}
	rb.rewind()
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	req.Header.Set("Content-Type", "application/json")
	req.Body, req.ContentLength = rb, int64(len(body))
	return req, rb
}

// handlerVariants are the telemetry set-ups of the handler benchmarks:
// without spans (the router's own work), with the in-process span path,
// and with OTLP export as well.
var handlerVariants = []struct {
	name   string
	spans  bool
	export bool
}{
	{"no-telemetry", false, false},
	{"telemetry", true, false},
	{"telemetry-otlp-export", true, true},
}

func handlerOptions(b *testing.B, spans, export bool, tr http.RoundTripper) router.Options {
	o := router.Options{Transport: tr}
	if !spans {
		o.TracerProvider = noop.NewTracerProvider()
		return o
	}
	otlp := ""
	if export {
		otlp = benchOTLPSink(b)
	}
	o.TracerProvider, o.Stats = benchTelemetry(b, otlp)
	return o
}

// BenchmarkUnaryHandler is a full unary proxied request through
// gw.Handler(): auth, body read and scan, ordering over the tracker, the
// attempt span through the aggregator into tracker and metrics, the server
// span, header copies and the response write; the upstream is in memory.
// "parallel" runs it on every P to show contention on shared state.
func BenchmarkUnaryHandler(b *testing.B) {
	for _, v := range handlerVariants {
		b.Run(v.name, func(b *testing.B) {
			h := benchGateway(b, "http://upstream.invalid", handlerOptions(b, v.spans, v.export, unaryMemTransport())).Handler()
			req, body := benchRequest(benchChatRequest)
			b.ReportAllocs()
			cpu := benchutil.ProcessCPU(b)
			for b.Loop() {
				body.rewind()
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
			reportCPU(b, cpu)
		})
	}
	// What log.requests (on by default) adds: one text line per request,
	// formatted and written (to io.Discard).
	b.Run("telemetry-request-log", func(b *testing.B) {
		o := handlerOptions(b, true, false, unaryMemTransport())
		o.Logger, o.LogRequests = slog.New(slog.NewTextHandler(io.Discard, nil)), true
		h := benchGateway(b, "http://upstream.invalid", o).Handler()
		req, body := benchRequest(benchChatRequest)
		b.ReportAllocs()
		cpu := benchutil.ProcessCPU(b)
		for b.Loop() {
			body.rewind()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
		reportCPU(b, cpu)
	})
	b.Run("telemetry-parallel", func(b *testing.B) {
		h := benchGateway(b, "http://upstream.invalid", handlerOptions(b, true, false, unaryMemTransport())).Handler()
		b.ReportAllocs()
		cpu := benchutil.ProcessCPU(b)
		defer reportCPU(b, cpu)
		b.RunParallel(func(pb *testing.PB) {
			req, body := benchRequest(benchChatRequest)
			for pb.Next() {
				body.rewind()
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Errorf("status %d", w.Code)
					return
				}
			}
		})
	})
}

// BenchmarkUnaryHandlerHedge: what strategy.hedge costs a request that
// does not need a hedge, two targets and telemetry on: off (the default:
// one nil check), and armed (enabled, a fixed 10 s delay that never
// passes: the attempt runs in a goroutine of its own beside a timer).
func BenchmarkUnaryHandlerHedge(b *testing.B) {
	for _, v := range []struct{ name, hedge string }{
		{"off", ""},
		{"armed", ", hedge: {enabled: true, after: 10s, budget: 1}"},
	} {
		b.Run(v.name, func(b *testing.B) {
			yaml := "strategy: {mode: least-latency" + v.hedge + "}\n" +
				"providers:\n  a: {base_url: \"http://a.invalid/v1\", api_key: key-a, models: [m]}\n" +
				"  b: {base_url: \"http://b.invalid/v1\", api_key: key-b, models: [m]}\n" +
				"targets:\n  - {virtual_key: a}\n  - {virtual_key: b}\n"
			h := benchGatewayYAML(b, yaml, handlerOptions(b, true, false, unaryMemTransport())).Handler()
			req, body := benchRequest(benchChatRequest)
			b.ReportAllocs()
			cpu := benchutil.ProcessCPU(b)
			for b.Loop() {
				body.rewind()
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
				if v.hedge != "" && w.Header().Get(router.HeaderHedged) != "" {
					b.Fatalf("a hedge started: %s", w.Header().Get(router.HeaderHedged))
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// sseBody yields one SSE event per Read, as a paced upstream's chunks
// arrive one per TCP read, then io.EOF.
type sseBody struct {
	events [][]byte
	i      int
}

func (s *sseBody) Read(p []byte) (int, error) {
	if s.i == len(s.events) {
		return 0, io.EOF
	}
	n := copy(p, s.events[s.i])
	s.i++
	return n, nil
}

func (s *sseBody) Close() error { return nil }

// sseEvents is a chat completion stream of n content chunks and [DONE].
func sseEvents(n int) [][]byte {
	evs := make([][]byte, 0, n+1)
	for i := range n {
		evs = append(evs, fmt.Appendf(nil, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"m",`+
			`"choices":[{"index":0,"delta":{"content":"tok%d "},"finish_reason":null}]}`+"\n\n", i))
	}
	return append(evs, []byte("data: [DONE]\n\n"))
}

// BenchmarkStreamRelay is a streaming request of N chunks through
// gw.Handler() with an in-memory upstream. Every chunk is written and
// flushed on its own (SSE is flushed at once). ns/chunk is ns/op / N; the
// marginal cost of a chunk is (ns/op[64] - ns/op[1]) / 63.
func BenchmarkStreamRelay(b *testing.B) {
	for _, chunks := range []int{1, 64} {
		b.Run("chunks="+strconv.Itoa(chunks), func(b *testing.B) {
			body := &sseBody{events: sseEvents(chunks)}
			tr := &memTransport{
				status: http.StatusOK,
				header: http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}},
				// One stream at a time: the body is rewound, not rebuilt.
				body: func() io.ReadCloser { body.i = 0; return body },
			}
			h := benchGateway(b, "http://upstream.invalid", handlerOptions(b, true, false, tr)).Handler()
			req, rb := benchRequest(benchChatStreamRequest)
			b.ReportAllocs()
			cpu := benchutil.ProcessCPU(b)
			for b.Loop() {
				rb.rewind()
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK || !w.Flushed {
					b.Fatalf("status %d, flushed %v: %s", w.Code, w.Flushed, w.Body)
				}
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(body.events)), "ns/chunk")
		})
	}
}
