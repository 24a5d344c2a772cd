package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// The dashboard's content: what an operator looks at, in the order they
// ask. Each panel's description says what a reading means and what to do
// about it; docs/observability.md walks through the same panels.

// rows are the dashboard top to bottom. Within a row, panel widths add up
// to whole lines of 24 (the SDK places panels left to right).
func rows() []row {
	return []row{
		{title: "Routing: who gets the first pick", panels: []cog.Builder[dashboard.Panel]{
			timeSeries("Leader and exploration share", "percentunit",
				"Share of requests whose first pick was the current leader (lowest p50 TTFB) and share led on purpose by a runner-up. "+
					"least-latency aims at 9 in 10 and 1 in 10. A leader share well below 0.9 with little exploration means cold picks "+
					"(targets without live samples: a restart, a new target, samples expired) or a mode that does not rank on latency.",
				q(ratio("model", "firstbyte_selections_total", `reason="leader"`, modelSel), "{{model}} leader"),
				q(ratio("model", "firstbyte_selections_total", `reason="explore"`, modelSel), "{{model}} explore"),
			).Min(0).Max(1),
			timeSeries("First picks by reason", "reqps",
				"Why each request's first candidate led (X-Firstbyte-Selection): cold (target unmeasured), leader, explore, "+
					"order (a mode that does not rank on latency), manual (X-Firstbyte-Provider-Order).",
				q(sumBy("reason", rate("firstbyte_selections_total", modelSel)), "{{reason}}"),
			).Stacking(stackNormal()).FillOpacity(stackedFill),
			timeSeries("First picks per target", "reqps",
				"Where requests go first, stacked: the leader carries about 90%, each runner-up its share of exploration. "+
					"When the lead moves, the bands swap.",
				q(sumBy("model, target", rate("firstbyte_selections_total", modelSel)), "{{target}} ({{model}})"),
			).Stacking(stackNormal()).FillOpacity(stackedFill),
			statPanel("Current leader",
				"The target least-latency ranks first for each model right now. Nothing here: no target of the model has a live sample yet.",
				"no leader (unmeasured)",
				q(fmt.Sprintf("max by (model, target) (firstbyte_leader{%s}) == 1", modelSel), "{{model}}: {{target}}").Instant(),
			).Span(4).Height(8),
			stateTimeline("Leader over time",
				"Which target led when. A lead that flips back and forth means two targets with p50s close together; "+
					"one that moves for good, a provider that got slower (see the latency row).",
				valueMap(map[string]dashboard.ValueMappingResult{
					"0": mapTo(" ", "transparent", 0),
					"1": mapTo("leader", "green", 1),
				}),
				q(fmt.Sprintf("max by (model, target) (firstbyte_leader{%s})", modelSel), "{{target}} ({{model}})"),
			).Span(8).Height(8),
		}},
		{title: "Latency: what least-latency ranks on", panels: []cog.Builder[dashboard.Panel]{
			timeSeries("p50 TTFB per target (tracker)", "s",
				"The router's own number: median time to first byte over each target's live samples (the last 100 within 5 minutes), "+
					"read from the tracker at scrape time. The lowest line is the leader. Averaged over the selected instances, "+
					"which share samples when fanned out through a collector.",
				q(fmt.Sprintf("avg by (model, target) (firstbyte_target_p50_seconds{%s})", modelSel), "{{target}} ({{model}})"),
			).Span(8).Height(8),
			timeSeries("TTFB quantiles per target (histogram)", "s",
				"p50 and p95 time to first byte of successful attempts from the firstbyte_ttfb_seconds histogram over the rate window: "+
					"a second opinion on the tracker, interpolated within buckets, and the tail the median hides. "+
					"Exemplars (points) open the attempt's trace through the datasource's trace_id link; "+
					"Prometheus keeps them only with --enable-feature=exemplar-storage.",
				q(quantile(0.5, "model, target", "firstbyte_ttfb_seconds_bucket", modelSel), "p50 {{target}} ({{model}})").Exemplar(true),
				q(quantile(0.95, "model, target", "firstbyte_ttfb_seconds_bucket", modelSel), "p95 {{target}} ({{model}})"),
			).Span(8).Height(8),
			timeSeries("Live samples per target", "none",
				"TTFB samples the tracker holds per target (at most 100, each for 5 minutes). The leader sits at 100; runner-ups live on "+
					"exploration and failover traffic. A target at 0 is unmeasured: the next request tries it first (cold).",
				q(fmt.Sprintf("max by (model, target) (firstbyte_target_samples{%s})", modelSel), "{{target}} ({{model}})"),
			).Span(8).Height(8).Min(0).Max(100),
			heatmapPanel("TTFB distribution (histogram buckets)",
				"How many successful attempts' time to first byte fell in each bucket of firstbyte_ttfb_seconds over time, all "+
					"targets of the selected models together. The buckets are the OpenTelemetry GenAI conventions' for time to "+
					"first chunk, doubling from 10 ms to 81.92 s: two bands mean two providers far apart, a band that climbs "+
					"a provider getting slower.",
				q(sumBy("le", rate("firstbyte_ttfb_seconds_bucket", modelSel)), "{{le}}").Format(prometheus.PromQueryFormatHeatmap),
			).Span(24).Height(8),
		}},
		{title: "Completion: what least-completion ranks on", panels: []cog.Builder[dashboard.Panel]{
			timeSeries("Predicted time to the last token per target", "s",
				"What a caller of an answer of the model's usual length would wait at each target: p50 time to first byte (scaled "+
					"by the load a new request would meet) + expected output tokens / p50 output rate. least-completion ranks on it; "+
					"the lowest line is its leader. A target starting fast but streaming slowly sits above one that starts later "+
					"and streams faster once answers are long. No line: the target has no streamed answer yet (a unary answer "+
					"gives no output rate).",
				q(fmt.Sprintf("avg by (model, target) (firstbyte_predicted_completion_seconds{%s})", modelSel), "{{target}} ({{model}})"),
			).Span(12).Height(8),
			timeSeries("Output rate percentiles per target (tracker)", "none",
				"Output tokens per second after the first chunk over each target's live streamed answers (the last 100 within 5 "+
					"minutes): p50, p75, p90, p99. least-completion reads the p50. Of fewer than 10 samples every percentile is "+
					"the largest one, so the lines meet until a target has 10.",
				q(fmt.Sprintf("avg by (model, target, percentile) (firstbyte_target_output_tokens_per_second{%s})", modelSel), "{{percentile}} {{target}} ({{model}})"),
			).Span(12).Height(8).Min(0),
		}},
		{title: "Failover and errors", panels: []cog.Builder[dashboard.Panel]{
			timeSeries("Failed attempts by target and outcome", "reqps",
				"Upstream attempts that did not succeed, by cause: failover (a failover-safe failure: transport error, first-byte timeout, "+
					"408, 429, 5xx, context overflow, open circuit, full queue; the next candidate got the request), client_error "+
					"(a 4xx handed to the client), broken (failed after the first byte: the stream ended with an error event), "+
					"canceled (the client went away). A hedge's loser (hedge_lost) is not a failure: see Hedges per request.",
				q(sumBy("target, outcome", rate("firstbyte_attempts_total", `outcome!~"success|hedge_lost", `+modelSel)), "{{target}} {{outcome}}"),
			).Stacking(stackNormal()).FillOpacity(stackedFill).
				NoValue("no failed attempts").
				OverrideByRegexp("/ failover$/", fixedColor("orange")).
				OverrideByRegexp("/ broken$/", fixedColor("red")).
				OverrideByRegexp("/ client_error$/", fixedColor("purple")),
			timeSeries("Failover ratio by target", "percentunit",
				"Share of each target's attempts that failed over. A target that fails often still gets tried when it ranks first; "+
					"its circuit breaker opens after consecutive failures.",
				q(ratio("target", "firstbyte_attempts_total", `outcome="failover"`, modelSel), "{{target}}"),
			).Min(0).Max(1),
			timeSeries("Fault rate per target (tracker)", "percentunit",
				"The router's own fault rate: the share of each target's live attempt outcomes that were provider faults "+
					"(transport errors, timeouts, 408, 429, 5xx; a provider's 400/422 counts half), read from the tracker at "+
					"scrape time. reliable-latency divides a target's latency by 1 minus it; a target whose live outcomes are "+
					"only faults ranks after every measured one.",
				q(fmt.Sprintf("max by (model, target) (firstbyte_target_fault_rate{%s})", modelSel), "{{target}} ({{model}})"),
			).Min(0).Max(1),
			timeSeries("Skips per target", "reqps",
				"Targets passed over without an attempt, by reason: circuit_open (its breaker is open: tried again after the "+
					"cooldown, by one probe) or queue_full (max_concurrency reached and its queue full). A skip is not an "+
					"attempt and costs no time; the request went to the next candidate (X-Firstbyte-Skipped). 0 for a healthy "+
					"target. Only targets that serve the selected models are shown.",
				// firstbyte_skips_total has no model label, and a target that was
				// never skipped has no series: keep the targets of the selected
				// models, and draw 0 for those without skips.
				q(fmt.Sprintf("(sum by (target, reason) (%s) and on (target) %s) or on (target) 0 * %s",
					rate("firstbyte_skips_total", instanceSel), targetsOfModels, targetsOfModels), "{{target}} {{reason}}"),
			).Stacking(stackNormal()).FillOpacity(stackedFill).
				OverrideByRegexp("/ circuit_open$/", fixedColor("red")).
				OverrideByRegexp("/ queue_full$/", fixedColor("orange")),
			timeSeries("Hedges per request", "percentunit",
				"With strategy.hedge on: the share of requests whose late attempt got a hedge beside it, by result: won (the "+
					"hedge served: a slow moment the hedge saved), lost (the first attempt answered first after all: tokens "+
					"spent for nothing), denied (a hedge was due and the budget refused it). won over won plus lost is the "+
					"win share. strategy.hedge.budget bounds won plus lost. 0 with hedging off.",
				q(hedgeShare("won", modelSel), "{{model}} won"),
				q(hedgeShare("lost", modelSel), "{{model}} lost"),
				q(hedgeShare("denied", modelSel), "{{model}} denied"),
			).Min(0),
			timeSeries("Attempts per request", "none",
				"Upstream attempts per client request. 1 means every request was served by its first pick; each retry or failover adds one. "+
					"Requests refused before any attempt (400, 401, 404, 413, 415) count in the denominator only.",
				q(fmt.Sprintf("%s / %s",
					sumBy("model", rate("firstbyte_attempts_total", modelSel)),
					sumBy("model", rate("firstbyte_requests_total", modelSel))), "{{model}}"),
			).Decimals(3),
			stateTimeline("Circuit breaker state",
				"Open: the target failed too often in a row and is skipped (counted as a failover) until the cooldown ends. "+
					"Only targets that serve the selected models are shown.",
				valueMap(map[string]dashboard.ValueMappingResult{
					"0": mapTo("closed", "green", 0),
					"1": mapTo("open", "red", 1),
				}),
				// firstbyte_circuit_open has no model label: keep the targets
				// that have a row for a selected model.
				q(fmt.Sprintf("max by (target) (firstbyte_circuit_open{%s}) and on (target) %s", instanceSel, targetsOfModels), "{{target}}"),
			),
		}},
		{title: "Tokens and cost", panels: []cog.Builder[dashboard.Panel]{
			timeSeries("Tokens per target", "short",
				"Tokens the upstreams reported per second, by target and type (input: the prompt, cached tokens included; "+
					"output: the completion), from gen_ai.usage.* on the attempt spans. A target whose answers carry no usage "+
					"counts nothing.",
				q(sumBy("target, type", rate("firstbyte_tokens_total", modelSel)), "{{target}} {{type}}"),
			).Stacking(stackNormal()).FillOpacity(stackedFill),
			timeSeries("Cost per target", "currencyUSD",
				"What those tokens cost per hour by each provider's pricing rate card (USD per million input and output tokens "+
					"of the upstream model). Unpriced targets count nothing. A routing change shows here as a step.",
				q(fmt.Sprintf("3600 * %s", sumBy("target", rate("firstbyte_cost_usd_total", modelSel))), "{{target}}"),
			).Stacking(stackNormal()).FillOpacity(stackedFill),
		}},
		{title: "Requests", panels: []cog.Builder[dashboard.Panel]{
			timeSeries("Requests by status code", "reqps",
				"Client requests answered, by HTTP status. Failovers are invisible here when they succeed: "+
					"a 5xx means every candidate failed, a 404 a model no target serves.",
				q(sumBy("code", rate("firstbyte_requests_total", modelSel)), "{{code}}"),
			).Stacking(stackNormal()).FillOpacity(stackedFill),
			timeSeries("Non-2xx share", "percentunit",
				"Share of client requests answered with a status other than 2xx: the error rate clients see.",
				q(ratio("model", "firstbyte_requests_total", `code!~"2.."`, modelSel), "{{model}}"),
			).Min(0).Max(1),
			timeSeries("Request duration quantiles", "s",
				"Client request duration in the gateway, first byte in to last byte out (a whole stream for streaming requests).",
				q(quantile(0.5, "model", "firstbyte_request_duration_seconds_bucket", modelSel), "p50 {{model}}"),
				q(quantile(0.95, "model", "firstbyte_request_duration_seconds_bucket", modelSel), "p95 {{model}}"),
				q(quantile(0.99, "model", "firstbyte_request_duration_seconds_bucket", modelSel), "p99 {{model}}"),
			),
			timeSeries("Gateway overhead quantiles", "s",
				"Time a request spent in the gateway itself: its duration minus the time spent waiting on upstreams. "+
					"Tens of microseconds normally; milliseconds point at the gateway (CPU starvation, GC), not the providers.",
				q(quantile(0.5, "model", "firstbyte_overhead_seconds_bucket", modelSel), "p50 {{model}}"),
				q(quantile(0.99, "model", "firstbyte_overhead_seconds_bucket", modelSel), "p99 {{model}}"),
			),
		}},
		{title: "Telemetry pipeline", panels: []cog.Builder[dashboard.Panel]{
			timeSeries("Spans consumed by source", "ops",
				"Spans the embedded aggregator learned from: local (ended in this process) and peer (other instances' spans, "+
					"fanned out by an OpenTelemetry Collector to telemetry.ingest). peer stays at 0 on a single instance.",
				q(sumBy("source", rate("firstbyte_spans_consumed_total", instanceSel)), "{{source}}"),
			),
			timeSeries("Span export failures and drops", "ops",
				"export failed: spans lost because the OTLP export failed (collector down or refusing). dropped: spans the "+
					"metrics and export side let go because its queue was full (it runs off the request path and is never "+
					"waited for; above 0 means the process is short of CPU). Routing is unaffected by either: the tracker "+
					"learns from every span before they happen. What is lost are the traces behind the exemplars, and for "+
					"drops these panels' counts.",
				q(sumBy("instance", rate("firstbyte_export_failures_total", instanceSel)), "export failed {{instance}}"),
				q(sumBy("instance", rate("firstbyte_spans_dropped_total", instanceSel)), "dropped {{instance}}"),
			),
			timeSeries("Ingest rejections", "ops",
				"What this instance's trace ingest (admin POST /v1/traces) refused, by reason: unknown_target counts spans "+
					"naming a target or model this instance does not route to (a peer with another config, or a payload trying to "+
					"steer routing); the others count whole requests: unauthorized (wrong ingest token), too_large, too_deep, "+
					"undecodable, unsupported (content type), busy (too many at once; the collector retries). 0 normally.",
				q(sumBy("reason", rate("firstbyte_ingest_rejected_total", instanceSel)), "{{reason}}"),
			),
			timeSeries("Config reloads", "short",
				"Reloads (SIGHUP or POST /admin/reload) by result over the rate window: ok (the new config serves) or refused "+
					"(it failed check, or changed what needs a restart; the old config kept serving and the reason is in the log).",
				q(sumBy("result", fmt.Sprintf("increase(firstbyte_reloads_total{%s}[$__rate_interval])", instanceSel)), "{{result}}"),
			).OverrideByRegexp("/refused/", fixedColor("red")),
		}},
	}
}

