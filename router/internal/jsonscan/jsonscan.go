// Package jsonscan is the gateway's one JSON toolkit: it validates JSON
// without decoding it, walks the members of an object and the elements of
// an array, and quotes and unquotes strings. The request path (reading a
// request's model, checking an upstream's answer) and the translators
// (router/translate) are built on it, so there is one reading of JSON in the
// gateway, not one per package.
//
// A request or answer is mostly string bytes that cross the gateway
// untouched, so the work is finding where each value starts and ends and
// copying its bytes: several times cheaper than encoding/json, which decodes
// every string and encodes it again.
//
// Validation (Valid, Object, Value, String) accepts exactly what
// encoding/json accepts (strings may hold invalid UTF-8) and bounds nesting
// as encoding/json does. Navigation (Skip, Field, MembersOf, ElementsOf,
// Each) expects a value validation has accepted and never reads past its
// end. What it must not do: allocate on the hot paths (a scratch buffer for
// an escaped key is the one exception), or panic on any input.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// MaxDepth bounds nesting, as encoding/json does, so a body of ten million
// '[' cannot exhaust the stack.
const MaxDepth = 10000

// Valid returns b's one JSON value without the whitespace around it, or
// false when b is not exactly one valid JSON value.
func Valid(b []byte) ([]byte, bool) {
	i := SkipSpace(b, 0)
	end, ok := Value(b, i, 0)
	if !ok || SkipSpace(b, end) != len(b) {
		return nil, false
	}
	return b[i:end], true
}

// Object validates b as exactly one JSON object, whitespace around it
// allowed, and calls each with every top-level member in order: its name
// (the key decoded; valid until each returns) and its value (a slice of b,
// see Offset). It is Valid and a walk over the members in one pass, for the
// callers that want members of a body they must check anyway. A caller that
// assigns per name keeps the last member of a name, as encoding/json does.
// False when b is not exactly one valid JSON object (each may have seen
// members before the fault).
func Object(b []byte, each func(name, val []byte)) bool {
	var scratch []byte // for a key written with escapes ("mod\u0065l")
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return SkipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		ks := i
		ke, ok := String(b, i)
		if !ok {
			return false
		}
		i = SkipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		vs := SkipSpace(b, i+1)
		ve, ok := Value(b, vs, 1)
		if !ok {
			return false
		}
		name := b[ks+1 : ke-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			scratch = AppendUnquoted(scratch[:0], b[ks:ke])
			name = scratch
		}
		each(name, b[vs:ve])
		i = SkipSpace(b, ve)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return SkipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// Value validates the JSON value starting at b[i], depth containers deep,
// and returns the index just past it.
func Value(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return String(b, i)
	case c == '{' || c == '[':
		return container(b, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		return number(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return i, false
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func container(b []byte, i, depth int) (int, bool) {
	if depth > MaxDepth {
		return i, false
	}
	object := b[i] == '{'
	closer := byte(']')
	if object {
		closer = '}'
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, true
	}
	for {
		var ok bool
		if object {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			if i, ok = String(b, i); !ok {
				return i, false
			}
			i = SkipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = SkipSpace(b, i+1)
		}
		if i, ok = Value(b, i, depth); !ok {
			return i, false
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case closer:
			return i + 1, true
		default:
			return i, false
		}
	}
}

// String validates a string token at b[i] == '"' and returns the index just
// past its closing quote. Its loop is the hot one: prompts are mostly string
// bytes, so it crosses them eight at a time and lands on the next quote,
// backslash or control character directly.
func String(b []byte, i int) (int, bool) {
	for i++; ; i++ {
		for i+8 <= len(b) {
			if m := specialBytes(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(b) {
			return i, false
		}
		c := b[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue // among the last few bytes, checked one by one
		}
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		}
		i++ // an escape
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
				return i, false
			}
			i += 4
		default:
			return i, false
		}
	}
}

// specialBytes marks, with its high bit, each byte of the little-endian word
// w that is a quote, a backslash or below 0x20 (the classic "has a zero
// byte" test on w^'"' and w^'\\', and "has a byte less than 0x20" on w).
// A byte above a marked one may be marked wrongly (a borrow); the lowest
// mark is always right, and that is the only one read.
func specialBytes(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	m := (w - ones*0x20) &^ w
	m |= (quote - ones) &^ quote
	m |= (backslash - ones) &^ backslash
	return m & highs
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func number(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	return i, true
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}
