package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/config/configtelemetry"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// waitFor bounds every wait in these tests.
const waitFor = 10 * time.Second

// configEnv lists every variable the configs read; each test starts from all
// of them unset, so the configs' defaults apply unless the test sets one, but
// FIRSTBYTE_OTELCOL_OUT: even validating export-file.yaml creates its output
// file, and no test writes into the work tree.
var configEnv = []string{
	"FIRSTBYTE_OTELCOL_GRPC_ENDPOINT",
	"FIRSTBYTE_OTELCOL_HTTP_ENDPOINT",
	"FIRSTBYTE_OTELCOL_VERBOSITY",
	"FIRSTBYTE_OTELCOL_OUT",
	"FIRSTBYTE_OTELCOL_MEMORY_LIMIT_MIB",
	"FIRSTBYTE_A_ADMIN",
	"FIRSTBYTE_B_ADMIN",
	"FIRSTBYTE_INGEST_TOKEN",
	"FIRSTBYTE_OTELCOL_KEY_RATE",
	"FIRSTBYTE_OTELCOL_KEY_BURST",
	"FIRSTBYTE_OTELCOL_DOWN_ENDPOINT",
	"FIRSTBYTE_OTELCOL_ROOT",
	"FIRSTBYTE_LEAF_A",
	"FIRSTBYTE_LEAF_B",
}

func unsetConfigEnv(t *testing.T) {
	t.Helper()
	for _, k := range configEnv {
		t.Setenv(k, "") // restores the old value after the test
		os.Unsetenv(k)  // envprovider uses ":-default" only when unset, not when empty
	}
	t.Setenv("FIRSTBYTE_OTELCOL_OUT", filepath.Join(t.TempDir(), "spans.txt"))
}

// testSettings are the binary's settings reading the given config URIs
// (none: the embedded default), without taking over SIGINT/SIGTERM or the
// process-wide gRPC logger.
func testSettings(uris ...string) otelcol.CollectorSettings {
	set := settings()
	if len(uris) > 0 {
		set.ConfigProviderSettings.ResolverSettings.URIs = uris
	}
	set.DisableGracefulShutdown = true
	set.SkipSettingGRPCLogger = true
	return set
}

func configURI(name string) string { return "file:" + filepath.Join("config", name) }

func TestConfigsValidate(t *testing.T) {
	tests := []struct {
		name string
		uris []string
	}{
		{name: "single.yaml", uris: []string{configURI("single.yaml")}},
		{name: "fanout.yaml", uris: []string{configURI("fanout.yaml")}},
		{name: "export-file.yaml", uris: []string{configURI("export-file.yaml")}},
		{name: "fleet.yaml", uris: []string{configURI("fleet.yaml")}},
		{name: "fanout.yaml + fanout-backend.yaml", uris: []string{configURI("fanout.yaml"), configURI("fanout-backend.yaml")}},
		{name: "fanout.yaml + ratelimit.yaml", uris: []string{configURI("fanout.yaml"), configURI("ratelimit.yaml")}},
		{name: "tree-leaf.yaml", uris: []string{configURI("tree-leaf.yaml")}},
		{name: "tree-root.yaml", uris: []string{configURI("tree-root.yaml")}},
		{name: "embedded default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unsetConfigEnv(t)
			col, err := otelcol.NewCollector(testSettings(tt.uris...))
			if err != nil {
				t.Fatalf("NewCollector: %v", err)
			}
			if err := col.DryRun(context.Background()); err != nil {
				t.Errorf("DryRun() = %v, want nil", err)
			}
		})
	}
}

