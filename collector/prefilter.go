package collector

import (
	"unsafe"

	"go.opentelemetry.io/collector/pdata/ptrace"

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
			if !message(val, entityRefFields) {
				return false, false
			}
		default:
			return false, false
		}
		pos = next
	}
	return true, allowed
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
			if !message(val, scopeFields) {
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
			if !message(val, eventFields) {
				return false, false
			}
		case num == 13 && wire == wireLen: // links
			if !message(val, linkFields) {
				return false, false
			}
		case num == 15 && wire == wireLen: // status
			if !message(val, statusFields) {
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
