package collector

import (
	"context"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// TTFBBuckets are the OpenTelemetry GenAI semantic conventions' advice for
// time to first chunk (gen_ai.client.operation.time_to_first_chunk):
// doubling from 10 ms to 81.92 s, a fast cache hit to a reasoning model's
// long think. Dashboards and other GenAI-instrumented services then cut
// the same histogram at the same places.
var TTFBBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// OutputRateBuckets cover a stream's output rate, tokens per second: a
// large reasoning model's few to a small model's thousands.
var OutputRateBuckets = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000}

// DurationBuckets cover whole requests: streams may run up to the default
// 10-minute total timeout.
var DurationBuckets = append(append([]float64(nil), TTFBBuckets...), 120, 300, 600)

// OverheadBuckets are for the gateway's own share of a request's time:
// tens of microseconds normally, milliseconds when something is wrong.
var OverheadBuckets = []float64{0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1}

// Metrics are the Prometheus series that derive from
// spans, in the way the collector's spanmetrics connector derives them:
// the same spans the tracker learns from, so the metrics and the routing
// can never disagree. Only this instance's own (local) spans count here;
// peers' spans teach the tracker but are counted by the peers themselves.
// The gauges read from the router at scrape time live in telemetry.
type Metrics struct {
	requests     *prometheus.CounterVec   // model, code
	duration     *prometheus.HistogramVec // model
	overhead     *prometheus.HistogramVec // model
	attempts     *prometheus.CounterVec   // target, model, outcome
	ttfb         *prometheus.HistogramVec // target, model
	selections   *prometheus.CounterVec   // model, target, reason
	consumed     *prometheus.CounterVec   // source
	skips        *prometheus.CounterVec   // target, reason
	exportFailed prometheus.Counter
	dropped      prometheus.Counter
	rejected     *prometheus.CounterVec   // reason
	tokens       *prometheus.CounterVec   // target, model, type
	cost         *prometheus.CounterVec   // target, model
	outputRate   *prometheus.HistogramVec // target, model
	hedges       *prometheus.CounterVec   // model, result
	affinity     *prometheus.CounterVec   // result

	// prices is the rate card by (target, upstream model), replaced on
	// reload (SetTargets).
	prices atomic.Pointer[map[seriesKey]TokenPrice]

	// Children by label values: WithLabelValues validates and hashes its
	// labels on every call, and these are on the span-end path.
	// (A sync.Map would box the array keys: an allocation per lookup.)
	requestsBy   children[[2]string, prometheus.Counter]  // model, code
	durationBy   children[string, prometheus.Observer]    // model
	overheadBy   children[string, prometheus.Observer]    // model
	attemptsBy   children[[3]string, prometheus.Counter]  // target, model, outcome
	selectionsBy children[[3]string, prometheus.Counter]  // model, target, reason
	ttfbBy       children[[2]string, *ttfbSeries]         // target, model
	tokensBy     children[[3]string, prometheus.Counter]  // target, model, type
	costBy       children[[2]string, prometheus.Counter]  // target, model
	outputRateBy children[[2]string, prometheus.Observer] // target, model
	skipsBy      children[[2]string, prometheus.Counter]  // target, reason

	// firstbyte_spans_consumed_total by source, made in NewMetrics.
	consumedLocal, consumedPeer, consumedForeign prometheus.Counter

	statusLb [600]string // status code label strings, built once
}

// ttfbSeries is one TTFB histogram child and when it last took an exemplar:
// at most one a second, from a span that was exported (so the trace it
// links to exists in the tracing backend).
type ttfbSeries struct {
	obs          prometheus.Observer
	lastExemplar atomic.Int64 // unix nanos of the span end
}

// exemplarEvery is the least time between two exemplars of one series.
const exemplarEvery = int64(time.Second)

