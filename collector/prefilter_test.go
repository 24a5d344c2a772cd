package collector

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// prefilterTargets are foreignTargets and two at IP literals, so that the
// fuzzer meets canonicalised addresses too.
var prefilterTargets = append(slices.Clone(foreignTargets),
	Target{Name: "v6", Model: "m", Host: "::1", Port: 8000, Kind: "openai"},
	Target{Name: "v4", Model: "m", Host: "10.0.0.7", Port: 8000, Kind: "openai"},
)

// ingestWitness is an aggregator, its tracker and everything it counts, for
// comparing what one request did on two paths.
type ingestWitness struct {
	tr       *Tracker
	agg      *Aggregator
	consumed map[string]int // onSpan, by source
	rejected map[string]int // onReject (the aggregator's and the handler's), by reason
}

// newIngestWitness: an aggregator with targets (nil: none set) and foreign
// options o, taking no instance's spans for its own, so that nothing the
// prefilter skips is hidden by the instance skip.
func newIngestWitness(targets []Target, o ForeignOptions) *ingestWitness {
	w := &ingestWitness{tr: newTestTracker(newFakeClock(t0)), consumed: map[string]int{}, rejected: map[string]int{}}
	w.agg = NewAggregator(w.tr, AggregatorOptions{
		OnSpan:   func(src string) { w.consumed[src]++ },
		OnReject: func(reason string, n int) { w.rejected[reason] += n },
	})
	if targets != nil {
		w.agg.SetTargets(targets)
	}
	w.agg.SetForeign(o)
	return w
}

// state is everything a request may have changed, printed.
func (w *ingestWitness) state() string {
	return fmt.Sprintf("tracker %d keys %v\nconsumed %v\nrejected %v\nforeign sources %v", w.tr.Keys(), w.tr.All(), w.consumed, w.rejected, w.agg.ForeignSources())
}

// untouched reports whether nothing was learned or counted.
func (w *ingestWitness) untouched() bool {
	return !w.taught() && len(w.rejected) == 0
}

// taught reports whether spans taught the tracker or were counted as
// consumed or naming unknown targets (a request the handler refused
// counts under another reason).
func (w *ingestWitness) taught() bool {
	return w.tr.Keys() > 0 || len(w.consumed) > 0 || w.rejected[RejectUnknownTarget] > 0 || w.agg.ForeignSources() != nil
}