// TestConfigsListenOnLoopbackOnly resolves each config with its defaults and
// checks every receiver endpoint is on loopback.
func TestConfigsListenOnLoopbackOnly(t *testing.T) {
	for _, name := range []string{"single.yaml", "fanout.yaml", "export-file.yaml", "fleet.yaml", "tree-leaf.yaml", "tree-root.yaml"} {
		t.Run(name, func(t *testing.T) {
			unsetConfigEnv(t)
			provider, err := otelcol.NewConfigProvider(testSettings(configURI(name)).ConfigProviderSettings)
			if err != nil {
				t.Fatalf("NewConfigProvider: %v", err)
			}
			factories, err := components()
			if err != nil {
				t.Fatalf("components: %v", err)
			}
			cfg, err := provider.Get(context.Background(), factories)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			for id, rc := range cfg.Receivers {
				otlp, ok := rc.(*otlpreceiver.Config)
				if !ok {
					t.Fatalf("receiver %s: config %T, want *otlpreceiver.Config", id, rc)
				}
				var endpoints []string
				if g := otlp.Protocols.GRPC.Get(); g != nil {
					endpoints = append(endpoints, g.NetAddr.Endpoint)
				}
				if h := otlp.Protocols.HTTP.Get(); h != nil {
					endpoints = append(endpoints, h.ServerConfig.NetAddr.Endpoint)
				}
				// The tree's receivers that only collectors post to are HTTP
				// only; the others take both.
				if len(endpoints) != 2 && !(len(endpoints) == 1 && strings.HasPrefix(name, "tree-")) {
					t.Errorf("receiver %s endpoints = %v, want grpc and http", id, endpoints)
				}
				for _, ep := range endpoints {
					if !isLoopback(ep) {
						t.Errorf("receiver %s endpoint = %q, want a loopback address", id, ep)
					}
				}
			}
			tel, ok := cfg.Service.Telemetry.(*otelconftelemetry.Config)
			if !ok {
				t.Fatalf("telemetry config %T, want *otelconftelemetry.Config", cfg.Service.Telemetry)
			}
			if tel.Metrics.Level != configtelemetry.LevelNone {
				t.Errorf("service.telemetry.metrics.level = %v, want none", tel.Metrics.Level)
			}
		})
	}
}

func isLoopback(endpoint string) bool {
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// TestQuietTelemetryDefaults: a config without service::telemetry serves no
// metrics endpoint and logs only warnings.
func TestQuietTelemetryDefaults(t *testing.T) {
	factories, err := components()
	if err != nil {
		t.Fatalf("components: %v", err)
	}
	cfg, ok := factories.Telemetry.CreateDefaultConfig().(*otelconftelemetry.Config)
	if !ok {
		t.Fatalf("CreateDefaultConfig() = %T, want *otelconftelemetry.Config", factories.Telemetry.CreateDefaultConfig())
	}
	if cfg.Metrics.Level != configtelemetry.LevelNone || len(cfg.Metrics.Readers) != 0 {
		t.Errorf("metrics = level %v, %d readers; want none, 0", cfg.Metrics.Level, len(cfg.Metrics.Readers))
	}
	if cfg.Logs.Level != zapcore.WarnLevel {
		t.Errorf("logs.level = %v, want warn", cfg.Logs.Level)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
}

// TestFanoutDeliversToEveryInstance runs config/fanout.yaml with the two
// instances' admin addresses pointing at two sinks, sends a trace over
// OTLP/HTTP and another over OTLP/gRPC, and checks that each sink receives
// both, intact, on POST /v1/traces with the ingest token.
func TestFanoutDeliversToEveryInstance(t *testing.T) {
	unsetConfigEnv(t)
	a, b := newSink(t), newSink(t)
	t.Setenv("FIRSTBYTE_A_ADMIN", a.hostPort())
	t.Setenv("FIRSTBYTE_B_ADMIN", b.hostPort())
	t.Setenv("FIRSTBYTE_INGEST_TOKEN", "test-token")
	recv := startCollector(t, configURI("fanout.yaml"))

	tests := []struct {
		name string
		send func(t *testing.T, td ptrace.Traces)
	}{
		{name: "otlp/http", send: recv.postHTTP},
		{name: "otlp/grpc", send: recv.exportGRPC},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			traceID := pcommon.TraceID{0x5b, 0x8e, 0xff, 0xf7, byte(i + 1)}
			tt.send(t, buildSampleTrace(traceID))

			for _, s := range []struct {
				name string
				sink *sink
			}{{"instance a", a}, {"instance b", b}} {
				got, ok := s.sink.waitForTrace(traceID)
				if !ok {
					t.Fatalf("%s: trace %s not received within %v (%d requests)", s.name, traceID, waitFor, s.sink.count())
				}
				if got.path != "/v1/traces" {
					t.Errorf("%s: path = %q, want /v1/traces", s.name, got.path)
				}
				if got.contentType != "application/x-protobuf" {
					t.Errorf("%s: Content-Type = %q, want application/x-protobuf", s.name, got.contentType)
				}
				if got.authorization != "Bearer test-token" {
					t.Errorf("%s: Authorization = %q, want %q", s.name, got.authorization, "Bearer test-token")
				}
				checkSampleTrace(t, s.name, got.traces, traceID)
			}
		})
	}
}

