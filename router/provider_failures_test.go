package router_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/routingview"
)

// Providers as they really fail: a revoked key, an account out of quota,
// rate limits, the last failure's own answer, and no blackout of the
// gateway's own making. Each test runs real upstreams on loopback and the
// gateway on an injected clock.

// failingGateway is a gateway over targets on clock, served on loopback.
func failingGateway(t *testing.T, mode string, clock *router.FakeClock, targets ...target) *httptest.Server {
	t.Helper()
	gw := newGatewayWith(t, mode, "", router.Options{Now: clock.Now, Rand: &scriptRand{}}, targets...)
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// debugTarget is the named target's row of /debug/routing.
func debugTarget(t *testing.T, gw *router.Gateway, name string) routingview.Target {
	t.Helper()
	for _, m := range gw.Routing() {
		for _, tr := range m.Targets {
			if tr.Target == name {
				return tr
			}
		}
	}
	t.Fatalf("no target %s in the routing view", name)
	return routingview.Target{}
}

func TestRevokedKeyDisablesTheTargetNotTheModel(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	bad := newUpstream(t, jsonAnswer(401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`))
	good := newUpstream(t, apiAnswer)
	gw := newGatewayWith(t, "fallback", "", router.Options{Now: clock.Now}, target{name: "bad", url: bad.URL}, target{name: "good", url: good.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	for i := range 40 {
		resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
		if resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "good" {
			t.Fatalf("request %d: %d from %s, want 200 from good", i, resp.StatusCode, resp.Header.Get(router.HeaderTarget))
		}
	}
	if n := bad.hits.Load(); n != 1 {
		t.Fatalf("the revoked key was tried %d times in 40 requests, want once", n)
	}
	if d := debugTarget(t, gw, "bad"); d.Disabled != "auth" {
		t.Fatalf("routing view: disabled %q, want auth", d.Disabled)
	}

	// One probe every interval, the interval doubling: 30s, then 60s.
	for _, step := range []struct {
		advance time.Duration
		hits    int64
	}{{29 * time.Second, 1}, {time.Second, 2}, {30 * time.Second, 2}, {30 * time.Second, 3}} {
		clock.Advance(step.advance)
		for range 5 {
			if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 200 {
				t.Fatalf("a probe cost a client its answer: %d", resp.StatusCode)
			}
		}
		if n := bad.hits.Load(); n != step.hits {
			t.Fatalf("after %v more: the revoked key tried %d times, want %d", step.advance, n, step.hits)
		}
	}

	// The key is fixed: the next probe succeeds and the target is back.
	bad.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bad.hits.Add(1)
		apiAnswer(w, r)
	})
	clock.Advance(2 * time.Minute)
	resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
	if resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "bad" || resp.Header.Get(router.HeaderSelection) != "explore" {
		t.Fatalf("probe: %d from %s (%s), want 200 from bad (explore)", resp.StatusCode, resp.Header.Get(router.HeaderTarget), resp.Header.Get(router.HeaderSelection))
	}
	if d := debugTarget(t, gw, "bad"); d.Disabled != "" {
		t.Fatalf("after a successful probe the target is still disabled (%s)", d.Disabled)
	}
	if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.Header.Get(router.HeaderTarget) != "bad" {
		t.Fatalf("enabled again, the first-declared target should lead fallback; got %s", resp.Header.Get(router.HeaderTarget))
	}
}

func TestExhaustedQuotaDisablesTheTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		body   string
	}{
		{"OpenAI insufficient_quota", 429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`},
		{"Anthropic credit balance", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`},
		{"402", 402, `{"error":{"message":"payment required"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := router.NewFakeClock()
			broke := newUpstream(t, jsonAnswer(tc.status, tc.body))
			good := newUpstream(t, apiAnswer)
			gw := newGatewayWith(t, "fallback", "", router.Options{Now: clock.Now}, target{name: "broke", url: broke.URL}, target{name: "good", url: good.URL})
			srv := httptest.NewServer(gw.Handler())
			defer srv.Close()
			for range 10 {
				if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 200 {
					t.Fatalf("status %d, want 200 from good", resp.StatusCode)
				}
			}
			if n := broke.hits.Load(); n != 1 {
				t.Fatalf("tried %d times, want once", n)
			}
			if d := debugTarget(t, gw, "broke"); d.Disabled != "quota" || d.RateLimitedUntil != 0 {
				t.Fatalf("routing view: disabled %q, rate limited until %v; want quota, not cooled", d.Disabled, d.RateLimitedUntil)
			}
		})
	}
}

func TestRetryAfterCoolsTheTargetAndLongerExtends(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	retryAfter := "2"
	limited := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", retryAfter)
		jsonAnswer(429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)(w, r)
	})
	good := newUpstream(t, apiAnswer)
	srv := failingGateway(t, "fallback", clock, target{name: "limited", url: limited.URL}, target{name: "good", url: good.URL})

	if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 200 || resp.Header.Get(router.HeaderAttempts) != "2" {
		t.Fatalf("first request: %d after %s attempts, want 200 after 2", resp.StatusCode, resp.Header.Get(router.HeaderAttempts))
	}
	for _, step := range []struct {
		advance time.Duration
		hits    int64
	}{{0, 1}, {1900 * time.Millisecond, 1}, {100 * time.Millisecond, 2}} {
		clock.Advance(step.advance)
		resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if n := limited.hits.Load(); n != step.hits {
			t.Fatalf("after %v more: the limited target tried %d times, want %d", step.advance, n, step.hits)
		}
	}
	// Now cooled for 2s again; a refusal saying 10s extends it, then one
	// saying 1s does not shorten it.
	retryAfter = "10"
	clock.Advance(2 * time.Second)
	post(t, srv.URL, "/v1/chat/completions", chatBody)
	retryAfter = "1"
	clock.Advance(9 * time.Second)
	post(t, srv.URL, "/v1/chat/completions", chatBody)
	if n := limited.hits.Load(); n != 3 {
		t.Fatalf("a 10s Retry-After was not honoured: %d tries, want 3", n)
	}
}

