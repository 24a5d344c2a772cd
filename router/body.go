package router

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
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
	i := jsonscan.SkipSpace(body, 0)
	if i >= len(body) {
		return requestFields{}, errInvalidJSON
	}
	if body[i] != '{' {
		if end, ok := jsonscan.Value(body, i, 0); ok && jsonscan.SkipSpace(body, end) == len(body) {
			return requestFields{}, errNotObject
		}
		return requestFields{}, errInvalidJSON
	}
	found, modelSeen := false, false
	var typeErr error // reported only once the whole body is known to be JSON
	i = jsonscan.SkipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		i++
	} else {
		for {
			if i >= len(body) || body[i] != '"' {
				return requestFields{}, errInvalidJSON
			}
			keyStart := i
			var ok bool
			if i, ok = jsonscan.String(body, i); !ok {
				return requestFields{}, errInvalidJSON
			}
			key, keyTok := body[keyStart+1:i-1], body[keyStart:i]
			i = jsonscan.SkipSpace(body, i)
			if i >= len(body) || body[i] != ':' {
				return requestFields{}, errInvalidJSON
			}
			valStart := jsonscan.SkipSpace(body, i+1)
			if i, ok = jsonscan.Value(body, valStart, 1); !ok {
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
			i = jsonscan.SkipSpace(body, i)
			if i < len(body) && body[i] == ',' {
				i = jsonscan.SkipSpace(body, i+1)
				continue
			}
			if i < len(body) && body[i] == '}' {
				i++
				break
			}
			return requestFields{}, errInvalidJSON
		}
	}
	if jsonscan.SkipSpace(body, i) != len(body) {
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

// validJSON reports whether b is exactly one JSON value (an upstream's unary
// answer must be, or it is a provider fault).
func validJSON(b []byte) bool {
	_, ok := jsonscan.Valid(b)
	return ok
}

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
