package collector

import (
	"unsafe"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The ingest prefilter: most spans an application exports map to nothing
// (other hosts, database calls, HTTP spans), and decoding them into pdata
// is most of what they cost. Before decoding a protobuf export request, the
// handler walks its wire format once, allocating nothing, and answers it
// without decoding when the walk proves that consuming it would teach and
// count nothing.
//
// The rule, derived from consume, learn and learnForeign on the peer path
// (ConsumePeerTraces). A span changes something (a tracker sample or fault,
// an onSpan count, an onReject count, a ForeignSources count) only when
//
//   - it names firstbyte.target (readAttempt sets at.target only from that
//     key): a gateway's span, counted as a peer's or rejected as naming an
//     unknown target whatever else it says; or
//   - learnForeign maps it, which takes all of: foreign ingest on (the
//     resource's foreignSource is nil otherwise), the resource's service
//     allowed (foreignRules.source), a target table set (learnForeign
//     returns false on nil), span kind CLIENT, and mapForeign finding
//     CanonicalHost(server.address) among the hosts of the table: both of
//     its maps are keyed by a target's canonical host, so a host no target
//     has maps to nothing, whatever the port and model.
//
// So a request is skipped when no span carries a firstbyte.target key, and,
// with foreign ingest on and a table set, no resource whose service may be
// allowed holds a span that may be CLIENT with a server.address whose
// canonical host is a target's. "May" is the walker's side of every doubt
// about how pdata resolves repetitions, taken so that skipping never
// depends on which occurrence wins:
//
//   - the service is the first service.name attribute's string value, ""
//     when there is none or it is not a string: allowed if "" is allowed or
//     any string-valued service.name is (over every Resource field);
//   - span kind is its last kind field: CLIENT if any kind field is
//     (int32 of the varint, as pdata truncates it);
//   - server.address is the last string-valued server.address attribute
//     (readAttempt overwrites): any string-valued server.address counts;
//   - a KeyValue with two keys or two values, or an AnyValue with two
//     values (pdata keeps the last, merging), is not walked: decode.
//
// The instance skip (a resource of this instance's own) is ignored: such a
// request is decoded, and consume skips it as before.
//
// The walk is stricter than pdata v1.71.0's generated unmarshalling, which
// it mirrors: whenever it says skip, pdata decodes the same bytes without
// error. It knows every field of every message of a trace export request
// and checks each one's wire type, length and contents as pdata does
// (trace IDs 0 or 16 bytes, span IDs 0 or 8, varints of at most 10 bytes,
// lengths within the message, AnyValue nesting below pdata's recursion
// limit). pdata checks no UTF-8 (strings are converted as they are), so
// neither does the walk. Anything else makes it give up and the request is
// decoded, which then decides (a 400 for an undecodable body): an unknown
// field (pdata would skip it; the walk does not try), a group, the
// deprecated scope spans field (pdata migrates it), string table indices
// (profiles only), a wrong wire type, a truncated or oversized length.
//
// The rules are read once per request, like consume's table: a reload
// racing a request takes effect before or after it, never half way.
//
// JSON bodies are not prefiltered: a JSON string may spell the same key or
// host with escapes (\u0066irstbyte.target), so byte-level matching is not
// safe without a full JSON decode, and JSON ingest is rare (collectors and
// SDKs export protobuf).

// prefilter is the rules of one request's walk.
type prefilter struct {
	foreign bool            // foreign ingest on and a target table set
	allow   map[string]bool // the services allowed to be foreign; nil: every one
	hosts   map[string]bool // the canonical hosts of the configured targets
}

// prefilterMaxDepth bounds the nesting the walk follows, counted as pdata
// counts it (an attribute's KeyValue 0, its AnyValue 1, an array or list
// in it 2, ...): below proto.RecursionLimit (100), past which pdata fails.
const prefilterMaxDepth = 32

// spanKindClient is pdata's CLIENT, as the int32 the wire's varint becomes.
const spanKindClient = int32(ptrace.SpanKindClient)

// teachesNothing reports whether the protobuf ExportTraceServiceRequest b,
// consumed from peers, certainly teaches and counts nothing, so it need
// not be decoded. False means: decode it (it may teach, or the walk cannot
// tell).
func (a *Aggregator) teachesNothing(b []byte) bool {
	var p prefilter
	if c, table := a.foreign.p.Load(), a.targets.p.Load(); c != nil && table != nil {
		p = prefilter{foreign: true, allow: c.allow, hosts: table.hosts}
	}
	return p.request(b)
}

// Protobuf wire types, as protowire numbers them (VarintType, Fixed64Type,
// BytesType, Fixed32Type): untyped, for the byte-level fast path.
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireI32    = 5
)

