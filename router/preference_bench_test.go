package router_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/internal/benchutil"
	"github.com/firstbyte-dev/firstbyte/router/preference"
)

// BenchmarkUnaryHandlerPreference: what a request's provider preferences
// cost beside the same request without, three targets, least-latency, no
// telemetry (the router's own work): the difference between "none" and
// each other sub-benchmark is what parsing, checking, filtering, ordering
// and stripping the preferences add. Goal: at most 5 µs.
func BenchmarkUnaryHandlerPreference(b *testing.B) {
	yaml := `strategy: {mode: least-latency}
providers:
  a: {base_url: "http://upstream.invalid/v1", api_key: key-a, models: [m], pricing: {m: {input: 1, output: 2}}}
  b: {base_url: "http://upstream.invalid/v1", api_key: key-b, models: [m], pricing: {m: {input: 3, output: 15}}}
  c: {base_url: "http://upstream.invalid/v1", api_key: key-c, models: [m]}
targets: [{virtual_key: a}, {virtual_key: b}, {virtual_key: c}]
`
	const pref = `{"order":["b"],"ignore":["c"],"sort":"latency","preferred_max_latency":{"p50":1,"p90":2},"preferred_min_throughput":20,"max_price":{"prompt":5,"completion":20}}`
	withBody := strings.Replace(benchChatRequest, `{"model":"m",`, `{"model":"m","provider":`+pref+`,`, 1)
	for _, v := range []struct{ name, body, header string }{
		{"none", benchChatRequest, ""},
		{"body", withBody, ""},
		{"header", benchChatRequest, pref},
	} {
		b.Run(v.name, func(b *testing.B) {
			h := benchGatewayYAML(b, yaml, handlerOptions(b, false, false, unaryMemTransport())).Handler()
			req, body := benchRequest(v.body)
			if v.header != "" {
				req.Header.Set(preference.Header, v.header)
			}
			b.ReportAllocs()
			cpu := benchutil.ProcessCPU(b)
			defer reportCPU(b, cpu)
			for b.Loop() {
				body.rewind()
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
