package jsonscan

import (
	"bytes"
	"iter"
)

// Navigation over a value that validation has accepted: it crosses strings
// with bytes.IndexByte and never checks what it crosses. A "value" here is
// the bytes of one JSON value without the whitespace around it, as Valid
// returns it and the walkers below hand it out.

// Skip returns the end of the valid value starting at b[i].
func Skip(b []byte, i int) int {
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

// Members walks the members of a valid object value, in order.
type Members struct {
	b   []byte
	i   int
	key []byte // scratch for a key written with escapes
}

// MembersOf walks v's members; none when v is not an object.
func MembersOf(v []byte) Members {
	if len(v) == 0 || v[0] != '{' {
		return Members{}
	}
	return Members{b: v, i: 1}
}

// Next returns the next member's name (the key decoded; valid until the
// next call) and value; ok is false after the last one.
func (m *Members) Next() (name, val []byte, ok bool) {
	i := SkipSpace(m.b, m.i)
	if i < len(m.b) && m.b[i] == ',' {
		i = SkipSpace(m.b, i+1)
	}
	if i >= len(m.b) || m.b[i] != '"' {
		return nil, nil, false
	}
	ks := i
	i = skipString(m.b, i)
	name = m.b[ks+1 : i-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		m.key = AppendUnquoted(m.key[:0], m.b[ks:i])
		name = m.key
	}
	i = SkipSpace(m.b, SkipSpace(m.b, i)+1) // past ':'
	vs := i
	i = Skip(m.b, i)
	m.i = i
	return name, m.b[vs:i], true
}

// Elements walks the elements of a valid array value, in order.
type Elements struct {
	b []byte
	i int
}

// ElementsOf walks v's elements; none when v is not an array.
func ElementsOf(v []byte) Elements {
	if len(v) == 0 || v[0] != '[' {
		return Elements{}
	}
	return Elements{b: v, i: 1}
}

// Next returns the next element; ok is false after the last one.
func (e *Elements) Next() (el []byte, ok bool) {
	i := SkipSpace(e.b, e.i)
	if i < len(e.b) && e.b[i] == ',' {
		i = SkipSpace(e.b, i+1)
	}
	if i >= len(e.b) || e.b[i] == ']' {
		return nil, false
	}
	vs := i
	i = Skip(e.b, i)
	e.i = i
	return e.b[vs:i], true
}

// Each ranges over the elements of the array v with their indexes; over
// nothing for a value of another kind.
func Each(v []byte) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		e := ElementsOf(v)
		for j := 0; ; j++ {
			el, ok := e.Next()
			if !ok || !yield(j, el) {
				return
			}
		}
	}
}

// Field returns the value of the member name of the valid object obj (the
// last one of that name, as encoding/json reads it), or nil.
func Field(obj []byte, name string) []byte {
	m := MembersOf(obj)
	var found []byte
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		if string(k) == name {
			found = v
		}
	}
	return found
}

// Offset is where sub, a slice of b (a value Object or a walker handed
// out), starts in b: slices of one array share its end, so their
// capacities differ by exactly that much.
func Offset(b, sub []byte) int { return cap(b) - cap(sub) }
