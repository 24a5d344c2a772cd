package sim

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The timeline: first byte after the TTFB; a stream's chunks Interval apart; a unary
// answer after TTFB + Chunks×Interval; an error after the TTFB only.
func TestTimelineWithInjectedSleep(t *testing.T) {
	const ttfb, iv = 150 * time.Millisecond, 15 * time.Millisecond
	rec := &sleepRecorder{}
	r := startSim(t, Provider{TTFB: Fixed(ttfb), Stream: Pace{Chunks: 3, Interval: iv}}, Options{Sleep: rec.Sleep})
	tests := []struct {
		name, path, body string
		want             []time.Duration
	}{
		{"chat unary", "/chat/completions", `{"model":"m"}`, []time.Duration{ttfb, 3 * iv}},
		{"chat stream", "/chat/completions", `{"model":"m","stream":true}`, []time.Duration{ttfb, iv, iv, iv}},
		{"responses unary", "/responses", `{"model":"m"}`, []time.Duration{ttfb, 3 * iv}},
		{"responses stream", "/responses", `{"model":"m","stream":true}`, []time.Duration{ttfb, iv, iv, iv}},
		{"messages unary", "/messages", `{"model":"m"}`, []time.Duration{ttfb, 3 * iv}},
		{"messages stream", "/messages", `{"model":"m","stream":true}`, []time.Duration{ttfb, iv, iv, iv}},
		{"embeddings", "/embeddings", `{"model":"m","input":"x"}`, []time.Duration{ttfb}},
	}
	for _, tt := range tests {
		status, body := readAll(t, post(t, context.Background(), nil, r.URL()+tt.path, tt.body))
		if status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", tt.name, status, body)
		}
		if got := rec.take(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: sleeps = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// With the real clock, nothing of the answer arrives before the TTFB.
func TestTTFBRealTime(t *testing.T) {
	const ttfb = 60 * time.Millisecond
	r := startSim(t, Provider{TTFB: Fixed(ttfb), Stream: Pace{Chunks: 2, Interval: 10 * time.Millisecond}}, Options{})
	start := time.Now()
	resp := post(t, context.Background(), nil, r.URL()+"/chat/completions", `{"model":"m","stream":true}`)
	buf := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	if first := time.Since(start); first < ttfb {
		t.Errorf("first byte after %v, want >= %v", first, ttfb)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if total := time.Since(start); total < ttfb+20*time.Millisecond {
		t.Errorf("stream ended after %v, want >= %v", total, ttfb+20*time.Millisecond)
	}
}

func TestErrorRate(t *testing.T) {
	tests := []struct {
		name       string
		errors     ErrorRate
		path, body string
		status     int
		anthropic  bool
		retryAfter string
	}{
		{"rate 1 with the default status", ErrorRate{Rate: 1}, "/chat/completions", `{"model":"m"}`, 503, false, ""},
		{"rate 1, 429 carries Retry-After", ErrorRate{Rate: 1, Status: 429}, "/chat/completions", `{"model":"m","stream":true}`, 429, false, "1"},
		{"rate 1 in Anthropic shape", ErrorRate{Rate: 1, Status: 529}, "/messages", `{"model":"m"}`, 529, true, ""},
		{"rate 1 on count_tokens", ErrorRate{Rate: 1, Status: 500}, "/messages/count_tokens", `{"model":"m"}`, 500, true, ""},
		{"rate 0 never fails", ErrorRate{Rate: 0, Status: 500}, "/chat/completions", `{"model":"m"}`, 200, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &sleepRecorder{}
			r := startSim(t, Provider{TTFB: Fixed(time.Second), Errors: tt.errors}, Options{Sleep: rec.Sleep})
			for range 20 {
				resp := post(t, context.Background(), nil, r.URL()+tt.path, tt.body)
				status, body := readAll(t, resp)
				if status != tt.status {
					t.Fatalf("status = %d, want %d: %s", status, tt.status, body)
				}
				if got := resp.Header.Get("Retry-After"); got != tt.retryAfter {
					t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
				}
				if status != 200 {
					checkErrorShape(t, body, tt.anthropic, "Simulated")
					// Errors come after the TTFB, like a real overloaded upstream's.
					if got := rec.take(); len(got) == 0 || got[0] != time.Second {
						t.Errorf("sleeps before the error = %v, want [1s]", got)
					}
				}
			}
		})
	}
}

// A 30% rate fails about 30% of requests, and a seed makes the sequence repeat.
func TestErrorRateSeeded(t *testing.T) {
	run := func() []int {
		s := NewProvider(Provider{Name: "p", Errors: ErrorRate{Rate: 0.3}}, Options{Rand: rand.New(rand.NewPCG(7, 7))})
		var statuses []int
		for range 2000 {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptest.NewRequest("POST", "/v1/embeddings", strings.NewReader(`{"model":"m","input":"x"}`)))
			statuses = append(statuses, w.Code)
		}
		return statuses
	}
	a, b := run(), run()
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs with the same seed differ")
	}
	failed := 0
	for _, s := range a {
		if s == 503 {
			failed++
		}
	}
	if frac := float64(failed) / float64(len(a)); frac < 0.27 || frac > 0.33 {
		t.Errorf("failed share = %.3f, want 0.30 ± 0.03", frac)
	}
}

// From 60 s on (on the injected clock) the phase's TTFB and errors apply; blocks the
// phase leaves out keep the previous values.
func TestPhasesSwitchOnInjectedClock(t *testing.T) {
	clock := newFakeClock()
	rec := &sleepRecorder{}
	p := Provider{
		TTFB:   Fixed(150 * time.Millisecond),
		Stream: Pace{Chunks: 2, Interval: 5 * time.Millisecond},
		Phases: []Phase{
			{After: 60 * time.Second, TTFB: &Dist{Median: 2 * time.Second}, Errors: &ErrorRate{Rate: 1, Status: 503}},
			{After: 120 * time.Second, Errors: &ErrorRate{}},
		},
	}
	r := startSim(t, p, Options{Now: clock.Now, Sleep: rec.Sleep})
	ask := func() int {
		status, _ := readAll(t, post(t, context.Background(), nil, r.URL()+"/chat/completions", `{"model":"m"}`))
		return status
	}
	steps := []struct {
		advance time.Duration
		status  int
		sleeps  []time.Duration
	}{
		{0, 200, []time.Duration{150 * time.Millisecond, 10 * time.Millisecond}},
		{59 * time.Second, 200, []time.Duration{150 * time.Millisecond, 10 * time.Millisecond}},
		{time.Second, 503, []time.Duration{2 * time.Second}},
		{59 * time.Second, 503, []time.Duration{2 * time.Second}},
		{time.Second, 200, []time.Duration{2 * time.Second, 10 * time.Millisecond}},
	}
	elapsed := time.Duration(0)
	for _, st := range steps {
		clock.Advance(st.advance)
		elapsed += st.advance
		if got := ask(); got != st.status {
			t.Errorf("at %v: status = %d, want %d", elapsed, got, st.status)
		}
		if got := rec.take(); !reflect.DeepEqual(got, st.sleeps) {
			t.Errorf("at %v: sleeps = %v, want %v", elapsed, got, st.sleeps)
		}
	}
}

// cut_after: the stream gets its first byte and N chunks, then the connection breaks
// without the stream's end; a unary request gets no answer at all.
func TestCutAfter(t *testing.T) {
	r := startSim(t, Provider{Stream: Pace{Chunks: 8}, CutAfter: 2}, Options{})
	tests := []struct {
		path, body string
		wantEvents int // events before the break
		forbidden  string
	}{
		{"/chat/completions", `{"model":"m","stream":true}`, 1 + 2, "[DONE]"},
		{"/messages", `{"model":"m","stream":true}`, 3 + 2, "message_stop"},
		{"/responses", `{"model":"m","stream":true}`, 4 + 2, "response.completed"},
	}
	for _, tt := range tests {
		resp := post(t, context.Background(), nil, r.URL()+tt.path, tt.body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", tt.path, resp.StatusCode)
		}
		events, err := readSSE(resp.Body)
		resp.Body.Close()
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: stream ended with %v, want %v", tt.path, err, io.ErrUnexpectedEOF)
		}
		if len(events) != tt.wantEvents {
			t.Errorf("%s: %d events before the cut, want %d: %v", tt.path, len(events), tt.wantEvents, eventNames(events))
		}
		for _, e := range events {
			if e.name == tt.forbidden || e.data == tt.forbidden {
				t.Errorf("%s: stream has its end %q despite the cut", tt.path, tt.forbidden)
			}
		}
	}
	req, _ := http.NewRequest("POST", r.URL()+"/chat/completions", strings.NewReader(`{"model":"m"}`))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Errorf("unary with cut_after: got %d %s, want a transport error", resp.StatusCode, body)
	}
}

// CutAfter beyond Chunks cuts after the last chunk, before the stream's end.
func TestCutAfterBeyondChunks(t *testing.T) {
	r := startSim(t, Provider{Stream: Pace{Chunks: 2}, CutAfter: 10}, Options{})
	resp := post(t, context.Background(), nil, r.URL()+"/chat/completions", `{"model":"m","stream":true}`)
	events, err := readSSE(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(events) != 3 {
		t.Errorf("got %d events and %v, want 3 and %v", len(events), err, io.ErrUnexpectedEOF)
	}
}

func TestStatusBody(t *testing.T) {
	const custom = `{"error":{"message":"bad schema","type":"invalid_request_error","code":"x"}}`
	rec := &sleepRecorder{}
	fixed := startSim(t, Provider{TTFB: Fixed(3), StatusBody: &StatusBody{Status: 422, Body: custom}}, Options{Sleep: rec.Sleep})
	status, body := readAll(t, post(t, context.Background(), nil, fixed.URL()+"/chat/completions", `{"model":"m","stream":true}`))
	if status != 422 || string(body) != custom {
		t.Errorf("fixed answer = %d %s, want 422 %s", status, body, custom)
	}
	if got := rec.take(); !reflect.DeepEqual(got, []time.Duration{3}) {
		t.Errorf("sleeps = %v, want the TTFB only", got)
	}

	shaped := startSim(t, Provider{StatusBody: &StatusBody{Status: 403}}, Options{})
	status, body = readAll(t, post(t, context.Background(), nil, shaped.URL()+"/messages", `{"model":"m"}`))
	if status != 403 {
		t.Errorf("status = %d, want 403", status)
	}
	checkErrorShape(t, body, true, "Fixed 403")
	if e := decode[anthropicErrorBody](t, body); e.Error.Type != "permission_error" {
		t.Errorf("Anthropic 403 type = %q, want permission_error", e.Error.Type)
	}
}

func TestContextOverflow(t *testing.T) {
	r := startSim(t, Provider{ContextOverflow: true}, Options{})

	status, body := readAll(t, post(t, context.Background(), nil, r.URL()+"/chat/completions", `{"model":"m","messages":[]}`))
	e := decode[openAIErrorBody](t, body)
	if status != 400 || e.Error.Code == nil || *e.Error.Code != "context_length_exceeded" ||
		e.Error.Type != "invalid_request_error" || e.Error.Param == nil || *e.Error.Param != "messages" ||
		!strings.HasPrefix(e.Error.Message, "This model's maximum context length is") {
		t.Errorf("OpenAI overflow = %d %s", status, body)
	}

	status, body = readAll(t, post(t, context.Background(), nil, r.URL()+"/messages", `{"model":"m","stream":true}`))
	a := decode[anthropicErrorBody](t, body)
	if status != 400 || a.Type != "error" || a.Error.Type != "invalid_request_error" || !strings.HasPrefix(a.Error.Message, "prompt is too long: ") {
		t.Errorf("Anthropic overflow = %d %s", status, body)
	}

	// Not a generation endpoint: unaffected.
	if status, body := readAll(t, post(t, context.Background(), nil, r.URL()+"/messages/count_tokens", `{"model":"m"}`)); status != 200 {
		t.Errorf("count_tokens = %d %s, want 200", status, body)
	}
}

func TestRecordsRequests(t *testing.T) {
	r := startSim(t, Provider{}, Options{})
	if h, b := r.LastRequest(); h != nil || b != nil {
		t.Errorf("LastRequest before any = %v, %q, want nils", h, b)
	}
	req, _ := http.NewRequest("POST", r.URL()+"/chat/completions", strings.NewReader(`{"model":"a"}`))
	req.Header.Set("Authorization", "Bearer sk-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	readAll(t, post(t, context.Background(), nil, r.URL()+"/messages", `{"model":"b"}`))
	readAll(t, post(t, context.Background(), nil, r.URL()+"/messages", `{"model":"c"}`))

	if got := r.Requests(); got != 3 {
		t.Errorf("Requests() = %d, want 3", got)
	}
	for path, want := range map[string]int64{"/v1/chat/completions": 1, "/v1/messages": 2, "/v1/embeddings": 0} {
		if got := r.RequestsFor(path); got != want {
			t.Errorf("RequestsFor(%s) = %d, want %d", path, got, want)
		}
	}
	h, b := r.LastRequest()
	if string(b) != `{"model":"c"}` || h.Get("Content-Type") != "application/json" || h.Get("Authorization") != "" {
		t.Errorf("LastRequest() = %v, %s", h, b)
	}
	b[0] = 'X' // a copy: the caller may scribble on it
	if _, again := r.LastRequest(); again[0] != '{' {
		t.Error("LastRequest returned the recorded body itself, not a copy")
	}
}

// A client that goes away stops the handler at once, whether it is waiting for the
// first byte or between chunks, and nothing is left running afterwards.
func TestClientDisconnectStopsHandler(t *testing.T) {
	tests := []struct {
		name string
		p    Provider
		body string
	}{
		{"waiting for the first byte", Provider{TTFB: Fixed(time.Hour)}, `{"model":"m"}`},
		{"between chunks", Provider{Stream: Pace{Chunks: 3, Interval: time.Hour}}, `{"model":"m","stream":true}`},
		{"generating a unary answer", Provider{Stream: Pace{Chunks: 3, Interval: time.Hour}}, `{"model":"m"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			r, err := StartProvider(Provider{Name: "slow", TTFB: tt.p.TTFB, Stream: tt.p.Stream}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			tr := &http.Transport{}
			client := &http.Client{Transport: tr}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				req, _ := http.NewRequestWithContext(ctx, "POST", r.URL()+"/chat/completions", strings.NewReader(tt.body))
				if resp, err := client.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			waitFor(t, "the handler to start", func() bool { return r.InFlight() == 1 })
			time.Sleep(20 * time.Millisecond) // let it reach its long wait
			cancel()
			<-done
			idle, stop := context.WithTimeout(context.Background(), 2*time.Second)
			defer stop()
			if err := r.WaitIdle(idle); err != nil {
				t.Fatalf("handler still running 2s after the client left (InFlight %d)", r.InFlight())
			}
			if err := r.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			tr.CloseIdleConnections()
			waitFor(t, "goroutines to return to their number before the test", func() bool {
				return runtime.NumGoroutine() <= before
			})
		})
	}
}

// Close cancels handlers that are still waiting and returns after they have.
func TestCloseStopsInFlightHandlers(t *testing.T) {
	r, err := StartProvider(Provider{Name: "slow", TTFB: Fixed(time.Hour)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		req, _ := http.NewRequest("POST", r.URL()+"/messages", strings.NewReader(`{"model":"m"}`))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, "the handler to start", func() bool { return r.InFlight() == 1 })
	start := time.Now()
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if r.InFlight() != 0 || time.Since(start) > time.Second {
		t.Errorf("Close returned after %v with %d in flight, want at once with 0", time.Since(start), r.InFlight())
	}
}

func TestStartProviderRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		if r, err := StartProvider(Provider{Name: "p", Listen: addr}, Options{}); err == nil {
			r.Close()
			t.Errorf("StartProvider(listen %q) succeeded, want a refusal", addr)
		} else if !strings.Contains(err.Error(), "loopback") {
			t.Errorf("StartProvider(listen %q) = %v, want it to say loopback", addr, err)
		}
	}
}

func TestStartCluster(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
seed: 5
providers:
  - name: one
    ttfb: {median: 0s}
  - name: two
    ttfb: {median: 0s}
    errors: {rate: 1, status: 502}
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, name := range []string{"one", "two"} {
		if u := c.URL(name); !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/v1") {
			t.Errorf("URL(%s) = %q, want http://127.0.0.1:PORT/v1", name, u)
		}
	}
	if c.URL("three") != "" || c.Provider("three") != nil {
		t.Error("unknown provider has a URL")
	}
	resp := post(t, context.Background(), nil, c.URL("one")+"/chat/completions", `{"model":"m"}`)
	if status, _ := readAll(t, resp); status != 200 || resp.Header.Get(HeaderProvider) != "one" {
		t.Errorf("one answered %d from %q", status, resp.Header.Get(HeaderProvider))
	}
	if got := c.Provider("two").Requests(); got != 0 {
		t.Errorf("two received %d requests, want none", got)
	}
	resp = post(t, context.Background(), nil, c.URL("two")+"/chat/completions", `{"model":"m"}`)
	if status, _ := readAll(t, resp); status != 502 || resp.Header.Get(HeaderProvider) != "two" {
		t.Errorf("two answered %d from %q, want 502 from two", status, resp.Header.Get(HeaderProvider))
	}
	if got := len(c.Providers()); got != 2 {
		t.Errorf("Providers() has %d, want 2", got)
	}
}

// Start refuses an invalid config and closes what it already started when a later
// provider cannot listen.
func TestStartFailures(t *testing.T) {
	if _, err := Start(context.Background(), &Config{}); err == nil {
		t.Error("Start(empty config) succeeded")
	}
	taken := startSim(t, Provider{Name: "taken"}, Options{})
	cfg := &Config{Providers: []Provider{{Name: "first"}, {Name: "second", Listen: taken.Addr()}}}
	if c, err := Start(context.Background(), cfg); err == nil {
		c.Close()
		t.Errorf("Start with a port in use succeeded")
	}
}

func TestRun(t *testing.T) {
	cfg := &Config{Seed: 1, Providers: []Provider{
		{Name: "a", TTFB: Fixed(0)},
		{Name: "b", TTFB: Dist{Median: 20 * time.Millisecond, Spread: 0.2}, Errors: ErrorRate{Rate: 0.1}},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	out := &lockedBuffer{}
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, cfg, out) }()
	waitFor(t, "Run to list both providers", func() bool { return strings.Count(out.String(), "\n") == 2 })

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	url := strings.Fields(lines[0])[1]
	if !strings.HasPrefix(lines[0], "a ") || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(lines[1], "10% errors (503)") {
		t.Errorf("Run printed\n%s", out.String())
	}
	status, _ := readAll(t, post(t, context.Background(), nil, url+"/chat/completions", `{"model":"m"}`))
	if status != 200 {
		t.Errorf("provider a answered %d", status)
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	if _, err := http.Get(url + "/models"); err == nil {
		t.Error("provider still answers after Run returned")
	}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls cond for up to 3 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
