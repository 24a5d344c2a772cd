package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkWalkers holds the walkers over the valid value v to encoding/json:
// an object's members in order with their names decoded (Field gives the
// last of a name), an array's elements in order.
func checkWalkers(t *testing.T, v []byte) {
	t.Helper()
	switch v[0] {
	case '{':
		var want map[string]json.RawMessage
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		m := MembersOf(v)
		for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
			w, known := want[string(k)]
			if !known {
				t.Fatalf("MembersOf(%q) gave name %q, which encoding/json does not see", v, k)
			}
			if f := Field(v, string(k)); string(f) != string(w) {
				t.Fatalf("Field(%q, %q) = %q, encoding/json %q", v, k, f, w)
			}
			if !json.Valid(val) {
				t.Fatalf("MembersOf(%q) gave value %q", v, val)
			}
		}
	case '[':
		var want []json.RawMessage
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		n := 0
		for j, el := range Each(v) {
			if j >= len(want) || string(el) != strings.TrimSpace(string(want[j])) {
				t.Fatalf("Each(%q)[%d] = %q", v, j, el)
			}
			n++
		}
		if n != len(want) {
			t.Fatalf("Each(%q) gave %d elements, encoding/json %d", v, n, len(want))
		}
	}
}

func TestMembersAndElements(t *testing.T) {
	v, _ := Valid([]byte(` {"a" : 1 , "b\u0063":"x\"}" ,"d":[1,{"e":"]"}], "a":2 } `))
	m := MembersOf(v)
	var keys, vals []string
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		keys = append(keys, string(k))
		vals = append(vals, string(val))
	}
	if strings.Join(keys, ",") != "a,bc,d,a" || strings.Join(vals, " ") != `1 "x\"}" [1,{"e":"]"}] 2` {
		t.Errorf("members: %q %q", keys, vals)
	}
	if got := string(Field(v, "a")); got != "2" {
		t.Errorf(`Field(a) = %s, want the last one, 2`, got)
	}
	var els []string
	for _, el := range Each(Field(v, "d")) {
		els = append(els, string(el))
	}
	if strings.Join(els, " ") != `1 {"e":"]"}` {
		t.Errorf("elements: %q", els)
	}
	if s := `"a\\"`; skipString([]byte(s+`,"b"`), 0) != len(s) {
		t.Errorf("skipString stops inside %s", s)
	}
	for _, c := range cases {
		if v, ok := Valid([]byte(c)); ok {
			checkWalkers(t, v)
		}
	}
}

// Walking a value of another kind yields nothing (and never reads past it).
func TestWalkersOnOtherKinds(t *testing.T) {
	for _, v := range []string{`["x"]`, `"a"`, `1`, `null`, `{"a":1}`, `[`, ``} {
		m := MembersOf([]byte(v))
		n := 0
		for _, _, ok := m.Next(); ok; _, _, ok = m.Next() {
			n++
		}
		e := ElementsOf([]byte(v))
		for _, ok := e.Next(); ok; _, ok = e.Next() {
			n++
		}
		if want := map[string]int{`{"a":1}`: 1, `["x"]`: 1}[v]; n != want {
			t.Errorf("%s: %d members and elements, want %d", v, n, want)
		}
	}
}

// Offset finds a value handed out by Object in the body it came from.
func TestOffset(t *testing.T) {
	b := []byte(` {"x":[1], "model" : "m\"1" } `)
	Object(b, func(name, val []byte) {
		if string(name) == "model" {
			if at := Offset(b, val); string(b[at:at+len(val)]) != `"m\"1"` {
				t.Errorf("Offset = %d: %q", at, b[at:])
			}
		}
	})
}

// Strings decode as encoding/json decodes them and encode back to themselves.
func TestStringsRoundTrip(t *testing.T) {
	for _, c := range cases {
		v, ok := Valid([]byte(c))
		if !ok || v[0] != '"' {
			continue
		}
		var want string
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		if got := string(AppendUnquoted(nil, v)); got != want {
			t.Errorf("AppendUnquoted(%s) = %q, want %q", c, got, want)
		}
		if got := Unquote(v); got != want {
			t.Errorf("Unquote(%s) = %q, want %q", c, got, want)
		}
		var back string
		enc := AppendString(nil, want)
		if err := json.Unmarshal(enc, &back); err != nil || back != want {
			t.Errorf("AppendString(%q) = %s, decodes to %q (%v)", want, enc, back, err)
		}
	}
	if enc := AppendString(nil, "a\xffb"); string(enc) != `"a\ufffdb"` || !utf8.Valid(enc) {
		t.Errorf("invalid UTF-8 encodes as %s", enc)
	}
	if enc := AppendString(nil, []byte("q\"\\\n\t\x01")); string(enc) != `"q\"\\\n\t\u0001"` {
		t.Errorf("escapes: %s", enc)
	}
}

// Any string survives AppendString and AppendUnquoted, as encoding/json
// would carry it.
func FuzzStrings(f *testing.F) {
	for _, c := range cases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := AppendString(nil, s)
		want, _ := json.Marshal(s)
		var viaJSON string
		if err := json.Unmarshal(want, &viaJSON); err != nil {
			t.Fatal(err)
		}
		if v, ok := Valid(enc); !ok || string(v) != string(enc) {
			t.Fatalf("AppendString(%q) = %s is not one JSON string", s, enc)
		}
		if got := Unquote(enc); got != viaJSON {
			t.Fatalf("Unquote(AppendString(%q)) = %q, encoding/json gives %q", s, got, viaJSON)
		}
	})
}
