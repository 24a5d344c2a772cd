package router_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// TestModelListAcrossKinds: with one model served only by an anthropic
// target and another only by an openai one, GET /v1/models lists both,
// asked the OpenAI way (Authorization: Bearer) or the Anthropic way
// (x-api-key, anthropic-version); and each id listed can be requested from
// chat completions and messages alike (the gateway translates), and looked
// up on GET /v1/models/{id}.
func TestModelListAcrossKinds(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, apiAnswer)
	yaml := fmt.Sprintf(`strategy: {mode: fallback}
auth: {keys: [client-key]}
providers:
  oa: {kind: openai,    base_url: %[1]q, api_key: key-oa}
  an: {kind: anthropic, base_url: %[1]q, api_key: key-an}
targets:
  - {virtual_key: oa, model_map: {gpt-only: gpt-upstream}}
  - {virtual_key: an, model_map: {claude-only: claude-upstream}}
`, up.URL+"/v1")
	srv := serveGuarded(t, newGatewayFromYAML(t, yaml, router.Options{}).Handler())

	get := func(path string, hdr ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	openaiAuth := []string{"Authorization", "Bearer client-key"}
	anthropicAuth := []string{"x-api-key", "client-key", "anthropic-version", "2023-06-01"}
	want := []string{"claude-only", "gpt-only"}

	for _, caller := range []struct {
		name string
		hdr  []string
	}{{"OpenAI-style", openaiAuth}, {"Anthropic-style", anthropicAuth}} {
		resp := get("/v1/models", caller.hdr...)
		body := readAll(t, resp.Body)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s GET /v1/models: %d %q: %s", caller.name, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		var list struct {
			Object string `json:"object"`
			Data   []struct {
				ID     string `json:"id"`
				Object string `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("%s GET /v1/models: %v: %s", caller.name, err, body)
		}
		var ids []string
		for _, m := range list.Data {
			ids = append(ids, m.ID)
			if m.Object != "model" {
				t.Errorf("%s: entry %+v, want object \"model\"", caller.name, m)
			}
		}
		if list.Object != "list" || !slices.Equal(ids, want) {
			t.Errorf("%s GET /v1/models lists %q (object %q), want %q: every model, whatever kind serves it", caller.name, ids, list.Object, want)
		}
		if resp := get("/v1/models", caller.hdr[2:]...); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s GET /v1/models without the key: %d, want 401", caller.name, resp.StatusCode)
		}
	}

	// Every id listed answers on both chat endpoints, and by id.
	served := map[string]string{"gpt-only": "oa", "claude-only": "an"}
	for _, model := range want {
		for _, ep := range []struct {
			path string
			hdr  []string
		}{{"/v1/chat/completions", openaiAuth}, {"/v1/messages", anthropicAuth}} {
			body := fmt.Sprintf(`{"model":%q,"max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`, model)
			resp := post(t, srv.URL, ep.path, body, ep.hdr...)
			got := readAll(t, resp.Body)
			if resp.StatusCode != http.StatusOK || resp.Header.Get(router.HeaderTarget) != served[model] {
				t.Errorf("%s on %s: %d from %q, want 200 from %s: %s", model, ep.path, resp.StatusCode, resp.Header.Get(router.HeaderTarget), served[model], got)
			}
		}
		for _, hdr := range [][]string{openaiAuth, anthropicAuth} {
			resp := get("/v1/models/"+model, hdr...)
			var m struct{ ID string }
			if err := json.Unmarshal([]byte(readAll(t, resp.Body)), &m); err != nil || resp.StatusCode != http.StatusOK || m.ID != model {
				t.Errorf("GET /v1/models/%s (%s): %d id %q err %v, want 200 naming it", model, hdr[0], resp.StatusCode, m.ID, err)
			}
		}
	}
}
