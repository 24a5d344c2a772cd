package preference

import (
	"strings"
	"testing"
)

func TestParsePreferenceEveryField(t *testing.T) {
	t.Parallel()
	p, bad := Parse([]byte(`{"order":["a","b"],"only":["a","b","c"],"ignore":["d"],"allow_fallbacks":false,
		"sort":"throughput","preferred_max_latency":{"p50":0.5,"p99":2},"preferred_min_throughput":30,
		"max_price":{"prompt":3,"completion":15.5}}`), "provider")
	if bad != nil {
		t.Fatalf("Parse: %s: %s", bad.Field, bad.Msg)
	}
	want := "order=a,b only=a,b,c ignore=d allow_fallbacks=false sort=throughput max_latency=p50:0.5,p99:2 min_throughput=p50:30 max_price=prompt:3,completion:15.5"
	if got := p.Summary(); got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	if p, _ := Parse([]byte(`{"sort":"price","only":["a"]}`), "provider"); p.Summary() != `{"sort":"price","only":["a"]}` {
		t.Errorf("a short object's summary = %q, want the object itself", p.Summary())
	}
	if p, bad := Parse([]byte(`{"sort":null,"max_price":{"completion":1}}`), "provider"); bad != nil || p.sort != "" || p.hasPrompt || !p.hasOut || !p.maxPrice {
		t.Errorf("null sort, completion bound only: %+v %v", p, bad)
	}
}

func TestParsePreferenceRefusesWrongTypes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, field, msg string }{
		{`[]`, "provider", "must be a JSON object"},
		{`{"orderr":["a"]}`, "provider.orderr", "unknown field"},
		{`{"order":"a"}`, "provider.order", "must be an array of target names"},
		{`{"only":["a",1]}`, "provider.only[1]", "must be a string"},
		{`{"ignore":{}}`, "provider.ignore", "must be an array"},
		{`{"allow_fallbacks":"no"}`, "provider.allow_fallbacks", "must be a boolean"},
		{`{"sort":"fastest"}`, "provider.sort", "must be one of latency, throughput, price, completion"},
		{`{"sort":1}`, "provider.sort", "must be one of"},
		{`{"preferred_max_latency":"1s"}`, "provider.preferred_max_latency", "must be a number"},
		{`{"preferred_max_latency":{"p95":1}}`, "provider.preferred_max_latency.p95", "unknown field; valid: p50, p75, p90, p99"},
		{`{"preferred_min_throughput":-1}`, "provider.preferred_min_throughput", "0 or more"},
		{`{"preferred_min_throughput":{"p50":true}}`, "provider.preferred_min_throughput.p50", "must be a number"},
		{`{"max_price":3}`, "provider.max_price", "must be an object"},
		{`{"max_price":{"input":3}}`, "provider.max_price.input", "unknown field; valid: prompt, completion"},
		{`{"max_price":{"prompt":"3"}}`, "provider.max_price.prompt", "must be a number"},
	} {
		_, bad := Parse([]byte(tt.in), "provider")
		if bad == nil || bad.Field != tt.field || !strings.Contains(bad.Msg, tt.msg) {
			t.Errorf("Parse(%s) = %+v, want %s: ...%s...", tt.in, bad, tt.field, tt.msg)
		}
	}
}