// pbNext reads the field at pos: its number, wire type and value (a LEN
// field's bytes, a VARINT's value, nothing of the fixed-size ones: the walk
// needs none) and where the next field starts; next < 0 when it cannot be
// read. The common field, a one-byte tag (fields 1 to 15) and a one-byte
// varint or length, is read inline; the rest by pbNextSlow.
func pbNext(b []byte, pos int) (num uint64, wire byte, val []byte, v uint64, next int) {
	if pos+1 < len(b) {
		c, n := b[pos], b[pos+1]
		if c >= 1<<3 && c < 0x80 && n < 0x80 {
			switch c & 7 {
			case wireLen:
				if end := pos + 2 + int(n); end <= len(b) {
					return uint64(c >> 3), wireLen, b[pos+2 : end : end], 0, end
				}
			case wireVarint:
				return uint64(c >> 3), wireVarint, nil, uint64(n), pos + 2
			}
		}
	}
	return pbNextSlow(b, pos)
}

// pbNextSlow is pbNext's general case, read with protowire as pdata's
// decoder reads a field (a tag, then a varint, a fixed 64 or 32 bits, or a
// length-delimited value). A tag protowire refuses (number 0, or past the
// valid range, which pdata would truncate) and the group wire types (pdata
// skips them as unknown fields; no OTLP field is one) are not read: the
// walk gives up, as on any field it does not know.
func pbNextSlow(b []byte, pos int) (num uint64, wire byte, val []byte, v uint64, next int) {
	if pos >= len(b) {
		return 0, 0, nil, 0, -1
	}
	n, typ, m := protowire.ConsumeTag(b[pos:])
	if m < 0 {
		return 0, 0, nil, 0, -1
	}
	pos += m
	switch typ {
	case protowire.VarintType:
		v, m = protowire.ConsumeVarint(b[pos:])
	case protowire.Fixed64Type:
		_, m = protowire.ConsumeFixed64(b[pos:])
	case protowire.Fixed32Type:
		_, m = protowire.ConsumeFixed32(b[pos:])
	case protowire.BytesType:
		val, m = protowire.ConsumeBytes(b[pos:])
		val = val[:len(val):len(val)]
	default:
		return 0, 0, nil, 0, -1
	}
	if m < 0 {
		return 0, 0, nil, 0, -1
	}
	return uint64(n), byte(typ), val, v, pos + m
}

// Each message's walker below loops over its fields the same way, written
// out rather than shared through a callback, which would cost a closure
// per message: read a field, then accept a known number of the right wire
// type or give up.

// request walks an ExportTraceServiceRequest.
func (p *prefilter) request(b []byte) bool {
	for pos := 0; pos < len(b); {
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 || num != 1 || wire != wireLen || !p.resourceSpans(val) { // resource_spans
			return false
		}
		pos = next
	}
	return true
}

// resourceSpans walks a ResourceSpans: true when it is valid and teaches
// nothing.
func (p *prefilter) resourceSpans(b []byte) bool {
	allowed := p.allow == nil || p.allow[""] // the service may be allowed
	mayMap := false                          // a span may map to a target
	for pos := 0; pos < len(b); {
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 || wire != wireLen { // every field of ResourceSpans is LEN
			return false
		}
		switch num {
		case 1: // resource
			ok, svc := p.resource(val)
			if !ok {
				return false
			}
			allowed = allowed || svc
		case 2: // scope_spans
			ok, m := p.scopeSpans(val, allowed)
			if !ok {
				return false
			}
			mayMap = mayMap || m
		case 3: // schema_url
		default: // 1000, deprecated scope spans (pdata migrates them), or unknown
			return false
		}
		if p.foreign && allowed && mayMap {
			return false
		}
		pos = next
	}
	return true
}

// resource walks a Resource; allowed says a string-valued service.name
// attribute names a service on the foreign allow-list.
func (p *prefilter) resource(b []byte) (ok, allowed bool) {
	for pos := 0; pos < len(b); {
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 {
			return false, false
		}
		switch {
		case num == 1 && wire == wireLen: // attributes
			key, str, isStr, ok := keyValue(val, 0)
			if !ok {
				return false, false
			}
			if isStr && p.allow != nil && string(key) == attrServiceName && p.allow[string(str)] {
				allowed = true
			}
		case num == 2 && wire == wireVarint: // dropped_attributes_count
		case num == 3 && wire == wireLen: // entity_refs
			if !entityRef(val) {
				return false, false
			}
		default:
			return false, false
		}
		pos = next
	}
	return true, allowed
}

