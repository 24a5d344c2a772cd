package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TracesConsumer receives spans as collector pdata. It has the shape of the
// collector's consumer.Traces so the embedded aggregator and a real collector
// pipeline can stand on either side of it, but it is defined here so the
// telemetry package does not depend on the collector's component framework.
//
// Unlike a collector pipeline, td is only lent: it is valid until
// ConsumeTraces returns, and the AggregatingProcessor refills it with the next
// span afterwards. A consumer must not modify it, and one that keeps any of it
// must copy it (td.CopyTo); strings read from it may be kept, as Go strings
// never change.
type TracesConsumer interface {
	ConsumeTraces(ctx context.Context, td ptrace.Traces) error
}

// OTLP SpanFlags bits above the W3C trace flags (the low 8 bits): whether the
// parent's remoteness is known, and whether it is remote. The SDK always knows.
const (
	spanFlagsContextHasIsRemote = 0x100
	spanFlagsContextIsRemote    = 0x200
)

// spanBuffer is a one-span ptrace.Traces refilled for each ended span. Once
// it has held a span of the same shape (same resource, scope, attribute keys
// and types, as one attempt span after another are), refilling it allocates
// nothing: pdata overwrites a value of the same type in place. Building a new
// ptrace.Traces per span costs some 25 allocations, most of the conversion.
type spanBuffer struct {
	td   ptrace.Traces
	rs   ptrace.ResourceSpans
	ss   ptrace.ScopeSpans
	span ptrace.Span

	// What rs and ss hold, to convert them only when they change.
	filled bool
	res    *resource.Resource
	scope  instrumentation.Scope
}

func newSpanBuffer() *spanBuffer {
	b := &spanBuffer{td: ptrace.NewTraces()}
	b.rs = b.td.ResourceSpans().AppendEmpty()
	b.ss = b.rs.ScopeSpans().AppendEmpty()
	b.span = b.ss.Spans().AppendEmpty()
	return b
}

// fill makes the buffer hold exactly s and returns it.
func (b *spanBuffer) fill(s sdktrace.ReadOnlySpan) ptrace.Traces {
	if res := s.Resource(); !b.filled || res != b.res {
		putResource(b.rs, res)
		b.res = res
	}
	if scope := s.InstrumentationScope(); !b.filled || scope != b.scope {
		putScope(b.ss, scope)
		b.scope = scope
	}
	b.filled = true
	putSpan(b.span, s)
	return b.td
}

// putResource overwrites dst's resource with res.
func putResource(dst ptrace.ResourceSpans, res *resource.Resource) {
	attrs := dst.Resource().Attributes()
	attrs.Clear()
	if res == nil {
		dst.SetSchemaUrl("")
		return
	}
	dst.SetSchemaUrl(res.SchemaURL())
	attrs.EnsureCapacity(res.Len())
	// Iter rather than Attributes: the latter copies the set into a new slice.
	for it := res.Iter(); it.Next(); {
		putAttribute(attrs, it.Attribute())
	}
}

// putScope overwrites dst's instrumentation scope with scope.
func putScope(dst ptrace.ScopeSpans, scope instrumentation.Scope) {
	dst.SetSchemaUrl(scope.SchemaURL)
	is := dst.Scope()
	is.SetName(scope.Name)
	is.SetVersion(scope.Version)
	attrs := is.Attributes()
	attrs.Clear()
	if scope.Attributes.Len() == 0 {
		return
	}
	attrs.EnsureCapacity(scope.Attributes.Len())
	for it := scope.Attributes.Iter(); it.Next(); {
		putAttribute(attrs, it.Attribute())
	}
}

// putSpan overwrites every field of dst with s: dst may hold an earlier span.
func putSpan(dst ptrace.Span, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	dst.SetTraceID(pcommon.TraceID(sc.TraceID()))
	dst.SetSpanID(pcommon.SpanID(sc.SpanID()))
	putTraceState(dst.TraceState(), sc.TraceState())
	parent := s.Parent()
	dst.SetParentSpanID(pcommon.SpanID(parent.SpanID())) // all zeros, OTLP's "no parent", when there is none
	dst.SetFlags(spanFlags(sc.TraceFlags(), parent))
	dst.SetName(s.Name())
	dst.SetKind(spanKind(s.SpanKind()))
	dst.SetStartTimestamp(timestamp(s.StartTime()))
	dst.SetEndTimestamp(timestamp(s.EndTime()))

	overwriteAttributes(dst.Attributes(), s.Attributes())
	dst.SetDroppedAttributesCount(clampUint32(s.DroppedAttributes()))

	events, dstEvents := s.Events(), dst.Events()
	if len(events) > 0 || dstEvents.Len() > 0 {
		dstEvents.RemoveIf(func(ptrace.SpanEvent) bool { return true })
		dstEvents.EnsureCapacity(len(events))
		for i := range events {
			e := dstEvents.AppendEmpty()
			e.SetName(events[i].Name)
			e.SetTimestamp(timestamp(events[i].Time))
			putAttributes(e.Attributes(), events[i].Attributes)
			e.SetDroppedAttributesCount(clampUint32(events[i].DroppedAttributeCount))
		}
	}
	dst.SetDroppedEventsCount(clampUint32(s.DroppedEvents()))

	links, dstLinks := s.Links(), dst.Links()
	if len(links) > 0 || dstLinks.Len() > 0 {
		dstLinks.RemoveIf(func(ptrace.SpanLink) bool { return true })
		dstLinks.EnsureCapacity(len(links))
		for i := range links {
			l := dstLinks.AppendEmpty()
			lsc := links[i].SpanContext
			l.SetTraceID(pcommon.TraceID(lsc.TraceID()))
			l.SetSpanID(pcommon.SpanID(lsc.SpanID()))
			putTraceState(l.TraceState(), lsc.TraceState())
			l.SetFlags(spanFlags(lsc.TraceFlags(), lsc))
			putAttributes(l.Attributes(), links[i].Attributes)
			l.SetDroppedAttributesCount(clampUint32(links[i].DroppedAttributeCount))
		}
	}
	dst.SetDroppedLinksCount(clampUint32(s.DroppedLinks()))

	st := s.Status()
	switch st.Code {
	case codes.Ok:
		dst.Status().SetCode(ptrace.StatusCodeOk)
	case codes.Error:
		dst.Status().SetCode(ptrace.StatusCodeError)
	default:
		dst.Status().SetCode(ptrace.StatusCodeUnset)
	}
	// The SDK keeps a description only with an Error status.
	dst.Status().SetMessage(st.Description)
}

func putTraceState(dst pcommon.TraceState, ts trace.TraceState) {
	if ts.Len() == 0 {
		dst.FromRaw("") // String would allocate even for an empty state
		return
	}
	dst.FromRaw(ts.String())
}

// spanFlags is the OTLP flags word: the W3C trace flags of the span itself
// plus whether its parent (for a link: the linked context) is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	flags := uint32(tf) | spanFlagsContextHasIsRemote
	if parent.IsRemote() {
		flags |= spanFlagsContextIsRemote
	}
	return flags
}

func spanKind(k trace.SpanKind) ptrace.SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return ptrace.SpanKindInternal
	case trace.SpanKindServer:
		return ptrace.SpanKindServer
	case trace.SpanKindClient:
		return ptrace.SpanKindClient
	case trace.SpanKindProducer:
		return ptrace.SpanKindProducer
	case trace.SpanKindConsumer:
		return ptrace.SpanKindConsumer
	default:
		return ptrace.SpanKindUnspecified
	}
}

// timestamp maps the zero time (a span that has not ended) to 0, as OTLP
// does, instead of the nonsense UnixNano gives for it.
func timestamp(t time.Time) pcommon.Timestamp {
	if t.IsZero() {
		return 0
	}
	return pcommon.Timestamp(max(0, t.UnixNano())) //nolint:gosec // negative clamped
}

func clampUint32(v int) uint32 {
	return uint32(min(max(v, 0), 1<<32-1)) //nolint:gosec // clamped
}

func putAttributes(dst pcommon.Map, kvs []attribute.KeyValue) {
	if len(kvs) == 0 {
		return
	}
	dst.EnsureCapacity(len(kvs))
	for _, kv := range kvs {
		putAttribute(dst, kv)
	}
}

// overwriteAttributes makes dst hold exactly kvs, in order. When dst already
// holds the same keys with scalar values of the same types in the same order
// (the next attempt span in a reused buffer), the values are overwritten in
// place, which allocates nothing; otherwise dst is rebuilt.
func overwriteAttributes(dst pcommon.Map, kvs []attribute.KeyValue) {
	if dst.Len() == len(kvs) {
		i := 0
		for k, v := range dst.All() {
			if !overwriteScalar(v, k, kvs[i]) {
				break
			}
			i++
		}
		if i == len(kvs) {
			return
		}
	}
	dst.Clear()
	putAttributes(dst, kvs)
}

