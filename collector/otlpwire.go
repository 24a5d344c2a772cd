package collector

import "google.golang.org/protobuf/encoding/protowire"

// The OTLP wire walk the ingest prefilter (prefilter.go) is built on: reading
// one protobuf field, and walking the messages that only need to be valid
// (nothing in them decides whether a request teaches), each as pdata's
// decoder would accept it.

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

// field is one field a message may hold: its number and wire type, and
// what its value must be (nil: anything of that wire type).
type field struct {
	num   uint64
	wire  byte
	check func(val []byte) bool
}

// message walks b as a message of these fields: any other field, or a
// value its check refuses, and it is not valid.
func message(b []byte, fields []field) bool {
	for pos := 0; pos < len(b); {
		num, wire, val, _, next := pbNext(b, pos)
		if next < 0 {
			return false
		}
		known := false
		for _, f := range fields {
			if f.num == num && f.wire == wire {
				known = f.check == nil || f.check(val)
				break
			}
		}
		if !known {
			return false
		}
		pos = next
	}
	return true
}

// attributeValid checks a KeyValue at the top depth.
func attributeValid(val []byte) bool {
	_, _, _, ok := keyValue(val, 0)
	return ok
}

// idOf checks a trace or span id: n bytes, or none.
func idOf(n int) func([]byte) bool {
	return func(val []byte) bool { return len(val) == 0 || len(val) == n }
}

// The messages that only need to be valid.
var (
	// EntityRef: schema_url, type, id_keys, description_keys.
	entityRefFields = []field{{1, wireLen, nil}, {2, wireLen, nil}, {3, wireLen, nil}, {4, wireLen, nil}}
	// InstrumentationScope: name, version, attributes, dropped_attributes_count.
	scopeFields = []field{{1, wireLen, nil}, {2, wireLen, nil}, {3, wireLen, attributeValid}, {4, wireVarint, nil}}
	// Span.Event: time, name, attributes, dropped_attributes_count.
	eventFields = []field{{1, wireI64, nil}, {2, wireLen, nil}, {3, wireLen, attributeValid}, {4, wireVarint, nil}}
	// Span.Link: trace_id, span_id, trace_state, attributes,
	// dropped_attributes_count, flags.
	linkFields = []field{{1, wireLen, idOf(16)}, {2, wireLen, idOf(8)}, {3, wireLen, nil},
		{4, wireLen, attributeValid}, {5, wireVarint, nil}, {6, wireI32, nil}}
	// Status: message, code (1 is unused).
	statusFields = []field{{2, wireLen, nil}, {3, wireVarint, nil}}
)

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