// entityRef walks an EntityRef: four strings (schema_url, type, id_keys,
// description_keys).
func entityRef(b []byte) bool {
	for pos := 0; pos < len(b); {
		num, wire, _, _, next := pbNext(b, pos)
		if next < 0 || num > 4 || wire != wireLen {
			return false
		}
		pos = next
	}
	return true
}

// scopeSpans walks a ScopeSpans; mayMap says one of its spans may map to a
// target (see span). Not ok also when a span names firstbyte.target, or
// may map while its service may be allowed (allowed, as far as its
// resource has been read): the request is decoded then, so the walk stops
// at the first such span rather than validating the rest.
func (p *prefilter) scopeSpans(b []byte, allowed bool) (ok, mayMap bool) {
	for pos := 0; pos < len(b); {
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 || wire != wireLen { // every field of ScopeSpans is LEN
			return false, false
		}
		switch num {
		case 1: // scope
			if !scope(val) {
				return false, false
			}
		case 2: // spans
			ok, m := p.span(val)
			if !ok || m && allowed {
				return false, false
			}
			mayMap = mayMap || m
		case 3: // schema_url
		default:
			return false, false
		}
		pos = next
	}
	return true, mayMap
}

// scope walks an InstrumentationScope.
func scope(b []byte) bool {
	for pos := 0; pos < len(b); {
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 {
			return false
		}
		switch {
		case (num == 1 || num == 2) && wire == wireLen: // name, version
		case num == 3 && wire == wireLen: // attributes
			if _, _, _, ok := keyValue(val, 0); !ok {
				return false
			}
		case num == 4 && wire == wireVarint: // dropped_attributes_count
		default:
			return false
		}
		pos = next
	}
	return true
}

// span walks a Span. Not ok when it names firstbyte.target (a gateway's
// span: decode it) or is not valid; mayMap when foreign spans may teach,
// it may be CLIENT and a string-valued server.address canonicalises to a
// configured target's host.
func (p *prefilter) span(b []byte) (ok, mayMap bool) {
	client, hostKnown := false, false
	for pos := 0; pos < len(b); {
		num, wire, val, v, next := pbNext(b, pos)
		if next < 0 {
			return false, false
		}
		switch {
		case num == 9 && wire == wireLen: // attributes
			key, str, isStr, ok := keyValue(val, 0)
			if !ok || string(key) == attrTarget {
				return false, false
			}
			if isStr && p.foreign && string(key) == attrServerAddress && canonicalHostKnown(p.hosts, str) {
				hostKnown = true
			}
		case num == 6 && wire == wireVarint: // kind
			client = client || int32(v) == spanKindClient //nolint:gosec // pdata truncates it so too
		case (num == 1) && wire == wireLen: // trace_id
			if len(val) != 0 && len(val) != 16 {
				return false, false
			}
		case (num == 2 || num == 4) && wire == wireLen: // span_id, parent_span_id
			if len(val) != 0 && len(val) != 8 {
				return false, false
			}
		case (num == 3 || num == 5) && wire == wireLen: // trace_state, name
		case (num == 7 || num == 8) && wire == wireI64: // start and end time
		case (num == 10 || num == 12 || num == 14) && wire == wireVarint: // dropped counts
		case num == 11 && wire == wireLen: // events
			if !event(val) {
				return false, false
			}
		case num == 13 && wire == wireLen: // links
			if !link(val) {
				return false, false
			}
		case num == 15 && wire == wireLen: // status
			if !status(val) {
				return false, false
			}
		case num == 16 && wire == wireI32: // flags
		default:
			return false, false
		}
		pos = next
	}
	return true, client && hostKnown
}

// canonicalHostKnown reports whether telemetry.CanonicalHost(string(b)),
// the host learnForeign maps, is one of hosts. It does not copy b, which
// the conversion to a string would (CanonicalHost's argument escapes): the
// string shares b's bytes, which nothing writes meanwhile (b is the
// request body), and does not outlive the call, since CanonicalHost
// returns it or a new string and that serves only as a map index.
func canonicalHostKnown(hosts map[string]bool, b []byte) bool {
	if len(b) == 0 {
		return hosts[""]
	}
	return hosts[telemetry.CanonicalHost(unsafe.String(&b[0], len(b)))]
}

