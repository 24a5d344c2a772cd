package router_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/routingview"
)

// Who is at fault, and for what scope: a client cannot disable a provider
// by putting the provider's words in its request, a model the key may
// not use disables that (provider, upstream model) only, and a rate limit
// cools the model it came from, not the provider's other models.

// twoModels is a fallback gateway over providers a and b, in that order,
// each serving client models m and m2 (upstream models of the same
// names), on clock.
func twoModels(t *testing.T, clock *router.FakeClock, a, b string) *router.Gateway {
	t.Helper()
	cfg := "strategy: {mode: fallback}\nproviders:\n" +
		"  a: {base_url: \"" + a + "/v1\", api_key: key-a, models: [m, m2]}\n" +
		"  b: {base_url: \"" + b + "/v1\", api_key: key-b, models: [m, m2]}\n" +
		"targets:\n  - {virtual_key: a}\n  - {virtual_key: b}\n"
	return gatewayFromYAML(t, cfg, router.Options{Now: clock.Now})
}

// byModel answers m2 with onM2 and anything else as a provider would.
func byModel(onM2 http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"model":"m2"`)) {
			onM2(w, r)
			return
		}
		apiAnswer(w, r)
	}
}

// routingRow is (model, target)'s row of /debug/routing.
func routingRow(t *testing.T, gw *router.Gateway, model, target string) routingview.Target {
	t.Helper()
	for _, m := range gw.Routing() {
		for _, tr := range m.Targets {
			if m.Model == model && tr.Target == target {
				return tr
			}
		}
	}
	t.Fatalf("no row for %s on %s in the routing view", target, model)
	return routingview.Target{}
}

const chatM2 = `{"model":"m2","messages":[{"role":"user","content":"hi"}]}`

// TestEchoedWordsDisableNoProvider: requests whose content the providers
// quote back in their 400 (an unknown role insufficient_quota, the credit
// balance sentence) reach the client as its own error and leave both
// providers enabled; a 403 content-policy refusal is the caller's answer.
func TestEchoedWordsDisableNoProvider(t *testing.T) {
	t.Parallel()
	echo := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(body, []byte(`"role":"insufficient_quota"`)):
			jsonAnswer(400, `{"error":{"message":"Invalid value: 'insufficient_quota'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.","type":"invalid_request_error","param":"messages[0].role","code":"invalid_value"}}`)(w, r)
		case bytes.Contains(body, []byte("credit balance")):
			jsonAnswer(400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content.0.type: unknown block 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'"}}`)(w, r)
		case bytes.Contains(body, []byte("forbidden words")):
			jsonAnswer(403, `{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","code":"content_policy_violation"}}`)(w, r)
		default:
			apiAnswer(w, r)
		}
	}
	clock := router.NewFakeClock()
	a, b := newUpstream(t, echo), newUpstream(t, echo)
	gw := twoModels(t, clock, a.URL, b.URL)
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"role insufficient_quota", `{"model":"m","messages":[{"role":"insufficient_quota","content":"hi"}]}`, 400},
		{"credit balance text", `{"model":"m","messages":[{"role":"user","content":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}]}`, 400},
		{"403 content policy", `{"model":"m","messages":[{"role":"user","content":"forbidden words"}]}`, 403},
	} {
		for range 3 {
			if resp := post(t, srv.URL, "/v1/chat/completions", tc.body); resp.StatusCode != tc.status || resp.Header.Get(router.HeaderTarget) != "a" {
				t.Fatalf("%s: %d from %q, want a's own %d", tc.name, resp.StatusCode, resp.Header.Get(router.HeaderTarget), tc.status)
			}
		}
	}
	for _, name := range []string{"a", "b"} {
		if d := routingRow(t, gw, "m", name); d.Disabled != "" {
			t.Errorf("%s disabled (%s) by a client's words", name, d.Disabled)
		}
	}
	if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "a" {
		t.Fatalf("after the attacks: %d from %q, want 200 from a", resp.StatusCode, resp.Header.Get(router.HeaderTarget))
	}
	if n := b.hits.Load(); n != 0 {
		t.Errorf("b was tried %d times: the client's errors failed over", n)
	}
}