// The matchers every panel filters by: the selected models and instances.
// Model-labelled series take both; the rest only the instance.
const (
	modelSel    = `model=~"$` + VarModel + `", instance=~"$` + VarInstance + `"`
	instanceSel = `instance=~"$` + VarInstance + `"`
)

// targetsOfModels is one series per target that serves a selected model
// (every configured target has a firstbyte_target_samples row, sampled or
// not): the filter for series that carry a target but no model label.
var targetsOfModels = fmt.Sprintf("group by (target) (firstbyte_target_samples{%s})", modelSel)

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

// hedgeShare is the share of each model's requests whose hedge ended with
// result; 0, not absent, while there is none.
func hedgeShare(result, matchers string) string {
	requests := sumBy("model", rate("firstbyte_requests_total", matchers))
	return fmt.Sprintf("(%s or 0 * %s) / %s", sumBy("model", rate("firstbyte_hedges_total", `result="`+result+`", `+matchers)), requests, requests)
}

func quantile(q float64, by, bucket, matchers string) string {
	return fmt.Sprintf("histogram_quantile(%g, %s)", q, sumBy("le, "+by, rate(bucket, matchers)))
}

// promDS is the datasource of every panel and query: the one the
// dashboard's Prometheus selector picks.
var promDS = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${" + VarDatasource + "}")}

