package translate

import (
	"bytes"
	"iter"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// A body is validated once, by jsonscan.Valid; afterwards it is navigated with the
// non-validating skips below, which cross strings with bytes.IndexByte. A
// "value" in this file is the raw bytes of one JSON value, without the
// whitespace around it.

// skipValue returns the end of the valid value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipContainer(b, i)
	}
	for i < len(b) { // a number or a literal
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the end of the valid string token at b[i] == '"'.
func skipString(b []byte, i int) int {
	start := i + 1
	for i = start; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		q := i + j
		k := q
		for k > start && b[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 { // an even run of backslashes escapes only itself
			return q + 1
		}
		i = q + 1
	}
}

func skipContainer(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(b)
}

// members iterates over the members of a valid object value.
type members struct {
	b   []byte
	i   int
	key []byte // scratch for a key written with escapes
}

// objectMembers iterates over v's members; over none when v is not an object.
func objectMembers(v []byte) members {
	if !isObject(v) {
		return members{}
	}
	return members{b: v, i: 1}
}

// next returns the next member's key (unescaped; valid until the next call)
// and value.
func (m *members) next() (key, val []byte, ok bool) {
	i := jsonscan.SkipSpace(m.b, m.i)
	if i < len(m.b) && m.b[i] == ',' {
		i = jsonscan.SkipSpace(m.b, i+1)
	}
	if i >= len(m.b) || m.b[i] != '"' {
		return nil, nil, false
	}
	ks := i
	i = skipString(m.b, i)
	key = m.b[ks+1 : i-1]
	if bytes.IndexByte(key, '\\') >= 0 {
		m.key = appendUnquoted(m.key[:0], m.b[ks:i])
		key = m.key
	}
	i = jsonscan.SkipSpace(m.b, jsonscan.SkipSpace(m.b, i)+1) // past ':'
	vs := i
	i = skipValue(m.b, i)
	m.i = i
	return key, m.b[vs:i], true
}

// elements iterates over the elements of a valid array value.
type elements struct {
	b []byte
	i int
}

// arrayElements iterates over v's elements; over none when v is not an array.
func arrayElements(v []byte) elements {
	if !isArray(v) {
		return elements{}
	}
	return elements{b: v, i: 1}
}

func (e *elements) next() ([]byte, bool) {
	i := jsonscan.SkipSpace(e.b, e.i)
	if i < len(e.b) && e.b[i] == ',' {
		i = jsonscan.SkipSpace(e.b, i+1)
	}
	if i >= len(e.b) || e.b[i] == ']' {
		return nil, false
	}
	vs := i
	i = skipValue(e.b, i)
	e.i = i
	return e.b[vs:i], true
}

// elementsOf ranges over the elements of the array v with their indexes;
// over nothing for a value of another kind.
func elementsOf(v []byte) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		e := arrayElements(v)
		for j := 0; ; j++ {
			el, ok := e.next()
			if !ok || !yield(j, el) {
				return
			}
		}
	}
}

// validMembers checks that b is exactly one JSON object (whitespace around
// it allowed) and calls each with its top-level members in order, keys
// unescaped (valid until the next call), in the same pass: what every
// translator entry point does with an upstream body or event. A caller
// that assigns per key keeps the last member of a name, as encoding/json
// does. False when b is not one JSON object (each may have seen members
// before the fault).
func validMembers(b []byte, each func(key, val []byte)) bool {
	var scratch []byte
	return jsonscan.Object(b, func(k, v []byte) {
		name := k[1 : len(k)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			scratch = appendUnquoted(scratch[:0], k)
			name = scratch
		}
		each(name, v)
	})
}

// allElements reports whether v is an array whose every element is one
// ok accepts.
func allElements(v []byte, ok func(el []byte) bool) bool {
	if !isArray(v) {
		return false
	}
	e := arrayElements(v)
	for el, more := e.next(); more; el, more = e.next() {
		if !ok(el) {
			return false
		}
	}
	return true
}

// field returns the value of key in the valid object obj, or nil.
func field(obj []byte, key string) []byte {
	if len(obj) == 0 || obj[0] != '{' {
		return nil
	}
	m := objectMembers(obj)
	var found []byte
	for k, v, ok := m.next(); ok; k, v, ok = m.next() {
		if string(k) == key {
			found = v // the last one wins, as with encoding/json
		}
	}
	return found
}

// present reports whether v is a value other than null: a client sending
// "temperature": null means the same as leaving it out.
func present(v []byte) bool { return len(v) > 0 && !isNull(v) }

func isNull(v []byte) bool   { return string(v) == "null" }
func isString(v []byte) bool { return len(v) > 0 && v[0] == '"' }
func isObject(v []byte) bool { return len(v) > 0 && v[0] == '{' }
func isArray(v []byte) bool  { return len(v) > 0 && v[0] == '[' }
func isNumber(v []byte) bool { return len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) }
func isBool(v []byte) bool   { return string(v) == "true" || string(v) == "false" }
func isTrue(v []byte) bool   { return string(v) == "true" }

// isEmptyString reports whether v is the string token "".
func isEmptyString(v []byte) bool { return string(v) == `""` }

// stringIs reports whether the string token v decodes to s.
func stringIs(v []byte, s string) bool {
	if !isString(v) {
		return false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == s
	}
	var buf [64]byte
	return string(appendUnquoted(buf[:0], v)) == s
}

// intValue reads an integer token (1, 12, 3e2 is not one); false otherwise.
func intValue(v []byte) (int64, bool) {
	if !isNumber(v) || bytes.ContainsAny(v, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// appendUnquoted appends the decoded contents of the valid string token v.
// Invalid UTF-8 and lone surrogates become U+FFFD, as with encoding/json.
func appendUnquoted(dst, v []byte) []byte {
	s := v[1 : len(v)-1]
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' {
			i++
			switch s[i] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := rune(hex4(s[i+1:]))
				i += 4 // on the escape's last digit
				if utf16.IsSurrogate(r) {
					// A pair is two escapes in a row; anything else leaves a lone
					// surrogate, which is not a character.
					dec := utf8.RuneError
					if i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
						dec = utf16.DecodeRune(r, rune(hex4(s[i+3:])))
					}
					if dec != utf8.RuneError {
						i += 6
					}
					r = dec
				}
				dst = utf8.AppendRune(dst, r)
			default: // '"', '\\', '/'
				dst = append(dst, s[i])
			}
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

func hex4(b []byte) uint16 {
	var n uint16
	for _, c := range b[:4] {
		n <<= 4
		switch {
		case c >= '0' && c <= '9':
			n |= uint16(c - '0')
		case c >= 'a' && c <= 'f':
			n |= uint16(c - 'a' + 10)
		default:
			n |= uint16(c - 'A' + 10)
		}
	}
	return n
}

// appendQuoted appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, so
// the result is valid JSON whatever s holds.
func appendQuoted[T string | []byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendInt appends n in decimal.
func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }
