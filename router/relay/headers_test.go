package relay

import (
	"net/http"
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/propagation"
)

// providerHeaders are a provider's typical unary answer headers: 18, with
// Connection: keep-alive.
func providerHeaders() http.Header {
	return http.Header{
		"Date":                           {"Mon, 30 Nov 2026 12:00:00 GMT"},
		"Content-Type":                   {"application/json"},
		"Content-Length":                 {"1234"},
		"Connection":                     {"keep-alive"},
		"Openai-Organization":            {"org-abc"},
		"Openai-Processing-Ms":           {"412"},
		"Openai-Version":                 {"2020-10-01"},
		"Strict-Transport-Security":      {"max-age=31536000; includeSubDomains; preload"},
		"X-Ratelimit-Limit-Requests":     {"10000"},
		"X-Ratelimit-Limit-Tokens":       {"2000000"},
		"X-Ratelimit-Remaining-Requests": {"9999"},
		"X-Ratelimit-Remaining-Tokens":   {"1999000"},
		"X-Ratelimit-Reset-Requests":     {"6ms"},
		"X-Ratelimit-Reset-Tokens":       {"30ms"},
		"X-Request-Id":                   {"req_0123456789abcdef"},
		"Cf-Cache-Status":                {"DYNAMIC"},
		"Set-Cookie":                     {"__cf_bm=abc; path=/; HttpOnly"},
		"Server":                         {"cloudflare"},
	}
}

// BenchmarkCopyResponseHeaders copies them as relayUnary does.
func BenchmarkCopyResponseHeaders(b *testing.B) {
	src := providerHeaders()
	dst := make(http.Header, len(src))
	b.ReportAllocs()
	for b.Loop() {
		clear(dst)
		CopyResponseHeaders(dst, src, false, "sk-provider-key")
	}
	if len(dst) != 9 { // Content-Type, Content-Length, six X-Ratelimit-*, the request id
		b.Fatalf("copied %d headers, want 9", len(dst))
	}
}

// TestCopyResponseHeadersDoesNotAllocate: the headers of every answer are
// copied without an allocation (the Connection header's tokens are matched
// in place).
func TestCopyResponseHeadersDoesNotAllocate(t *testing.T) {
	src := providerHeaders()
	dst := make(http.Header, len(src))
	if allocs := testing.AllocsPerRun(100, func() {
		clear(dst)
		CopyResponseHeaders(dst, src, false, "sk-provider-key")
	}); allocs != 0 {
		t.Errorf("%v allocations a copy, want 0", allocs)
	}
}

// TestConnectionTokensMatchAnyCase: a header a Connection header names
// stays behind whatever the case and spacing of the token.
func TestConnectionTokensMatchAnyCase(t *testing.T) {
	t.Parallel()
	src := http.Header{
		"Connection":                     {"keep-alive,  x-RATELIMIT-limit-tokens ", "X-Ratelimit-Other"},
		"X-Ratelimit-Limit-Tokens":       {"per-connection"},
		"X-Ratelimit-Other":              {"per-connection"},
		"X-Ratelimit-Remaining-Requests": {"7"},
	}
	dst := http.Header{}
	CopyResponseHeaders(dst, src, false, "")
	if len(dst) != 1 || dst.Get("X-Ratelimit-Remaining-Requests") != "7" {
		t.Errorf("copied %v, want only X-Ratelimit-Remaining-Requests", dst)
	}
	req := http.Header{"Connection": {"user-agent"}, "User-Agent": {"sdk"}, "Accept": {"*/*"}}
	out := http.Header{}
	CopyRequestHeaders(out, req, true)
	if _, ok := out["User-Agent"]; ok || out.Get("Accept") != "*/*" {
		t.Errorf("forwarded %v, want Accept and not the User-Agent the Connection header names", out)
	}
}

// HeaderCarrier reads and writes what propagation.HeaderCarrier does, for
// the trace-context keys and any other.
func TestHeaderCarrierIsHeaderCarrier(t *testing.T) {
	for _, key := range []string{"traceparent", "tracestate", "baggage", "Traceparent", "x-custom", "X-Custom"} {
		h1, h2 := http.Header{}, http.Header{}
		HeaderCarrier(h1).Set(key, "v-"+key)
		propagation.HeaderCarrier(h2).Set(key, "v-"+key)
		if !reflect.DeepEqual(h1, h2) {
			t.Errorf("Set(%q): %v, HeaderCarrier %v", key, h1, h2)
		}
		for _, get := range []string{"traceparent", "tracestate", "baggage", "x-custom", "X-CUSTOM"} {
			if a, b := HeaderCarrier(h1).Get(get), propagation.HeaderCarrier(h1).Get(get); a != b {
				t.Errorf("after Set(%q), Get(%q) = %q, HeaderCarrier's %q", key, get, a, b)
			}
		}
		if a, b := HeaderCarrier(h1).Keys(), propagation.HeaderCarrier(h1).Keys(); !reflect.DeepEqual(a, b) {
			t.Errorf("Keys() = %v, HeaderCarrier's %v", a, b)
		}
	}
}

// TestContainsSecretWholeTokens: the provider key is found only as a whole
// token (a maximal run of key characters), and only when it is of a
// realistic length: a placeholder key "a" matches nothing.
func TestContainsSecretWholeTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value, secret string
		want                bool
	}{
		{"short key never matches", "text/event-stream", "a", false},
		{"short key never matches itself", "a", "a", false},
		{"seven characters", "Bearer abcdefg", "abcdefg", false},
		{"bearer token", "Bearer abcdefgh12", "abcdefgh12", true},
		{"alone", "abcdefgh12", "abcdefgh12", true},
		{"in a list", "k=abcdefgh12, other", "abcdefgh12", true},
		{"quoted", `"abcdefgh12"`, "abcdefgh12", true},
		{"inside a longer token", "xabcdefgh12", "abcdefgh12", false},
		{"prefix of a longer token", "abcdefgh123", "abcdefgh12", false},
		{"joined by a dot", "abcdefgh12.sig", "abcdefgh12", false},
		{"second occurrence whole", "xabcdefgh12 abcdefgh12", "abcdefgh12", true},
		{"no key", "anything", "", false},
	} {
		if got := containsSecret([]string{tc.value}, tc.secret); got != tc.want {
			t.Errorf("%s: containsSecret(%q, %q) = %v, want %v", tc.name, tc.value, tc.secret, got, tc.want)
		}
	}
}

// TestScrubKeepsFraming: framing headers cross whatever their values
// hold; other allowed headers carrying the key as a token stay behind.
func TestScrubKeepsFraming(t *testing.T) {
	t.Parallel()
	const key = "abcdefgh12"
	src := http.Header{
		"Content-Type":                   {"text/event-stream; x=" + key},
		"Content-Encoding":               {key},
		"Content-Length":                 {"12"},
		"X-Ratelimit-Remaining-Requests": {"Bearer " + key},
		"X-Ratelimit-Limit-Requests":     {"x" + key},
		"X-Request-Id":                   {key},
	}
	dst := http.Header{}
	CopyResponseHeaders(dst, src, false, key)
	want := http.Header{
		"Content-Type":               src["Content-Type"],
		"Content-Encoding":           src["Content-Encoding"],
		"Content-Length":             src["Content-Length"],
		"X-Ratelimit-Limit-Requests": src["X-Ratelimit-Limit-Requests"],
	}
	if !reflect.DeepEqual(dst, want) {
		t.Errorf("copied %v, want %v", dst, want)
	}
}