// TestExportFileWritesSpans runs config/export-file.yaml and finds the span's
// attributes in the debug exporter's output file.
func TestExportFileWritesSpans(t *testing.T) {
	unsetConfigEnv(t)
	out := os.Getenv("FIRSTBYTE_OTELCOL_OUT") // a temporary file
	recv := startCollector(t, configURI("export-file.yaml"))

	recv.postHTTP(t, buildSampleTrace(pcommon.TraceID{0xf1}))

	want := []string{
		"-> firstbyte.target: Str(groq)",
		"-> gen_ai.response.time_to_first_chunk: Double(0.123)",
		"-> service.instance.id: Str(instance-a)",
	}
	var text string
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(out)
		text = string(b)
		if containsAll(text, want) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s after %v:\n%s\nwant lines %q", out, waitFor, text, want)
}

// TestSingleAcceptsOTLP runs config/single.yaml (debug exporter on stdout).
func TestSingleAcceptsOTLP(t *testing.T) {
	unsetConfigEnv(t)
	recv := startCollector(t, configURI("single.yaml"))
	recv.postHTTP(t, buildSampleTrace(pcommon.TraceID{0x51}))
	recv.exportGRPC(t, buildSampleTrace(pcommon.TraceID{0x52}))
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// receiverAddrs are where a started collector's OTLP receiver listens.
type receiverAddrs struct {
	http, grpc string // host:port
}

// startCollector picks two free loopback ports for the OTLP receiver, runs
// the collector in-process with the configs at uris until the test ends, and
// returns once it is running. A port is free only "a moment ago": when
// another test's listener took one in between, it picks two others (up to
// five times) rather than fail on a race with a neighbour.
func startCollector(t *testing.T, uris ...string) receiverAddrs {
	t.Helper()
	for try := 1; ; try++ {
		addrs, err := tryStartCollector(t, uris...)
		if err == nil {
			return addrs
		}
		if try == 5 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("collector Run() = %v before it was running", err)
		}
	}
}

// tryStartCollector is one try of startCollector: the collector's error
// when it stopped before running.
func tryStartCollector(t *testing.T, uris ...string) (receiverAddrs, error) {
	t.Helper()
	addrs := receiverAddrs{http: freeLoopbackAddr(t), grpc: freeLoopbackAddr(t)}
	t.Setenv("FIRSTBYTE_OTELCOL_HTTP_ENDPOINT", addrs.http)
	t.Setenv("FIRSTBYTE_OTELCOL_GRPC_ENDPOINT", addrs.grpc)

	col, err := otelcol.NewCollector(testSettings(uris...))
	if err != nil {
		t.Fatalf("NewCollector: %v", err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- col.Run(context.Background()) }()

	deadline := time.Now().Add(waitFor)
	for col.GetState() != otelcol.StateRunning {
		select {
		case err := <-runErr:
			if err == nil {
				err = errors.New("stopped without an error")
			}
			return addrs, err // stopped: Run has finished its cleanup
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector state = %v after %v, want Running", col.GetState(), waitFor)
		}
	}
	t.Cleanup(func() {
		col.Shutdown() // waits for Run to finish its cleanup
		select {
		case err := <-runErr:
			if err != nil {
				t.Errorf("collector Run() = %v, want nil", err)
			}
		case <-time.After(waitFor):
			t.Errorf("collector did not stop within %v", waitFor)
		}
	})
	return addrs, nil
}

// freeLoopbackAddr returns a 127.0.0.1 port that was free a moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// postHTTP sends td as an OTLP/HTTP protobuf request, as firstbyte does by
// default, and fails the test unless it is accepted.
func (r receiverAddrs) postHTTP(t *testing.T, td ptrace.Traces) {
	t.Helper()
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatalf("MarshalProto: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+r.http+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /v1/traces: %v", err)
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/traces = %d %s, want 200", resp.StatusCode, respBody)
	}
	out := ptraceotlp.NewExportResponse()
	if err := out.UnmarshalProto(respBody); err != nil {
		t.Fatalf("response: %v", err)
	}
	if n := out.PartialSuccess().RejectedSpans(); n != 0 {
		t.Fatalf("response rejected %d spans: %s", n, out.PartialSuccess().ErrorMessage())
	}
}