// NewMetrics registers the span-derived metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firstbyte_requests_total", Help: "Client requests answered, by requested model and HTTP status.",
		}, []string{"model", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "firstbyte_request_duration_seconds", Help: "Client request duration in the gateway, first byte in to last byte out.",
			Buckets: DurationBuckets,
		}, []string{"model"}),
		overhead: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "firstbyte_overhead_seconds", Help: "Time a request spent in the gateway itself: total duration minus time waiting on upstreams.",
			Buckets: OverheadBuckets,
		}, []string{"model"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firstbyte_attempts_total", Help: "Upstream attempts by target, requested model and outcome (success, failover, client_error, broken; canceled when the client left first).",
		}, []string{"target", "model", "outcome"}),
		ttfb: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "firstbyte_ttfb_seconds", Help: "Time to first byte of successful attempts (first data event when streaming, whole answer when unary); exemplars carry trace_id.",
			Buckets: TTFBBuckets,
		}, []string{"target", "model"}),
		selections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firstbyte_selections_total", Help: "First pick per request by model, target and reason (cold, leader, explore, order, manual).",
		}, []string{"model", "target", "reason"}),
		consumed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firstbyte_spans_consumed_total", Help: "Spans the aggregator consumed, by source (local: this process; peer: other gateway instances over OTLP; foreign: applications' GenAI spans mapped to a target).",
		}, []string{"source"}),
		skips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firstbyte_skips_total", Help: "Targets passed over without an attempt, by target and reason (circuit_open, queue_full).",
		}, []string{"target", "reason"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firstbyte_ingest_rejected_total", Help: "What the trace ingest refused, by reason: spans naming a target this instance does not route to (unknown_target) or whose time to first chunk cannot be a latency (implausible: not above zero, not finite, or longer than the target's first-byte timeout), else whole requests (unauthorized, too_large, too_deep, undecodable, unsupported, busy).",
		}, []string{"reason"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firstbyte_tokens_total", Help: "Tokens the upstreams reported, by target, requested model and type (input, output), from gen_ai.usage.* on the attempt spans.",
		}, []string{"target", "model", "type"}),
		affinity: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firstbyte_affinity_total",
			Help: "Requests with a prompt prefix worth keeping on one target, by requested model and how the order used it: hit (the target that served the prefix last served it), broken (it was unavailable, or slower than the bound), none (no target had served it lately).",
		}, []string{"model", "result"}),
		hedges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firstbyte_hedges_total",
			Help: "Hedged requests by requested model and result: won (a hedge served the request), lost (the first attempt did), denied (a hedge was due and the budget refused it).",
		}, []string{"model", "result"}),
		outputRate: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "firstbyte_output_tokens_per_second",
			Help:    "Output tokens per second of streamed attempts after their first chunk (the upstream's reported output tokens over the time from the first chunk to the end), by target and requested model.",
			Buckets: OutputRateBuckets,
		}, []string{"target", "model"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firstbyte_cost_usd_total", Help: "What the reported tokens cost by the provider's pricing rate card, USD, by target and requested model (unpriced targets count nothing).",
		}, []string{"target", "model"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "firstbyte_spans_dropped_total", Help: "Ended spans the metrics and export side dropped because its queue was full (routing still learned from them).",
		}),
		exportFailed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "firstbyte_export_failures_total", Help: "Spans dropped because an OTLP export failed (collector down or refusing); requests are unaffected.",
		}),
	}
	for i := range m.statusLb {
		m.statusLb[i] = strconv.Itoa(i)
	}
	reg.MustRegister(m.requests, m.duration, m.overhead, m.attempts, m.ttfb, m.selections, m.consumed, m.skips, m.exportFailed, m.dropped, m.rejected, m.tokens, m.cost, m.outputRate, m.hedges, m.affinity)
	for _, r := range []string{RejectUnknownTarget, RejectImplausible, RejectUnauthorized, RejectTooLarge, RejectTooDeep, RejectUndecodable, RejectUnsupported, RejectBusy} {
		m.rejected.WithLabelValues(r)
	}
	m.consumedLocal = m.consumed.WithLabelValues(SourceLocal)
	m.consumedPeer = m.consumed.WithLabelValues(SourcePeer)
	m.consumedForeign = m.consumed.WithLabelValues(SourceForeign)
	return m
}

var _ telemetry.TracesConsumer = (*Metrics)(nil)

// ConsumeTraces derives the metrics from this instance's own spans, and
// counts each as firstbyte_spans_consumed_total{source="local"}. It is the
// asynchronous consumer of the span processor: nothing here is on a
// request's path, and nothing here teaches routing.
func (m *Metrics) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	for res, spans := range telemetry.SpanSlices(td) {
		m.consumedLocal.Add(float64(spans.Len()))
		for k := range spans.Len() {
			m.ObserveSpan(res, spans.At(k))
		}
	}
	return nil
}