// event walks a Span.Event.
func event(b []byte) bool {
	for pos := 0; pos < len(b); {
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 {
			return false
		}
		switch {
		case num == 1 && wire == wireI64: // time
		case num == 2 && wire == wireLen: // name
		case num == 3 && wire == wireLen: // attributes
			if _, _, _, ok := keyValue(val, 0); !ok {
				return false
			}
		case num == 4 && wire == wireVarint: // dropped_attributes_count
		default:
			return false
		}
		pos = next
	}
	return true
}

// link walks a Span.Link.
func link(b []byte) bool {
	for pos := 0; pos < len(b); {
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 {
			return false
		}
		switch {
		case num == 1 && wire == wireLen: // trace_id
			if len(val) != 0 && len(val) != 16 {
				return false
			}
		case num == 2 && wire == wireLen: // span_id
			if len(val) != 0 && len(val) != 8 {
				return false
			}
		case num == 3 && wire == wireLen: // trace_state
		case num == 4 && wire == wireLen: // attributes
			if _, _, _, ok := keyValue(val, 0); !ok {
				return false
			}
		case num == 5 && wire == wireVarint: // dropped_attributes_count
		case num == 6 && wire == wireI32: // flags
		default:
			return false
		}
		pos = next
	}
	return true
}

// status walks a Status (message 2, code 3; 1 is unused).
func status(b []byte) bool {
	for pos := 0; pos < len(b); {
		num, wire, _, _, next := pbNext(b, pos)
		if next < 0 || !(num == 2 && wire == wireLen || num == 3 && wire == wireVarint) {
			return false
		}
		pos = next
	}
	return true
}

// keyValue walks a KeyValue at depth (see prefilterMaxDepth) and returns
// its key and, when its value is a string, that string. It gives up on a
// second key or value (pdata keeps the last key and merges the values) and
// on key_strindex (profiles only).
func keyValue(b []byte, depth int) (key, str []byte, isStr, ok bool) {
	if depth >= prefilterMaxDepth {
		return nil, nil, false, false
	}
	haveKey, haveValue := false, false
	for pos := 0; pos < len(b); {
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 || wire != wireLen {
			return nil, nil, false, false
		}
		switch {
		case num == 1 && !haveKey:
			key, haveKey = val, true
		case num == 2 && !haveValue:
			haveValue = true
			if str, isStr, ok = anyValue(val, depth+1); !ok {
				return nil, nil, false, false
			}
		default:
			return nil, nil, false, false
		}
		pos = next
	}
	return key, str, isStr, true
}

// anyValue walks an AnyValue at depth; str is its string when it is one.
// It gives up on a second value (pdata keeps the last) and on
// string_value_strindex (profiles only).
func anyValue(b []byte, depth int) (str []byte, isStr, ok bool) {
	if depth >= prefilterMaxDepth {
		return nil, false, false
	}
	for pos := 0; pos < len(b); {
		if pos > 0 {
			return nil, false, false // a second value
		}
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 {
			return nil, false, false
		}
		switch {
		case num == 1 && wire == wireLen: // string_value
			str, isStr = val, true
		case (num == 2 || num == 3) && wire == wireVarint: // bool_value, int_value
		case num == 4 && wire == wireI64: // double_value
		case num == 5 && wire == wireLen: // array_value
			if !arrayValue(val, depth+1) {
				return nil, false, false
			}
		case num == 6 && wire == wireLen: // kvlist_value
			if !keyValueList(val, depth+1) {
				return nil, false, false
			}
		case num == 7 && wire == wireLen: // bytes_value
		default:
			return nil, false, false
		}
		pos = next
	}
	return str, isStr, true
}

// arrayValue walks an ArrayValue at depth.
func arrayValue(b []byte, depth int) bool {
	if depth >= prefilterMaxDepth {
		return false
	}
	for pos := 0; pos < len(b); {
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 || num != 1 || wire != wireLen {
			return false
		}
		if _, _, ok := anyValue(val, depth+1); !ok {
			return false
		}
		pos = next
	}
	return true
}

// keyValueList walks a KeyValueList at depth.
func keyValueList(b []byte, depth int) bool {
	if depth >= prefilterMaxDepth {
		return false
	}
	for pos := 0; pos < len(b); {
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 || num != 1 || wire != wireLen {
			return false
		}
		if _, _, _, ok := keyValue(val, depth+1); !ok {
			return false
		}
		pos = next
	}
	return true
}