// TestModelAccessDisablesThatModelOnly: a 403 model_not_found for m2
// disables (a, m2): m2 is served by b, and m by a as before.
func TestModelAccessDisablesThatModelOnly(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	a := newUpstream(t, byModel(jsonAnswer(403, `{"error":{"message":"Project 'proj_1' does not have access to model 'm2'","type":"invalid_request_error","param":null,"code":"model_not_found"}}`)))
	b := newUpstream(t, apiAnswer)
	gw := twoModels(t, clock, a.URL, b.URL)
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	for i := range 10 {
		if resp := post(t, srv.URL, "/v1/chat/completions", chatM2); resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "b" {
			t.Fatalf("m2 request %d: %d from %q, want 200 from b", i, resp.StatusCode, resp.Header.Get(router.HeaderTarget))
		}
		if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "a" {
			t.Fatalf("m request %d: %d from %q, want 200 from a", i, resp.StatusCode, resp.Header.Get(router.HeaderTarget))
		}
	}
	if n := a.hits.Load(); n != 11 {
		t.Errorf("a got %d requests, want 11: ten for m and one for m2", n)
	}
	if d := routingRow(t, gw, "m2", "a"); d.Disabled != "model_access" || d.NextProbe == "" {
		t.Errorf("(a, m2) routing view: disabled %q, next probe %q; want model_access with a probe time", d.Disabled, d.NextProbe)
	}
	if d := routingRow(t, gw, "m", "a"); d.Disabled != "" {
		t.Errorf("(a, m) disabled %q by m2's refusal", d.Disabled)
	}
}

// TestCooldownIsTheModels: a 429 with Retry-After: 60 for m2 cools (a, m2)
// for 60 s and leaves m on a served; the routing view says so per model.
func TestCooldownIsTheModels(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	a := newUpstream(t, byModel(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60")
		jsonAnswer(429, `{"error":{"message":"Rate limit reached for m2","type":"requests","code":"rate_limit_exceeded"}}`)(w, r)
	}))
	b := newUpstream(t, apiAnswer)
	gw := twoModels(t, clock, a.URL, b.URL)
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	for i := range 5 {
		if resp := post(t, srv.URL, "/v1/chat/completions", chatM2); resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "b" {
			t.Fatalf("m2 request %d: %d from %q, want 200 from b", i, resp.StatusCode, resp.Header.Get(router.HeaderTarget))
		}
		if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "a" {
			t.Fatalf("m request %d: %d from %q, want 200 from a: m2's cooldown took the provider out", i, resp.StatusCode, resp.Header.Get(router.HeaderTarget))
		}
	}
	want := float64(clock.Now().Add(60*time.Second).UnixNano()) / 1e9
	if d := routingRow(t, gw, "m2", "a"); d.RateLimitedUntil != want {
		t.Errorf("(a, m2) rate limited until %v, want %v", d.RateLimitedUntil, want)
	}
	if d := routingRow(t, gw, "m", "a"); d.RateLimitedUntil != 0 {
		t.Errorf("(a, m) rate limited until %v, want 0", d.RateLimitedUntil)
	}
	clock.Advance(61 * time.Second)
	if resp := post(t, srv.URL, "/v1/chat/completions", chatM2); resp.Header.Get(router.HeaderTarget) != "b" || a.hits.Load() != 7 {
		t.Errorf("after the cooldown: %d requests at a, want 7 (5 m, 2 m2)", a.hits.Load())
	}
}

// TestPermissionErrorIsAuthForThatTarget: Anthropic's 403
// permission_error (the key is refused what was asked for) is a
// credential failure, not the caller's answer: the request fails over to
// b, and (a, m2) is disabled as auth while a keeps serving m (the type
// cannot tell a key refused everything from one refused this model).
func TestPermissionErrorIsAuthForThatTarget(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	a := newUpstream(t, byModel(jsonAnswer(403, `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`)))
	b := newUpstream(t, apiAnswer)
	gw := twoModels(t, clock, a.URL, b.URL)
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	for i := range 3 {
		if resp := post(t, srv.URL, "/v1/chat/completions", chatM2); resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "b" {
			t.Fatalf("m2 request %d: %d from %q, want 200 from b", i, resp.StatusCode, resp.Header.Get(router.HeaderTarget))
		}
		if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "a" {
			t.Fatalf("m request %d: %d from %q, want 200 from a", i, resp.StatusCode, resp.Header.Get(router.HeaderTarget))
		}
	}
	if n := a.hits.Load(); n != 4 {
		t.Errorf("a got %d requests, want 4: three for m and one for m2", n)
	}
	if d := routingRow(t, gw, "m2", "a"); d.Disabled != "auth" {
		t.Errorf("(a, m2) disabled %q, want auth", d.Disabled)
	}
	if d := routingRow(t, gw, "m", "a"); d.Disabled != "" {
		t.Errorf("(a, m) disabled %q by m2's refusal", d.Disabled)
	}
}
