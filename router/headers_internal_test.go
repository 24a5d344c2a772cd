package router

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
		copyResponseHeaders(dst, src, false, "sk-provider-key")
	}
	if len(dst) != len(src)-3 { // Connection, Openai-Organization, Set-Cookie stay behind
		b.Fatalf("copied %d headers, want %d", len(dst), len(src)-3)
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
		copyResponseHeaders(dst, src, false, "sk-provider-key")
	}); allocs != 0 {
		t.Errorf("%v allocations a copy, want 0", allocs)
	}
}

// TestConnectionTokensMatchAnyCase: a header a Connection header names
// stays behind whatever the case and spacing of the token.
func TestConnectionTokensMatchAnyCase(t *testing.T) {
	t.Parallel()
	src := http.Header{
		"Connection":   {"keep-alive,  x-UP-hop ", "X-Other"},
		"X-Up-Hop":     {"per-connection"},
		"X-Other":      {"per-connection"},
		"X-Request-Id": {"req-1"},
	}
	dst := http.Header{}
	copyResponseHeaders(dst, src, false, "")
	if len(dst) != 1 || dst.Get("X-Request-Id") != "req-1" {
		t.Errorf("copied %v, want only X-Request-Id", dst)
	}
	req := http.Header{"Connection": {"user-agent"}, "User-Agent": {"sdk"}, "Accept": {"*/*"}}
	out := http.Header{}
	copyRequestHeaders(out, req, true)
	if _, ok := out["User-Agent"]; ok || out.Get("Accept") != "*/*" {
		t.Errorf("forwarded %v, want Accept and not the User-Agent the Connection header names", out)
	}
}

// headerCarrier reads and writes what propagation.HeaderCarrier does, for
// the trace-context keys and any other.
func TestHeaderCarrierIsHeaderCarrier(t *testing.T) {
	for _, key := range []string{"traceparent", "tracestate", "baggage", "Traceparent", "x-custom", "X-Custom"} {
		h1, h2 := http.Header{}, http.Header{}
		headerCarrier(h1).Set(key, "v-"+key)
		propagation.HeaderCarrier(h2).Set(key, "v-"+key)
		if !reflect.DeepEqual(h1, h2) {
			t.Errorf("Set(%q): %v, HeaderCarrier %v", key, h1, h2)
		}
		for _, get := range []string{"traceparent", "tracestate", "baggage", "x-custom", "X-CUSTOM"} {
			if a, b := headerCarrier(h1).Get(get), propagation.HeaderCarrier(h1).Get(get); a != b {
				t.Errorf("after Set(%q), Get(%q) = %q, HeaderCarrier's %q", key, get, a, b)
			}
		}
		if a, b := headerCarrier(h1).Keys(), propagation.HeaderCarrier(h1).Keys(); !reflect.DeepEqual(a, b) {
			t.Errorf("Keys() = %v, HeaderCarrier's %v", a, b)
		}
	}
}
