package dashboards

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Helpers shared by the unit tests and the integration test: reading
// metric names out of queries and substituting Grafana's variables.

// selectorRE finds series selectors: a firstbyte metric name and its
// optional {matchers}. Every metric firstbyte exposes starts firstbyte_;
// label values never contain the underscore-suffixed prefix.
var selectorRE = regexp.MustCompile(`\b(firstbyte_[a-zA-Z0-9_]+)(\{[^}]*\})?`)

// metricsIn returns the metric names expr selects, sorted, without repeats.
func metricsIn(expr string) []string {
	seen := map[string]bool{}
	for _, m := range selectorRE.FindAllStringSubmatch(expr, -1) {
		seen[m[1]] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// grafanaBuiltins are the variables Grafana itself defines that the
// queries may use.
var grafanaBuiltins = map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}

var variableRE = regexp.MustCompile(`\$(\w+)|\$\{(\w+)\}`)

// expand substitutes $name and ${name} from vars, as Grafana does before
// sending a query, and returns the names it found no value for.
func expand(expr string, vars map[string]string) (string, []string) {
	var missing []string
	out := variableRE.ReplaceAllStringFunc(expr, func(m string) string {
		sub := variableRE.FindStringSubmatch(m)
		name := sub[1] + sub[2]
		if v, ok := vars[name]; ok {
			return v
		}
		missing = append(missing, name)
		return m
	})
	return out, missing
}

// regexValue is a single value of a multi-value variable as Grafana's
// Prometheus datasource substitutes it into a =~ matcher: regex
// metacharacters escaped, then backslashes doubled for the PromQL string.
func regexValue(s string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(s), `\`, `\\`)
}

// family is one metric family of an exposition.
type family struct {
	typ    dto.MetricType
	labels map[string]bool
}

// seriesNames are the names a family's samples carry in the exposition
// (and so in PromQL): a histogram's _bucket, _sum and _count.
func seriesNames(name string, typ dto.MetricType) []string {
	switch typ {
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		return []string{name + "_bucket", name + "_sum", name + "_count"}
	case dto.MetricType_SUMMARY:
		return []string{name, name + "_sum", name + "_count"}
	}
	return []string{name}
}

// gatewayMetrics is what the gateway's own metric code exposes after one
// answered request: collector.NewMetrics fed a SERVER span and its first
// attempt's CLIENT span (exactly the spans the aggregator hands it), and
// the routing gauges with one row. It returns the families by series name
// and the label names the TTFB histogram's exemplars carry.
//
// The integration test checks the same against the real binary's /metrics;
// this one runs in milliseconds and names the code to look at.
func gatewayMetrics(t *testing.T) (map[string]family, []string) {
	t.Helper()
	reg := collector.NewRegistry()
	m := collector.NewMetrics(reg)
	collector.NewLifecycle(reg)
	m.SetPrices([]collector.Target{{Name: "t", Model: "up", Priced: true, Price: collector.TokenPrice{Input: 1, Output: 2}}})
	reg.MustRegister(collector.NewRoutingCollector(func() []collector.RoutingRow {
		return []collector.RoutingRow{{Model: "m", Target: "t", P50Seconds: 0.05, Samples: 1, Leader: true, FaultRate: 0.1, Outcomes: 10,
			PredictedCompletionSeconds: 1.2, HasPrediction: true, RateSamples: 1, OutputRate: [4]float64{50, 50, 50, 50}}}
	}))

	//   [server span: POST /v1/chat/completions, model m, 200, 0.15 s upstream wait,
	//    event firstbyte.skip: target t2, circuit_open]
	//     └─ [attempt span: target t (upstream model up, priced), attempt 1,
	//         selection leader, success, TTFB 0.05 s, 100 input and 20 output tokens]
	traces := ptrace.NewTraces()
	rs := traces.ResourceSpans().AppendEmpty()
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	traceID := pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	server := spans.AppendEmpty()
	server.SetKind(ptrace.SpanKindServer)
	server.SetTraceID(traceID)
	server.SetStartTimestamp(1_000_000_000)
	server.SetEndTimestamp(1_200_000_000)
	server.Attributes().PutStr(string(telemetry.KeyRequestedModel), "m")
	server.Attributes().PutInt(string(telemetry.KeyHTTPStatus), 200)
	server.Attributes().PutDouble(string(telemetry.KeyUpstreamWait), 0.15)
	server.Attributes().PutStr(string(telemetry.KeyHedge), "won")
	skip := server.Events().AppendEmpty()
	skip.SetName(telemetry.EventSkip)
	skip.Attributes().PutStr(string(telemetry.KeyTarget), "t2")
	skip.Attributes().PutStr(string(telemetry.KeySkipReason), "circuit_open")
	attempt := spans.AppendEmpty()
	attempt.SetKind(ptrace.SpanKindClient)
	attempt.SetTraceID(traceID)
	attempt.SetFlags(1) // sampled: exported, so an exemplar may link to it
	attempt.SetStartTimestamp(1_010_000_000)
	attempt.SetEndTimestamp(1_160_000_000)
	attempt.Attributes().PutStr(string(telemetry.KeyTarget), "t")
	attempt.Attributes().PutStr(string(telemetry.KeyRequestedModel), "m")
	attempt.Attributes().PutStr(string(telemetry.KeyOutcome), telemetry.OutcomeSuccess)
	attempt.Attributes().PutInt(string(telemetry.KeyAttempt), 1)
	attempt.Attributes().PutStr(string(telemetry.KeySelection), telemetry.SelectionLeader)
	attempt.Attributes().PutDouble(string(telemetry.KeyTimeToFirstByte), 0.05)
	attempt.Attributes().PutStr(string(telemetry.KeyRequestModel), "up")
	attempt.Attributes().PutInt(string(telemetry.KeyInputTokens), 100)
	attempt.Attributes().PutInt(string(telemetry.KeyOutputTokens), 20)
	for i := 0; i < spans.Len(); i++ {
		m.ObserveSpan(rs.Resource(), spans.At(i))
	}
	m.SpanConsumed(collector.SourceLocal)
	m.ExportFailed(0)
	m.IngestRejected(collector.RejectUnknownTarget, 1)

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering the gateway's metrics: %v", err)
	}
	families := map[string]family{}
	exemplarLabels := map[string]bool{}
	for _, mf := range mfs {
		f := family{typ: mf.GetType(), labels: map[string]bool{}}
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				f.labels[l.GetName()] = true
			}
			for _, b := range s.GetHistogram().GetBucket() {
				for _, l := range b.GetExemplar().GetLabel() {
					if mf.GetName() == "firstbyte_ttfb_seconds" {
						exemplarLabels[l.GetName()] = true
					}
				}
			}
		}
		for _, n := range seriesNames(mf.GetName(), mf.GetType()) {
			families[n] = f
		}
	}
	var exLabels []string
	for l := range exemplarLabels {
		exLabels = append(exLabels, l)
	}
	sort.Strings(exLabels)
	return families, exLabels
}

// A query naming a metric the gateway does not expose draws "No data"
// forever; a typo is enough.
func TestQueriesUseExposedMetrics(t *testing.T) {
	t.Parallel()
	exposed, _ := gatewayMetrics(t)
	for _, q := range Queries() {
		names := metricsIn(q.Expr)
		if len(names) == 0 {
			t.Errorf("panel %q query %s selects no firstbyte_ metric: %s", q.Panel, q.RefID, q.Expr)
		}
		for _, n := range names {
			if _, ok := exposed[n]; !ok {
				t.Errorf("panel %q query %s uses %s, which the gateway does not expose (collector/metrics.go, collector/gauges.go); exposed: %v",
					q.Panel, q.RefID, n, sortedKeys(exposed))
			}
		}
	}
}

// The Model and Instance selectors must filter every panel; a selector
// without the matcher silently shows every model or instance.
func TestQueriesFilterBySelectedModelAndInstance(t *testing.T) {
	t.Parallel()
	exposed, _ := gatewayMetrics(t)
	modelMatcher := `model=~"$` + VarModel + `"`
	instanceMatcher := `instance=~"$` + VarInstance + `"`
	for _, q := range Queries() {
		for _, sel := range selectorRE.FindAllStringSubmatch(q.Expr, -1) {
			name, matchers := sel[1], sel[2]
			if !strings.Contains(matchers, instanceMatcher) {
				t.Errorf("panel %q query %s: %s%s lacks %s, so the Instance selector does not filter it", q.Panel, q.RefID, name, matchers, instanceMatcher)
			}
			if exposed[name].labels["model"] && !strings.Contains(matchers, modelMatcher) {
				t.Errorf("panel %q query %s: %s%s has a model label but lacks %s, so the Model selector does not filter it", q.Panel, q.RefID, name, matchers, modelMatcher)
			}
		}
	}
}

// Every $variable a query uses must be one the dashboard defines or a
// Grafana built-in; an undefined one reaches Prometheus as a literal "$x".
func TestQueryVariablesAreDefined(t *testing.T) {
	t.Parallel()
	d, err := model()
	if err != nil {
		t.Fatalf("building the dashboard: %v", err)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = "x"
	}
	for name := range grafanaBuiltins {
		vars[name] = "1m"
	}
	for _, q := range Queries() {
		if _, missing := expand(q.Expr, vars); len(missing) > 0 {
			t.Errorf("panel %q query %s uses undefined variables %v: %s", q.Panel, q.RefID, missing, q.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Query == nil || v.Query.String == nil {
			t.Errorf("variable %s has no query string", v.Name)
			continue
		}
		if _, missing := expand(*v.Query.String, vars); len(missing) > 0 {
			t.Errorf("variable %s's query uses undefined variables %v: %s", v.Name, missing, *v.Query.String)
		}
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		missing        []string
	}{
		{"plain and braced", `rate(x{model=~"$model"}[${__rate_interval}])`, `rate(x{model=~"llama-3\\.3"}[1m])`, nil},
		{"longest name wins", `$model_x $model`, `$model_x llama-3\\.3`, []string{"model_x"}},
		{"unknown kept", `x[$__range]`, `x[$__range]`, []string{"__range"}},
	}
	vars := map[string]string{"model": regexValue("llama-3.3"), "__rate_interval": "1m"}
	for _, tt := range tests {
		got, missing := expand(tt.in, vars)
		if got != tt.want || strings.Join(missing, ",") != strings.Join(tt.missing, ",") {
			t.Errorf("%s: expand(%q) = %q, %v; want %q, %v", tt.name, tt.in, got, missing, tt.want, tt.missing)
		}
	}
}

func TestMetricsIn(t *testing.T) {
	t.Parallel()
	got := metricsIn(`sum(rate(firstbyte_a_total{job="firstbyte"}[1m])) / sum(firstbyte_b) or firstbyte_a_total`)
	if want := "firstbyte_a_total,firstbyte_b"; strings.Join(got, ",") != want {
		t.Errorf("metricsIn = %v, want %s", got, want)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
