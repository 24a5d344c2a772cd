package config

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// Secrets as they are pasted by mistake: provider keys in their real
// shapes, a random token, and a short password (which only the positions
// that never quote a value can keep out).
var (
	credentialShaped = []string{
		"sk-proj-Q7vX2mN9pL4kT8wR3zY6bH1cJ5dF0gS",
		"gsk_4Rt7Yp2Lm9Qx3Zs8Kd6Hf1Jw5Nb0VcXe",
		"sk-ant-api03-Zq8Wm3Rt6Yp1Lk4Jh7Gf2Ds5Aa",
		"xai-9Hq2Lm7Rt4Zp1Wk6Yb3Jd8Nf5Cs0Vx",
		"AKIAQ7VX2MN9PL4KT8WR",
		"Nq4Rt8Yp2Lm6Qx0Zs3Kd7Hf1Jw5Nb9Vc",
	}
	anySecret = append([]string{"hunter2", "correct horse battery staple"}, credentialShaped...)
)

// configErrorText is everything Parse and Validate say about data, as the
// 422 body of POST /admin/reload and the log carry it.
func configErrorText(t *testing.T, data string, vars map[string]string) string {
	t.Helper()
	cfg, err := Parse([]byte(data), env(vars))
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil {
		t.Fatalf("no error for:\n%s", data)
	}
	var fes FieldErrors
	if !errors.As(err, &fes) {
		t.Fatalf("error %T is not FieldErrors: %v", err, err)
	}
	var b strings.Builder
	for _, fe := range fes {
		b.WriteString(fe.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

// TestConfigErrorsNeverEchoAScalarValue: a value written where a mapping,
// a list, a number, a duration, a size or a flag belongs, or as the whole
// file, is never repeated in an error, whatever it is: the path and line
// say where it is. Names the checks quote (an unknown key, provider, mode,
// level, format or kind, an address or URL that does not parse, a service)
// are repeated only when they cannot be a credential. And a file that is
// not YAML is never quoted either.
func TestConfigErrorsNeverEchoAScalarValue(t *testing.T) {
	const base = `
providers:
  groq: {kind: openai, base_url: "http://127.0.0.1:9/v1"}
targets:
  - {virtual_key: groq, model_map: {m: up}}
`
	// Positions where no value is ever quoted: %s is the secret, written
	// as a plain scalar unless the position says otherwise.
	typeErrors := map[string]string{
		"the whole file":                    `%s`,
		"the whole file, quoted":            `"%s"`,
		"the whole file, a literal block":   "|\n  %s\n",
		"a struct":                          "limits: %q\n" + base,
		"a map":                             "providers: %q\ntargets: [{virtual_key: groq}]\n",
		"a provider":                        "providers:\n  groq: %q\ntargets: [{virtual_key: groq, model_map: {m: up}}]\n",
		"a list":                            "providers:\n  groq: {kind: openai, base_url: \"http://127.0.0.1:9/v1\", models: %q}\ntargets: [{virtual_key: groq}]\n",
		"a list item that is a struct":      "providers:\n  groq: {kind: openai, base_url: \"http://127.0.0.1:9/v1\"}\ntargets: [%q]\n",
		"a bool":                            "log: {requests: %q}\n" + base,
		"a whole number":                    "providers:\n  groq: {kind: openai, base_url: \"http://127.0.0.1:9/v1\", max_concurrency: %q}\ntargets: [{virtual_key: groq, model_map: {m: up}}]\n",
		"a number":                          "providers:\n  groq: {kind: openai, base_url: \"http://127.0.0.1:9/v1\"}\ntargets: [{virtual_key: groq, model_map: {m: up}, weight: %q}]\n",
		"a price":                           "providers:\n  groq: {kind: openai, base_url: \"http://127.0.0.1:9/v1\", pricing: {up: {input: %q}}}\ntargets: [{virtual_key: groq, model_map: {m: up}}]\n",
		"a duration":                        "shutdown: {grace: %q}\n" + base,
		"a size":                            "limits: {max_body: %q}\n" + base,
		"a model_map":                       "providers:\n  groq: {kind: openai, base_url: \"http://127.0.0.1:9/v1\"}\ntargets: [{virtual_key: groq, model_map: %q}]\n",
		"a merge":                           "limits: {<<: %q}\n" + base,
		"an unquoted value missing a colon": "providers:\n  groq:\n    api_key %s\ntargets: [{virtual_key: groq, model_map: {m: up}}]\n",
	}
	for name, tmpl := range typeErrors {
		for _, secret := range anySecret {
			text := configErrorText(t, sprintf(tmpl, secret), nil)
			if leaks(text, secret) {
				t.Errorf("%s: the error repeats %q:\n%s", name, secret, text)
			}
		}
	}

	// Positions where a name is quoted when it looks like one.
	named := map[string]string{
		"an unknown top-level key":  "%q: 1\n" + base,
		"an unknown nested key":     "limits: {%q: 1}\n" + base,
		"a key missing its colon":   "providers:\n  groq: {kind: openai, base_url: \"http://127.0.0.1:9/v1\", api_key %s}\ntargets: [{virtual_key: groq, model_map: {m: up}}]\n",
		"a virtual_key":             "providers:\n  groq: {kind: openai, base_url: \"http://127.0.0.1:9/v1\"}\ntargets: [{virtual_key: %q, model_map: {m: up}}]\n",
		"a kind":                    "providers:\n  groq: {kind: %q, base_url: \"http://127.0.0.1:9/v1\"}\ntargets: [{virtual_key: groq, model_map: {m: up}}]\n",
		"a mode":                    "strategy: {mode: %q}\n" + base,
		"a log level":               "log: {level: %q}\n" + base,
		"a log format":              "log: {format: %q}\n" + base,
		"a listen address":          "listen: %q\n" + base,
		"an admin address":          "admin: {listen: %q}\n" + base,
		"a base_url":                "providers:\n  groq: {kind: openai, base_url: %q}\ntargets: [{virtual_key: groq, model_map: {m: up}}]\n",
		"an otlp_endpoint":          "telemetry: {otlp_endpoint: %q}\n" + base,
		"a unary service":           "telemetry: {ingest: {enabled: true, foreign: {enabled: true, services: [a], unary_services: [%q]}}}\n" + base,
		"a virtual_key from ${VAR}": "providers:\n  groq: {kind: openai, base_url: \"http://127.0.0.1:9/v1\"}\ntargets: [{virtual_key: \"${LEAKY}\", model_map: {m: up}}]\n#%s\n",
	}
	for name, tmpl := range named {
		for _, secret := range credentialShaped {
			data := sprintf(tmpl, secret)
			if strings.HasSuffix(tmpl, "#%s\n") {
				data = strings.Replace(tmpl, "#%s\n", "", 1)
			}
			text := configErrorText(t, data, map[string]string{"LEAKY": secret})
			if leaks(text, secret) {
				t.Errorf("%s: the error repeats %q:\n%s", name, secret, text)
			}
		}
	}

	// Not YAML: the parser's message, never the line it choked on.
	notYAML := map[string]string{
		"an unterminated quote":    "listen: \"%s\n" + base,
		"a mapping in a value":     "listen: %s: x: y\n" + base,
		"a tab":                    "limits:\n\tmax_body: %s\n" + base,
		"an unterminated flow map": "limits: {max_body: %s\n",
	}
	for name, tmpl := range notYAML {
		for _, secret := range anySecret {
			text := configErrorText(t, sprintf(tmpl, secret), nil)
			if leaks(text, secret) {
				t.Errorf("%s: the error repeats %q:\n%s", name, secret, text)
			}
		}
	}
}

// leaks reports whether text carries secret, or a long piece of it.
func leaks(text, secret string) bool {
	if strings.Contains(text, secret) {
		return true
	}
	const piece = 12
	for i := 0; i+piece <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+piece]) {
			return true
		}
	}
	return false
}

func sprintf(tmpl, secret string) string {
	return strings.NewReplacer("%q", `"`+secret+`"`, "%s", secret).Replace(tmpl)
}

func TestQuoteName(t *testing.T) {
	for _, tt := range []struct {
		in    string
		shown bool
	}{
		{"grok", true},
		{"least_latency", true},
		{"max-concurrency", true},
		{"not an address", true},
		{"ftp://example", true},
		{"localhost:4318", true},
		{"llama-3.3-70b-versatile", true},
		{"internationalization", true}, // a long word, no digits
		{"", true},
		{"sk-proj-Q7vX2mN9pL4kT8wR3zY6bH1cJ5dF0gS", false},
		{"sk-abc", false},          // short, but a provider key's prefix
		{"api_key gsk_abc", false}, // a line that lost its colon
		{"https://user@sk-x", false},
		{"AKIAQ7VX2MN9PL4KT8WR", false},
		{"Nq4Rt8Yp2Lm6Qx0Zs", false}, // 17 letters and digits mixed: a token
		{"eyJhbGciOiJIUzI1NiJ9", false},
		{strings.Repeat("a", 41), false},
		{"caf\u00e9", false}, // not printable ASCII
		{"a\nb", false},
	} {
		got := quoteName(tt.in)
		if shown := got == strconv.Quote(tt.in); shown != tt.shown {
			t.Errorf("quoteName(%q) = %s, want shown %v", tt.in, got, tt.shown)
		}
		if !tt.shown && tt.in != "" && strings.Contains(got, tt.in) {
			t.Errorf("quoteName(%q) = %s repeats it", tt.in, got)
		}
	}
}
