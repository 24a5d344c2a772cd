package collector

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Foreign spans: applications that call providers directly, instrumented
// with OpenTelemetry's GenAI conventions, teach the tracker too. A CLIENT
// span that names no firstbyte.target (a gateway's attempt always does)
// maps to a target when its server.address and server.port are the host
// and port of the target's provider base_url, its gen_ai.request.model is
// the target's upstream model and, when it names a provider, that provider
// speaks the target's wire format. Nothing else is ever mapped, so a
// foreign span cannot create a key.

// ForeignOptions says whose spans may be taken as foreign.
type ForeignOptions struct {
	// Enabled turns foreign learning on. Off: applications' spans are
	// ignored (neither learned nor rejected).
	Enabled bool
	// Services is an allow-list of service.name values; empty: every
	// service that is not a firstbyte instance.
	Services []string
	// UnaryServices never stream: a span of theirs without a time to first
	// chunk gives its duration as the sample.
	UnaryServices []string
}

// maxForeignServices bounds the per-service counts: names past it are
// counted under "other", so a flood of service names cannot grow memory.
const maxForeignServices = 256

// foreignRules is the current ForeignOptions, as the aggregator reads it.
type foreignRules struct {
	p atomic.Pointer[foreignConfig]

	mu      sync.Mutex // guards counts' keys; the counters themselves are atomic
	counts  map[string]*atomic.Int64
	countsV atomic.Pointer[map[string]*atomic.Int64] // read-mostly copy of counts
}

type foreignConfig struct {
	allow map[string]bool // nil: every service
	unary map[string]bool
}

// foreignSource is one resource's service as foreign learning sees it. It
// lives on the stack of one ingest request; count is its counter once one
// of its spans has taught something (a slot of maxForeignServices is taken
// only then: a peer gateway's resource, or an application whose spans map
// to nothing, takes none).
type foreignSource struct {
	name  string
	unary bool
	count *atomic.Int64 // nil until the service's first span that taught
}

// SetForeign replaces the foreign-span rules (on reload, too).
func (a *Aggregator) SetForeign(o ForeignOptions) {
	if !o.Enabled {
		a.foreign.p.Store(nil)
		return
	}
	c := &foreignConfig{unary: map[string]bool{}}
	if len(o.Services) > 0 {
		c.allow = map[string]bool{}
		for _, s := range o.Services {
			c.allow[s] = true
		}
	}
	for _, s := range o.UnaryServices {
		c.unary[s] = true
	}
	a.foreign.p.Store(c)
}

// source returns the service of res, and whether its spans may be taken as
// foreign.
func (f *foreignRules) source(res pcommon.Resource) (foreignSource, bool) {
	c := f.p.Load()
	if c == nil {
		return foreignSource{}, false
	}
	name := ""
	if v, ok := res.Attributes().Get(attrServiceName); ok && v.Type() == pcommon.ValueTypeStr {
		name = v.Str()
	}
	if c.allow != nil && !c.allow[name] {
		return foreignSource{}, false
	}
	return foreignSource{name: name, unary: c.unary[name]}, true
}

// taught counts one span of from that taught the tracker.
func (f *foreignRules) taught(from *foreignSource) {
	if from.count == nil {
		from.count = f.counter(from.name)
	}
	from.count.Add(1)
}

// counter returns the span counter of service name.
func (f *foreignRules) counter(name string) *atomic.Int64 {
	if m := f.countsV.Load(); m != nil {
		if c, ok := (*m)[name]; ok {
			return c
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.counts == nil {
		f.counts = map[string]*atomic.Int64{}
	}
	if c, ok := f.counts[name]; ok {
		return c
	}
	if len(f.counts) >= maxForeignServices {
		name = "other"
		if c, ok := f.counts[name]; ok {
			return c
		}
	}
	c := &atomic.Int64{}
	f.counts[name] = c
	next := make(map[string]*atomic.Int64, len(f.counts))
	for k, v := range f.counts {
		next[k] = v
	}
	f.countsV.Store(&next)
	return c
}

// ForeignSources returns how many spans each foreign service has taught,
// sorted by name (for /debug/routing).
func (a *Aggregator) ForeignSources() []ForeignSource {
	m := a.foreign.countsV.Load()
	if m == nil {
		return nil
	}
	out := make([]ForeignSource, 0, len(*m))
	for name, c := range *m {
		if n := c.Load(); n > 0 {
			out = append(out, ForeignSource{Service: name, Spans: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Service < out[j].Service })
	return out
}

// ForeignSource is one application service and the spans it taught.
type ForeignSource struct {
	Service string `json:"service"`
	Spans   int64  `json:"spans"`
}

// learnForeign maps an application's span onto a target and teaches the
// tracker from it as from a gateway's attempt (sample, else fault, the same
// two decisions); taught is false when it maps to nothing (the common case
// for an application that also calls other things, kept cheap) or teaches
// nothing, and reject says why a span that maps was refused
// (RejectImplausible). Only the unary fallback is foreign: a successful
// unary call without a time to first chunk gives its duration, held to the
// same rule as a time to first chunk.
func (a *Aggregator) learnForeign(span ptrace.Span, at *attemptFacts, table *targetTable, from *foreignSource) (taught bool, reject string) {
	if !at.client || at.address == "" || at.model == "" || at.countTokens || table == nil {
		return false, ""
	}
	target, kind, ok := table.mapForeign(telemetry.CanonicalHost(at.address), int(at.port), at.model)
	if !ok || !providerAgrees(at.provider, at.system, kind) {
		return false, ""
	}
	at.target = target
	end := endTime(span)
	bound := table.firstByteBound(target, at.model)
	ttfb, verdict := at.sample(bound)
	if verdict == noSample && at.fault() == fault.None {
		ttfb, verdict = at.unaryDuration(span, from.unary, bound)
	}
	switch verdict {
	case sampled:
		a.tracker.RecordSample(target, at.model, ttfb, end, OriginForeign)
	case implausible:
		return false, RejectImplausible
	default:
		f := at.fault()
		if f == fault.None {
			// The request's own fault, or a stream without a time to first
			// chunk (its duration is the whole stream): nothing learned
			// of the provider.
			return false, ""
		}
		a.tracker.RecordFault(target, at.model, f, spanDuration(span), fault.IsTimeout(at.errorType), end)
	}
	a.foreign.taught(from)
	return true, ""
}

// unaryDuration is the sample a successful unary call without a time to
// first chunk gives: its first byte is its whole answer, so its duration,
// implausible when it is not more than zero (no timestamps, or an end
// before the start) or longer than bound. A call is unary when it says so
// (gen_ai.request.stream false), or when its service never streams (unary)
// and it does not say it streamed.
func (f *attemptFacts) unaryDuration(span ptrace.Span, unary bool, bound time.Duration) (time.Duration, sampleVerdict) {
	if f.haveTTFB || !f.succeeded() || !(f.streamFalse || unary && !f.stream) {
		return 0, noSample
	}
	d := spanDuration(span)
	if d <= 0 || d > bound {
		return 0, implausible
	}
	return d, sampled
}

// mapForeign finds the target whose provider is at host:port and whose
// upstream model is model. A port of 0 (the span has none) matches when
// only one configured port serves that host and model.
func (tt *targetTable) mapForeign(host string, port int, model string) (target, kind string, ok bool) {
	if port != 0 {
		m, ok := tt.foreign[foreignKey{host, port, model}]
		return m.target, m.kind, ok
	}
	m, ok := tt.foreignNoPort[foreignKey{host: host, model: model}]
	if !ok || m.target == "" {
		return "", "", false
	}
	return m.target, m.kind, true
}

// openAIElsewhere are GenAI provider names whose APIs are not the OpenAI
// wire format, so a span naming them never maps to an openai-kind target at
// the same host (which would be a configuration mistake anyway).
var openAIElsewhere = []string{"anthropic", "aws.bedrock", "gcp.vertex_ai", "gcp.gemini", "gcp.gen_ai", "cohere", "ibm.watsonx.ai", "azure.ai.inference"}

// providerAgrees reports whether a span's provider name (gen_ai.provider.name,
// else gen_ai.system; none: agrees) can be the target's kind (the gateway's
// gen_ai.provider.name of it): "anthropic" for anthropic; a Bedrock or
// Vertex target's own name, or anthropic; for openai and azure.ai.openai,
// any name but the formats known to be other (OpenAI-compatible providers call themselves many names: groq,
// azure.ai.openai, deepseek, ...).
func providerAgrees(provider, system, kind string) bool {
	name := provider
	if name == "" {
		name = system
	}
	if name == "" {
		return true
	}
	switch kind {
	case "anthropic":
		return name == "anthropic"
	case "aws.bedrock", "gcp.vertex_ai":
		// The cloud's own name, or Anthropic's SDK for that cloud, which
		// names itself (the host tells the two clouds apart).
		return name == kind || name == "anthropic" || kind == "gcp.vertex_ai" && name == "gcp.gen_ai"
	}
	return !slices.Contains(openAIElsewhere, name)
}