// encode is the protobuf export request of spans.
func encode(t testing.TB, spans ...spanFixture) []byte {
	t.Helper()
	b, err := ptraceotlp.NewExportRequestFromTraces(buildTraces(t, spans...)).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Hand-built protobuf, for what pdata never encodes (fields out of order,
// unknown fields).
func pbAppendLen(b []byte, num int, val []byte) []byte {
	b = appendVarint(b, uint64(num)<<3|wireLen)
	b = appendVarint(b, uint64(len(val)))
	return append(b, val...)
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func pbStrAttr(key, val string) []byte {
	return pbAppendLen(pbAppendLen(nil, 1, []byte(key)), 2, pbAppendLen(nil, 1, []byte(val)))
}

// rawSpan is the fields of a span of kind to address:443 for
// gpt-4o-mini, unary, 300 ms, ended a second before t0, and then extra
// (raw fields).
func rawSpan(address string, kind uint64, extra ...[]byte) []byte {
	end := uint64(t0.Add(-time.Second).UnixNano())
	var span []byte
	span = pbAppendLen(span, 1, bytes.Repeat([]byte{1}, 16))
	span = pbAppendLen(span, 2, bytes.Repeat([]byte{2}, 8))
	span = pbAppendLen(span, 5, []byte("chat"))
	span = appendVarint(append(span, 6<<3|wireVarint), kind)
	span = append(span, 7<<3|wireI64)
	span = appendFixed64(span, end-uint64(300*time.Millisecond))
	span = append(span, 8<<3|wireI64)
	span = appendFixed64(span, end)
	span = pbAppendLen(span, 9, pbStrAttr("server.address", address))
	span = pbAppendLen(span, 9, pbStrAttr("gen_ai.request.model", "gpt-4o-mini"))
	span = pbAppendLen(span, 9, pbAppendLen(pbAppendLen(nil, 1, []byte("gen_ai.request.stream")), 2, []byte{2 << 3, 0}))
	return append(span, bytes.Join(extra, nil)...)
}

// rawRequest is a request of one ResourceSpans: resource (raw fields of a
// Resource) and one ScopeSpans of spans, the resource last if resourceLast.
func rawRequest(resource []byte, resourceLast bool, spans ...[]byte) []byte {
	var ss []byte
	for _, s := range spans {
		ss = pbAppendLen(ss, 2, s)
	}
	rs := pbAppendLen(nil, 2, ss)
	if resourceLast {
		rs = pbAppendLen(rs, 1, resource)
	} else {
		rs = append(pbAppendLen(nil, 1, resource), rs...)
	}
	return pbAppendLen(nil, 1, rs)
}

// resourceAfterSpans is a request whose ResourceSpans holds its scope spans
// before its resource (service.name service), as a hand-rolled encoder
// may: one CLIENT span to address.
func resourceAfterSpans(service, address string) []byte {
	return rawRequest(pbAppendLen(nil, 1, pbStrAttr("service.name", service)), true, rawSpan(address, uint64(ptrace.SpanKindClient)))
}

func appendFixed64(b []byte, v uint64) []byte {
	for range 8 {
		b = append(b, byte(v))
		v >>= 8
	}
	return b
}

// TestIngestPrefilter: what the prefilter lets through is decoded and
// consumed as before, what it skips would have changed nothing, and either
// way the answer and everything learned and counted are those of the full
// path (decoding into pdata and consuming, on a second aggregator).
func TestIngestPrefilter(t *testing.T) {
	t.Parallel()
	on := ForeignOptions{Enabled: true}
	unmapped := appSpan("app", map[string]any{"server.address": "api.example.com"})
	unmappedBatch := make([]spanFixture, 100)
	for i := range unmappedBatch {
		unmappedBatch[i] = unmapped
	}
	oneMapped := slices.Clone(unmappedBatch[:99])
	oneMapped = append(oneMapped[:40], append([]spanFixture{appSpan("app", nil)}, oneMapped[40:]...)...)
	httpSpan := spanFixture{instance: "app-app", service: "app", name: "GET", kind: ptrace.SpanKindClient,
		end: t0.Add(-time.Second), attrs: map[string]any{"server.address": "db.internal", "server.port": int64(5432)}}
	serverSpan := appSpan("app", nil)
	serverSpan.kind = ptrace.SpanKindServer
	gateway := attemptFixture("gw-peer", "groq", "llama-3.3-70b-versatile", 40*time.Millisecond, t0.Add(-time.Second))
	valid := encode(t, unmapped)
	withUnknown := append(appendVarint(slices.Clone(valid), 99<<3|wireVarint), 1) // a field pdata skips

	for _, tc := range []struct {
		name     string
		targets  []Target // nil: foreignTargets
		opts     ForeignOptions
		body     []byte
		json     bool // encode as JSON (spans only)
		gzip     bool
		spans    []spanFixture // when body is nil
		decoded  bool          // the handler decoded the body into pdata
		status   int
		learns   bool // something was learned or counted
		foreign  int  // spans ForeignSources counts
		rejected int  // gateway spans rejected for naming an unknown target
	}{
		{name: "only unmapped spans", opts: on, spans: unmappedBatch, status: 200},
		{name: "only unmapped spans, gzipped", opts: on, spans: unmappedBatch, gzip: true, status: 200},
		{name: "one mapped span among 99 unmapped", opts: on, spans: oneMapped, decoded: true, status: 200, learns: true, foreign: 1},
		{name: "a gateway's span", opts: on, spans: []spanFixture{unmapped, gateway}, decoded: true, status: 200, learns: true},
		{name: "a gateway's span, foreign off", spans: []spanFixture{gateway}, decoded: true, status: 200, learns: true},
		{name: "a gateway's span naming an unknown target", opts: on, decoded: true, status: 200, learns: true, rejected: 1,
			spans: []spanFixture{attemptFixture("gw-peer", "nope", "llama", 40*time.Millisecond, t0.Add(-time.Second))}},
		{name: "a gateway's server span", opts: on, decoded: true, status: 200, learns: true,
			spans: []spanFixture{gateway.with(map[string]any{"gen_ai.request.model": nil})}},
		{name: "foreign off, spans that would map", spans: []spanFixture{appSpan("app", nil), appSpan("app", nil)}, status: 200},
		{name: "foreign on, no targets set", targets: []Target{}, opts: on, spans: []spanFixture{appSpan("app", nil)}, status: 200},
		{name: "HTTP and database spans", opts: on, spans: []spanFixture{httpSpan, httpSpan.with(map[string]any{"server.address": "checkout.internal"})}, status: 200},
		{name: "a SERVER span at a configured host", opts: on, spans: []spanFixture{serverSpan}, status: 200},
		{name: "a configured host in capitals", opts: on, decoded: true, status: 200, learns: true, foreign: 1,
			spans: []spanFixture{unmapped, appSpan("app", map[string]any{"server.address": "API.OpenAI.COM"})}},
		{name: "an IPv4-mapped IPv6 address", opts: on, decoded: true, status: 200, learns: true, foreign: 1,
			spans: []spanFixture{appSpan("app", map[string]any{"server.address": "::ffff:127.0.0.1", "server.port": int64(9101), "gen_ai.request.model": "m"})}},
		{name: "a bracketed IPv6 address", targets: prefilterTargets, opts: on, decoded: true, status: 200, learns: true, foreign: 1,
			spans: []spanFixture{appSpan("app", map[string]any{"server.address": "[0:0::1]", "server.port": int64(8000), "gen_ai.request.model": "m"})}},
		{name: "a bracketed IPv6 address no target has", targets: prefilterTargets, opts: on, status: 200,
			spans: []spanFixture{appSpan("app", map[string]any{"server.address": "[::2]", "server.port": int64(8000), "gen_ai.request.model": "m"})}},
		{name: "a configured host, wrong port and model", opts: on, decoded: true, status: 200, // the walker reads the host only
			spans: []spanFixture{appSpan("app", map[string]any{"server.port": int64(8443), "gen_ai.request.model": "gpt-9"})}},
		{name: "a service not on the allow-list", opts: ForeignOptions{Enabled: true, Services: []string{"other"}}, spans: []spanFixture{appSpan("app", nil)}, status: 200},
		{name: "a service on the allow-list", opts: ForeignOptions{Enabled: true, Services: []string{"other", "app"}}, decoded: true, status: 200, learns: true, foreign: 1,
			spans: []spanFixture{appSpan("app", nil)}},
		{name: "resource after the spans, service allowed", opts: ForeignOptions{Enabled: true, Services: []string{"app"}},
			body: resourceAfterSpans("app", "api.openai.com"), decoded: true, status: 200, learns: true, foreign: 1},
		{name: "resource after the spans, service not allowed", opts: ForeignOptions{Enabled: true, Services: []string{"app"}},
			body: resourceAfterSpans("other", "api.openai.com"), status: 200},
		{name: "resource after the spans, unmapped", opts: on, body: resourceAfterSpans("app", "api.example.com"), status: 200},
		{name: "an empty request", opts: on, body: []byte{}, status: 200},
		{name: "an unknown field: decoded, skipped by pdata", opts: on, body: withUnknown, decoded: true, status: 200},
		{name: "JSON is not prefiltered", opts: on, spans: unmappedBatch[:3], json: true, decoded: true, status: 200},
		{name: "garbage", opts: on, body: []byte("\xff\xff\xff garbage"), decoded: true, status: 400},
		{name: "truncated", opts: on, body: valid[:len(valid)-1], decoded: true, status: 400},
		{name: "a length past the end", opts: on, body: []byte{1<<3 | wireLen, 5, 0}, decoded: true, status: 400},
		{name: "a wrong wire type", opts: on, body: []byte{1<<3 | wireVarint, 1}, decoded: true, status: 400},
		{name: "a span ID of 7 bytes", opts: on, decoded: true, status: 400,
			body: pbAppendLen(nil, 1, pbAppendLen(nil, 2, pbAppendLen(nil, 2, pbAppendLen(nil, 2, make([]byte, 7)))))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			targets := tc.targets
			if targets == nil {
				targets = foreignTargets
			}
			body, contentType := tc.body, contentProtobuf
			if body == nil {
				body = encode(t, tc.spans...)
				if tc.json {
					req := ptraceotlp.NewExportRequestFromTraces(buildTraces(t, tc.spans...))
					var err error
					if body, err = req.MarshalJSON(); err != nil {
						t.Fatal(err)
					}
					contentType = contentJSON
				}
			}

			// The full path, by hand.
			ref := newIngestWitness(targets, tc.opts)
			wantStatus := http.StatusOK
			req := ptraceotlp.NewExportRequest()
			unmarshal := req.UnmarshalProto
			if tc.json {
				unmarshal = req.UnmarshalJSON
			}
			if err := unmarshal(body); err != nil {
				wantStatus = http.StatusBadRequest
				ref.rejected[RejectUndecodable]++
			} else if err := ref.agg.ConsumePeerTraces(context.Background(), req.Traces()); err != nil {
				t.Fatal(err)
			}
			if wantStatus != tc.status {
				t.Fatalf("the full path answers %d, the case says %d", wantStatus, tc.status)
			}

			// The handler.
			w := newIngestWitness(targets, tc.opts)
			h := NewIngestHandler(w.agg, IngestOptions{OnReject: func(reason string, n int) { w.rejected[reason] += max(n, 1) }}).(*ingestHandler)
			sent := body
			if tc.gzip {
				sent = gzipped(t, body)
			}
			r := httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(sent))
			r.Header.Set("Content-Type", contentType)
			if tc.gzip {
				r.Header.Set("Content-Encoding", "gzip")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)

			if rec.Code != tc.status {
				t.Fatalf("status %d (%q), want %d", rec.Code, rec.Body, tc.status)
			}
			if decoded := h.decoded.Load() == 1; decoded != tc.decoded {
				t.Errorf("decoded into pdata: %v, want %v", decoded, tc.decoded)
			}
			if tc.status == http.StatusOK {
				want, err := protobufEncoding.marshalResponse(ptraceotlp.NewExportResponse())
				if tc.json {
					want, err = jsonEncoding.marshalResponse(ptraceotlp.NewExportResponse())
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(rec.Body.Bytes(), want) || rec.Header().Get("Content-Type") != contentType {
					t.Errorf("answer %q (%s), want the empty response %q (%s)", rec.Body, rec.Header().Get("Content-Type"), want, contentType)
				}
			}
			if got, want := w.state(), ref.state(); got != want {
				t.Errorf("through the handler:\n%s\nthe full path:\n%s", got, want)
			}
			if w.taught() != tc.learns {
				t.Errorf("learned or counted something: %v, want %v\n%s", w.taught(), tc.learns, w.state())
			}
			n := 0
			for _, s := range w.agg.ForeignSources() {
				n += int(s.Spans)
			}
			if n != tc.foreign || w.rejected[RejectUnknownTarget] != tc.rejected {
				t.Errorf("foreign spans %d, unknown-target rejections %d; want %d, %d", n, w.rejected[RejectUnknownTarget], tc.foreign, tc.rejected)
			}
		})
	}
}

// TestPrefilterFollowsReload: the rules are the aggregator's current ones,
// swapped on reload (SetTargets, SetForeign).
func TestPrefilterFollowsReload(t *testing.T) {
	t.Parallel()
	w := newIngestWitness(foreignTargets, ForeignOptions{})
	body := encode(t, appSpan("app", map[string]any{"server.address": "api.example.com"}))
	if !w.agg.teachesNothing(body) {
		t.Fatal("foreign off: not skipped")
	}
	w.agg.SetForeign(ForeignOptions{Enabled: true})
	if !w.agg.teachesNothing(body) {
		t.Fatal("foreign on, another host: not skipped")
	}
	w.agg.SetTargets(append(slices.Clone(foreignTargets), Target{Name: "ex", Model: "gpt-4o-mini", Host: "API.example.com", Port: 443, Kind: "openai"}))
	if w.agg.teachesNothing(body) {
		t.Fatal("a target added at the span's host: skipped")
	}
	w.agg.SetForeign(ForeignOptions{Enabled: true, Services: []string{"checkout"}})
	if !w.agg.teachesNothing(body) {
		t.Fatal("the service taken off the allow-list: not skipped")
	}
}

// TestPrefilterAllocatesNothing: the walk over a batch of spans that map to
// nothing allocates nothing.
func TestPrefilterAllocatesNothing(t *testing.T) {
	w := newIngestWitness(prefilterTargets, ForeignOptions{Enabled: true, Services: []string{"app"}})
	batch := make([]spanFixture, 50)
	for i := range batch {
		batch[i] = appSpan("app", map[string]any{"server.address": fmt.Sprintf("host-%d.example.com", i%3), "tags": []any{"a", int64(1), map[string]any{"k": 1.5}}})
	}
	batch = append(batch, appSpan("app", map[string]any{"server.address": "10.0.0.8"}), appSpan("app", map[string]any{"server.address": "[::2]"}))
	body := encode(t, batch...)
	if !w.agg.teachesNothing(body) {
		t.Fatal("not skipped")
	}
	if n := testing.AllocsPerRun(100, func() { w.agg.teachesNothing(body) }); n != 0 {
		t.Errorf("%v allocations a walk, want 0", n)
	}
}

// richTraces is a request using every field of every message a trace export
// has, with nested attribute values, events and links: seeds for the fuzzer.
func richTraces(t testing.TB, service, address string, kind ptrace.SpanKind) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.30.0")
	rs.Resource().Attributes().PutStr("service.name", service)
	rs.Resource().Attributes().PutInt("pid", 42)
	rs.Resource().SetDroppedAttributesCount(1)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.SetSchemaUrl("s")
	ss.Scope().SetName("openai")
	ss.Scope().SetVersion("1.0")
	ss.Scope().Attributes().PutBool("b", true)
	ss.Scope().SetDroppedAttributesCount(2)
	s := ss.Spans().AppendEmpty()
	s.SetTraceID(pcommon.TraceID{1, 2, 3})
	s.SetSpanID(pcommon.SpanID{4, 5})
	s.SetParentSpanID(pcommon.SpanID{6})
	s.TraceState().FromRaw("a=b")
	s.SetFlags(1)
	s.SetName("chat")
	s.SetKind(kind)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(-2 * time.Second)))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(-time.Second)))
	if err := s.Attributes().FromRaw(map[string]any{
		"server.address": address, "server.port": int64(443), "gen_ai.request.model": "gpt-4o-mini",
		"gen_ai.request.stream": false, "nested": map[string]any{"list": []any{1.5, "x", []byte{1}, map[string]any{"deep": nil}}},
	}); err != nil {
		t.Fatal(err)
	}
	s.SetDroppedAttributesCount(3)
	ev := s.Events().AppendEmpty()
	ev.SetName("gen_ai.choice")
	ev.SetTimestamp(pcommon.NewTimestampFromTime(t0))
	ev.Attributes().PutStr("firstbyte.target", "not on the span itself")
	ev.SetDroppedAttributesCount(1)
	s.SetDroppedEventsCount(1)
	l := s.Links().AppendEmpty()
	l.SetTraceID(pcommon.TraceID{9})
	l.SetSpanID(pcommon.SpanID{9})
	l.TraceState().FromRaw("c=d")
	l.Attributes().PutStr("server.address", "api.openai.com")
	l.SetDroppedAttributesCount(1)
	l.SetFlags(1)
	s.SetDroppedLinksCount(1)
	s.Status().SetCode(ptrace.StatusCodeOk)
	s.Status().SetMessage("fine")
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hostileBodies are requests at the edges of what pdata accepts and of
// what the walk reads, each with whether the walk skips it under config
// (prefilterConfigs[config]) and whether pdata decodes it.
func hostileBodies() []struct {
	name    string
	config  int
	body    []byte
	skip    bool
	pdataOK bool
} {
	client := uint64(ptrace.SpanKindClient)
	app := pbAppendLen(nil, 1, pbStrAttr("service.name", "app"))
	req := func(spans ...[]byte) []byte { return rawRequest(app, false, spans...) }
	unmapped := func(extra ...[]byte) []byte { return req(rawSpan("api.example.com", client, extra...)) }
	varintField := func(num uint64, v ...byte) []byte { return append(appendVarint(nil, num<<3|wireVarint), v...) }
	// deep is an attribute whose value nests wraps arrays deep: its innermost
	// AnyValue is at depth 1+2*wraps as pdata counts.
	deep := func(wraps int) []byte {
		v := pbAppendLen(nil, 1, []byte("x"))
		for range wraps {
			v = pbAppendLen(nil, 5, pbAppendLen(nil, 1, v))
		}
		return pbAppendLen(nil, 9, pbAppendLen(pbAppendLen(nil, 1, []byte("deep")), 2, v))
	}
	targetAttr := pbAppendLen(pbAppendLen(nil, 1, []byte("firstbyte.target")), 2, pbAppendLen(nil, 1, []byte("groq")))
	return []struct {
		name    string
		config  int
		body    []byte
		skip    bool
		pdataOK bool
	}{
		{"unmapped, hand-built", 0, unmapped(), true, true},
		{"a span ID of 7 bytes", 0, unmapped(pbAppendLen(nil, 2, make([]byte, 7))), false, false},
		{"a trace ID of 15 bytes", 0, unmapped(pbAppendLen(nil, 1, make([]byte, 15))), false, false},
		{"a parent span ID of 9 bytes", 0, unmapped(pbAppendLen(nil, 4, make([]byte, 9))), false, false},
		{"an empty parent span ID", 0, unmapped(pbAppendLen(nil, 4, nil)), true, true},
		{"a link's trace ID of 15 bytes", 0, unmapped(pbAppendLen(nil, 13, pbAppendLen(nil, 1, make([]byte, 15)))), false, false},
		{"a link's span ID of 7 bytes", 0, unmapped(pbAppendLen(nil, 13, pbAppendLen(nil, 2, make([]byte, 7)))), false, false},
		{"CLIENT as the int32 of a wider varint", 0, req(rawSpan("api.openai.com", 1<<32|client)), false, true},
		{"CLIENT, then INTERNAL", 0, req(rawSpan("api.openai.com", client, varintField(6, 1))), false, true},
		{"a field number that truncates to attributes", 0, unmapped(pbAppendLen(nil, 1<<32|9, targetAttr)), false, true},
		{"a varint of 10 bytes", 0, unmapped(varintField(10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)), true, true},
		{"a varint of 11 bytes", 0, unmapped(varintField(10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01)), false, false},
		{"a length of 2^63", 0, unmapped(append(appendVarint(nil, 9<<3|wireLen), appendVarint(nil, 1<<63)...)), false, false},
		{"a group (pdata skips it)", 0, unmapped(appendVarint(appendVarint(nil, 20<<3|3), 20<<3|4), varintField(10, 1)), false, true},
		{"a group last (pdata fails: it wants a tag after the group's end)", 0, unmapped(appendVarint(appendVarint(nil, 20<<3|3), 20<<3|4)), false, false},
		{"an end of group alone", 0, unmapped(appendVarint(nil, 20<<3|4)), false, false},
		{"wire type 6", 0, unmapped(appendVarint(nil, 20<<3|6)), false, false},
		{"values nested to depth 31", 0, unmapped(deep(15)), true, true},
		{"values nested to depth 33 (the walk gives up)", 0, unmapped(deep(16)), false, true},
		{"values nested to depth 101 (pdata fails)", 0, unmapped(deep(50)), false, false},
		{"a KeyValue with two keys", 0, unmapped(pbAppendLen(nil, 9, append(pbAppendLen(nil, 1, []byte("x")), targetAttr...))), false, true},
		{"an AnyValue with two strings", 0, unmapped(pbAppendLen(nil, 9, pbAppendLen(pbAppendLen(nil, 1, []byte("server.address")), 2,
			pbAppendLen(pbAppendLen(nil, 1, []byte("api.example.com")), 1, []byte("api.openai.com"))))), false, true},
		{"a key string table index", 0, unmapped(pbAppendLen(nil, 9, varintField(3, 1))), false, true},
		{"a value string table index", 0, unmapped(pbAppendLen(nil, 9, pbAppendLen(nil, 2, varintField(8, 1)))), false, true},
		{"a status with field 1", 0, unmapped(pbAppendLen(nil, 15, varintField(1, 2))), false, true},
		{"a status", 0, unmapped(pbAppendLen(nil, 15, append(pbAppendLen(nil, 2, []byte("x")), varintField(3, 2)...))), true, true},
		{"deprecated scope spans (pdata migrates them)", 0,
			pbAppendLen(nil, 1, append(pbAppendLen(nil, 1, app), pbAppendLen(nil, 1000, pbAppendLen(nil, 2, rawSpan("api.openai.com", client)))...)), false, true},
		{"entity refs", 0, rawRequest(append(app, pbAppendLen(nil, 3, append(pbAppendLen(nil, 2, []byte("host")), pbAppendLen(nil, 3, []byte("host.id"))...))...), false,
			rawSpan("api.example.com", client)), true, true},
		{"an entity ref with field 5", 0, rawRequest(append(app, pbAppendLen(nil, 3, pbAppendLen(nil, 5, nil))...), false, rawSpan("api.example.com", client)), false, true},
		{"allow-list: service.name not a string, then app", 1,
			rawRequest(append(pbAppendLen(nil, 1, pbAppendLen(pbAppendLen(nil, 1, []byte("service.name")), 2, varintField(3, 1))), app...), false,
				rawSpan("api.openai.com", client)), false, true},
		{"allow-list: two resources, other then app", 1,
			pbAppendLen(nil, 1, append(pbAppendLen(nil, 1, pbAppendLen(nil, 1, pbStrAttr("service.name", "other"))),
				pbAppendLen(pbAppendLen(nil, 1, app), 2, pbAppendLen(nil, 2, rawSpan("api.openai.com", client)))...)), false, true},
		{"allow-list: no service.name, \"\" allowed", 2, rawRequest(nil, false, rawSpan("api.openai.com", client)), false, true},
		{"allow-list: app, \"\" allowed (the walk does not tell which service.name comes first)", 2, req(rawSpan("api.openai.com", client)), false, true},
		{"allow-list: app, \"\" allowed, unmapped", 2, unmapped(), true, true},
		{"a target attribute on an event only", 0, unmapped(pbAppendLen(nil, 11, pbAppendLen(nil, 3, targetAttr))), true, true},
	}
}

