package translate

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// scannerCases are JSON values and near misses; those that are strings
// exercise unquoting and quoting.
var scannerCases = []string{
	`{}`, `""`, `0`, ` {"a" : [1, "x", {"b": null}] } `, `"\u00e9\ud83d\ude00\n\"\\\/"`, `"\ud83d"`, `"\udc00x"`,
	"\"\xff\xfe\"", `"\x"`, `{"a":1,}`,
}

// Strings decode as encoding/json decodes them and encode back to themselves.
func TestStringsRoundTrip(t *testing.T) {
	for _, c := range scannerCases {
		v, ok := jsonscan.Valid([]byte(c))
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
	v, _ := jsonscan.Valid([]byte(` {"a" : 1 , "b\u0063":"x\"}" ,"d":[1,{"e":"]"}], "a":2 } `))
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

func FuzzSkipValue(f *testing.F) {
	for _, c := range scannerCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Navigation agrees with validation: a valid value is skipped whole.
		if v, ok := jsonscan.Valid(b); ok && skipValue(v, 0) != len(v) {
			t.Fatalf("skipValue(%q) = %d, want %d", v, skipValue(v, 0), len(v))
		}
	})
}