// IngestRejected counts what the ingest refused: spans for
// RejectUnknownTarget and RejectImplausible, else one request (spans is
// then 0).
func (m *Metrics) IngestRejected(reason string, spans int) {
	m.rejected.WithLabelValues(reason).Add(float64(max(spans, 1)))
}

// SpansDropped counts spans the asynchronous side dropped (telemetry's
// OnDrop). They ended in this process all the same, and the tracker had
// them first, so they count as consumed locally too: the local count is
// every span that ended here, whether or not its metrics were derived.
func (m *Metrics) SpansDropped(spans int) {
	m.dropped.Add(float64(spans))
	m.consumedLocal.Add(float64(spans))
}

// ExportFailed counts spans lost to a failed OTLP export.
func (m *Metrics) ExportFailed(spans int) { m.exportFailed.Add(float64(spans)) }

// SpanConsumed counts one span from source (AggregatorOptions.OnSpan:
// peers' and applications' spans; ConsumeTraces counts the local ones).
func (m *Metrics) SpanConsumed(source string) {
	switch source {
	case SourcePeer:
		m.consumedPeer.Inc()
	case SourceForeign:
		m.consumedForeign.Inc()
	case SourceLocal:
		m.consumedLocal.Inc()
	default:
		m.consumed.WithLabelValues(source).Inc()
	}
}

// ObserveSpan derives the metrics from one local span: SERVER spans give
// the request series, CLIENT attempt spans the attempt, TTFB and selection
// series. Only this process's spans come here (ConsumeTraces, telemetry's
// asynchronous side): peers' spans are counted by the peers' own metrics.
// The span's attributes are read in one pass (readAttempt).
func (m *Metrics) ObserveSpan(_ pcommon.Resource, span ptrace.Span) {
	switch span.Kind() {
	case ptrace.SpanKindServer:
		at := readAttempt(span)
		if !at.haveStatus && !at.badStatus {
			return // no http.response.status_code: not a request we answered
		}
		model := at.requestedModel
		code := m.statusLabel(at.status)
		m.requestsBy.get([2]string{model, code}, func() prometheus.Counter { return m.requests.WithLabelValues(model, code) }).Inc()
		d := spanSeconds(span)
		m.durationBy.get(model, func() prometheus.Observer { return m.duration.WithLabelValues(model) }).Observe(d)
		if at.haveWait && model != "" {
			if over := d - at.upstreamWait; over >= 0 {
				m.overheadBy.get(model, func() prometheus.Observer { return m.overhead.WithLabelValues(model) }).Observe(over)
			}
		}
		m.observeSkips(span)
		if at.hedge != "" && model != "" {
			m.hedges.WithLabelValues(model, at.hedge).Inc()
		}
		if at.affinity != "" && model != "" {
			m.affinity.WithLabelValues(model, at.affinity).Inc()
		}
	case ptrace.SpanKindClient:
		at := readAttempt(span)
		target, model, outcome := at.target, at.requestedModel, at.outcome
		if target == "" || outcome == "" {
			return // not one of our attempt spans
		}
		m.attemptsBy.get([3]string{target, model, outcome}, func() prometheus.Counter {
			return m.attempts.WithLabelValues(target, model, outcome)
		}).Inc()
		if at.attempt == 1 {
			reason := at.selection
			m.selectionsBy.get([3]string{model, target, reason}, func() prometheus.Counter {
				return m.selections.WithLabelValues(model, target, reason)
			}).Inc()
		}
		m.observeUsage(&at)
		if at.haveRate && at.outputRate > 0 && !math.IsInf(at.outputRate, 0) {
			m.outputRateBy.get([2]string{target, model}, func() prometheus.Observer {
				return m.outputRate.WithLabelValues(target, model)
			}).Observe(at.outputRate)
		}
		if at.haveTTFB && outcome == telemetry.OutcomeSuccess {
			if ttfb, valid := plausibleTTFB(at.seconds, maxTTFB); valid { // as the tracker takes our own
				m.observeTTFB(target, model, ttfb.Seconds(), span)
			}
		}
	}
}

