package collector

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Where a span came from: the value of firstbyte_spans_consumed_total{source}.
const (
	SourceLocal = "local" // ended in this process (ConsumeTraces)
	SourcePeer  = "peer"  // received from another instance (ConsumePeerTraces)
	// SourceForeign: an application's GenAI span (not a gateway's) received
	// on the ingest and mapped to a target.
	SourceForeign = "foreign"
)

// Attribute names the aggregator reads, as strings once.
var (
	attrTarget        = string(telemetry.KeyTarget)
	attrModel         = string(telemetry.KeyRequestModel)
	attrTTFB          = string(telemetry.KeyTimeToFirstByte)
	attrOperation     = string(telemetry.KeyOperationName)
	attrHTTPStatus    = string(telemetry.KeyHTTPStatus)
	attrErrorType     = string(telemetry.KeyErrorType)
	attrInstanceID    = string(semconv.ServiceInstanceIDKey)
	attrFault         = string(telemetry.KeyFault)
	attrServerAddress = string(telemetry.KeyServerAddress)
	attrServerPort    = string(telemetry.KeyServerPort)
	attrProvider      = string(telemetry.KeyProviderName)
	attrSystem        = "gen_ai.system" // the older name some instrumentations still emit
	attrStream        = "gen_ai.request.stream"
	attrServiceName   = string(semconv.ServiceNameKey)
	attrResponseID    = string(telemetry.KeyResponseID)

	// Read by the metrics only.
	attrRequestedModel = string(telemetry.KeyRequestedModel)
	attrOutcome        = string(telemetry.KeyOutcome)
	attrAttempt        = string(telemetry.KeyAttempt)
	attrSelection      = string(telemetry.KeySelection)
	attrUpstreamWait   = string(telemetry.KeyUpstreamWait)
	attrInputTokens    = string(telemetry.KeyInputTokens)
	attrOutputTokens   = string(telemetry.KeyOutputTokens)
	attrOutputRate     = string(telemetry.KeyOutputRate)
	attrMaxTokens      = string(telemetry.KeyRequestMaxTokens)
	attrHedge          = string(telemetry.KeyHedge)
	attrInflight       = string(telemetry.KeyInflight)
	attrInflightAtEnd  = string(telemetry.KeyInflightAtEnd)
	attrCacheHit       = string(telemetry.KeyCacheHit)
	attrAffinity       = string(telemetry.KeyAffinity)
)

// AggregatorOptions configures an Aggregator.
type AggregatorOptions struct {
	// InstanceID is this process's service.instance.id. ConsumePeerTraces
	// skips resource spans that carry it: this process learned from those
	// spans when they ended. Empty: no peer span is taken
	// for our own. SetInstanceID changes it later.
	InstanceID string
	// OnSpan is called once per span consumed from a peer (not per span
	// skipped as our own) with its source, SourcePeer or SourceForeign, to
	// count firstbyte_spans_consumed_total. This process's own spans
	// (SourceLocal) are counted by Metrics.ConsumeTraces, off the request
	// path. Nil: not called.
	OnSpan func(source string)
	// OnReject is told how many spans were dropped and why
	// (RejectUnknownTarget: from peers; RejectImplausible: from anywhere,
	// see plausible.go), for firstbyte_ingest_rejected_total and the logs.
	// Nil: not told.
	OnReject func(reason string, spans int)
}

// Aggregator turns spans into tracker samples. It reads nothing but spans:
// whatever the router wants the tracker to know must be in an attempt span.
// It is safe for concurrent use.
type Aggregator struct {
	// Immutable after NewAggregator.
	tracker *Tracker
	onSpan  func(string)

	// instanceID is read on every peer request and set by SetInstanceID once
	// the SDK's resource, which may override it from the environment, is
	// known.
	instanceID atomic.Pointer[string]
	// targets is the configured (target, upstream model) pairs, replaced on
	// reload; nil (never set) accepts every key.
	targets targets
	// onReject is told of spans that were dropped (reasons unknown_target
	// and implausible); nil: not told.
	onReject func(reason string, spans int)
	// foreign says which applications' spans teach the tracker; off until
	// SetForeign.
	foreign foreignRules
}

// Rejection reasons of firstbyte_ingest_rejected_total{reason}.
const (
	RejectUnknownTarget = "unknown_target" // a span naming a (target, model) this instance does not route to
	RejectImplausible   = "implausible"    // a span whose time to first chunk cannot be a latency (plausible.go)
	RejectUnauthorized  = "unauthorized"
	RejectTooLarge      = "too_large"
	RejectTooDeep       = "too_deep"
	RejectUndecodable   = "undecodable"
	RejectUnsupported   = "unsupported" // media type or content encoding
	RejectBusy          = "busy"        // too many ingest requests at once
)