// exportGRPC sends td over OTLP/gRPC, as firstbyte does with
// OTEL_EXPORTER_OTLP_PROTOCOL=grpc.
func (r receiverAddrs) exportGRPC(t *testing.T, td ptrace.Traces) {
	t.Helper()
	conn, err := grpc.NewClient(r.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	resp, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
	if err != nil {
		t.Fatalf("gRPC Export: %v", err)
	}
	if n := resp.PartialSuccess().RejectedSpans(); n != 0 {
		t.Fatalf("gRPC Export rejected %d spans: %s", n, resp.PartialSuccess().ErrorMessage())
	}
}

// buildSampleTrace is one firstbyte request, as an instance exports it:
//
//	instance-a  POST /v1/chat/completions          (server)
//	            └── chat llama-3.3-70b-versatile   (client, attempt 1,
//	                 target groq, TTFB 0.123 s, 200)
func buildSampleTrace(traceID pcommon.TraceID) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "firstbyte")
	rs.Resource().Attributes().PutStr("service.instance.id", "instance-a")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/firstbyte-dev/firstbyte")

	start := time.Unix(1_700_000_000, 0)
	server := ss.Spans().AppendEmpty()
	server.SetTraceID(traceID)
	server.SetSpanID(pcommon.SpanID{1})
	server.SetName("POST /v1/chat/completions")
	server.SetKind(ptrace.SpanKindServer)
	server.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	server.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(900 * time.Millisecond)))

	attempt := ss.Spans().AppendEmpty()
	attempt.SetTraceID(traceID)
	attempt.SetSpanID(pcommon.SpanID{2})
	attempt.SetParentSpanID(server.SpanID())
	attempt.SetName("chat llama-3.3-70b-versatile")
	attempt.SetKind(ptrace.SpanKindClient)
	attempt.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
	attempt.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(850 * time.Millisecond)))
	attrs := attempt.Attributes()
	attrs.PutStr("gen_ai.operation.name", "chat")
	attrs.PutStr("gen_ai.provider.name", "groq")
	attrs.PutStr("gen_ai.request.model", "llama-3.3-70b-versatile")
	attrs.PutInt("http.response.status_code", 200)
	attrs.PutStr("firstbyte.target", "groq")
	attrs.PutStr("firstbyte.requested_model", "llama-3.3-70b")
	attrs.PutInt("firstbyte.attempt", 1)
	attrs.PutStr("firstbyte.selection", "leader")
	attrs.PutDouble("gen_ai.response.time_to_first_chunk", 0.123)
	return td
}

// checkSampleTrace checks that td holds buildSampleTrace(traceID) with the
// attributes the aggregator reads.
func checkSampleTrace(t *testing.T, who string, td ptrace.Traces, traceID pcommon.TraceID) {
	t.Helper()
	if n := td.SpanCount(); n != 2 {
		t.Errorf("%s: SpanCount() = %d, want 2", who, n)
	}
	rs := td.ResourceSpans().At(0)
	if v, _ := rs.Resource().Attributes().Get("service.instance.id"); v.Str() != "instance-a" {
		t.Errorf("%s: service.instance.id = %q, want instance-a", who, v.Str())
	}
	attempt, ok := findSpan(td, traceID, "chat llama-3.3-70b-versatile")
	if !ok {
		t.Fatalf("%s: attempt span of trace %s missing", who, traceID)
	}
	if v, ok := attempt.Attributes().Get("firstbyte.target"); !ok || v.Str() != "groq" {
		t.Errorf("%s: firstbyte.target = %q (present %v), want groq", who, v.Str(), ok)
	}
	if v, ok := attempt.Attributes().Get("gen_ai.response.time_to_first_chunk"); !ok || v.Type() != pcommon.ValueTypeDouble || v.Double() != 0.123 {
		t.Errorf("%s: gen_ai.response.time_to_first_chunk = %v (present %v), want double 0.123", who, v.AsRaw(), ok)
	}
	if attempt.Kind() != ptrace.SpanKindClient || attempt.ParentSpanID() != (pcommon.SpanID{1}) {
		t.Errorf("%s: attempt kind %v parent %v, want Client child of %v", who, attempt.Kind(), attempt.ParentSpanID(), pcommon.SpanID{1})
	}
}