// SetPrices replaces the rate card cost is counted by: each target's price
// of its upstream model.
func (m *Metrics) SetPrices(ts []Target) {
	prices := map[seriesKey]TokenPrice{}
	for _, t := range ts {
		if t.Priced {
			prices[seriesKey{t.Name, t.Model}] = t.Price
		}
	}
	m.prices.Store(&prices)
}

// observeUsage counts the tokens an attempt reported, and what they cost
// by the rate card of its target's upstream model.
func (m *Metrics) observeUsage(at *attemptFacts) {
	if !at.haveInput && !at.haveOutput {
		return
	}
	target, model := at.target, at.requestedModel
	if at.haveInput {
		m.tokensBy.get([3]string{target, model, "input"}, func() prometheus.Counter {
			return m.tokens.WithLabelValues(target, model, "input")
		}).Add(float64(at.inputTokens))
	}
	if at.haveOutput {
		m.tokensBy.get([3]string{target, model, "output"}, func() prometheus.Counter {
			return m.tokens.WithLabelValues(target, model, "output")
		}).Add(float64(at.outputTokens))
	}
	prices := m.prices.Load()
	if prices == nil {
		return
	}
	p, ok := (*prices)[seriesKey{target, at.model}]
	if !ok {
		return
	}
	m.costBy.get([2]string{target, model}, func() prometheus.Counter {
		return m.cost.WithLabelValues(target, model)
	}).Add((float64(at.inputTokens)*p.Input + float64(at.outputTokens)*p.Output) / 1e6)
}

// tokenCount reads a token count: a non-negative integer, or a double from
// a client that sends one.
func tokenCount(v pcommon.Value) (int64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), v.Int() >= 0
	case pcommon.ValueTypeDouble:
		return int64(v.Double()), v.Double() >= 0 && v.Double() < 1e15
	}
	return 0, false
}

// observeSkips counts the server span's skip events.
func (m *Metrics) observeSkips(span ptrace.Span) {
	events := span.Events()
	for i := range events.Len() {
		e := events.At(i)
		if e.Name() != telemetry.EventSkip {
			continue
		}
		attrs := e.Attributes()
		target, reason := stringAttr(attrs, string(telemetry.KeyTarget)), stringAttr(attrs, string(telemetry.KeySkipReason))
		m.skipsBy.get([2]string{target, reason}, func() prometheus.Counter { return m.skips.WithLabelValues(target, reason) }).Inc()
	}
}

// observeTTFB observes a successful attempt's time to first byte, with its
// trace as an exemplar at most once a second per series.
func (m *Metrics) observeTTFB(target, model string, seconds float64, span ptrace.Span) {
	ts := m.ttfbBy.get([2]string{target, model}, func() *ttfbSeries { return &ttfbSeries{obs: m.ttfb.WithLabelValues(target, model)} })
	traceID, end := span.TraceID(), int64(span.EndTimestamp())
	sampled := span.Flags()&uint32(trace.FlagsSampled) != 0
	if last := ts.lastExemplar.Load(); traceID.IsEmpty() || !sampled || end-last < exemplarEvery || !ts.lastExemplar.CompareAndSwap(last, end) {
		ts.obs.Observe(seconds)
		return
	}
	ts.obs.(prometheus.ExemplarObserver).ObserveWithExemplar(seconds, prometheus.Labels{"trace_id": traceID.String()})
}

// children caches a metric vector's children by label values.
type children[K comparable, V any] struct {
	mu sync.RWMutex // guards m
	m  map[K]V
}

// get returns k's child, making it with mk (once, whoever races) if there
// is none yet.
func (c *children[K, V]) get(k K, mk func() V) V {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[k]; ok {
		return v
	}
	if c.m == nil {
		c.m = map[K]V{}
	}
	v = mk()
	c.m[k] = v
	return v
}

func (m *Metrics) statusLabel(code int64) string {
	if code >= 0 && code < int64(len(m.statusLb)) {
		return m.statusLb[code]
	}
	return "other"
}

func stringAttr(attrs pcommon.Map, key string) string {
	if v, ok := attrs.Get(key); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

func spanSeconds(span ptrace.Span) float64 {
	start, end := span.StartTimestamp(), span.EndTimestamp()
	if end <= start {
		return 0
	}
	return float64(end-start) / 1e9
}
