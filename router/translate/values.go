package translate

import (
	"bytes"
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// What a raw JSON value is, asked of the values jsonscan hands out (the
// bytes of one valid value, no whitespace around it). Reading, walking and
// quoting JSON is jsonscan's; these only name the checks the translators
// make on every member.

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
	return string(jsonscan.AppendUnquoted(buf[:0], v)) == s
}

// intValue reads an integer token (1, 12, 3e2 is not one); false otherwise.
func intValue(v []byte) (int64, bool) {
	if !isNumber(v) || bytes.ContainsAny(v, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// allElements reports whether v is an array whose every element is one
// ok accepts.
func allElements(v []byte, ok func(el []byte) bool) bool {
	if !isArray(v) {
		return false
	}
	e := jsonscan.ElementsOf(v)
	for el, more := e.Next(); more; el, more = e.Next() {
		if !ok(el) {
			return false
		}
	}
	return true
}

// appendInt appends n in decimal.
func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }
