package sim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Providers as they really fail: a revoked key's 401 and a rate limit's 429, with
// the bodies and headers real providers send.

// serve sends one POST to s in process and returns the recorded answer.
func serve(s *Server, path, body string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return w
}

// A revoked key: every request gets 401 with the error body each API really sends.
func TestRevokedKeyAnswersAsEachAPIDoes(t *testing.T) {
	const (
		openAI = `{"error":{"message":"Incorrect API key provided: sim-****. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
		claude = `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`
	)
	tests := []struct {
		name     string
		provider Provider
		path     string
		want     string
		sleeps   []time.Duration
	}{
		{"errors rate 1, OpenAI chat", Provider{Errors: ErrorRate{Rate: 1, Status: 401, After: 5 * time.Millisecond}},
			"/v1/chat/completions", openAI, []time.Duration{5 * time.Millisecond}},
		{"errors rate 1, OpenAI responses", Provider{Errors: ErrorRate{Rate: 1, Status: 401, After: 5 * time.Millisecond}},
			"/v1/responses", openAI, []time.Duration{5 * time.Millisecond}},
		{"errors rate 1, Anthropic messages", Provider{Errors: ErrorRate{Rate: 1, Status: 401, After: 5 * time.Millisecond}},
			"/v1/messages", claude, []time.Duration{5 * time.Millisecond}},
		{"status_body 401, OpenAI", Provider{TTFB: Fixed(7 * time.Millisecond), StatusBody: &StatusBody{Status: 401}},
			"/v1/chat/completions", openAI, []time.Duration{7 * time.Millisecond}},
		{"status_body 401, Anthropic", Provider{TTFB: Fixed(7 * time.Millisecond), StatusBody: &StatusBody{Status: 401}},
			"/v1/messages", claude, []time.Duration{7 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &sleepRecorder{}
			tt.provider.Name = "revoked"
			s := NewProvider(tt.provider, Options{Sleep: rec.Sleep})
			for range 3 {
				w := serve(s, tt.path, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
				if w.Code != http.StatusUnauthorized || w.Body.String() != tt.want {
					t.Errorf("answer = %d %s\nwant 401 %s", w.Code, w.Body, tt.want)
				}
				if ct := w.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q, want application/json", ct)
				}
				if got := rec.take(); !reflect.DeepEqual(got, tt.sleeps) {
					t.Errorf("sleeps = %v, want %v", got, tt.sleeps)
				}
			}
		})
	}
}

// step is one request of a rate limit's timeline: the clock moves by advance, then
// a request goes to path; the answer has status and exactly the headers in want
// (a header not in want must be absent).
type step struct {
	advance time.Duration
	path    string
	body    string
	status  int
	want    map[string]string
}

// rateHeaders are every header a rate limit may set: a step's want lists the ones
// it must carry; the others must be absent.
var rateHeaders = []string{
	"Retry-After", "Retry-After-Ms",
	"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests",
	"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens",
	"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset",
	"Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset",
}

// openAIRequests are the headers of an OpenAI request limit.
func openAIRequests(limit, remaining, reset string) map[string]string {
	return map[string]string{"X-Ratelimit-Limit-Requests": limit, "X-Ratelimit-Remaining-Requests": remaining, "X-Ratelimit-Reset-Requests": reset}
}

// with adds kv pairs to m (a copy).
func with(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// The clock starts at 03:04:05.170, 830 ms before a whole second: the windows of 1s
// turn at 03:04:06, 03:04:07, ...
func TestRateLimitHeadersAndRefusals(t *testing.T) {
	const chat, msgs = "/v1/chat/completions", "/v1/messages"
	const body = `{"model":"m"}`
	// 29 bytes: 7 prompt tokens, plus the 50 it asks for at most.
	const tokens50 = `{"model":"m","max_tokens":50}`
	tests := []struct {
		name  string
		limit RateLimit
		steps []step
	}{
		{"requests, OpenAI: remaining counts down, the fourth is refused until the window turns",
			RateLimit{Requests: 3, RetryAfter: 2 * time.Second, After: 5 * time.Millisecond}, []step{
				{0, chat, body, 200, openAIRequests("3", "2", "830ms")},
				{100 * time.Millisecond, chat, body, 200, openAIRequests("3", "1", "730ms")},
				{0, chat, body, 200, openAIRequests("3", "0", "730ms")},
				{0, chat, body, 429, with(openAIRequests("3", "0", "730ms"), "Retry-After", "2", "Retry-After-Ms", "2000")},
				{729 * time.Millisecond, chat, body, 429, with(openAIRequests("3", "0", "1ms"), "Retry-After", "2", "Retry-After-Ms", "2000")},
				{time.Millisecond, chat, body, 200, openAIRequests("3", "2", "1s")},
				{1500 * time.Millisecond, "/v1/embeddings", `{"model":"m","input":"x"}`, 200, openAIRequests("3", "2", "500ms")},
			}},
		{"requests, no retry_after: wait until the window turns",
			RateLimit{Requests: 1}, []step{
				{0, chat, body, 200, openAIRequests("1", "0", "830ms")},
				{400*time.Millisecond + 1, chat, body, 429, with(openAIRequests("1", "0", "430ms"), "Retry-After", "1", "Retry-After-Ms", "430")},
			}},
		{"requests, Anthropic: an RFC 3339 reset, Retry-After only",
			RateLimit{Requests: 2, RetryAfter: 2 * time.Second}, []step{
				{0, msgs, body, 200, map[string]string{"Anthropic-Ratelimit-Requests-Limit": "2", "Anthropic-Ratelimit-Requests-Remaining": "1", "Anthropic-Ratelimit-Requests-Reset": "2026-01-02T03:04:06Z"}},
				{0, "/v1/messages/count_tokens", body, 200, map[string]string{"Anthropic-Ratelimit-Requests-Limit": "2", "Anthropic-Ratelimit-Requests-Remaining": "0", "Anthropic-Ratelimit-Requests-Reset": "2026-01-02T03:04:06Z"}},
				{0, msgs, body, 429, map[string]string{"Anthropic-Ratelimit-Requests-Limit": "2", "Anthropic-Ratelimit-Requests-Remaining": "0", "Anthropic-Ratelimit-Requests-Reset": "2026-01-02T03:04:06Z", "Retry-After": "2"}},
			}},
		{"tokens: the prompt and the output asked for; a request that does not fit is refused, a smaller one fits",
			RateLimit{Tokens: 100}, []step{
				{0, chat, tokens50, 200, map[string]string{"X-Ratelimit-Limit-Tokens": "100", "X-Ratelimit-Remaining-Tokens": "43", "X-Ratelimit-Reset-Tokens": "830ms"}},
				{0, chat, tokens50, 429, map[string]string{"X-Ratelimit-Limit-Tokens": "100", "X-Ratelimit-Remaining-Tokens": "43", "X-Ratelimit-Reset-Tokens": "830ms", "Retry-After": "1", "Retry-After-Ms": "830"}},
				{0, chat, body, 200, map[string]string{"X-Ratelimit-Limit-Tokens": "100", "X-Ratelimit-Remaining-Tokens": "40", "X-Ratelimit-Reset-Tokens": "830ms"}},
			}},
		{"both limits, a minute's window",
			RateLimit{Requests: 5, Tokens: 1000, Window: time.Minute}, []step{
				{0, chat, body, 200, map[string]string{"X-Ratelimit-Limit-Requests": "5", "X-Ratelimit-Remaining-Requests": "4", "X-Ratelimit-Reset-Requests": "54.83s",
					"X-Ratelimit-Limit-Tokens": "1000", "X-Ratelimit-Remaining-Tokens": "997", "X-Ratelimit-Reset-Tokens": "54.83s"}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			clock.Advance(170 * time.Millisecond)
			rec := &sleepRecorder{}
			limit := tt.limit
			s := NewProvider(Provider{Name: "limited", RateLimit: &limit}, Options{Now: clock.Now, Sleep: rec.Sleep})
			for i, st := range tt.steps {
				clock.Advance(st.advance)
				w := serve(s, st.path, st.body)
				if w.Code != st.status {
					t.Fatalf("step %d: status %d, want %d: %s", i, w.Code, st.status, w.Body)
				}
				for _, k := range rateHeaders {
					if got, want := w.Header().Get(k), st.want[k]; got != want {
						t.Errorf("step %d (%d): %s = %q, want %q", i, w.Code, k, got, want)
					}
				}
				sleeps := rec.take()
				if st.status == 429 {
					if want := []time.Duration{limit.After}; !reflect.DeepEqual(sleeps, want) {
						t.Errorf("step %d: sleeps before the refusal = %v, want %v", i, sleeps, want)
					}
				}
			}
		})
	}
}

// A refusal's body is the real APIs' rate-limit error: OpenAI names the limit that
// refused in its type, Anthropic answers rate_limit_error.
func TestRateLimitRefusalBodies(t *testing.T) {
	tests := []struct {
		name       string
		limit      RateLimit
		path, body string
		check      func(t *testing.T, body []byte)
	}{
		{"OpenAI, requests", RateLimit{Requests: 1, RetryAfter: 2 * time.Second}, "/v1/chat/completions", `{"model":"gpt-x"}`, func(t *testing.T, b []byte) {
			e := decode[openAIErrorBody](t, b).Error
			want := "Rate limit reached for gpt-x in organization org-sim on requests per 1s: Limit 1, Used 1, Requested 1. Please try again in 2s. Visit https://platform.openai.com/account/rate-limits to learn more."
			if e.Type != "requests" || e.Code == nil || *e.Code != "rate_limit_exceeded" || e.Message != want {
				t.Errorf("error = %s", pretty(b))
			}
		}},
		{"OpenAI, tokens", RateLimit{Tokens: 20}, "/v1/chat/completions", `{"model":"gpt-x","max_tokens":5}`, func(t *testing.T, b []byte) {
			e := decode[openAIErrorBody](t, b).Error
			if e.Type != "tokens" || !strings.Contains(e.Message, "on tokens per 1s: Limit 20, Used 13, Requested 13.") {
				t.Errorf("error = %s", pretty(b))
			}
		}},
		{"Anthropic", RateLimit{Requests: 1}, "/v1/messages", `{"model":"claude-x"}`, func(t *testing.T, b []byte) {
			e := decode[anthropicErrorBody](t, b)
			if e.Type != "error" || e.Error.Type != "rate_limit_error" ||
				!strings.HasPrefix(e.Error.Message, "This request would exceed your organization's rate limit of 1 requests per 1s.") {
				t.Errorf("error = %s", pretty(b))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			s := NewProvider(Provider{Name: "limited", RateLimit: &tt.limit}, Options{Now: clock.Now, Sleep: (&sleepRecorder{}).Sleep})
			if w := serve(s, tt.path, tt.body); w.Code != 200 {
				t.Fatalf("first request: %d %s", w.Code, w.Body)
			}
			w := serve(s, tt.path, tt.body)
			if w.Code != 429 {
				t.Fatalf("second request: %d, want 429: %s", w.Code, w.Body)
			}
			tt.check(t, w.Body.Bytes())
		})
	}
}

// Through a real listener, with the real clock: the limit holds under concurrent
// requests (no more than Requests succeed in one window), and a refused request
// is not counted.
func TestRateLimitConcurrent(t *testing.T) {
	// A window of a minute, so the whole burst falls in one or two windows.
	r := startSim(t, Provider{RateLimit: &RateLimit{Requests: 10, Window: time.Minute}}, Options{})
	statuses := make(chan int, 40)
	for range 40 {
		go func() {
			resp := post(t, context.Background(), nil, r.URL()+"/chat/completions", `{"model":"m"}`)
			status, _ := readAll(t, resp)
			statuses <- status
		}()
	}
	ok := 0
	for range 40 {
		if <-statuses == 200 {
			ok++
		}
	}
	// 10, or up to 20 when the burst straddles a minute's turn.
	if ok < 10 || ok > 20 {
		t.Errorf("%d of 40 concurrent requests served under a limit of 10 a window, want 10 (20 across a turn)", ok)
	}
}

func TestResetDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{time.Second, "1s"},
		{830 * time.Millisecond, "830ms"},
		{829*time.Millisecond + 1, "830ms"}, // rounded up: never before the turn
		{time.Nanosecond, "1ms"},
		{1500 * time.Millisecond, "1.5s"},
		{6 * time.Minute, "6m0s"},
	}
	for _, tt := range tests {
		if got := resetDuration(tt.d); got != tt.want {
			t.Errorf("resetDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
