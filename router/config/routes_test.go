package config

import (
	"errors"
	"strings"
	"testing"
)

// routesBase serves claude-sonnet-4-5 and claude-haiku-4-5 (a, b) and
// llama-3.3-70b (c).
const routesBase = `
providers:
  a: {base_url: "http://127.0.0.1:9101/v1", models: [claude-sonnet-4-5, claude-haiku-4-5]}
  b: {base_url: "http://127.0.0.1:9102/v1", models: [claude-sonnet-4-5, claude-haiku-4-5]}
  c: {base_url: "http://127.0.0.1:9103/v1", models: [llama-3.3-70b]}
targets:
  - virtual_key: a
  - virtual_key: b
  - virtual_key: c
`

func parseRoutes(t *testing.T, extra string) (*Config, []string) {
	t.Helper()
	cfg, err := Parse([]byte(routesBase+extra), env(nil))
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil {
		return cfg, nil
	}
	var fes FieldErrors
	if !errors.As(err, &fes) {
		t.Fatalf("error %T is not FieldErrors: %v", err, err)
	}
	var lines []string
	for _, fe := range fes {
		lines = append(lines, fe.Path+": "+fe.Msg)
	}
	return cfg, lines
}

func TestRoutesAndAliasesValid(t *testing.T) {
	t.Parallel()
	cfg, errs := parseRoutes(t, `
strategy: {mode: least-latency, hedge: {enabled: true, after: p90}}
aliases: {smart: claude-sonnet-4-5, fast: llama-3.3-70b}
routes:
  - models: [claude-sonnet-4-5]
    mode: reliable-latency
    hedge: {enabled: true}
    targets: [b, a]
  - models: ["claude-*"]
    mode: fallback
`)
	if errs != nil {
		t.Fatalf("errors %v, want none", errs)
	}
	if got := cfg.Aliases["smart"]; got != "claude-sonnet-4-5" {
		t.Errorf("aliases.smart = %q", got)
	}
	r0, r1 := cfg.Routes[0], cfg.Routes[1]
	if r0.Hedge.After != DefaultHedgeAfter || r0.Hedge.Budget != DefaultHedgeBudget || r0.Hedge.Max != DefaultHedgeMax {
		t.Errorf("routes[0].hedge = %+v, want the hedge defaults", *r0.Hedge)
	}
	if r1.Hedge == nil || !r1.Hedge.Enabled || r1.Hedge.After != "p90" {
		t.Errorf("routes[1].hedge = %+v, want strategy.hedge", r1.Hedge)
	}
	for _, tt := range []struct {
		model string
		want  int
	}{{"claude-sonnet-4-5", 0}, {"claude-haiku-4-5", 1}, {"llama-3.3-70b", -1}} {
		if got := cfg.RouteFor(tt.model); got != tt.want {
			t.Errorf("RouteFor(%q) = %d, want %d", tt.model, got, tt.want)
		}
	}
}

func TestRoutesErrorsNameFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"matches nothing", `
routes:
  - models: [gpt-*]
`, []string{`routes[0].models[0]: "gpt-*" matches no model a target serves (claude-haiku-4-5, claude-sonnet-4-5, llama-3.3-70b)`}},
		{"shadowed glob", `
routes:
  - models: ["claude-*"]
  - models: [llama-3.3-70b, claude-sonnet-*]
`, []string{`routes[1].models[1]: "claude-sonnet-*" never matches: routes[0].models[0] ("claude-*") matches every model it would`}},
		{"target serves none", `
routes:
  - models: [llama-3.3-70b]
    targets: [c, a]
`, []string{`routes[0].targets[1]: "a" serves none of the route's models (llama-3.3-70b)`}},
		{"unknown target and mode", `
routes:
  - models: [llama-3.3-70b]
    mode: fastest
    targets: [cc]
    hedge: {budget: 2}
`, []string{
			`routes[0].mode: unknown mode "fastest"`,
			`routes[0].targets[0]: unknown target "cc"`,
			`routes[0].hedge.budget: must be above 0 and at most 1 (a share of requests), got 2`,
		}},
		{"bad aliases", `
aliases: {claude-haiku-4-5: claude-sonnet-4-5, smart: claude-sonet-4-5}
`, []string{
			`aliases.claude-haiku-4-5: "claude-haiku-4-5" is a model a target serves: an alias must be a name of its own`,
			`aliases.smart: unknown model "claude-sonet-4-5"`,
		}},
		{"no models", `
routes:
  - mode: fallback
`, []string{`routes[0].models: required: the client models (names or globs) this route serves`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, got := parseRoutes(t, tt.yaml)
			if len(got) != len(tt.want) {
				t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("error %d = %s, want it to start %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestMatchModel(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pattern, name string
		want          bool
	}{
		{"claude-*", "claude-sonnet-4-5", true},
		{"claude-*", "claude", false},
		{"*-mini", "gpt-4o-mini", true},
		{"gpt-*-mini", "gpt-4o-mini", true},
		{"gpt-*-mini", "gpt-4o-mini-x", false},
		{"*", "meta/llama", true},
		{"a*b*c", "aXbYbZc", true},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	} {
		if got := MatchModel(tt.pattern, tt.name); got != tt.want {
			t.Errorf("MatchModel(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}
