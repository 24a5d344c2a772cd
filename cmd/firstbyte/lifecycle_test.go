package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router/config"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func TestLimitListenerHoldsNewConnectionsInTheBacklog(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newLimitListener(inner, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String()) // the kernel completes the handshake: the third waits in the backlog
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	first, second := <-accepted, <-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted over the limit of 2")
	case <-time.After(100 * time.Millisecond):
	}
	if _, ok := first.(interface{ CloseWrite() error }); !ok {
		t.Error("an accepted connection hides CloseWrite")
	}
	first.Close()
	first.Close() // a second Close gives back nothing more
	select {
	case third := <-accepted:
		third.Close()
	case <-time.After(2 * time.Second):
		t.Fatal("the third connection was not accepted after one closed")
	}
	second.Close()
	_ = clients
}

// logLines is a slog text log collected in memory.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) lines(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}

func TestRateLimitedWarn(t *testing.T) {
	t.Parallel()
	var out logLines
	w := newRateLimitedWarn(slog.New(slog.NewTextHandler(&out, nil)), "export failed", "spans", 200*time.Millisecond)
	for i := range 50 {
		w.note(2, fmt.Sprintf("attempt %d", i))
	}
	if got := out.lines("export failed"); len(got) != 1 || !strings.Contains(got[0], "count=1 spans=2") {
		t.Fatalf("after a burst: %q, want one line for the first occurrence", got)
	}
	// The rest come as one line when the interval is over, by the timer.
	deadline := time.Now().Add(2 * time.Second)
	for len(out.lines("export failed")) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := out.lines("export failed")
	if len(got) != 2 || !strings.Contains(got[1], "count=49 spans=98") || !strings.Contains(got[1], `last_error="attempt 49"`) {
		t.Fatalf("after the interval: %q, want a second line counting the other 49", got)
	}
	w.note(1, "") // within the interval: pending, its timer started
	w.Close()
	if got := out.lines("export failed"); len(got) != 3 || !strings.Contains(got[2], "count=1 spans=1") {
		t.Fatalf("after Close: %q, want the pending one written at once", got)
	}
	w.note(1, "after close")
	// Nothing is written after Close: not by the timer Close stopped, not
	// for the note after it. The control, a warning left open whose note
	// is pending from now on, shows a timer of the same interval has fired
	// by the time its line is there.
	var controlOut logLines
	control := newRateLimitedWarn(slog.New(slog.NewTextHandler(&controlOut, nil)), "control", "", 200*time.Millisecond)
	defer control.Close()
	control.note(0, "first")
	control.note(0, "pending")
	deadline = time.Now().Add(2 * time.Second)
	for len(controlOut.lines("control")) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := controlOut.lines("control"); len(got) != 2 {
		t.Fatalf("the control: %q, want its pending note written by its timer", got)
	}
	if got := out.lines("export failed"); len(got) != 3 {
		t.Errorf("after Close: %q, want nothing after the line Close wrote", got)
	}
}

