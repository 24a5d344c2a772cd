package router_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/preference"
)

// TestProviderPreferenceNeverGoesUpstream: the provider object and the
// X-Firstbyte-Provider header reach no upstream, on every path: passed
// through, translated (chat to an anthropic provider, messages to an
// openai one, responses to messages), and hedged (both racers' bodies).
func TestProviderPreferenceNeverGoesUpstream(t *testing.T) {
	t.Parallel()
	hang := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	oa, an, slow := newUpstream(t, apiAnswer), newUpstream(t, apiAnswer), newUpstream(t, hang)
	yaml := fmt.Sprintf(`strategy: {mode: fallback, hedge: {enabled: true, after: 300ms, budget: 1}}
providers:
  oa:   {kind: openai,    base_url: %q, api_key: key-oa, models: [m]}
  an:   {kind: anthropic, base_url: %q, api_key: key-an, models: [m]}
  slow: {kind: openai,    base_url: %q, api_key: key-slow, models: [m]}
targets: [{virtual_key: oa}, {virtual_key: an}, {virtual_key: slow}]
`, oa.URL+"/v1", an.URL+"/v1", slow.URL+"/v1")
	srv := serveGuarded(t, newGatewayFromYAML(t, yaml, router.Options{}).Handler())
	chat := `{"model":"m","provider":{"order":["%s"]},"messages":[{"role":"user","content":"hi"}]%s}`
	messages := `{"provider":{"only":["%s"]},"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]%s}`
	for _, tt := range []struct {
		name, path, body, target string
		stub                     *upstreamStub
	}{
		{"passed through", "/v1/chat/completions", fmt.Sprintf(chat, "oa", ""), "oa", oa},
		{"chat translated", "/v1/chat/completions", fmt.Sprintf(chat, "an", ""), "an", an},
		{"messages translated", "/v1/messages", fmt.Sprintf(messages, "oa", ""), "oa", oa},
		{"responses passed through", "/v1/responses", `{"model":"m","provider":{"only":["oa"]},"input":"hi"}`, "oa", oa},
		{"responses translated", "/v1/responses", `{"model":"m","input":"hi","provider":{"only":["an"]}}`, "an", an},
		{"hedged", "/v1/chat/completions", fmt.Sprintf(chat, "slow", ""), "oa", oa},
	} {
		resp := post(t, srv.URL, tt.path, tt.body, preference.Header+"-Ignored", "x")
		_ = readAll(t, resp.Body)
		if resp.StatusCode != http.StatusOK || resp.Header.Get(router.HeaderTarget) != tt.target {
			t.Errorf("%s: %d from %q, want 200 from %s", tt.name, resp.StatusCode, resp.Header.Get(router.HeaderTarget), tt.target)
		}
		for _, u := range []*upstreamStub{tt.stub, slow} {
			body, _ := u.last()
			if strings.Contains(string(body), "provider") {
				t.Errorf("%s: an upstream got the preferences: %s", tt.name, body)
			}
		}
	}
	resp := post(t, srv.URL, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		preference.Header, `{"only":["an"]}`)
	_ = readAll(t, resp.Body)
	if _, hdr := an.last(); resp.Header.Get(router.HeaderTarget) != "an" || hdr.Get(preference.Header) != "" {
		t.Errorf("header preferences: served by %q, upstream header %q; want an, none", resp.Header.Get(router.HeaderTarget), hdr.Get(preference.Header))
	}
}

// TestProviderPreferenceAnswers: header over body; selection manual for
// order; wrong preferences are a 400 naming the field in the caller's
// shape; preferences leaving no target a 404 naming the preference.
func TestProviderPreferenceAnswers(t *testing.T) {
	t.Parallel()
	a, b := newUpstream(t, apiAnswer), newUpstream(t, apiAnswer)
	srv := serveGuarded(t, newGateway(t, "fallback", "", target{name: "a", url: a.URL}, target{name: "b", url: b.URL}).Config.Handler)
	body := func(pref string) string {
		return `{"model":"m","messages":[{"role":"user","content":"hi"}],"provider":` + pref + `}`
	}
	resp := post(t, srv.URL, "/v1/chat/completions", body(`{"only":["a"]}`), preference.Header, `{"order":["b"]}`)
	wantHeaders(t, resp, "b", "1", "manual")
	resp = post(t, srv.URL, "/v1/chat/completions", body(`{"ignore":["a"]}`))
	wantHeaders(t, resp, "b", "1", "order")
	if a.hits.Load() != 0 {
		t.Errorf("a excluded by the preferences got %d requests", a.hits.Load())
	}
	if s := resp.Header.Get(router.HeaderSkipped); s != "" {
		t.Errorf("%s = %q: an excluded target is no skip", router.HeaderSkipped, s)
	}
	for _, tt := range []struct {
		path, pref, hdr string
		status          int
		want            string
	}{
		{"/v1/chat/completions", `{"sortt":"price"}`, "", 400, `"param":"provider.sortt"`},
		{"/v1/messages", `{"only":"a"}`, "", 400, `"type":"error","error":{"type":"invalid_request_error","message":"provider.only: must be an array`},
		{"/v1/chat/completions", `{"order":["zz"]}`, "", 400, `provider.order[0]: \"zz\" is no configured target`},
		{"/v1/chat/completions", `{}`, `{"sort":`, 400, `X-Firstbyte-Provider: must be a JSON object`},
		{"/v1/chat/completions", `{"only":["a"],"ignore":["a"]}`, "", 404, `no target serving model \"m\" is left by provider.ignore`},
	} {
		b := body(tt.pref)
		if tt.path == "/v1/messages" {
			b = `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"provider":` + tt.pref + `}`
		}
		var hdr []string
		if tt.hdr != "" {
			hdr = []string{preference.Header, tt.hdr}
		}
		resp := post(t, srv.URL, tt.path, b, hdr...)
		got := readAll(t, resp.Body)
		if resp.StatusCode != tt.status || !strings.Contains(got, tt.want) {
			t.Errorf("%s %s: %d %s, want %d with %s", tt.path, tt.pref, resp.StatusCode, got, tt.status, tt.want)
		}
	}
}
