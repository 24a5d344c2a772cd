package config

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Warnings are what Validate accepts but is almost certainly a mistake:
// the gateway would start, and every request to the field's provider
// fail. check prints them and still exits 0; serve logs them. Each is a
// FieldError (field.path: message), in file order; a field Validate
// already reported, or could not read, gets none.
func (c *Config) Warnings() FieldErrors {
	var ws FieldErrors
	for _, name := range slices.Sorted(maps.Keys(c.Providers)) {
		p := c.Providers[name]
		path := "providers." + name + ".base_url"
		if p == nil || c.broken(path) {
			continue
		}
		if msg := baseURLWarning(p.Kind, p.BaseURL); msg != "" {
			pos := c.positions[path]
			ws = append(ws, FieldError{Path: path, Msg: msg, Line: pos.Line, Column: pos.Column})
		}
	}
	ws = append(ws, c.shortKeyWarnings()...)
	slices.SortStableFunc(ws, func(a, b FieldError) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return ws
}

// apiRoots are the API roots (the base_url an OpenAI or Anthropic SDK
// takes) of providers whose host alone is a common slip: the host answers,
// but every path the gateway appends to it is a 404. Hosts not listed
// here (a proxy, a self-hosted server) are never second-guessed.
var apiRoots = map[string]string{
	"api.openai.com":                    "/v1",
	"api.anthropic.com":                 "/v1",
	"api.groq.com":                      "/openai/v1",
	"api.together.xyz":                  "/v1",
	"api.fireworks.ai":                  "/inference/v1",
	"api.mistral.ai":                    "/v1",
	"api.x.ai":                          "/v1",
	"api.cerebras.ai":                   "/v1",
	"api.deepinfra.com":                 "/v1/openai",
	"openrouter.ai":                     "/api/v1",
	"generativelanguage.googleapis.com": "/v1beta/openai",
}

// baseURLWarning says why base is not the API root of a known provider,
// or "" when it is, or when its host is not one of apiRoots. The URL it
// shows carries neither user information nor query, which may be
// credentials.
func baseURLWarning(kind, base string) string {
	if kind != KindOpenAI && kind != KindAnthropic {
		return "" // a cloud host's URLs are its adapter's, not base_url plus a path
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "" // Validate's to report
	}
	host := strings.ToLower(u.Hostname())
	root, known := apiRoots[host]
	path := strings.TrimRight(u.EscapedPath(), "/")
	shown := u.Scheme + "://" + u.Host + path
	if !known && kind == KindOpenAI && !hasVersionSegment(path) {
		return fmt.Sprintf("%s has no version segment (such as /v1, /v1beta, /openai/v1): an OpenAI-compatible API's root ends in one, and without it requests would go to %s/chat/completions, which usually answers 404; write the provider's API root, e.g. %s/v1",
			shown, shown, shown)
	}
	if !known || path == root {
		return ""
	}
	endpoint := "/chat/completions"
	if kind == KindAnthropic {
		endpoint = "/messages"
	}
	want := u.Scheme + "://" + u.Host + root
	if path == "" {
		return fmt.Sprintf("%s has no API path: requests would go to %s%s, which answers 404; write %s",
			shown, shown, endpoint, want)
	}
	return fmt.Sprintf("%s is not the API root of %s (%s): requests would go to %s%s, which answers 404; write %s",
		shown, host, root, shown, endpoint, want)
}

// MinAPIKeyLength is the shortest provider key taken for a real one: no
// provider issues shorter keys, and a shorter value is a placeholder
// ("a", "sim", "none"). The gateway does not look for one in the
// provider's answers (it would be found in ordinary values by chance).
const MinAPIKeyLength = 8

// shortKeyWarnings warns of every provider api_key set but shorter than
// MinAPIKeyLength: a placeholder the provider will refuse, or a local
// server's, which the gateway cannot keep out of relayed headers. The
// warning never shows the key.
func (c *Config) shortKeyWarnings() FieldErrors {
	var ws FieldErrors
	for _, name := range slices.Sorted(maps.Keys(c.Providers)) {
		p := c.Providers[name]
		path := "providers." + name + ".api_key"
		if p == nil || p.APIKey == "" || len(p.APIKey) >= MinAPIKeyLength || c.broken(path) {
			continue
		}
		pos := c.positions[path]
		ws = append(ws, FieldError{Path: path, Line: pos.Line, Column: pos.Column,
			Msg: fmt.Sprintf("is %d character(s) long; no provider issues a key under %d: a placeholder the provider will refuse", len(p.APIKey), MinAPIKeyLength)})
	}
	return ws
}

// hasVersionSegment reports whether path has a segment that names an API
// version: "v" and a digit, then anything ("v1", "v1beta", "v2alpha1").
func hasVersionSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if len(seg) >= 2 && seg[0] == 'v' && seg[1] >= '0' && seg[1] <= '9' {
			return true
		}
	}
	return false
}