func findSpan(td ptrace.Traces, traceID pcommon.TraceID, name string) (ptrace.Span, bool) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				if s.TraceID() == traceID && s.Name() == name {
					return s, true
				}
			}
		}
	}
	return ptrace.Span{}, false
}

// sink stands in for a firstbyte instance's admin POST /v1/traces: it
// records and decodes every OTLP/HTTP protobuf request and answers 200.
type sink struct {
	srv *httptest.Server // immutable after newSink

	mu  sync.Mutex
	got []received // guarded by mu
}

type received struct {
	path, contentType, authorization string
	traces                           ptrace.Traces
}

func newSink(t *testing.T) *sink {
	t.Helper()
	s := &sink{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP)) // binds 127.0.0.1
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) hostPort() string { return s.srv.Listener.Addr().String() }

func (s *sink) serveHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(raw); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.got = append(s.got, received{
		path:          r.URL.Path,
		contentType:   r.Header.Get("Content-Type"),
		authorization: r.Header.Get("Authorization"),
		traces:        req.Traces(),
	})
	s.mu.Unlock()

	resp, err := ptraceotlp.NewExportResponse().MarshalProto()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

// waitForTrace polls for up to waitFor until a request carrying a span of
// traceID has arrived, and returns it.
func (s *sink) waitForTrace(traceID pcommon.TraceID) (received, bool) {
	deadline := time.Now().Add(waitFor)
	for {
		s.mu.Lock()
		for _, r := range s.got {
			if hasTrace(r.traces, traceID) {
				s.mu.Unlock()
				return r, true
			}
		}
		s.mu.Unlock()
		if time.Now().After(deadline) {
			return received{}, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hasTrace(td ptrace.Traces, traceID pcommon.TraceID) bool {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				if s.TraceID() == traceID {
					return true
				}
			}
		}
	}
	return false
}

// TestRateLimitOverlayLimitsPerKey runs fanout.yaml with ratelimit.yaml
// over it: of a batch with 20 attempt spans of each of two keys and a
// server span, each instance gets the burst of each key and the server
// span.
func TestRateLimitOverlayLimitsPerKey(t *testing.T) {
	unsetConfigEnv(t)
	a, b := newSink(t), newSink(t)
	t.Setenv("FIRSTBYTE_A_ADMIN", a.hostPort())
	t.Setenv("FIRSTBYTE_B_ADMIN", b.hostPort())
	t.Setenv("FIRSTBYTE_OTELCOL_KEY_RATE", "0.001")
	t.Setenv("FIRSTBYTE_OTELCOL_KEY_BURST", "3")
	recv := startCollector(t, configURI("fanout.yaml"), configURI("ratelimit.yaml"))

	td := buildSampleTrace(pcommon.TraceID{0x7a}) // a server span and a groq attempt
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	attempt := spans.At(1)
	for i := range 39 {
		s := spans.AppendEmpty()
		attempt.CopyTo(s)
		s.SetSpanID(pcommon.SpanID{byte(i + 3)})
		if i >= 19 {
			s.Attributes().PutStr("firstbyte.target", "openai")
			s.Attributes().PutStr("gen_ai.request.model", "gpt-4o-mini")
		}
	}
	recv.postHTTP(t, td)

	// A later batch: another server span (passed) and another groq
	// attempt (over its key's burst: dropped). Once its server span has
	// reached an instance, so has anything of the first batch.
	marker := pcommon.TraceID{0x7b}
	recv.postHTTP(t, buildSampleTrace(marker))

	want := map[string]int{"": 2, "groq": 3, "openai": 3}
	for _, s := range []struct {
		name string
		sink *sink
	}{{"instance a", a}, {"instance b", b}} {
		if _, ok := s.sink.waitForTrace(marker); !ok {
			t.Fatalf("%s: the later batch's server span did not come within %v; got %v", s.name, waitFor, s.sink.spansByTarget())
		}
		if got := s.sink.spansByTarget(); !maps.Equal(got, want) {
			t.Errorf("%s received %v spans by firstbyte.target, want %v", s.name, got, want)
		}
	}
}