// SetTargets replaces the configured (target, upstream model) pairs: spans
// from peers naming any other are dropped and counted, and this instance's
// own are not learned (a reload removed the target while its attempt was in
// flight). Safe to call while spans are consumed.
func (a *Aggregator) SetTargets(ts []Target) { a.targets.p.Store(newTargetTable(ts)) }

var _ telemetry.TracesConsumer = (*Aggregator)(nil)

// NewAggregator returns an aggregator feeding t.
func NewAggregator(t *Tracker, o AggregatorOptions) *Aggregator {
	a := &Aggregator{tracker: t, onSpan: o.OnSpan, onReject: o.OnReject}
	a.SetInstanceID(o.InstanceID)
	return a
}

// SetInstanceID replaces the service.instance.id that ConsumePeerTraces
// skips as our own, for when it is known only after NewAggregator (the
// environment may override the one the process chose). Empty: skip none.
func (a *Aggregator) SetInstanceID(id string) {
	a.instanceID.Store(&id)
}

// ConsumeTraces takes spans that ended in this process. It never fails.
func (a *Aggregator) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	a.consume(td, "", OriginSelf)
	return nil
}

// ConsumePeerTraces takes spans received from peers, skipping those of this
// process (by service.instance.id). It never fails.
func (a *Aggregator) ConsumePeerTraces(_ context.Context, td ptrace.Traces) error {
	a.consume(td, *a.instanceID.Load(), OriginPeer)
	return nil
}

// consume walks td once: each span teaches the tracker and, if it came
// from a peer, is counted (OnSpan). Resource spans of instance skip (if not
// empty) are passed over. The metrics derived from spans are not here: they
// take this process's spans on telemetry's asynchronous side (Metrics), and
// peers count their own.
func (a *Aggregator) consume(td ptrace.Traces, skip string, origin Origin) {
	table := a.targets.p.Load()
	var unknown, implausible int
	defer func() {
		if a.onReject == nil {
			return
		}
		if unknown > 0 {
			a.onReject(RejectUnknownTarget, unknown)
		}
		if implausible > 0 {
			a.onReject(RejectImplausible, implausible)
		}
	}()
	for res, spans := range telemetry.SpanSlices(td) {
		if skip != "" && instanceID(res) == skip {
			continue
		}
		var from *foreignSource // the resource's service, when its spans may be taken as foreign
		var instance string     // a peer's service.instance.id
		if origin == OriginPeer {
			if src, ok := a.foreign.source(res); ok {
				from = &src
			}
			instance = instanceID(res)
		}
		for k := range spans.Len() {
			span := spans.At(k)
			reject, src := a.learn(span, origin, table, from, instance)
			switch reject {
			case RejectUnknownTarget:
				unknown++
				continue
			case RejectImplausible:
				implausible++
				continue
			}
			if src == "" {
				continue // an application's span that taught nothing: neither a peer's nor foreign
			}
			if a.onSpan != nil && origin != OriginSelf {
				a.onSpan(src)
			}
		}
	}
}

