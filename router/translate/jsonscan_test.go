package translate

import (
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

var scannerCases = []string{
	`{}`, `[]`, `""`, `0`, `-0.5e+3`, `true`, `null`, ` {"a" : [1, "x", {"b": null}] } `,
	`"\u00e9\ud83d\ude00\n\"\\\/"`, `"\ud83d"`, `"\udc00x"`, "\"\xff\xfe\"", `{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `"\x"`,
	`"a` + "\x01" + `"`, `{"a"}`, `{"a":}`, `tru`, `nul`, `[` + strings.Repeat(`[`, 20) + strings.Repeat(`]`, 21), `{"a":1}x`, ``,
}

// The scanner accepts exactly what encoding/json accepts.
func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range scannerCases {
		_, got := validJSON([]byte(c))
		if want := json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid = %v", c, got, want)
		}
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if _, ok := validJSON([]byte(deep)); ok {
		t.Error("nesting beyond maxDepth accepted")
	}
}

// Strings decode as encoding/json decodes them and encode back to themselves.
func TestStringsRoundTrip(t *testing.T) {
	for _, c := range scannerCases {
		v, ok := validJSON([]byte(c))
		if !ok || !isString(v) {
			continue
		}
		var want string
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		if got := string(appendUnquoted(nil, v)); got != want {
			t.Errorf("appendUnquoted(%s) = %q, want %q", c, got, want)
		}
		if got := unquote(v); got != want {
			t.Errorf("unquote(%s) = %q, want %q", c, got, want)
		}
		var back string
		enc := appendQuoted(nil, want)
		if err := json.Unmarshal(enc, &back); err != nil || back != want {
			t.Errorf("appendQuoted(%q) = %s, decodes to %q (%v)", want, enc, back, err)
		}
	}
	if enc := appendQuoted(nil, "a\xffb"); string(enc) != `"a\ufffdb"` || !utf8.Valid(enc) {
		t.Errorf("invalid UTF-8 encodes as %s", enc)
	}
}

func TestMembersAndElements(t *testing.T) {
	v, _ := validJSON([]byte(` {"a" : 1 , "b\u0063":"x\"}" ,"d":[1,{"e":"]"}], "a":2 } `))
	m := objectMembers(v)
	var keys, vals []string
	for k, val, ok := m.next(); ok; k, val, ok = m.next() {
		keys = append(keys, string(k))
		vals = append(vals, string(val))
	}
	if strings.Join(keys, ",") != "a,bc,d,a" || strings.Join(vals, " ") != `1 "x\"}" [1,{"e":"]"}] 2` {
		t.Errorf("members: %q %q", keys, vals)
	}
	if got := string(field(v, "a")); got != "2" {
		t.Errorf(`field(a) = %s, want the last one, 2`, got)
	}
	e := arrayElements(field(v, "d"))
	var els []string
	for el, ok := e.next(); ok; el, ok = e.next() {
		els = append(els, string(el))
	}
	if strings.Join(els, " ") != `1 {"e":"]"}` {
		t.Errorf("elements: %q", els)
	}
	if s := `"a\\"`; skipString([]byte(s+`,"b"`), 0) != len(s) {
		t.Errorf("skipString stops inside %s", s)
	}
}

// Iterating over a value of another kind yields nothing (and never reads past it).
func TestIteratorsOnOtherKinds(t *testing.T) {
	for _, v := range []string{`["x"]`, `"a"`, `1`, `null`, `{"a":1}`, `[`} {
		m := objectMembers([]byte(v))
		n := 0
		for _, _, ok := m.next(); ok; _, _, ok = m.next() {
			n++
		}
		e := arrayElements([]byte(v))
		for _, ok := e.next(); ok; _, ok = e.next() {
			n++
		}
		if want := map[string]int{`{"a":1}`: 1, `["x"]`: 1}[v]; n != want {
			t.Errorf("%s: %d members and elements, want %d", v, n, want)
		}
	}
}

// specialBytes finds the first quote, backslash or control byte of a word
// exactly, and reports a word without one as such.
func TestSpecialBytes(t *testing.T) {
	first := func(w uint64) int { // 8: none
		for k := 0; k < 8; k++ {
			if c := byte(w >> (8 * k)); c < 0x20 || c == '"' || c == '\\' {
				return k
			}
		}
		return 8
	}
	rng := rand.New(rand.NewPCG(1, 2))
	specials := []byte{0, 0x1f, '"', '\\', 0x20, 0x21, 0x7f, 0x80, 0xff, '#', '[', ']'}
	for n := 0; n < 300000; n++ {
		w := rng.Uint64()
		if n%2 == 0 { // mostly printable bytes, with one or two specials placed
			w = 0
			for k := 0; k < 8; k++ {
				w |= uint64(0x20+rng.IntN(0x5f)) << (8 * k)
			}
			for range rng.IntN(3) {
				k := rng.IntN(8)
				w = w&^(0xff<<(8*k)) | uint64(specials[rng.IntN(len(specials))])<<(8*k)
			}
		}
		got := 8
		if m := specialBytes(w); m != 0 {
			got = bits.TrailingZeros64(m) / 8
		}
		if want := first(w); got != want {
			t.Fatalf("specialBytes(%#016x) points at byte %d, want %d", w, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range scannerCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, got := validJSON(b)
		if want := json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", b, got, want)
		}
		if got && skipValue(v, 0) != len(v) {
			t.Fatalf("skipValue(%q) = %d, want %d", v, skipValue(v, 0), len(v))
		}
	})
}