// q is a range query as written in Grafana's code editor; chain .Instant()
// or .Exemplar(true) for the exceptions.
func q(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(promDS).
		Expr(expr).
		LegendFormat(legend).
		EditorMode(prometheus.QueryEditorModeCode).
		Range()
}

// panelBuilder is what every panel type's SDK builder has in common: the
// setters panel() needs, each returning the builder itself.
type panelBuilder[P any] interface {
	cog.Builder[dashboard.Panel]
	Title(string) P
	Description(string) P
	Datasource(common.DataSourceRef) P
	Span(uint32) P
	Height(uint32) P
	WithTarget(cog.Builder[variants.Dataquery]) P
}

// panel sets what every panel has: title, description, the Prometheus
// datasource, a w x h size (callers may chain Span/Height to change it),
// and the queries with refIds A, B, ... in order.
func panel[P panelBuilder[P]](p P, title, description string, w, h uint32, qs []*prometheus.DataqueryBuilder) P {
	p.Title(title)
	p.Description(description)
	p.Datasource(promDS)
	p.Span(w)
	p.Height(h)
	for i, x := range qs {
		p.WithTarget(x.RefId(string(rune('A' + i))))
	}
	return p
}

// timeSeries is a 12x8 line graph, one line per series, with a table legend
// (last, mean, max) and a tooltip listing every series.
func timeSeries(title, unit, description string, qs ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	return panel(timeseries.NewPanelBuilder(), title, description, 12, 8, qs).
		Unit(unit).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdPaletteClassic)).
		Thresholds(baseThresholds()).
		Mappings([]dashboard.ValueMapping{}).
		DrawStyle(common.GraphDrawStyleLine).
		LineInterpolation(common.LineInterpolationLinear).
		LineWidth(1).
		FillOpacity(10).
		ShowPoints(common.VisibilityModeNever).
		Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNone).Group("A")).
		Legend(common.NewVizLegendOptionsBuilder().
			ShowLegend(true).
			DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).
			Calcs([]string{"lastNotNull", "mean", "max"})).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderDescending))
}