// TestPrefilterHostileBodies: the walk's verdict on the edges of the wire
// format, and pdata's (FuzzPrefilter takes them as seeds).
func TestPrefilterHostileBodies(t *testing.T) {
	t.Parallel()
	for _, tc := range hostileBodies() {
		t.Run(tc.name, func(t *testing.T) {
			c := prefilterConfigs[tc.config]
			w := newIngestWitness(c.targets, c.opts)
			if got := w.agg.teachesNothing(tc.body); got != tc.skip {
				t.Errorf("skipped %v, want %v", got, tc.skip)
			}
			if err := ptraceotlp.NewExportRequest().UnmarshalProto(tc.body); (err == nil) != tc.pdataOK {
				t.Errorf("pdata: %v, want success %v", err, tc.pdataOK)
			}
		})
	}
}

// FuzzPrefilter: the prefilter is stricter than the full path. Whenever it
// says a body teaches nothing, pdata decodes it without error, and
// consuming what it decodes into an aggregator with the same configuration
// (and no instance's spans taken for its own) learns nothing and counts
// nothing: no tracker key, no consumed or rejected span, no foreign source.
// config picks the foreign rules and targets (prefilterConfigs).
func FuzzPrefilter(f *testing.F) {
	gateway := attemptFixture("gw-peer", "groq", "llama-3.3-70b-versatile", 40*time.Millisecond, t0.Add(-time.Second))
	unmapped := appSpan("app", map[string]any{"server.address": "api.example.com"})
	for _, body := range [][]byte{
		encode(f, gateway),
		encode(f, appSpan("app", nil)),
		encode(f, unmapped, unmapped, appSpan("checkout", map[string]any{"server.address": "api.openai.co"})),
		encode(f, appSpan("app", map[string]any{"server.address": "API.OPENAI.COM"})),
		encode(f, appSpan("app", map[string]any{"server.address": "::ffff:10.0.0.7", "server.port": int64(8000), "gen_ai.request.model": "m"})),
		encode(f, appSpan("app", map[string]any{"server.address": "[::1]", "server.port": int64(8000), "gen_ai.request.model": "m"})),
		encode(f, appSpan("", map[string]any{"server.address": "[::2]"})),
		encode(f, gateway.with(map[string]any{"firstbyte.target": "nope"})),
		richTraces(f, "app", "api.openai.com", ptrace.SpanKindClient),
		richTraces(f, "app", "api.example.com", ptrace.SpanKindClient),
		richTraces(f, "app", "api.openai.com", ptrace.SpanKindInternal),
		resourceAfterSpans("app", "api.openai.com"),
		resourceAfterSpans("other", "api.openai.com"),
		{},
		[]byte("\xff\xff\xff garbage"),
		{1<<3 | wireLen, 5, 0},
	} {
		for config := range uint8(len(prefilterConfigs)) {
			f.Add(body, config)
		}
	}
	for _, tc := range hostileBodies() {
		f.Add(tc.body, uint8(tc.config))
	}
	f.Fuzz(func(t *testing.T, body []byte, config uint8) {
		c := prefilterConfigs[int(config)%len(prefilterConfigs)]
		w := newIngestWitness(c.targets, c.opts)
		if !w.agg.teachesNothing(body) {
			return
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			t.Fatalf("skipped, but pdata cannot decode it: %v", err)
		}
		if err := w.agg.ConsumePeerTraces(context.Background(), req.Traces()); err != nil {
			t.Fatal(err)
		}
		if !w.untouched() {
			t.Fatalf("skipped, but consuming it changed:\n%s", w.state())
		}
	})
}

// prefilterConfigs are the aggregator configurations FuzzPrefilter tries.
var prefilterConfigs = []struct {
	targets []Target
	opts    ForeignOptions
}{
	{prefilterTargets, ForeignOptions{Enabled: true}},
	{prefilterTargets, ForeignOptions{Enabled: true, Services: []string{"app"}}},
	{prefilterTargets, ForeignOptions{Enabled: true, Services: []string{""}}},
	{prefilterTargets, ForeignOptions{}},
	{nil, ForeignOptions{Enabled: true}},
}

// BenchmarkPrefilter: the walk alone over 100-span requests as
// BenchmarkIngestForeign sends them (per span: ns/span).
func BenchmarkPrefilter(b *testing.B) {
	for _, tc := range []struct {
		name string
		span spanFixture
	}{
		{"mapped", appSpan("app", nil)},
		{"unmapped", appSpan("app", map[string]any{"server.address": "api.example.com"})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := newIngestWitness(foreignTargets, ForeignOptions{Enabled: true})
			batch := make([]spanFixture, 100)
			for i := range batch {
				batch[i] = tc.span
			}
			body := encode(b, batch...)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				w.agg.teachesNothing(body)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100, "ns/span")
		})
	}
}
