package router

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// requestFields is what routing needs from a request body, found by one
// scan of the top-level object: the body is forwarded as it came, with only
// the model's bytes swapped, so it is never decoded into Go values whole.
type requestFields struct {
	Model      string
	Stream     bool
	modelStart int // byte offsets of the model's JSON string token, quotes included
	modelEnd   int
}

var (
	errNotObject    = errors.New("request body must be a JSON object")
	errMissingModel = errors.New("missing required field \"model\"")
	errModelType    = errors.New("field \"model\" must be a string")
	errStreamType   = errors.New("field \"stream\" must be a boolean")
	errEmptyModel   = errors.New("field \"model\" must not be empty")
)

// scanRequest validates body as JSON and finds the top-level "model" and
// "stream" fields. Its errors are safe to show a client: they never quote
// the body.
func scanRequest(body []byte) (requestFields, error) {
	var f requestFields
	if !json.Valid(body) {
		return f, errors.New("request body is not valid JSON")
	}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return f, errNotObject
	}
	i++
	found := false
	for {
		i = skipSpace(body, i)
		if body[i] == '}' {
			break
		}
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
		keyStart := i
		i = skipString(body, i)
		key := body[keyStart+1 : i-1]
		i = skipSpace(body, i)
		i = skipSpace(body, i+1) // the colon
		valStart := i
		i = skipValue(body, i)
		switch string(key) { // no allocation: the compiler spots this form
		case "model":
			if body[valStart] != '"' {
				return f, errModelType
			}
			m, ok := unquote(body[valStart:i])
			if !ok {
				return f, errModelType
			}
			if m == "" {
				return f, errEmptyModel
			}
			f.Model, f.modelStart, f.modelEnd, found = m, valStart, i, true
		case "stream":
			switch body[valStart] {
			case 't':
				f.Stream = true
			case 'f':
				f.Stream = false
			case 'n':
			default:
				return f, errStreamType
			}
		}
	}
	if !found {
		return f, errMissingModel
	}
	return f, nil
}

// withModel returns body with the model replaced by model, appended to
// dst[:0]. When the model is unchanged the body is returned as it is.
func (f requestFields) withModel(dst, body []byte, model string) []byte {
	if model == f.Model {
		return body
	}
	dst = append(dst[:0], body[:f.modelStart]...)
	dst = appendJSONString(dst, model)
	return append(dst, body[f.modelEnd:]...)
}

// appendJSONString appends s as a JSON string (strconv.Quote's escapes are
// Go's, not JSON's).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// The scanners below run only on input json.Valid accepted, so they need
// not report errors; they return the index just past what they skipped.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
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
		return i
	default: // number, true, false, null
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\r' && b[i] != '\t' {
			i++
		}
		return i
	}
}

// unquote decodes a JSON string token; the fast path is one without escapes.
func unquote(tok []byte) (string, bool) {
	inner := tok[1 : len(tok)-1]
	plain := true
	for _, c := range inner {
		if c == '\\' || c < 0x20 {
			plain = false
			break
		}
	}
	if plain && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return "", false
	}
	return s, true
}