// stackedFill is the fill of stacked series: bands, not lines.
const stackedFill = 60

func stackNormal() *common.StackingConfigBuilder {
	return common.NewStackingConfigBuilder().Mode(common.StackingModeNormal).Group("A")
}

// statPanel is a 6x8 stat showing each series' name (the legend), for
// "which one" questions, on a green background; noValue when there is none.
func statPanel(title, description, noValue string, qs ...*prometheus.DataqueryBuilder) *stat.PanelBuilder {
	return panel(stat.NewPanelBuilder(), title, description, 6, 8, qs).
		NoValue(noValue).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor("green")).
		Thresholds(baseThresholds()).
		Mappings([]dashboard.ValueMapping{}).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Fields("").Values(false)).
		TextMode(common.BigValueTextModeName).
		ColorMode(common.BigValueColorModeBackground).
		GraphMode(common.BigValueGraphModeNone).
		JustifyMode(common.BigValueJustifyModeCenter).
		Orientation(common.VizOrientationHorizontal)
}

// stateTimeline is a 12x8 band per series of a 0/1 gauge, coloured and
// named by mappings.
func stateTimeline(title, description string, mappings []dashboard.ValueMapping, qs ...*prometheus.DataqueryBuilder) *statetimeline.PanelBuilder {
	return panel(statetimeline.NewPanelBuilder(), title, description, 12, 8, qs).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdThresholds)).
		Thresholds(baseThresholds()).
		Mappings(mappings).
		LineWidth(0).
		FillOpacity(80).
		Legend(common.NewVizLegendOptionsBuilder().
			ShowLegend(false).
			DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom).
			Calcs([]string{})).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeSingle).Sort(common.SortOrderNone)).
		ShowValue(common.VisibilityModeNever).
		MergeValues(true).
		AlignValue(common.TimelineValueAlignmentLeft).
		RowHeight(0.9)
}

