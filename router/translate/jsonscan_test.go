package translate

import (
	"encoding/json"
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