func TestEveryTargetCooledGives429WithTheEarliestRetryAfter(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.Header().Set("X-Ratelimit-Remaining-Requests", "0")
		jsonAnswer(429, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)(w, r)
	})
	b := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After-Ms", "12000")
		jsonAnswer(429, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`)(w, r)
	})
	srv := failingGateway(t, "fallback", clock, target{name: "a", url: a.URL}, target{name: "b", url: b.URL})

	// The last failure reaches the client as it was, attempts beside it.
	resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
	body := readAll(t, resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After-Ms") != "12000" {
		t.Fatalf("first: %d, retry-after-ms %q; want b's own 429 with its header", resp.StatusCode, resp.Header.Get("Retry-After-Ms"))
	}
	var e struct {
		Error struct {
			Message  string `json:"message"`
			Code     string `json:"code"`
			Attempts []struct {
				Target string `json:"target"`
			} `json:"firstbyte_attempts"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if e.Error.Message != "slow down" || e.Error.Code != "rate_limit_exceeded" || len(e.Error.Attempts) != 2 {
		t.Fatalf("error = %+v, want b's own message and code with both attempts beside them", e.Error)
	}

	clock.Advance(3 * time.Second)
	resp = post(t, srv.URL, "/v1/chat/completions", chatBody)
	body = readAll(t, resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "4" || resp.Header.Get(router.HeaderAttempts) != "0" || resp.Header.Get(router.HeaderSkipped) != "a,b" {
		t.Fatalf("all cooled: %d, Retry-After %q, attempts %q, skipped %q; want 429, 4 (a's, the earliest), 0, a,b: %s",
			resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get(router.HeaderAttempts), resp.Header.Get(router.HeaderSkipped), body)
	}
	if a.hits.Load() != 1 || b.hits.Load() != 1 {
		t.Fatalf("cooled targets were tried: a %d, b %d", a.hits.Load(), b.hits.Load())
	}
	// Anthropic clients get the same, in their shape.
	resp = post(t, srv.URL, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	if body := readAll(t, resp.Body); resp.StatusCode != 429 || !strings.Contains(body, `"type":"rate_limit_error"`) {
		t.Fatalf("Anthropic client: %d %s", resp.StatusCode, body)
	}
}

func TestSuccessThatSpentItsLimitCoolsUntilReset(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Ratelimit-Remaining-Requests", "0")
		w.Header().Set("X-Ratelimit-Reset-Requests", "6s")
		apiAnswer(w, r)
	})
	b := newUpstream(t, apiAnswer)
	srv := failingGateway(t, "fallback", clock, target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
	for i, want := range []string{"a", "b", "b"} {
		if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.Header.Get(router.HeaderTarget) != want {
			t.Fatalf("request %d served by %s, want %s", i, resp.Header.Get(router.HeaderTarget), want)
		}
	}
	clock.Advance(6 * time.Second)
	if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.Header.Get(router.HeaderTarget) != "a" {
		t.Fatalf("after the reset: served by %s, want a", resp.Header.Get(router.HeaderTarget))
	}
}

func TestLastFailureKeepsItsMeaningInTheClientsFormat(t *testing.T) {
	t.Parallel()
	overflow := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/messages") {
			jsonAnswer(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`)(w, r)
			return
		}
		jsonAnswer(400, `{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)(w, r)
	})
	gw := newGateway(t, "fallback", "", target{name: "small", url: overflow.URL})
	resp := post(t, gw.URL, "/v1/chat/completions", chatBody)
	body := readAll(t, resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(body, `"code":"context_length_exceeded"`) || !strings.Contains(body, `"firstbyte_attempts":[{"target":"small"`) {
		t.Fatalf("OpenAI client: %d %s; want the provider's 400 context_length_exceeded with the attempts beside it", resp.StatusCode, body)
	}
	resp = post(t, gw.URL, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	body = readAll(t, resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(body, `"type":"invalid_request_error"`) || !strings.Contains(body, "maximum context length") {
		t.Fatalf("Anthropic client: %d %s; want the overflow in Anthropic's shape", resp.StatusCode, body)
	}
}

func TestNoBlackoutWhenEveryCircuitIsOpen(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	healthy := false
	handle := func(w http.ResponseWriter, r *http.Request) {
		if healthy {
			apiAnswer(w, r)
			return
		}
		jsonAnswer(503, `{"error":{"message":"down","type":"server_error"}}`)(w, r)
	}
	a, b := newUpstream(t, handle), newUpstream(t, handle)
	gw := breakerOne(t, clock, a.URL, b.URL)
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 503 {
		t.Fatalf("both down: %d, want the last failure's 503", resp.StatusCode)
	}
	// Both circuits are open now: a request is still tried on the one that
	// will answer first, never refused without an attempt.
	clock.Advance(time.Second)
	resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
	if resp.Header.Get(router.HeaderAttempts) != "1" || resp.StatusCode != 503 {
		t.Fatalf("every circuit open: %d after %s attempts, want one attempt (503 from it)", resp.StatusCode, resp.Header.Get(router.HeaderAttempts))
	}
	healthy = true
	clock.Advance(time.Second)
	resp = post(t, srv.URL, "/v1/chat/completions", chatBody)
	if resp.StatusCode != 200 {
		t.Fatalf("the outage ended: %d, want the first request served", resp.StatusCode)
	}
	// The blackout try was served: the outage is over, and the other
	// target's circuit ends its cooldown (28 s early) for real traffic to
	// probe, rather than leave every request on the one that answered.
	served := resp.Header.Get(router.HeaderTarget)
	for _, tr := range gw.Routing()[0].Targets {
		want := "half_open"
		if tr.Target == served {
			want = "closed"
		}
		if tr.Circuit != want {
			t.Errorf("after the blackout try on %s was served: %s's circuit %s, want %s", served, tr.Target, tr.Circuit, want)
		}
	}
	if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 200 || resp.Header.Get(router.HeaderAttempts) != "1" {
		t.Fatalf("after recovery: %d after %s attempts; want 200 at once", resp.StatusCode, resp.Header.Get(router.HeaderAttempts))
	}
}

// breakerOne is a fallback gateway over a and b whose breakers open after
// one fault, for 30s, on clock.
func breakerOne(t *testing.T, clock *router.FakeClock, a, b string) *router.Gateway {
	t.Helper()
	cfg := "strategy: {mode: fallback}\nproviders:\n" +
		"  a: {base_url: \"" + a + "/v1\", models: [m], circuit_breaker: {failures: 1, cooldown: 30s}}\n" +
		"  b: {base_url: \"" + b + "/v1\", models: [m], circuit_breaker: {failures: 1, cooldown: 30s}}\n" +
		"targets:\n  - {virtual_key: a}\n  - {virtual_key: b}\n"
	return gatewayFromYAML(t, cfg, router.Options{Now: clock.Now})
}

// gatewayFromYAML builds a gateway from a config's text.
func gatewayFromYAML(t testing.TB, text string, o router.Options) *router.Gateway {
	t.Helper()
	cfg, err := config.Parse([]byte(text), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := router.New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return gw
}

// A reset given as a duration counts from when the answer came, not from
// when the attempt was sent: an answer 2 s in the coming that says its
// limit resets in 1 s keeps the provider away for that second.
func TestRelativeResetCountsFromTheAnswer(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(2 * time.Second) // the answer takes 2 s
		w.Header().Set("X-Ratelimit-Remaining-Requests", "0")
		w.Header().Set("X-Ratelimit-Reset-Requests", "1s")
		apiAnswer(w, r)
	})
	b := newUpstream(t, apiAnswer)
	srv := failingGateway(t, "fallback", clock, target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
	for i, want := range []string{"a", "b"} {
		if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.Header.Get(router.HeaderTarget) != want {
			t.Fatalf("request %d served by %s, want %s", i, resp.Header.Get(router.HeaderTarget), want)
		}
	}
}

// The routing view (what /debug/routing and
// firstbyte_rate_limited_until_seconds show) says until when a refused
// target is cooled, from the refusal's Retry-After, and 0 once it is over.
func TestRoutingViewShowsTheCooldown(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	limited := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "10")
		jsonAnswer(429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)(w, r)
	})
	good := newUpstream(t, apiAnswer)
	gw := newGatewayWith(t, "fallback", "", router.Options{Now: clock.Now}, target{name: "limited", url: limited.URL}, target{name: "good", url: good.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	if d := debugTarget(t, gw, "limited"); d.RateLimitedUntil != 0 {
		t.Fatalf("before any refusal: rate limited until %v, want 0", d.RateLimitedUntil)
	}
	refusedAt := clock.Now()
	if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200 from good", resp.StatusCode)
	}
	want := float64(refusedAt.Add(10*time.Second).UnixNano()) / 1e9
	if d := debugTarget(t, gw, "limited"); math.Abs(d.RateLimitedUntil-want) > 0.001 {
		t.Fatalf("after a Retry-After: 10: rate limited until %v, want %v", d.RateLimitedUntil, want)
	}
	clock.Advance(10 * time.Second)
	if d := debugTarget(t, gw, "limited"); d.RateLimitedUntil != 0 {
		t.Fatalf("after the cooldown: rate limited until %v, want 0", d.RateLimitedUntil)
	}
}
