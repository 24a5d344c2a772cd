package collector

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry is the project's own registry (never the global one) with
// the Go runtime and process collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// MetricsHandler serves reg on /metrics, in the OpenMetrics format when the
// scraper asks for it (that is where the TTFB histogram's trace_id
// exemplars appear).
func MetricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, Registry: reg})
}

// Lifecycle is the process's own counters: config reloads and the panics
// recovered while serving.
type Lifecycle struct {
	Reloads *prometheus.CounterVec // result: ok | refused
	Panics  prometheus.Counter
}

// NewLifecycle registers firstbyte_reloads_total{result} (both results
// present from the start) and firstbyte_panics_total on reg.
func NewLifecycle(reg prometheus.Registerer) *Lifecycle {
	l := &Lifecycle{
		Reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firstbyte_reloads_total",
			Help: "Config reloads (SIGHUP or POST /admin/reload) by result: ok, or refused (the old config kept serving).",
		}, []string{"result"}),
		Panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "firstbyte_panics_total",
			Help: "Panics recovered while serving a client request (each answered 500, or its stream ended with an error event).",
		}),
	}
	reg.MustRegister(l.Reloads, l.Panics)
	l.Reloads.WithLabelValues("ok")
	l.Reloads.WithLabelValues("refused")
	return l
}

// RegisterBufferedBytes registers firstbyte_response_buffered_bytes on
// reg: the bytes unary answers hold of limits.max_buffered, read from held
// at scrape time.
func RegisterBufferedBytes(reg prometheus.Registerer, held func() int64) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "firstbyte_response_buffered_bytes",
		Help: "Bytes held for unary answers now, all requests together, against limits.max_buffered; an answer that would pass it fails over as response_buffer_full.",
	}, func() float64 { return float64(held()) }))
}

// RoutingRow is one (model, target) of the router's current state, as the
// gauges export it. model is the client-facing (requested) model.
type RoutingRow struct {
	Model       string
	Target      string
	P50Seconds  float64
	Samples     int
	Leader      bool
	CircuitOpen bool // open or half-open: not closed
	FaultRate   float64
	Outcomes    int    // live outcomes the fault rate is over (0: no rate)
	Disabled    string // why the (target, model) is disabled (auth, quota, model_access); "" when it is not
	// RateLimitedUntil is when the (target, model)'s rate limits let it
	// be tried again, Unix seconds; 0 when it is not cooled.
	RateLimitedUntil float64
	// PredictedCompletionSeconds is the target's predicted time to the last
	// token (least-completion's figure), when HasPrediction.
	PredictedCompletionSeconds float64
	HasPrediction              bool
	// OutputRate holds the p50, p75, p90 and p99 of the target's output
	// rate (tokens per second) over RateSamples live samples.
	OutputRate  [len(rateQuantiles)]float64
	RateSamples int
}

// rateQuantiles are the percentile label values of firstbyte_target_output_tokens_per_second, in the
// order RoutingRow.OutputRate holds them.
var rateQuantiles = [...]string{"p50", "p75", "p90", "p99"}

// routingCollector turns the router's state into gauges at scrape time, so
// they are exactly what the next request would be ordered by.
type routingCollector struct {
	rows    func() []RoutingRow
	p50     *prometheus.Desc
	samples *prometheus.Desc
	leader  *prometheus.Desc
	circuit *prometheus.Desc
	faults  *prometheus.Desc
	off     *prometheus.Desc
	cooled  *prometheus.Desc
	predict *prometheus.Desc
	rate    *prometheus.Desc
}

