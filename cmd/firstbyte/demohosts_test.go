package main

import (
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/routingview"
)

// TestDemoHostsPoolConfig: the demo's second model is one Claude model
// bought from three hosts (Anthropic, Bedrock, Vertex AI), each a provider
// of its host's kind, and the whole config is one the gateway accepts.
func TestDemoHostsPoolConfig(t *testing.T) {
	t.Parallel()
	urls := map[string]string{}
	for _, name := range []string{"groq-sim", "together-sim", "claude-sim", "anthropic-sim", "bedrock-sim", "vertex-sim"} {
		urls[name] = "http://127.0.0.1:1/v1"
	}
	sa, err := writeDemoServiceAccount(t.TempDir(), "http://127.0.0.1:1/token")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(demoGatewayConfig("127.0.0.1:0", "127.0.0.1:0", urls, sa)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	kinds := map[string]bool{}
	for _, tg := range cfg.Targets {
		if _, ok := tg.ModelMap[demoHostsModel]; ok {
			kinds[cfg.Providers[tg.VirtualKey].Kind] = true
		}
	}
	if len(kinds) != 3 || !kinds["anthropic"] || !kinds["bedrock"] || !kinds["vertex"] {
		t.Errorf("%s is served by kinds %v, want anthropic, bedrock and vertex", demoHostsModel, kinds)
	}
}

// TestDemoFrameGroupsModels: each model's targets are drawn together, the
// story's model first and the hosts pool under its own title, and a
// target's share is of its own model's first picks.
func TestDemoFrameGroupsModels(t *testing.T) {
	t.Parallel()
	story := recordedRouting("groq-sim", map[string]float64{"groq-sim": 0.15, "together-sim": 0.35, "claude-sim": 0.6})[0]
	hosts := routingview.Model{Model: demoHostsModel, Mode: "least-latency"}
	for _, name := range []string{"anthropic-sim", "bedrock-sim", "vertex-sim"} {
		hosts.Targets = append(hosts.Targets, routingview.Target{Target: name, P50Seconds: 0.3, Samples: 100, Leader: name == "bedrock-sim", Circuit: "closed"})
	}
	c := demoCounts{picks: map[string]float64{"groq-sim": 90, "together-sim": 5, "claude-sim": 5, "anthropic-sim": 5, "bedrock-sim": 40, "vertex-sim": 5}}
	f := newDemoView(demoRecent).frame(0, []routingview.Model{hosts, story}, c, &demoDriver{})
	share := map[string]string{}
	for _, r := range f.Rows {
		share[r.Target] = r.Share
	}
	if share["groq-sim"] != "90%" || share["bedrock-sim"] != "80%" {
		t.Errorf("shares groq-sim %s, bedrock-sim %s; want 90%% and 80%% (each of its own model's picks)", share["groq-sim"], share["bedrock-sim"])
	}
	out := renderDemoFrame(f, false)
	story0, hosts0 := strings.Index(out, "\ngroq-sim "), strings.Index(out, "one model, three hosts")
	if story0 < 0 || hosts0 < story0 || strings.Index(out, "\nbedrock-sim ") < hosts0 {
		t.Errorf("want %s's rows, then the hosts pool's title and its rows:\n%s", demoModel, out)
	}
}