// overwriteScalar sets dst to kv's value if key is kv's key and both hold a
// scalar of the same type, and reports whether it did.
func overwriteScalar(dst pcommon.Value, key string, kv attribute.KeyValue) bool {
	if key != string(kv.Key) {
		return false
	}
	switch kv.Value.Type() {
	case attribute.STRING:
		if dst.Type() != pcommon.ValueTypeStr {
			return false
		}
		dst.SetStr(kv.Value.AsString())
	case attribute.INT64:
		if dst.Type() != pcommon.ValueTypeInt {
			return false
		}
		dst.SetInt(kv.Value.AsInt64())
	case attribute.FLOAT64:
		if dst.Type() != pcommon.ValueTypeDouble {
			return false
		}
		dst.SetDouble(kv.Value.AsFloat64())
	case attribute.BOOL:
		if dst.Type() != pcommon.ValueTypeBool {
			return false
		}
		dst.SetBool(kv.Value.AsBool())
	default:
		return false
	}
	return true
}

// putAttribute stores one attribute. Scalars go through the typed Put
// methods, which skip building an empty value first.
func putAttribute(dst pcommon.Map, kv attribute.KeyValue) {
	k := string(kv.Key)
	switch kv.Value.Type() {
	case attribute.STRING:
		dst.PutStr(k, kv.Value.AsString())
	case attribute.INT64:
		dst.PutInt(k, kv.Value.AsInt64())
	case attribute.FLOAT64:
		dst.PutDouble(k, kv.Value.AsFloat64())
	case attribute.BOOL:
		dst.PutBool(k, kv.Value.AsBool())
	default:
		setValue(dst.PutEmpty(k), kv.Value)
	}
}

// setValue stores any attribute value, including slices and maps.
func setValue(dst pcommon.Value, v attribute.Value) {
	switch v.Type() {
	case attribute.STRING:
		dst.SetStr(v.AsString())
	case attribute.INT64:
		dst.SetInt(v.AsInt64())
	case attribute.FLOAT64:
		dst.SetDouble(v.AsFloat64())
	case attribute.BOOL:
		dst.SetBool(v.AsBool())
	case attribute.STRINGSLICE:
		src := v.AsStringSlice()
		s := dst.SetEmptySlice()
		s.EnsureCapacity(len(src))
		for _, e := range src {
			s.AppendEmpty().SetStr(e)
		}
	case attribute.INT64SLICE:
		src := v.AsInt64Slice()
		s := dst.SetEmptySlice()
		s.EnsureCapacity(len(src))
		for _, e := range src {
			s.AppendEmpty().SetInt(e)
		}
	case attribute.FLOAT64SLICE:
		src := v.AsFloat64Slice()
		s := dst.SetEmptySlice()
		s.EnsureCapacity(len(src))
		for _, e := range src {
			s.AppendEmpty().SetDouble(e)
		}
	case attribute.BOOLSLICE:
		src := v.AsBoolSlice()
		s := dst.SetEmptySlice()
		s.EnsureCapacity(len(src))
		for _, e := range src {
			s.AppendEmpty().SetBool(e)
		}
	case attribute.BYTESLICE:
		dst.SetEmptyBytes().FromRaw(v.AsByteSlice())
	case attribute.SLICE:
		src := v.AsSlice()
		s := dst.SetEmptySlice()
		s.EnsureCapacity(len(src))
		for _, e := range src {
			setValue(s.AppendEmpty(), e)
		}
	case attribute.MAP:
		src := v.AsMap()
		m := dst.SetEmptyMap()
		m.EnsureCapacity(len(src))
		for _, kv := range src {
			setValue(m.PutEmpty(string(kv.Key)), kv.Value)
		}
	default:
		// attribute.EMPTY and anything newer than this code: an empty value
		// keeps the key visible rather than dropping it.
	}
}