// learn teaches the tracker what one span says, and returns the source it
// counts under ("" : not counted), or why it was rejected. A gateway's span
// (it names firstbyte.target) is this instance's own or a peer's: an
// attempt gives a latency sample when it succeeded, else its fault (if the
// failure model counts one) with what it cost. It is rejected when it names
// a (target, model) that is not configured (RejectUnknownTarget) or claims
// a sample that cannot be one (RejectImplausible), and then teaches
// nothing. Any other span teaches only as a foreign span, when from says
// its service may.
func (a *Aggregator) learn(span ptrace.Span, origin Origin, table *targetTable, from *foreignSource, instance string) (reject, source string) {
	at := readAttempt(span)
	source = SourceLocal
	if origin != OriginSelf {
		source = SourcePeer
	}
	if at.target == "" {
		// Not a gateway's attempt: one of our own server spans, or an
		// application's span.
		if origin == OriginSelf {
			return "", source
		}
		if from != nil {
			switch taught, reject := a.learnForeign(span, &at, table, from); {
			case reject != "":
				return reject, ""
			case taught:
				return "", SourceForeign
			}
		}
		return "", ""
	}
	// A gateway span naming a target but no upstream model is a request's
	// server span (the target that answered), not an attempt: it teaches
	// nothing, and names no unknown target either.
	if origin != OriginSelf && at.model != "" && !table.knows(at.target, at.model) {
		return RejectUnknownTarget, ""
	}
	a.learnHome(span, &at, table)
	if at.countTokens || at.badStatus || at.model == "" || !table.knows(at.target, at.model) {
		return "", source
	}
	bound := maxTTFB // our own: see plausible.go
	if origin != OriginSelf {
		bound = table.firstByteBound(at.target, at.model)
	}
	if origin == OriginPeer {
		// What the peer still had in flight there when the span ended:
		// firstbyte.inflight_at_end says; a span without it (an older
		// peer) says only what was in flight when it started, the rest of
		// which were at most still in flight.
		switch {
		case at.inflightAtEnd >= 0:
			a.tracker.RecordPeerInflight(at.target, at.model, instance, int(at.inflightAtEnd), endTime(span))
		case at.inflight > 0:
			a.tracker.RecordPeerInflight(at.target, at.model, instance, int(at.inflight)-1, endTime(span))
		}
	}
	switch ttfb, verdict := at.sample(bound); verdict {
	case sampled:
		a.learnOutput(span, &at)
		if at.cacheHit {
			// A prompt read from the provider's cache answers sooner than a
			// cold one would: a success, not a latency sample.
			a.tracker.RecordSuccess(at.target, at.model, endTime(span))
			return "", source
		}
		load := 0 // this instance's own samples say the load they met
		if origin == OriginSelf {
			load = int(at.inflight)
		}
		a.tracker.recordSample(at.target, at.model, ttfb, endTime(span), origin, load) // its output rate: learnOutput
		return "", source
	case implausible:
		return RejectImplausible, ""
	}
	if f := at.fault(); f != fault.None {
		a.tracker.RecordFault(at.target, at.model, f, spanDuration(span), fault.IsTimeout(at.errorType), endTime(span))
	} else if at.outcome == telemetry.OutcomeHedgeLost {
		a.tracker.RecordLate(at.target, at.model, spanDuration(span), endTime(span), origin)
	} else {
		a.tracker.RecordTry(at.target, at.model, endTime(span))
	}
	return "", source
}

