package dashboards

import "fmt"

// The dashboard's content: what an operator looks at, in the order they
// ask. Metric names and meanings are SPEC section 6; each panel's
// description says what a reading means and what to do about it.

// rows are the dashboard top to bottom.
func rows() []row {
	return []row{
		{title: "Routing: who gets the first pick", panels: []Panel{
			timeseries("Leader and exploration share", "percentunit",
				"Share of requests whose first pick was the current leader (lowest p50 TTFB) and share led on purpose by a runner-up. "+
					"least-latency aims at 9 in 10 and 1 in 10. A leader share well below 0.9 with little exploration means cold picks "+
					"(targets without live samples: a restart, a new target, samples expired) or a mode that does not rank on latency.",
				q(ratio("model", "firstbyte_selections_total", `reason="leader"`, modelSel), "{{model}} leader"),
				q(ratio("model", "firstbyte_selections_total", `reason="explore"`, modelSel), "{{model}} explore"),
			).between(0, 1),
			timeseries("First picks by reason", "reqps",
				"Why each request's first candidate led (X-Firstbyte-Selection): cold (target unmeasured), leader, explore, "+
					"order (a mode that does not rank on latency), manual (X-Firstbyte-Provider-Order).",
				q(sumBy("reason", rate("firstbyte_selections_total", modelSel)), "{{reason}}"),
			).stacked(),
			timeseries("First picks per target", "reqps",
				"Where requests go first, stacked: the leader carries about 90%, each runner-up its share of exploration. "+
					"When the lead moves, the bands swap.",
				q(sumBy("model, target", rate("firstbyte_selections_total", modelSel)), "{{target}} ({{model}})"),
			).stacked(),
			stat("Current leader",
				"The target least-latency ranks first for each model right now. Nothing here: no target of the model has a live sample yet.",
				"no leader (unmeasured)",
				query{expr: fmt.Sprintf("max by (model, target) (firstbyte_leader{%s}) == 1", modelSel), legend: "{{model}}: {{target}}", instant: true},
			).size(4, 8),
			stateTimeline("Leader over time",
				"Which target led when. A lead that flips back and forth means two targets with p50s close together; "+
					"one that moves for good, a provider that got slower (see the latency row).",
				[]ValueMapping{{Type: "value", Options: map[string]MappingResult{
					"0": {Text: " ", Color: "transparent", Index: 0},
					"1": {Text: "leader", Color: "green", Index: 1},
				}}},
				q(fmt.Sprintf("max by (model, target) (firstbyte_leader{%s})", modelSel), "{{target}} ({{model}})"),
			).size(8, 8),
		}},
		{title: "Latency: what least-latency ranks on", panels: []Panel{
			timeseries("p50 TTFB per target (tracker)", "s",
				"The router's own number: median time to first byte over each target's live samples (the last 100 within 5 minutes), "+
					"read from the tracker at scrape time. The lowest line is the leader. Averaged over the selected instances, "+
					"which share samples when fanned out through a collector.",
				q(fmt.Sprintf("avg by (model, target) (firstbyte_target_p50_seconds{%s})", modelSel), "{{target}} ({{model}})"),
			).size(8, 8),
			timeseries("TTFB quantiles per target (histogram)", "s",
				"p50 and p95 time to first byte of successful attempts from the firstbyte_ttfb_seconds histogram over the rate window: "+
					"a second opinion on the tracker, interpolated within buckets, and the tail the median hides. "+
					"Exemplars (points) open the attempt's trace through the datasource's trace_id link; "+
					"Prometheus keeps them only with --enable-feature=exemplar-storage.",
				query{expr: quantile(0.5, "model, target", "firstbyte_ttfb_seconds_bucket", modelSel), legend: "p50 {{target}} ({{model}})", exemplar: true},
				q(quantile(0.95, "model, target", "firstbyte_ttfb_seconds_bucket", modelSel), "p95 {{target}} ({{model}})"),
			).size(8, 8),
			timeseries("Live samples per target", "none",
				"TTFB samples the tracker holds per target (at most 100, each for 5 minutes). The leader sits at 100; runner-ups live on "+
					"exploration and failover traffic. A target at 0 is unmeasured: the next request tries it first (cold).",
				q(fmt.Sprintf("max by (model, target) (firstbyte_target_samples{%s})", modelSel), "{{target}} ({{model}})"),
			).size(8, 8).between(0, 100),
		}},
		{title: "Failover and errors", panels: []Panel{
			timeseries("Failed attempts by target and outcome", "reqps",
				"Upstream attempts that did not succeed, by cause: failover (a failover-safe failure: transport error, first-byte timeout, "+
					"408, 429, 5xx, context overflow, open circuit, full queue; the next candidate got the request), client_error "+
					"(a 4xx handed to the client), broken (failed after the first byte: the stream ended with an error event), "+
					"canceled (the client went away).",
				q(sumBy("target, outcome", rate("firstbyte_attempts_total", `outcome!="success", `+modelSel)), "{{target}} {{outcome}}"),
			).stacked().noValue("no failed attempts").
				override("/ failover$/", "orange").override("/ broken$/", "red").override("/ client_error$/", "purple"),
			timeseries("Failover ratio by target", "percentunit",
				"Share of each target's attempts that failed over. A target that fails often still gets tried when it ranks first; "+
					"its circuit breaker opens after consecutive failures.",
				q(ratio("target", "firstbyte_attempts_total", `outcome="failover"`, modelSel), "{{target}}"),
			).between(0, 1),
			timeseries("Attempts per request", "none",
				"Upstream attempts per client request. 1 means every request was served by its first pick; each retry or failover adds one. "+
					"Requests refused before any attempt (400, 401, 404, 413, 415) count in the denominator only.",
				q(fmt.Sprintf("%s / %s",
					sumBy("model", rate("firstbyte_attempts_total", modelSel)),
					sumBy("model", rate("firstbyte_requests_total", modelSel))), "{{model}}"),
			).decimals(3),
			stateTimeline("Circuit breaker state",
				"Open: the target failed too often in a row and is skipped (counted as a failover) until the cooldown ends. "+
					"Only targets that serve the selected models are shown.",
				[]ValueMapping{{Type: "value", Options: map[string]MappingResult{
					"0": {Text: "closed", Color: "green", Index: 0},
					"1": {Text: "open", Color: "red", Index: 1},
				}}},
				// firstbyte_circuit_open has no model label: keep the targets
				// that have a row for a selected model.
				q(fmt.Sprintf("max by (target) (firstbyte_circuit_open{%s}) and on (target) group by (target) (firstbyte_target_samples{%s})",
					instanceSel, modelSel), "{{target}}"),
			),
		}},
		{title: "Requests", panels: []Panel{
			timeseries("Requests by status code", "reqps",
				"Client requests answered, by HTTP status. Failovers are invisible here when they succeed: "+
					"a 5xx means every candidate failed, a 404 a model no target serves.",
				q(sumBy("code", rate("firstbyte_requests_total", modelSel)), "{{code}}"),
			).stacked(),
			timeseries("Non-2xx share", "percentunit",
				"Share of client requests answered with a status other than 2xx: the error rate clients see.",
				q(ratio("model", "firstbyte_requests_total", `code!~"2.."`, modelSel), "{{model}}"),
			).between(0, 1),
			timeseries("Request duration quantiles", "s",
				"Client request duration in the gateway, first byte in to last byte out (a whole stream for streaming requests).",
				q(quantile(0.5, "model", "firstbyte_request_duration_seconds_bucket", modelSel), "p50 {{model}}"),
				q(quantile(0.95, "model", "firstbyte_request_duration_seconds_bucket", modelSel), "p95 {{model}}"),
				q(quantile(0.99, "model", "firstbyte_request_duration_seconds_bucket", modelSel), "p99 {{model}}"),
			),
			timeseries("Gateway overhead quantiles", "s",
				"Time a request spent in the gateway itself: its duration minus the time spent waiting on upstreams. "+
					"Tens of microseconds normally; milliseconds point at the gateway (CPU starvation, GC), not the providers.",
				q(quantile(0.5, "model", "firstbyte_overhead_seconds_bucket", modelSel), "p50 {{model}}"),
				q(quantile(0.99, "model", "firstbyte_overhead_seconds_bucket", modelSel), "p99 {{model}}"),
			),
		}},
		{title: "Telemetry pipeline", panels: []Panel{
			timeseries("Spans consumed by source", "ops",
				"Spans the embedded aggregator learned from: local (ended in this process) and peer (other instances' spans, "+
					"fanned out by an OpenTelemetry Collector to telemetry.ingest). peer stays at 0 on a single instance.",
				q(sumBy("source", rate("firstbyte_spans_consumed_total", instanceSel)), "{{source}}"),
			),
			timeseries("Span export failures", "ops",
				"Spans dropped because the OTLP export failed (collector down or refusing). Routing is unaffected: the aggregator "+
					"gets every span before export. What is lost are the traces behind the exemplars.",
				q(sumBy("instance", rate("firstbyte_export_failures_total", instanceSel)), "{{instance}}"),
			),
		}},
	}
}

