package main

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/config"
)

// TestAggregatorTargetsCarryTheLongestSample: every (target, upstream
// model) the aggregator is taught carries its provider's timeout.total,
// the default where the file says none: the bound of a plausible time to
// first byte in peers' and applications' spans (a unary answer's sample is
// its whole answer, which may take longer than first_byte).
func TestAggregatorTargetsCarryTheLongestSample(t *testing.T) {
	cfg, err := config.Parse([]byte(`
providers:
  fast: {kind: openai, base_url: "http://127.0.0.1:9/v1", timeout: {first_byte: 5s, total: 45s}}
  plain: {kind: anthropic, base_url: "http://127.0.0.1:9/v1"}
targets:
  - {virtual_key: fast, model_map: {m: up-fast, m2: up-fast2}}
  - {virtual_key: plain, model_map: {m: up-plain}}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := router.New(cfg, router.Options{Stats: collector.NewTracker(collector.TrackerOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]string]time.Duration{
		{"fast", "up-fast"}:   45 * time.Second,
		{"fast", "up-fast2"}:  45 * time.Second,
		{"plain", "up-plain"}: config.DefaultTotal,
	}
	got := map[[2]string]time.Duration{}
	for _, tg := range aggregatorTargets(cfg, gw) {
		got[[2]string{tg.Name, tg.Model}] = tg.LongestSample
	}
	if len(got) != len(want) {
		t.Errorf("aggregatorTargets = %v, want %v", got, want)
	}
	for k, d := range want {
		if got[k] != d {
			t.Errorf("%s/%s LongestSample = %v, want %v", k[0], k[1], got[k], d)
		}
	}
}

// TestReloadRefusalNeverEchoesTheFile: the file is replaced by nothing but
// a provider key (a paste gone wrong), then by a config whose virtual_key
// is one; POST /admin/reload refuses both with 422, and neither its body
// nor the log repeats the key. The refusal still names what is wrong.
func TestReloadRefusalNeverEchoesTheFile(t *testing.T) {
	const good = `
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
providers:
  a: {base_url: "http://127.0.0.1:9/v1"}
targets:
  - {virtual_key: a, model_map: {m: m}}
`
	s, path, logs := testStack(t, good, nil)
	const key = "sk-proj-Q7vX2mN9pL4kT8wR3zY6bH1cJ5dF0gS"
	for _, tc := range []struct{ name, file, want string }{
		{"the whole file", key + "\n", "the config must be a mapping"},
		{"a virtual_key", strings.Replace(good, "virtual_key: a,", "virtual_key: "+key+",", 1), "targets[0].virtual_key: unknown provider"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			status, body := doRequest(t, http.MethodPost, "http://"+s.AdminAddr+"/admin/reload", "")
			if status != http.StatusUnprocessableEntity || !strings.Contains(body, tc.want) {
				t.Errorf("POST /admin/reload = %d %s; want 422 naming %q", status, body, tc.want)
			}
			if strings.Contains(body, key) {
				t.Errorf("the 422 body repeats the key: %s", body)
			}
			if l := logs.lines(key); len(l) > 0 {
				t.Errorf("the log repeats the key: %q", l)
			}
			if len(logs.lines("config reload refused")) == 0 {
				t.Error("no log line for the refusal: the log check above checked nothing")
			}
		})
	}
}
