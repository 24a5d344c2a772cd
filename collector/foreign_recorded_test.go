package collector

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// What the real Node instrumentation sends (recorded in docs/fleet.md) that
// the mapping must take as it is.

// targetAt is the Target the gateway derives from a provider's base_url:
// Host is url.URL.Hostname() and Port the URL's port or 443/80 by scheme,
// as router/upstream/provider.go does.
func targetAt(t *testing.T, name, baseURL, model string) Target {
	t.Helper()
	u, err := url.Parse(baseURL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = map[string]int{"https": 443, "http": 80}[u.Scheme]
	}
	return Target{Name: name, Model: model, Host: u.Hostname(), Port: port, Kind: "openai"}
}

// TestForeignHostSpelling: a host is one host however it is spelled. The
// Node OpenAI instrumentation (@opentelemetry/instrumentation-openai 0.21.0)
// sets server.address to the WHATWG URL parser's hostname of the client's
// baseURL: lowercased, and an IPv6 literal keeps its brackets
// (new URL("http://[::1]:8000/v1").hostname is "[::1]"). The gateway's
// Target.Host is Go's url.URL.Hostname() of base_url: spelled as in the
// config, an IPv6 literal without brackets ("::1").
func TestForeignHostSpelling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		baseURL string // the provider's base_url in the gateway's config
		address string // server.address on the application's span
		port    int64
	}{
		{"IPv6 literal, as semantic conventions spell it", "http://[::1]:8000/v1", "::1", 8000},
		{"IPv6 literal, as the Node instrumentation spells it", "http://[::1]:8000/v1", "[::1]", 8000},
		{"a host name in capitals in the config", "https://API.Example.com/v1", "api.example.com", 443},
		// One IPv6 address, written in full in the config and compressed
		// (and bracketed, in capitals) on the span.
		{"one IPv6 address spelled two ways", "http://[2001:0db8:0:0:0:0:0:0001]:8000/v1", "[2001:DB8::1]", 8000},
		{"one IPv6 address spelled two ways, the other way round", "http://[2001:db8::1]:8000/v1", "2001:db8:0000::0:1", 8000},
		{"an IPv4-mapped IPv6 address on the span", "http://10.0.0.7:8000/v1", "::ffff:10.0.0.7", 8000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker(newFakeClock(t0))
			agg := NewAggregator(tr, AggregatorOptions{InstanceID: "gw-self"})
			target := targetAt(t, "p", tc.baseURL, "m")
			agg.SetTargets([]Target{target})
			agg.SetForeign(ForeignOptions{Enabled: true})
			span := appSpan("app", map[string]any{"server.address": tc.address, "server.port": tc.port, "gen_ai.request.model": "m"})
			if err := agg.ConsumePeerTraces(context.Background(), buildTraces(t, span)); err != nil {
				t.Fatal(err)
			}
			if st := tr.StatsAt("p", "m", t0); st.ForeignSamples != 1 {
				t.Errorf("server.address %q, server.port %d against base_url %s (Target.Host %q, Port %d): %d foreign samples, want 1",
					tc.address, tc.port, tc.baseURL, target.Host, target.Port, st.ForeignSamples)
			}
		})
	}
}

// TestForeignUnmappedIsNoPeerSpan: an application's span that teaches
// nothing (another host, or foreign learning off) is not a peer's span, so
// it must not be counted as firstbyte_spans_consumed_total{source="peer"},
// which says that other gateways' spans arrive. With fleet.yaml every
// application span reaches every gateway: counted as peer, they would make
// that figure grow with all application traffic (HTTP, database, embedding
// spans included) and prove nothing about the gateways.
func TestForeignUnmappedIsNoPeerSpan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts ForeignOptions
		span spanFixture
	}{
		{"foreign on, another host", ForeignOptions{Enabled: true}, appSpan("app", map[string]any{"server.address": "api.example.com"})},
		{"foreign on, an HTTP client span", ForeignOptions{Enabled: true}, spanFixture{instance: "app-app", service: "app", name: "GET", kind: ptrace.SpanKindClient,
			end: t0.Add(-time.Second), attrs: map[string]any{"server.address": "db.internal", "server.port": int64(5432)}}},
		{"foreign off, a span that would map", ForeignOptions{}, appSpan("app", nil)},
		{"unary answer without unary_services", ForeignOptions{Enabled: true}, appSpan("app", map[string]any{"gen_ai.request.stream": nil})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agg, _, consumed := newForeignAggregator(t, tc.opts)
			if err := agg.ConsumePeerTraces(context.Background(), buildTraces(t, tc.span)); err != nil {
				t.Fatal(err)
			}
			if consumed[SourcePeer] != 0 || consumed[SourceForeign] != 0 {
				t.Errorf("consumed %v, want no peer and no foreign span counted", consumed)
			}
		})
	}
}