// The matchers every panel filters by: the selected models and instances.
// Model-labelled series take both; the rest only the instance.
const (
	modelSel    = `model=~"$` + VarModel + `", instance=~"$` + VarInstance + `"`
	instanceSel = `instance=~"$` + VarInstance + `"`
)

func rate(metric, matchers string) string {
	return fmt.Sprintf("rate(%s{%s}[%s])", metric, matchers, rateWindow)
}

func sumBy(by, expr string) string { return fmt.Sprintf("sum by (%s) (%s)", by, expr) }

// ratio is the share of metric's rate that part selects, per by. It is 0,
// not absent, while part has no series (no explore picks yet, no failover
// ever), so a healthy target draws a line at 0 instead of nothing.
func ratio(by, metric, part, matchers string) string {
	whole := sumBy(by, rate(metric, matchers))
	return fmt.Sprintf("(%s or 0 * %s) / %s", sumBy(by, rate(metric, part+", "+matchers)), whole, whole)
}

func quantile(q float64, by, bucket, matchers string) string {
	return fmt.Sprintf("histogram_quantile(%g, %s)", q, sumBy("le, "+by, rate(bucket, matchers)))
}

// query is a panel query before it becomes a Target.
type query struct {
	expr, legend      string
	instant, exemplar bool
}