func TestRestartOnlyFields(t *testing.T) {
	t.Parallel()
	base := `
listen: 127.0.0.1:8080
admin: {listen: 127.0.0.1:9464}
providers:
  a: {base_url: "http://127.0.0.1:1/v1", api_key: sk-secret-1}
targets:
  - {virtual_key: a, model_map: {m: m}}
telemetry: {otlp_endpoint: "http://user:pw@127.0.0.1:4318"}
`
	parse := func(text string) *config.Config {
		t.Helper()
		cfg, err := config.Parse([]byte(text), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	old := parse(base)
	tests := []struct {
		name    string
		edit    func(string) string
		refused []string // field paths
		changed []string
	}{
		{"nothing", func(s string) string { return s }, nil, nil},
		{"targets and a provider key", func(s string) string {
			return strings.NewReplacer("sk-secret-1", "sk-secret-2", "{m: m}", "{m: m, n: n}").Replace(s)
		}, nil, []string{"providers.a", "targets"}},
		{"listeners", func(s string) string {
			return strings.NewReplacer(":8080", ":8081", ":9464", ":9465").Replace(s)
		}, []string{"listen", "admin.listen"}, nil},
		{"limits and log format", func(s string) string {
			return s + "limits: {read_timeout: 5s, max_connections: 10, max_body: 1KiB}\nlog: {format: json, level: debug}\n"
		}, []string{"limits.max_connections", "limits.read_timeout", "log.format"}, nil},
		{"export endpoint", func(s string) string { return strings.Replace(s, "user:pw@", "", 1) }, []string{"telemetry.otlp_endpoint"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parse(tt.edit(base))
			fes := restartOnly(old, cfg)
			var paths []string
			for _, fe := range fes {
				paths = append(paths, fe.Path)
				if strings.Contains(fe.Msg, "pw") {
					t.Errorf("%s: message shows a credential: %s", fe.Path, fe.Msg)
				}
			}
			if fmt.Sprint(paths) != fmt.Sprint(tt.refused) {
				t.Errorf("restartOnly = %v, want %v", paths, tt.refused)
			}
			if len(tt.refused) == 0 {
				if got := changedKeys(old, cfg); fmt.Sprint(got) != fmt.Sprint(tt.changed) {
					t.Errorf("changedKeys = %v, want %v", got, tt.changed)
				}
			}
		})
	}
}

// testStack starts a stack in this process from a config file it writes,
// on free loopback ports, with a transport of the test's choosing.
func testStack(t *testing.T, cfgText string, transport http.RoundTripper) (*stack, string, *logLines) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "firstbyte.yaml")
	if err := os.WriteFile(path, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logLines{}
	level := new(slog.LevelVar)
	s, err := startStack(context.Background(), cfg, stackOptions{
		Logger: newLogger(logs, cfg.Log, level), Level: level, Transport: transport, ConfigPath: path,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s, path, logs
}

func doRequest(t *testing.T, method, url, body string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func metricValue(t *testing.T, s *stack, series string) string {
	t.Helper()
	_, text := doRequest(t, http.MethodGet, "http://"+s.AdminAddr+"/metrics", "")
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return "(absent)"
}

func TestStackReloadAndAdminToken(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer up.Close()
	cfgText := func(models string) string {
		return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0, token: admin-tok}
log: {level: info}
providers:
  a: {base_url: %q}
targets:
  - {virtual_key: a, model_map: {%s}}
`, up.URL+"/v1", models)
	}
	s, path, logs := testStack(t, cfgText("m: m"), nil)
	admin := "http://" + s.AdminAddr
	chat := func(model string) int {
		code, _ := doRequest(t, http.MethodPost, "http://"+s.APIAddr+"/v1/chat/completions", `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
		return code
	}

	for _, open := range []string{"/metrics", "/health", "/readyz"} {
		if code, _ := doRequest(t, http.MethodGet, admin+open, ""); code != 200 {
			t.Errorf("GET %s without a token = %d, want 200", open, code)
		}
	}
	for _, tt := range []struct{ method, path, auth string }{
		{"GET", "/debug/routing", ""}, {"GET", "/debug/routing", "Bearer wrong"}, {"POST", "/admin/reload", ""},
		{"POST", "/admin/reload", "admin-tok"},
	} {
		if code, _ := doRequest(t, tt.method, admin+tt.path, "", "Authorization", tt.auth); code != 401 {
			t.Errorf("%s %s with Authorization %q = %d, want 401", tt.method, tt.path, tt.auth, code)
		}
	}
	if code, _ := doRequest(t, "GET", admin+"/debug/routing", "", "Authorization", "Bearer admin-tok"); code != 200 {
		t.Errorf("GET /debug/routing with the token = %d, want 200", code)
	}

	// A good file: swapped in.
	s.Tracker.RecordSample("a", "m", 10*time.Millisecond, time.Time{}, collector.OriginSelf)
	s.Tracker.RecordSample("a", "gone", 10*time.Millisecond, time.Time{}, collector.OriginSelf)
	if err := os.WriteFile(path, []byte(cfgText("m: m, n: n")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, body := doRequest(t, "POST", admin+"/admin/reload", "", "Authorization", "Bearer admin-tok")
	if code != 200 || !strings.Contains(body, `"result": "ok"`) || !strings.Contains(body, `"targets"`) {
		t.Errorf("reload of a good file = %d %s", code, body)
	}
	if chat("n") != 200 {
		t.Error("model n, added by the reload, is not served")
	}
	if _, n, ok := liveP50(s.Tracker, "a", "m"); !ok || n != 1 {
		t.Errorf("the sample of a target that remains was lost (%d samples)", n)
	}
	if _, _, ok := liveP50(s.Tracker, "a", "gone"); ok {
		t.Error("the samples of a pair no longer configured were kept")
	}

	// A bad file, then one moving a listener: refused, nothing changes.
	for _, bad := range []struct{ text, want string }{
		{strings.Replace(cfgText("m: m"), "virtual_key: a", "virtual_key: b", 1), `targets[0].virtual_key: unknown provider \"b\"`},
		{strings.Replace(cfgText("m: m"), "listen: 127.0.0.1:0\n", "listen: 127.0.0.1:1\n", 1), "listen: a reload cannot change it"},
	} {
		if err := os.WriteFile(path, []byte(bad.text), 0o600); err != nil {
			t.Fatal(err)
		}
		code, body = doRequest(t, "POST", admin+"/admin/reload", "", "Authorization", "Bearer admin-tok")
		if code != 422 || !strings.Contains(body, bad.want) {
			t.Errorf("reload of a bad file = %d %s, want 422 naming %q", code, body, bad.want)
		}
		var ans reloadAnswer
		if err := json.Unmarshal([]byte(body), &ans); err != nil || ans.Result != "refused" || len(ans.Errors) == 0 {
			t.Errorf("refusal body %s: %v", body, err)
		}
		if chat("n") != 200 || chat("m") != 200 {
			t.Error("a refused reload changed what is served")
		}
	}
	if got := metricValue(t, s, `firstbyte_reloads_total{result="ok"}`); got != "1" {
		t.Errorf("reloads ok = %s, want 1", got)
	}
	if got := metricValue(t, s, `firstbyte_reloads_total{result="refused"}`); got != "2" {
		t.Errorf("reloads refused = %s, want 2", got)
	}
	if n := len(logs.lines(`msg="config reload refused; the running config keeps serving"`)); n != 2 {
		t.Errorf("%d refusal warnings logged, want 2", n)
	}
	if n := len(logs.lines(`msg="config reloaded"`)); n != 1 {
		t.Errorf("%d reload lines logged, want 1", n)
	}
}

// TestStackReloadsForeignIngest: a reload turns foreign learning on and off
// again (telemetry.ingest.foreign needs no restart): an application's span
// teaches the tracker only while the running config takes it.
func TestStackReloadsForeignIngest(t *testing.T) {
	t.Parallel()
	cfgText := func(foreign string) string {
		return `
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
providers:
  a: {base_url: "http://127.0.0.1:9/v1"}
targets:
  - {virtual_key: a, model_map: {m: up}}
telemetry: {ingest: {enabled: true, foreign: ` + foreign + `}}
`
	}
	s, path, _ := testStack(t, cfgText("{enabled: false}"), nil)
	postAppSpan := func() {
		t.Helper()
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "app")
		span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		span.SetName("chat up")
		span.SetKind(ptrace.SpanKindClient)
		span.SetTraceID(pcommon.TraceID{1})
		span.SetSpanID(pcommon.SpanID{1})
		end := time.Now()
		span.SetStartTimestamp(pcommon.NewTimestampFromTime(end.Add(-50 * time.Millisecond)))
		span.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
		a := span.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.system", "openai")
		a.PutStr("gen_ai.request.model", "up")
		a.PutBool("gen_ai.request.stream", false)
		a.PutStr("server.address", "127.0.0.1")
		a.PutInt("server.port", 9)
		body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		if code, answer := doRequest(t, http.MethodPost, "http://"+s.AdminAddr+"/v1/traces", string(body), "Content-Type", "application/x-protobuf"); code != 200 {
			t.Fatalf("POST /v1/traces = %d %s", code, answer)
		}
	}
	samples := func() int {
		_, n, _ := liveP50(s.Tracker, "a", "up")
		return n
	}
	reload := func(foreign string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(cfgText(foreign)), 0o600); err != nil {
			t.Fatal(err)
		}
		if changed, refused := s.reload("test"); refused != nil || !slices.Equal(changed, []string{"telemetry"}) {
			t.Fatalf("reload to foreign %s: changed %v, refused %v; want telemetry changed", foreign, changed, refused)
		}
	}

	postAppSpan()
	if n := samples(); n != 0 {
		t.Fatalf("foreign off: the application's span gave %d samples, want 0", n)
	}
	reload("{enabled: true, services: [app]}")
	postAppSpan()
	if n := samples(); n != 1 {
		t.Errorf("foreign turned on by a reload: %d samples, want 1", n)
	}
	reload("{enabled: false}")
	postAppSpan()
	if n := samples(); n != 1 {
		t.Errorf("foreign turned off again by a reload: %d samples, want still 1", n)
	}
}

// panicTransport is a bug in the request path, reached through a transport.
type panicTransport struct{}

func (panicTransport) RoundTrip(*http.Request) (*http.Response, error) { panic("a bug") }

func TestStackSurvivesAPanicAndCountsIt(t *testing.T) {
	t.Parallel()
	s, _, logs := testStack(t, `
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
providers:
  a: {base_url: "http://127.0.0.1:9/v1"}
  c: {kind: anthropic, base_url: "http://127.0.0.1:9/v1"}
targets:
  - {virtual_key: a, model_map: {m: m}}
  - {virtual_key: c, model_map: {m: m}}
`, panicTransport{})
	for range 2 {
		code, body := doRequest(t, http.MethodPost, "http://"+s.APIAddr+"/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`)
		if code != 500 || !strings.Contains(body, `"type":"api_error"`) {
			t.Errorf("answer after a panic: %d %s, want an Anthropic 500", code, body)
		}
	}
	if got := metricValue(t, s, "firstbyte_panics_total"); got != "2" {
		t.Errorf("firstbyte_panics_total = %s, want 2", got)
	}
	if len(logs.lines(`level=ERROR msg="panic serving a request"`)) != 2 {
		t.Errorf("panics not logged as errors:\n%s", strings.Join(logs.lines(""), "\n"))
	}
}

// TestReloadKeepsCountingAnswersInFlight: limits.max_buffered is
// reloadable, and the gateway a reload builds shares the running budget:
// an answer still arriving on the old gateway stays counted in
// firstbyte_response_buffered_bytes, and its bytes come back when it ends.
func TestReloadKeepsCountingAnswersInFlight(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := `{"pad":"` + strings.Repeat("x", 300<<10) + `"}`
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body[:len(body)-2])
		w.(http.Flusher).Flush()
		select {
		case <-release:
			_, _ = io.WriteString(w, body[len(body)-2:])
		case <-r.Context().Done():
		}
	}))
	defer up.Close()
	cfgText := func(maxBuffered string) string {
		return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
limits: {max_buffered: %s}
providers:
  a: {base_url: %q}
targets:
  - {virtual_key: a, model_map: {m: m}}
`, maxBuffered, up.URL+"/v1")
	}
	s, path, _ := testStack(t, cfgText("200MiB"), nil)
	const series = "firstbyte_response_buffered_bytes"
	if got := metricValue(t, s, series); got != "0" {
		t.Fatalf("%s = %s before any request, want 0", series, got)
	}
	done := make(chan int, 1)
	go func() {
		code, _ := doRequest(t, http.MethodPost, "http://"+s.APIAddr+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		done <- code
	}()
	held := func() int64 {
		var n int64
		_, _ = fmt.Sscan(metricValue(t, s, series), &n)
		return n
	}
	deadline := time.Now().Add(5 * time.Second)
	for held() < 256<<10 {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %s, waited 5s for the answer's blocks", series, metricValue(t, s, series))
		}
		time.Sleep(5 * time.Millisecond)
	}
	before := held()
	if err := os.WriteFile(path, []byte(cfgText("100MiB")), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, refused := s.reload("test"); refused != nil || !slices.Contains(changed, "limits") {
		t.Fatalf("reload changing max_buffered: changed %v, refused %v", changed, refused)
	}
	if after := held(); after != before {
		t.Errorf("after the reload %s = %d, want the old gateway's answer still counted (%d)", series, after, before)
	}
	close(release)
	if code := <-done; code != 200 {
		t.Errorf("the answer in flight across the reload: %d, want 200", code)
	}
	for deadline = time.Now().Add(5 * time.Second); held() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %d after the answer ended, want 0", series, held())
		}
	}
}

// liveP50 is what the tracker's statistics say of (target, model) now: its
// p50 and live samples, ok false when it has none.
func liveP50(tr *collector.Tracker, target, model string) (time.Duration, int, bool) {
	st := tr.StatsAt(target, model, time.Now())
	return st.P50, st.Samples, st.Samples > 0
}