// heatmapPanel is a 12x8 heatmap of histogram buckets as Prometheus
// stores them (format heatmap, one series per le), in seconds.
func heatmapPanel(title, description string, qs ...*prometheus.DataqueryBuilder) *heatmap.PanelBuilder {
	return panel(heatmap.NewPanelBuilder(), title, description, 12, 8, qs).
		// The buckets are already counted: Grafana must not re-bucket them.
		Calculate(false).
		YAxis(heatmap.NewYAxisConfigBuilder().Unit("s")).
		Color(heatmap.NewHeatmapColorOptionsBuilder().Mode(heatmap.HeatmapColorModeScheme).Scheme("Oranges").Exponent(0.5).Steps(64)).
		CellGap(1).
		ShowLegend()
}

// baseThresholds is a single green step from -Inf: no thresholds, but the
// colour thresholds-mode panels fall back to.
func baseThresholds() *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().
		Mode(dashboard.ThresholdsModeAbsolute).
		Steps([]dashboard.Threshold{{Color: "green"}})
}

// valueMap maps exact values to text and colour.
func valueMap(options map[string]dashboard.ValueMappingResult) []dashboard.ValueMapping {
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText, Options: options}}}
}

func mapTo(text, color string, index int32) dashboard.ValueMappingResult {
	return dashboard.ValueMappingResult{Text: &text, Color: &color, Index: &index}
}

// fixedColor is the override property giving matched series one colour.
func fixedColor(color string) []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{{
		Id:    "color",
		Value: dashboard.FieldColor{Mode: dashboard.FieldColorModeIdFixed, FixedColor: &color},
	}}
}