func q(expr, legend string) query { return query{expr: expr, legend: legend} }

var promDS = DatasourceRef{Type: "prometheus", UID: "${" + VarDatasource + "}"}

func targets(qs []query) []Target {
	ts := make([]Target, len(qs))
	for i, x := range qs {
		ts[i] = Target{
			Datasource: promDS, RefID: string(rune('A' + i)), Expr: x.expr, LegendFormat: x.legend,
			EditorMode: "code", Range: !x.instant, Instant: x.instant, Exemplar: x.exemplar,
		}
	}
	return ts
}

// timeseries is a 12x8 line graph, one line per series.
func timeseries(title, unit, description string, qs ...query) Panel {
	ds := promDS
	return Panel{
		Type: "timeseries", Title: title, Description: description,
		GridPos: GridPos{W: 12, H: 8}, Datasource: &ds, Targets: targets(qs),
		FieldConfig: &FieldConfig{
			Defaults: FieldDefaults{
				Unit:       unit,
				Color:      FieldColor{Mode: "palette-classic"},
				Thresholds: baseThresholds(),
				Mappings:   []ValueMapping{},
				Custom: &FieldCustom{
					DrawStyle: "line", LineInterpolation: "linear", LineWidth: 1, FillOpacity: 10,
					ShowPoints: "never", Stacking: &Stacking{Mode: "none", Group: "A"},
				},
			},
			Overrides: []Override{},
		},
		Options: &Options{
			Legend:  &Legend{ShowLegend: true, DisplayMode: "table", Placement: "bottom", Calcs: []string{"lastNotNull", "mean", "max"}},
			Tooltip: &Tooltip{Mode: "multi", Sort: "desc"},
		},
	}
}

