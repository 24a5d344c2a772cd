package router_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
)

// routesYAML serves client models m and n on providers a, b and c (each
// its own stub), with the given top of the config (strategy, aliases,
// routes, response_model).
func routesYAML(top string, urls ...string) string {
	var b strings.Builder
	b.WriteString(top + "\nproviders:\n")
	for i, u := range urls {
		fmt.Fprintf(&b, "  %c: {base_url: %q, api_key: key-%c, models: [m, n]}\n", 'a'+i, u+"/v1", 'a'+i)
	}
	b.WriteString("targets:\n")
	for i := range urls {
		fmt.Fprintf(&b, "  - {virtual_key: %c}\n", 'a'+i)
	}
	return b.String()
}

func modelBody(model string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`
}

// TestRouteOrdersItsModelsOnly: a route's mode and targets order its
// models; a model no route matches follows the strategy.
func TestRouteOrdersItsModelsOnly(t *testing.T) {
	t.Parallel()
	a, b, c := newUpstream(t, apiAnswer), newUpstream(t, apiAnswer), newUpstream(t, apiAnswer)
	srv := serveGuarded(t, newGatewayFromYAML(t, routesYAML(`strategy: {mode: fallback}
routes:
  - models: ["m*"]
    targets: [c, b]`, a.URL, b.URL, c.URL), router.Options{}).Handler())

	resp := post(t, srv.URL, "/v1/chat/completions", modelBody("m"))
	wantHeaders(t, resp, "c", "1", "order")
	resp = post(t, srv.URL, "/v1/chat/completions", modelBody("n"))
	wantHeaders(t, resp, "a", "1", "order")
	if a.hits.Load() != 1 || b.hits.Load() != 0 || c.hits.Load() != 1 {
		t.Errorf("hits a=%d b=%d c=%d, want 1 0 1", a.hits.Load(), b.hits.Load(), c.hits.Load())
	}
}

// TestRouteKeepsItsOwnModeState: round-robin rotates per route, so the
// strategy's requests for n do not move the route's rotation for m.
func TestRouteKeepsItsOwnModeState(t *testing.T) {
	t.Parallel()
	a, b := newUpstream(t, apiAnswer), newUpstream(t, apiAnswer)
	srv := serveGuarded(t, newGatewayFromYAML(t, routesYAML(`strategy: {mode: round-robin}
routes:
  - models: [m]`, a.URL, b.URL), router.Options{}).Handler())
	var got []string
	for _, model := range []string{"n", "m", "n", "m"} {
		got = append(got, post(t, srv.URL, "/v1/chat/completions", modelBody(model)).Header.Get(router.HeaderTarget))
	}
	if want := []string{"a", "a", "b", "b"}; !slices.Equal(got, want) {
		t.Errorf("targets of n, m, n, m = %v, want %v: each route rotates on its own", got, want)
	}
}

// TestAliasResolvesFirst: an alias is listed by /v1/models, is routed as
// the model it names (the route of that model, the upstream model in the
// body), and its answer reports the alias under response_model: requested.
func TestAliasResolvesFirst(t *testing.T) {
	t.Parallel()
	a, b := newUpstream(t, apiAnswer), newUpstream(t, apiAnswer)
	gw := newGatewayFromYAML(t, routesYAML(`strategy: {mode: fallback}
response_model: requested
aliases: {smart: m}
routes:
  - models: [m]
    targets: [b]`, a.URL, b.URL), router.Options{})
	srv := serveGuarded(t, gw.Handler())

	resp := post(t, srv.URL, "/v1/chat/completions", modelBody("smart"))
	body := readAll(t, resp.Body)
	wantHeaders(t, resp, "b", "1", "order")
	var answer struct{ Model string }
	if err := json.Unmarshal([]byte(body), &answer); err != nil || answer.Model != "smart" {
		t.Errorf("answer model = %q (%v), want the alias the client sent", answer.Model, err)
	}
	sent, _ := b.last()
	if !strings.Contains(string(sent), `"model":"m"`) {
		t.Errorf("upstream got %s, want the model the alias names", sent)
	}

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/models", nil)
	lresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer lresp.Body.Close()
	var list struct{ Data []struct{ ID string } }
	if err := json.NewDecoder(lresp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range list.Data {
		ids = append(ids, d.ID)
	}
	if want := []string{"m", "n", "smart"}; !slices.Equal(ids, want) {
		t.Errorf("GET /v1/models = %v, want %v", ids, want)
	}
	for _, mr := range gw.Routing() {
		if want := map[string]string{"m": "routes[0]", "n": ""}[mr.Model]; mr.Route != want {
			t.Errorf("/debug/routing %s route = %q, want %q", mr.Model, mr.Route, want)
		}
	}
}

// TestReloadKeepsEachRoutesSamples: samples are per target and upstream
// model, so a reloaded gateway's routes rank on what the last one's
// learnt: each route's leader is unchanged by the reload.
func TestReloadKeepsEachRoutesSamples(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	tr := collector.NewTracker(collector.TrackerOptions{Now: func() time.Time { return now }})
	for i := range 5 {
		at := now.Add(-time.Duration(i) * time.Second)
		tr.RecordSample("a", "m", 90*time.Millisecond, at, collector.OriginSelf)
		tr.RecordSample("b", "m", 30*time.Millisecond, at, collector.OriginSelf)
		tr.RecordSample("a", "n", 20*time.Millisecond, at, collector.OriginSelf)
		tr.RecordSample("b", "n", 70*time.Millisecond, at, collector.OriginSelf)
	}
	yaml := routesYAML(`strategy: {mode: fallback}
routes:
  - models: [m]
    mode: least-latency
  - models: [n]
    mode: ewma-latency`, "http://127.0.0.1:1", "http://127.0.0.1:2")
	o := router.Options{Stats: tr, Now: func() time.Time { return now }}
	leaders := func(gw *router.Gateway) map[string]string {
		out := map[string]string{}
		for _, mr := range gw.Routing() {
			for _, tg := range mr.Targets {
				if tg.Leader {
					out[mr.Model+" "+mr.Mode] = tg.Target
				}
			}
		}
		return out
	}
	first := newGatewayFromYAML(t, yaml, o)
	o.Previous = first
	second := newGatewayFromYAML(t, yaml, o)
	want := map[string]string{"m least-latency": "b", "n ewma-latency": "a"}
	for name, gw := range map[string]*router.Gateway{"before": first, "after the reload": second} {
		if got := leaders(gw); !maps.Equal(got, want) {
			t.Errorf("%s: leaders %v, want %v", name, got, want)
		}
	}
}