// spansByTarget counts the spans received by firstbyte.target ("" for
// none).
func (s *sink) spansByTarget() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, r := range s.got {
		for _, rs := range r.traces.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					v, _ := sp.Attributes().Get("firstbyte.target")
					out[v.Str()]++
				}
			}
		}
	}
	return out
}

// TestTreeDeliversTheFleetsLimitedStreamToEveryInstance runs a root and
// two leaves (tree-root.yaml, tree-leaf.yaml), each leaf with two
// instances (sinks). Spans sent to both leaves reach every instance of
// every leaf, limited per key once for the whole fleet (the rate is so low
// here that each key passes its burst of one and no more); server spans
// do not travel.
func TestTreeDeliversTheFleetsLimitedStreamToEveryInstance(t *testing.T) {
	unsetConfigEnv(t)
	downA, downB := freeLoopbackAddr(t), freeLoopbackAddr(t)
	t.Setenv("FIRSTBYTE_OTELCOL_KEY_RATE", "0.001")
	t.Setenv("FIRSTBYTE_LEAF_A", downA)
	t.Setenv("FIRSTBYTE_LEAF_B", downB)
	root := startCollector(t, configURI("tree-root.yaml"))

	t.Setenv("FIRSTBYTE_OTELCOL_ROOT", root.http)
	sinks := map[string]*sink{}
	leaves := map[string]receiverAddrs{}
	for leaf, down := range map[string]string{"a": downA, "b": downB} {
		s1, s2 := newSink(t), newSink(t)
		sinks[leaf+"1"], sinks[leaf+"2"] = s1, s2
		t.Setenv("FIRSTBYTE_OTELCOL_DOWN_ENDPOINT", down)
		t.Setenv("FIRSTBYTE_A_ADMIN", s1.hostPort())
		t.Setenv("FIRSTBYTE_B_ADMIN", s2.hostPort())
		leaves[leaf] = startCollector(t, configURI("tree-leaf.yaml"))
	}

	// Leaf a: a server span, 10 groq attempts, 10 openai; leaf b: 10 groq.
	batch := func(traceID byte, targets ...string) ptrace.Traces {
		td := buildSampleTrace(pcommon.TraceID{traceID})
		spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		attempt := spans.At(1)
		for i, target := range targets {
			s := spans.AppendEmpty()
			attempt.CopyTo(s)
			s.SetSpanID(pcommon.SpanID{byte(i + 3)})
			s.Attributes().PutStr("firstbyte.target", target)
		}
		return td
	}
	var aTargets, bTargets []string
	for range 9 {
		aTargets = append(aTargets, "groq", "openai")
		bTargets = append(bTargets, "groq")
	}
	leaves["a"].postHTTP(t, batch(0xa1, append(aTargets, "openai")...))
	leaves["b"].postHTTP(t, batch(0xb1, bTargets...))
	// Then through each leaf an attempt of a key of its own, which passes
	// both limits: once both have reached an instance, so has anything of
	// the batches sent before them through the same leaves.
	leaves["a"].postHTTP(t, batch(0xa2, "marker-a"))
	leaves["b"].postHTTP(t, batch(0xb2, "marker-b"))

	want := map[string]int{"groq": 1, "openai": 1, "marker-a": 1, "marker-b": 1}
	deadline := time.Now().Add(waitFor)
	for name, s := range sinks {
		for {
			got := s.spansByTarget()
			if got["marker-a"] > 0 && got["marker-b"] > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("instance %s: both leaves' marker spans did not come within %v; got %v", name, waitFor, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for name, s := range sinks {
		if got := s.spansByTarget(); !maps.Equal(got, want) {
			t.Errorf("instance %s received %v spans by firstbyte.target, want %v", name, got, want)
		}
	}
}