// stat shows each series' name (the legend), for "which one" questions.
func stat(title, description, noValue string, qs ...query) Panel {
	ds := promDS
	return Panel{
		Type: "stat", Title: title, Description: description,
		GridPos: GridPos{W: 6, H: 8}, Datasource: &ds, Targets: targets(qs),
		FieldConfig: &FieldConfig{
			Defaults: FieldDefaults{
				NoValue: noValue, Color: FieldColor{Mode: "fixed", FixedColor: "green"},
				Thresholds: baseThresholds(), Mappings: []ValueMapping{},
			},
			Overrides: []Override{},
		},
		Options: &Options{
			ReduceOptions: &ReduceOptions{Calcs: []string{"lastNotNull"}, Fields: "", Values: false},
			TextMode:      "name", ColorMode: "background", GraphMode: "none", JustifyMode: "center", Orientation: "horizontal",
		},
	}
}

// stateTimeline draws a 0/1 gauge per series as coloured bands.
func stateTimeline(title, description string, mappings []ValueMapping, qs ...query) Panel {
	ds := promDS
	merge := true
	return Panel{
		Type: "state-timeline", Title: title, Description: description,
		GridPos: GridPos{W: 12, H: 8}, Datasource: &ds, Targets: targets(qs),
		FieldConfig: &FieldConfig{
			Defaults: FieldDefaults{
				Color: FieldColor{Mode: "thresholds"}, Thresholds: baseThresholds(), Mappings: mappings,
				Custom: &FieldCustom{LineWidth: 0, FillOpacity: 80},
			},
			Overrides: []Override{},
		},
		Options: &Options{
			Legend:      &Legend{ShowLegend: false, DisplayMode: "list", Placement: "bottom", Calcs: []string{}},
			Tooltip:     &Tooltip{Mode: "single", Sort: "none"},
			ShowValue:   "never",
			MergeValues: &merge,
			AlignValue:  "left",
			RowHeight:   0.9,
		},
	}
}

func baseThresholds() *Thresholds {
	return &Thresholds{Mode: "absolute", Steps: []ThresholdStep{{Color: "green", Value: nil}}}
}

func (p Panel) size(w, h int) Panel {
	p.GridPos.W, p.GridPos.H = w, h
	return p
}

func (p Panel) stacked() Panel {
	p.FieldConfig.Defaults.Custom.Stacking = &Stacking{Mode: "normal", Group: "A"}
	p.FieldConfig.Defaults.Custom.FillOpacity = 60
	return p
}

func (p Panel) between(lo, hi float64) Panel {
	p.FieldConfig.Defaults.Min, p.FieldConfig.Defaults.Max = &lo, &hi
	return p
}

func (p Panel) decimals(n int) Panel {
	p.FieldConfig.Defaults.Decimals = &n
	return p
}

func (p Panel) noValue(s string) Panel {
	p.FieldConfig.Defaults.NoValue = s
	return p
}

// override gives the series whose legend matches regex (Grafana's /re/
// syntax) a fixed colour.
func (p Panel) override(regex, color string) Panel {
	p.FieldConfig.Overrides = append(p.FieldConfig.Overrides, Override{
		Matcher:    Matcher{ID: "byRegexp", Options: regex},
		Properties: []Property{{ID: "color", Value: FieldColor{Mode: "fixed", FixedColor: color}}},
	})
	return p
}
