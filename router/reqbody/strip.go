package reqbody

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// WithoutProvider is body without its top-level "provider" member (the
// client's preferences, f.Provider), so that no upstream ever receives
// it: every exchange, pass-through, translated or hedged, is built from
// the body this returns. f's offsets are moved to match; its values
// (provider too) still point into the old body, whose bytes they are.
func WithoutProvider(body []byte, f *Fields) []byte {
	if f.Provider == nil {
		return body
	}
	open := jsonscan.SkipSpace(body, 0) // body scanned as one object already
	vs := jsonscan.Offset(body, f.Provider)
	start, end := -1, vs+len(f.Provider)
	prevEnd, first := open+1, true // just past '{'
	m := jsonscan.MembersOf(body[open:])
	for {
		_, val, ok := m.Next()
		if !ok {
			break
		}
		off := jsonscan.Offset(body, val)
		if off == vs {
			start = prevEnd
			break
		}
		prevEnd, first = off+len(val), false
	}
	if start < 0 {
		return body
	}
	if first { // the first member: take the comma after it instead of before
		i := jsonscan.SkipSpace(body, end)
		if i < len(body) && body[i] == ',' {
			end = i + 1
		}
	}
	out := make([]byte, 0, len(body)-(end-start))
	out = append(append(out, body[:start]...), body[end:]...)
	if f.modelStart >= end {
		f.modelStart -= end - start
		f.modelEnd -= end - start
	}
	return out // f.Provider stays: the preferences are read from it
}