// AggregatingProcessor is a span processor that hands ended spans, one at
// a time, to two consumers: Consumer synchronously, before OnEnd returns
// (the embedded aggregator: an attempt's sample must be in the tracker
// before its answer leaves the gateway, so the next request is ordered
// knowing it; only the spans ConsumerTakes), and the asynchronous consumer
// of NewSplitProcessor on a goroutine of its own (the metrics derived from
// spans and the export marshalling: nothing a client should wait for).
//
// It is not an export path. Spans reach it whether or not they are sampled for
// export, because the SDK calls OnEnd for every recording span, so export
// sampling never hides an attempt from the aggregator, as long as the sampler
// records the spans it does not sample (RecordOnly). And it does not batch
// the synchronous side.
//
// The exported fields are read on every OnEnd: set them before registering
// the processor with a TracerProvider and do not change them afterwards.
type AggregatingProcessor struct {
	// Consumer receives each ended span as a one-span ptrace.Traces, on the
	// goroutine that ended the span, so it must be quick, and must not keep
	// the ptrace.Traces (see TracesConsumer). Nil: none.
	Consumer TracesConsumer
	// ConsumerTakes says which ended spans Consumer gets; nil: every span.
	// A span it refuses is not converted on the goroutine that ended it
	// (the asynchronous consumer still gets every span).
	ConsumerTakes func(sdktrace.ReadOnlySpan) bool

	// buffers holds idle *spanBuffer per span kind (index trace.SpanKind):
	// server and attempt spans alternate, and a buffer refilled with a span
	// of the same shape reuses its attribute map instead of rebuilding it.
	buffers [6]sync.Pool

	async *asyncStage // nil: no asynchronous consumer
}

var _ sdktrace.SpanProcessor = (*AggregatingProcessor)(nil)

// DefaultAsyncQueue is how many ended spans may wait for the asynchronous
// consumer; past it they are dropped (and counted), never blocking a
// request.
const DefaultAsyncQueue = 8192

// NewSplitProcessor returns a processor that hands every ended span to sync
// on the goroutine that ended it and to async on a goroutine of its own,
// through a queue of queue spans (zero: DefaultAsyncQueue); onDrop (nil:
// none) is told how many spans a full queue dropped. Shutdown stops the
// goroutine after it has drained the queue.
func NewSplitProcessor(sync, async TracesConsumer, queue int, onDrop func(spans int)) *AggregatingProcessor {
	p := &AggregatingProcessor{Consumer: sync}
	if async != nil {
		if queue <= 0 {
			queue = DefaultAsyncQueue
		}
		if onDrop == nil {
			onDrop = func(int) {}
		}
		p.async = newAsyncStage(async, queue, onDrop, p)
	}
	return p
}

// AttemptSpan reports whether s is a CLIENT span: an attempt (or another
// client's call), the only kind the tracker learns from on this process's
// own path. The router's SERVER spans carry nothing routing needs (the
// metrics read them, asynchronously).
func AttemptSpan(s sdktrace.ReadOnlySpan) bool { return s.SpanKind() == trace.SpanKindClient }

// OnStart does nothing: only ended spans carry the attempt's outcome.
func (p *AggregatingProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd converts s and passes it to the synchronous consumer (if it takes
// it) before returning, and queues it for the asynchronous one.
func (p *AggregatingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if s == nil {
		return
	}
	if p.Consumer != nil && (p.ConsumerTakes == nil || p.ConsumerTakes(s)) {
		p.consume(p.Consumer, s)
	}
	if p.async != nil {
		p.async.enqueue(s)
	}
}

// consume converts s into a pooled buffer and hands it to c.
func (p *AggregatingProcessor) consume(c TracesConsumer, s sdktrace.ReadOnlySpan) {
	pool := &p.buffers[0]
	if k := int(s.SpanKind()); k > 0 && k < len(p.buffers) {
		pool = &p.buffers[k]
	}
	b, _ := pool.Get().(*spanBuffer)
	if b == nil {
		b = newSpanBuffer()
	}
	td := b.fill(s)
	// An error is dropped: a span processor has no one to return it to,
	// and the consumers here (the aggregator, the metrics) return none.
	_ = c.ConsumeTraces(context.Background(), td)
	// A consumer that marked the data read-only has made it unusable for the
	// next span; let it go rather than panic when refilling it.
	if !td.IsReadOnly() {
		pool.Put(b)
	}
}

// Shutdown drains the asynchronous queue (bounded by ctx) and stops its
// goroutine.
func (p *AggregatingProcessor) Shutdown(ctx context.Context) error {
	if p.async == nil {
		return nil
	}
	return p.async.shutdown(ctx)
}

// ForceFlush waits until every span queued so far has reached the
// asynchronous consumer (bounded by ctx).
func (p *AggregatingProcessor) ForceFlush(ctx context.Context) error {
	if p.async == nil {
		return nil
	}
	return p.async.flush(ctx)
}
