package router_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// TestDuplicateModelKeyRefused: a body whose top-level object names "model"
// twice is a 400 in the caller's shape, on both chat endpoints, and nothing
// goes upstream: providers take one of the two (which one varies), so the
// gateway could route on a model other than the one served. An escaped key
// ("mod\u0065l") is the same key to a provider, so it counts as "model" too.
func TestDuplicateModelKeyRefused(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, apiAnswer)
	srv := serveGuarded(t, newGatewayFromYAML(t, twoKinds(up.URL), router.Options{}).Handler())
	const rest = `"max_tokens":16,"messages":[{"role":"user","content":"hi"}]`
	dups := []struct{ name, body string }{
		{"twice the same", `{"model":"m","model":"m",` + rest + `}`},
		{"two models", `{"model":"m",` + rest + `,"model":"other"}`},
		{"escaped second key", `{"model":"m","mod\u0065l":"other",` + rest + `}`},
		{"escaped first key", `{"\u006dodel":"other",` + rest + `,"model":"m"}`},
		{"second is not a string", `{"model":"m","model":null,` + rest + `}`},
		{"with spaces", `{ "model" : "m" , "model" : "m" , ` + rest + ` }`},
	}
	for _, ep := range []struct {
		path      string
		anthropic bool
	}{{"/v1/chat/completions", false}, {"/v1/messages", true}} {
		for _, tt := range dups {
			t.Run(ep.path+" "+tt.name, func(t *testing.T) {
				resp := post(t, srv.URL, ep.path, tt.body)
				if resp.StatusCode != http.StatusBadRequest {
					t.Errorf("status = %d, want 400", resp.StatusCode)
				}
				e := decodeError(t, resp, ep.anthropic)
				if e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, `"model" appears more than once`) {
					t.Errorf("error = %+v, want invalid_request_error saying \"model\" appears more than once", e.Error)
				}
				if !ep.anthropic && (e.Error.Code == nil || *e.Error.Code != "invalid_request") {
					t.Errorf("code = %v, want invalid_request", e.Error.Code)
				}
				if resp.Header.Get(router.HeaderAttempts) != "" {
					t.Errorf("%s set although no attempt was made", router.HeaderAttempts)
				}
			})
		}
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("%d requests with a duplicate model went upstream, want 0", n)
	}
}

// TestModelKeyOnceIsServed: the rule is about the top-level key only, and
// an escaped key is read as the key it spells.
func TestModelKeyOnceIsServed(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, apiAnswer)
	srv := serveGuarded(t, newGatewayFromYAML(t, twoKinds(up.URL), router.Options{}).Handler())
	const rest = `"max_tokens":16,"messages":[{"role":"user","content":"hi"}]`
	for _, tt := range []struct{ name, body string }{
		{"nested model keys", `{"model":"m","metadata":{"model":"x","model":"y"},` + rest + `}`},
		{"model only escaped", `{"mod\u0065l":"m",` + rest + `}`},
		{"a key that only starts like model", `{"model":"m","model_version":"2",` + rest + `}`},
	} {
		for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
			resp := post(t, srv.URL, path, tt.body)
			if body := readAll(t, resp.Body); resp.StatusCode != http.StatusOK {
				t.Errorf("%s %s: status %d, want 200: %s", path, tt.name, resp.StatusCode, body)
			}
		}
	}
}