// NewRoutingCollector exports firstbyte_target_p50_seconds,
// firstbyte_target_samples, firstbyte_target_fault_rate, firstbyte_leader
// (the active mode's own leader) and firstbyte_circuit_open from rows,
// called once per scrape.
func NewRoutingCollector(rows func() []RoutingRow) prometheus.Collector {
	return &routingCollector{
		rows:    rows,
		p50:     prometheus.NewDesc("firstbyte_target_p50_seconds", "p50 time to first byte over the target's live samples (what least-latency ranks on).", []string{"target", "model"}, nil),
		samples: prometheus.NewDesc("firstbyte_target_samples", "Live TTFB samples of the target (last 100 within 5 minutes).", []string{"target", "model"}, nil),
		leader:  prometheus.NewDesc("firstbyte_leader", "1 for the model's current leader as the active routing mode ranks (e.g. lowest p50 in least-latency), else 0.", []string{"model", "target"}, nil),
		circuit: prometheus.NewDesc("firstbyte_circuit_open", "1 while the target's circuit breaker is not closed (open, or half-open awaiting its probe).", []string{"target"}, nil),
		faults:  prometheus.NewDesc("firstbyte_target_fault_rate", "Weighted share of the target's live attempt outcomes that were provider faults (a 400/422 counts half).", []string{"target", "model"}, nil),
		off:     prometheus.NewDesc("firstbyte_target_disabled", "1 while the target is disabled (its provider refused the credential: reason auth; its account cannot pay: reason quota; it refused the key one of the target's upstream models: reason model_access, that model only); one request probes it at a growing interval.", []string{"target", "reason"}, nil),
		predict: prometheus.NewDesc("firstbyte_predicted_completion_seconds", "Predicted time to the last token of an answer of the model's usual length (p50 time to first byte + expected output tokens / p50 output rate: what least-completion ranks on); absent until the target has both samples.", []string{"target", "model"}, nil),
		rate:    prometheus.NewDesc("firstbyte_target_output_tokens_per_second", "Percentiles of the target's output rate over its live streamed answers (tokens per second after the first chunk); of fewer than 10 samples every percentile is the largest.", []string{"target", "model", "percentile"}, nil),
		cooled:  prometheus.NewDesc("firstbyte_rate_limited_until_seconds", "Unix time until which the provider's rate limits keep the target away (Retry-After or a reset header), the latest among its upstream models (each model is cooled apart; /debug/routing shows each); 0 when none is cooled.", []string{"target"}, nil),
	}
}

func (c *routingCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.p50
	ch <- c.samples
	ch <- c.leader
	ch <- c.circuit
	ch <- c.faults
	ch <- c.off
	ch <- c.cooled
	ch <- c.predict
	ch <- c.rate
}

func (c *routingCollector) Collect(ch chan<- prometheus.Metric) {
	circuits := map[string]bool{}
	targets := map[string]RoutingRow{} // per target: its provider's state, over its models
	for _, r := range c.rows() {
		targets[r.Target] = providerState(targets[r.Target], r)
		if r.Samples > 0 {
			ch <- prometheus.MustNewConstMetric(c.p50, prometheus.GaugeValue, r.P50Seconds, r.Target, r.Model)
		}
		ch <- prometheus.MustNewConstMetric(c.samples, prometheus.GaugeValue, float64(r.Samples), r.Target, r.Model)
		ch <- prometheus.MustNewConstMetric(c.leader, prometheus.GaugeValue, boolFloat(r.Leader), r.Model, r.Target)
		ch <- prometheus.MustNewConstMetric(c.faults, prometheus.GaugeValue, r.FaultRate, r.Target, r.Model)
		c.collectCompletion(ch, &r)
		if _, seen := circuits[r.Target]; !seen || r.CircuitOpen {
			circuits[r.Target] = r.CircuitOpen
		}
	}
	for target, open := range circuits {
		ch <- prometheus.MustNewConstMetric(c.circuit, prometheus.GaugeValue, boolFloat(open), target)
	}
	for target, r := range targets {
		for _, reason := range disabledReasons {
			ch <- prometheus.MustNewConstMetric(c.off, prometheus.GaugeValue, boolFloat(r.Disabled == reason), target, reason)
		}
		ch <- prometheus.MustNewConstMetric(c.cooled, prometheus.GaugeValue, r.RateLimitedUntil, target)
	}
}

// collectCompletion exports r's predicted time to the last token and
// output-rate percentiles, when it has them.
func (c *routingCollector) collectCompletion(ch chan<- prometheus.Metric, r *RoutingRow) {
	if r.HasPrediction {
		ch <- prometheus.MustNewConstMetric(c.predict, prometheus.GaugeValue, r.PredictedCompletionSeconds, r.Target, r.Model)
	}
	if r.RateSamples > 0 {
		for i, q := range rateQuantiles {
			ch <- prometheus.MustNewConstMetric(c.rate, prometheus.GaugeValue, r.OutputRate[i], r.Target, r.Model, q)
		}
	}
}

// providerState folds row r of a target into what the per-target gauges
// say of it so far (acc): a cooldown and a model's disabled state belong
// to one (target, upstream model), so the target's gauge shows the latest
// cooldown end among its models, and the provider's own reason (auth,
// quota, on every row of it) before a model's (model_access). The
// routing view (/debug/routing) shows each model's own.
func providerState(acc, r RoutingRow) RoutingRow {
	acc.RateLimitedUntil = max(acc.RateLimitedUntil, r.RateLimitedUntil)
	if acc.Disabled == "" || acc.Disabled == modelAccess && r.Disabled != "" {
		acc.Disabled = r.Disabled
	}
	return acc
}

// modelAccess is the reason of a disabled (target, upstream model) whose
// provider refused the key that model only.
const modelAccess = "model_access"

// disabledReasons are the values of firstbyte_target_disabled's reason
// label, each present for every target (0 or 1).
var disabledReasons = [...]string{"auth", "quota", modelAccess}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
