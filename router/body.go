package router

import (
	"bytes"
	"cmp"
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
	errDupModel     = errors.New("field \"model\" appears more than once")
)

// errInvalidJSON is what a client hears about a malformed body; it never
// quotes the body.
var errInvalidJSON = errors.New("request body is not valid JSON")

// scanRequest validates body as JSON and finds the top-level "model" and
// "stream" fields, in one pass: validating is most of the gateway's own
// work on a large prompt, so it is done by a scanner that does nothing else
// (encoding/json's Valid runs at a fifth of the speed). Its errors are safe
// to show a client: they never quote the body.
func scanRequest(body []byte) (requestFields, error) {
	var f requestFields
	i := skipSpace(body, 0)
	if i >= len(body) {
		return requestFields{}, errInvalidJSON
	}
	if body[i] != '{' {
		if end, ok := scanValue(body, i, 0); ok && skipSpace(body, end) == len(body) {
			return requestFields{}, errNotObject
		}
		return requestFields{}, errInvalidJSON
	}
	found, modelSeen := false, false
	var typeErr error // reported only once the whole body is known to be JSON
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		i++
	} else {
		for {
			if i >= len(body) || body[i] != '"' {
				return requestFields{}, errInvalidJSON
			}
			keyStart := i
			var ok bool
			if i, ok = scanString(body, i); !ok {
				return requestFields{}, errInvalidJSON
			}
			key, keyTok := body[keyStart+1:i-1], body[keyStart:i]
			i = skipSpace(body, i)
			if i >= len(body) || body[i] != ':' {
				return requestFields{}, errInvalidJSON
			}
			valStart := skipSpace(body, i+1)
			if i, ok = scanValue(body, valStart, 1); !ok {
				return requestFields{}, errInvalidJSON
			}
			if bytes.IndexByte(key, '\\') >= 0 {
				// An escaped key ("mod\u0065l") is the same key to a provider.
				if k, ok := unquote(keyTok); ok {
					key = []byte(k)
				}
			}
			switch string(key) { // no allocation: the compiler spots this form
			case "model":
				if modelSeen {
					// Providers take one of them (which one varies): the
					// gateway would route on a model other than the one served.
					typeErr = cmp.Or(typeErr, errDupModel)
				}
				modelSeen = true
				m, isStr := "", body[valStart] == '"'
				if isStr {
					m, isStr = unquote(body[valStart:i])
				}
				switch {
				case !isStr:
					typeErr = cmp.Or(typeErr, errModelType)
				case m == "":
					typeErr = cmp.Or(typeErr, errEmptyModel)
				default:
					f.Model, f.modelStart, f.modelEnd, found = m, valStart, i, true
				}
			case "stream":
				switch body[valStart] {
				case 't':
					f.Stream = true
				case 'f', 'n':
					f.Stream = false
				default:
					typeErr = cmp.Or(typeErr, errStreamType)
				}
			}
			i = skipSpace(body, i)
			if i < len(body) && body[i] == ',' {
				i = skipSpace(body, i+1)
				continue
			}
			if i < len(body) && body[i] == '}' {
				i++
				break
			}
			return requestFields{}, errInvalidJSON
		}
	}
	if skipSpace(body, i) != len(body) {
		return requestFields{}, errInvalidJSON
	}
	if typeErr != nil {
		return requestFields{}, typeErr
	}
	if !found {
		return requestFields{}, errMissingModel
	}
	return f, nil
}

// validJSON reports whether b is exactly one JSON value (an upstream's
// unary answer must be, or it is a provider fault).
func validJSON(b []byte) bool {
	i := skipSpace(b, 0)
	end, ok := scanValue(b, i, 0)
	return ok && skipSpace(b, end) == len(b)
}

// maxDepth bounds nesting, as encoding/json does, so a body of ten million
// '[' cannot exhaust the stack.
const maxDepth = 10000

// scanValue validates the JSON value starting at b[i] and returns the
// index just past it.
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{' || c == '[':
		return scanContainer(b, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	}
	return i, false
}

func scanContainer(b []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	object := b[i] == '{'
	closer := byte(']')
	if object {
		closer = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, true
	}
	for {
		var ok bool
		if object {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			if i, ok = scanString(b, i); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = skipSpace(b, i+1)
		}
		if i, ok = scanValue(b, i, depth); !ok {
			return i, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case closer:
			return i + 1, true
		default:
			return i, false
		}
	}
}

// scanString validates a string token at b[i] == '"'. Its loop is the hot
// one: prompts are mostly string bytes.
func scanString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		c := b[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		}
		// an escape
		i++
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
				return i, false
			}
			i += 4
		default:
			return i, false
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// scanNumber validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	return i, true
}

func scanLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
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

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
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
