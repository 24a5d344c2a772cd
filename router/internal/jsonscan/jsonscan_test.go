package jsonscan

import (
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

var cases = []string{
	`{}`, `[]`, `""`, `0`, `-0.5e+3`, `true`, `null`, ` {"a" : [1, "x", {"b": null}] } `,
	`"\u00e9\ud83d\ude00\n\"\\\/"`, `"\ud83d"`, `"\udc00x"`, "\"\xff\xfe\"", `{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `"\x"`,
	`"a` + "\x01" + `"`, `{"a"}`, `{"a":}`, `tru`, `nul`, `[` + strings.Repeat(`[`, 20) + strings.Repeat(`]`, 21), `{"a":1}x`, ``,
	`"` + strings.Repeat("eight by", 9) + `\"` + strings.Repeat("x", 7) + `"`, `"\u12G4"`, `"\u12"`,
}

// Valid accepts exactly what encoding/json accepts, and returns the value
// without its surrounding whitespace.
func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range cases {
		v, got := Valid([]byte(c))
		if want := json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%q) = %v, json.Valid = %v", c, got, want)
		}
		if got && string(v) != strings.TrimSpace(c) {
			t.Errorf("Valid(%q) returned %q, want it trimmed", c, v)
		}
	}
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if _, ok := Valid([]byte(deep)); ok {
		t.Error("nesting beyond MaxDepth accepted")
	}
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, valid := Valid([]byte(ok)); !valid {
		t.Error("nesting of exactly MaxDepth refused")
	}
}

// Value stops just past the value, wherever it sits.
func TestValueEnds(t *testing.T) {
	b := []byte(`{"a":"x\"y", "b":[1,2]} tail`)
	if end, ok := Value(b, 0, 0); !ok || string(b[end:]) != " tail" {
		t.Errorf("Value ended at %d (%v), want before \" tail\"", end, ok)
	}
	if end, ok := String(b, 5); !ok || string(b[5:end]) != `"x\"y"` {
		t.Errorf("String = %q (%v)", b[5:end], ok)
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

func FuzzValid(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, got := Valid(b)
		if got != json.Valid(b) {
			t.Fatalf("Valid(%q) = %v, json.Valid = %v", b, got, !got)
		}
		checkObject(t, b, got && v[0] == '{')
		if got {
			// Navigation agrees with validation: a valid value is skipped
			// whole, and its members and elements are encoding/json's.
			if end := Skip(v, 0); end != len(v) {
				t.Fatalf("Skip(%q) = %d, want %d", v, end, len(v))
			}
			checkWalkers(t, v)
		}
	})
}

// checkObject holds Object to Valid (an object iff Valid and it starts with
// '{') and to encoding/json's reading of the top-level members: the same
// keys, each with its last value.
func checkObject(t *testing.T, b []byte, isObject bool) {
	t.Helper()
	got := map[string]json.RawMessage{}
	ok := Object(b, func(name, val []byte) {
		got[string(name)] = append(json.RawMessage(nil), val...)
	})
	if ok != isObject {
		t.Fatalf("Object(%q) = %v, want %v", b, ok, isObject)
	}
	if !ok {
		return
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("json.Unmarshal(%q): %v", b, err)
	}
	if len(got) != len(want) {
		t.Fatalf("Object(%q) gave %d members, encoding/json %d", b, len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || string(g) != string(w) {
			t.Fatalf("Object(%q)[%q] = %q, encoding/json %q", b, k, g, w)
		}
	}
}

func TestObject(t *testing.T) {
	for _, c := range cases {
		v, ok := Valid([]byte(c))
		checkObject(t, []byte(c), ok && v[0] == '{')
	}
	for _, c := range []string{` {"a":1,"b":[2,{"c":3}],"a":"x"} `, `{}`, `{"\u0061":true}`, `{"a":1,}`, `{"a":1}x`, `[{"a":1}]`, `{"a" 1}`} {
		v, ok := Valid([]byte(c))
		checkObject(t, []byte(c), ok && v[0] == '{')
	}
}