// instanceID returns the service.instance.id of res, or "".
func instanceID(res pcommon.Resource) string {
	if v, ok := res.Attributes().Get(attrInstanceID); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// endTime is when the span's sample was taken: its end. Zero (a span sent
// without one) makes the tracker use its own clock.
func endTime(span ptrace.Span) time.Time {
	ts := span.EndTimestamp()
	if ts == 0 {
		return time.Time{}
	}
	return ts.AsTime()
}

// attemptFacts is what an attempt span says about its target, read in one
// pass over its attributes.
type attemptFacts struct {
	target, model string
	seconds       float64 // gen_ai.response.time_to_first_chunk
	haveTTFB      bool
	countTokens   bool  // a count_tokens call: teaches nothing
	spanError     bool  // span status Error
	status        int64 // http.response.status_code
	haveStatus    bool
	badStatus     bool   // a status attribute that is not a number
	errorType     string // error.type
	faultAttr     fault.Fault
	haveFault     bool // firstbyte.fault was on the span: the failure model's verdict where the attempt ended

	// What a foreign span is mapped by.
	address     string // server.address
	port        int64  // server.port; 0 when absent
	provider    string // gen_ai.provider.name, else gen_ai.system
	system      string // gen_ai.system
	stream      bool   // gen_ai.request.stream
	streamFalse bool   // gen_ai.request.stream present and false
	client      bool   // span kind CLIENT

	// What the metrics derived from this process's spans read.
	requestedModel string  // firstbyte.requested_model
	outcome        string  // firstbyte.outcome
	selection      string  // firstbyte.selection
	attempt        int64   // firstbyte.attempt; 0 when absent
	upstreamWait   float64 // firstbyte.upstream_wait, seconds
	haveWait       bool
	inputTokens    int64 // gen_ai.usage.input_tokens
	outputTokens   int64 // gen_ai.usage.output_tokens
	haveInput      bool
	haveOutput     bool
	outputRate     float64 // firstbyte.output_tokens_per_second
	haveRate       bool
	maxTokens      int64  // gen_ai.request.max_tokens; 0 when absent
	hedge          string // server span: firstbyte.hedge
	inflight       int64  // firstbyte.inflight; 0 when absent
	inflightAtEnd  int64  // firstbyte.inflight_at_end; -1 when absent
	cacheHit       bool   // firstbyte.cache_hit
	affinity       string // server span: firstbyte.affinity

	responseID string // gen_ai.response.id: the response the attempt left stored
}

// readAttempt reads span's attributes once, rather than a Get (itself a
// scan) per key: what the aggregator and the metrics need of it.
func readAttempt(span ptrace.Span) attemptFacts {
	f := attemptFacts{spanError: span.Status().Code() == ptrace.StatusCodeError, client: span.Kind() == ptrace.SpanKindClient, inflightAtEnd: -1}
	for k, v := range span.Attributes().All() {
		switch k {
		case attrTarget:
			if v.Type() == pcommon.ValueTypeStr {
				f.target = v.Str()
			}
		case attrModel:
			if v.Type() == pcommon.ValueTypeStr {
				f.model = v.Str()
			}
		case attrTTFB:
			f.seconds, f.haveTTFB = number(v)
		case attrOperation:
			f.countTokens = v.Type() == pcommon.ValueTypeStr && v.Str() == telemetry.OperationCountTokens
		case attrHTTPStatus:
			code, ok := statusCode(v)
			f.status, f.haveStatus, f.badStatus = code, ok, !ok
		case attrErrorType:
			if v.Type() == pcommon.ValueTypeStr {
				f.errorType = v.Str()
			}
		case attrFault:
			if v.Type() == pcommon.ValueTypeStr {
				f.faultAttr, f.haveFault = fault.Parse(v.Str())
			}
		case attrServerAddress:
			if v.Type() == pcommon.ValueTypeStr {
				f.address = v.Str()
			}
		case attrServerPort:
			if v.Type() == pcommon.ValueTypeInt {
				f.port = v.Int()
			}
		case attrProvider:
			if v.Type() == pcommon.ValueTypeStr {
				f.provider = v.Str()
			}
		case attrSystem:
			if v.Type() == pcommon.ValueTypeStr {
				f.system = v.Str()
			}
		case attrStream:
			if v.Type() == pcommon.ValueTypeBool {
				f.stream, f.streamFalse = v.Bool(), !v.Bool()
			}
		case attrRequestedModel:
			if v.Type() == pcommon.ValueTypeStr {
				f.requestedModel = v.Str()
			}
		case attrOutcome:
			if v.Type() == pcommon.ValueTypeStr {
				f.outcome = v.Str()
			}
		case attrSelection:
			if v.Type() == pcommon.ValueTypeStr {
				f.selection = v.Str()
			}
		case attrAttempt:
			if v.Type() == pcommon.ValueTypeInt {
				f.attempt = v.Int()
			}
		case attrUpstreamWait:
			f.upstreamWait, f.haveWait = number(v)
		case attrInputTokens:
			f.inputTokens, f.haveInput = tokenCount(v)
		case attrOutputTokens:
			f.outputTokens, f.haveOutput = tokenCount(v)
		case attrOutputRate:
			f.outputRate, f.haveRate = number(v)
		case attrMaxTokens:
			f.maxTokens, _ = tokenCount(v)
		case attrHedge:
			f.hedge = v.Str()
		case attrCacheHit:
			f.cacheHit = v.Type() == pcommon.ValueTypeBool && v.Bool()
		case attrAffinity:
			f.affinity = v.Str()
		case attrResponseID:
			f.responseID = v.Str()
		case attrInflight:
			if v.Type() == pcommon.ValueTypeInt {
				f.inflight = v.Int()
			}
		case attrInflightAtEnd:
			if v.Type() == pcommon.ValueTypeInt {
				f.inflightAtEnd = v.Int()
			}
		}
	}
	return f
}

// succeeded reports whether the span says its attempt got a usable answer:
// status not Error, and an HTTP status, when there is one, that is a
// readable 2xx.
func (f *attemptFacts) succeeded() bool {
	if f.spanError || f.badStatus {
		return false
	}
	return !f.haveStatus || f.status >= 200 && f.status <= 299
}

// fault is the failure model's verdict on the attempt: the one its span
// carries (firstbyte.fault, set where the attempt ended), or, for a span
// from a client that does not set it, fault.Classify of its HTTP status
// and error.type. Nothing else is decided here: a 1xx or 3xx is a fault
// because Classify says so, whether or not the span's status is Error.
func (f *attemptFacts) fault() fault.Fault {
	if f.haveFault {
		return f.faultAttr
	}
	status := 0
	if f.haveStatus && f.status >= 0 && f.status < 1000 {
		status = int(f.status)
	}
	return fault.Classify(status, f.errorType)
}
