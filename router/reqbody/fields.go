package reqbody

import (
	"cmp"
	"errors"
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Fields is what routing needs from a request body, found by one
// scan of the top-level object: the body is forwarded as it came, with only
// the model's bytes swapped, so it is never decoded into Go values whole.
type Fields struct {
	Model      string
	Stream     bool
	modelStart int // byte offsets of the model's JSON string token, quotes included
	modelEnd   int
	// Thinking and TopP: the request has these (an Anthropic request to an
	// Anthropic target is held to Anthropic's rules only when it has).
	Thinking, TopP bool
	// What the prompt-cache affinity reads: the values of the members a
	// provider's prompt cache keys on, as they stand in body.
	System, Tools, Messages, CacheKey []byte
	// What the input checks read (inputcheck.go): whether messages came
	// from "input" (Responses) rather than "messages", the token limits as
	// they stand (nil: absent), and whether previous_response_id is set.
	fromInput    bool
	tokenLimits  [len(tokenLimitFields)][]byte
	prevResponse bool
	// Provider is the client's preferences object as it stands (nil:
	// absent), which WithoutProvider strips before anything goes upstream.
	Provider []byte
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

// Scan validates body as JSON and finds the top-level "model" and
// "stream" fields, in one pass of jsonscan.Object: validating is most of
// the gateway's own work on a large prompt, so it is done by a scanner that
// does nothing else (encoding/json's Valid runs at a fifth of the speed).
// A key written with escapes ("mod\u0065l") is the same key to a provider,
// and is read as such. Its errors are safe to show a client: they never
// quote the body.
func Scan(body []byte) (Fields, error) {
	var f Fields
	found, modelSeen := false, false
	var typeErr error // reported only once the whole body is known to be JSON
	ok := jsonscan.Object(body, func(name, val []byte) {
		switch string(name) { // no allocation: the compiler spots this form
		case "model":
			if modelSeen {
				// Providers take one of them (which one varies): the
				// gateway would route on a model other than the one served.
				typeErr = cmp.Or(typeErr, errDupModel)
			}
			modelSeen = true
			switch {
			case val[0] != '"':
				typeErr = cmp.Or(typeErr, errModelType)
			case len(val) == 2:
				typeErr = cmp.Or(typeErr, errEmptyModel)
			default:
				start := jsonscan.Offset(body, val)
				f.Model, f.modelStart, f.modelEnd, found = jsonscan.Unquote(val), start, start+len(val), true
			}
		case "thinking":
			f.Thinking = val[0] == '{'
		case "system", "instructions":
			f.System = val
		case "tools":
			f.Tools = val
		case "messages", "input":
			f.Messages, f.fromInput = val, name[0] == 'i'
		case "max_tokens":
			f.tokenLimits[0] = val
		case "max_completion_tokens":
			f.tokenLimits[1] = val
		case "max_output_tokens":
			f.tokenLimits[2] = val
		case "previous_response_id":
			f.prevResponse = val[0] == '"'
		case "prompt_cache_key":
			f.CacheKey = val
		case "provider":
			f.Provider = val
		case "top_p":
			f.TopP = val[0] != 'n'
		case "stream":
			switch val[0] {
			case 't':
				f.Stream = true
			case 'f', 'n':
				f.Stream = false
			default:
				typeErr = cmp.Or(typeErr, errStreamType)
			}
		}
	})
	switch {
	case !ok:
		if v, valid := jsonscan.Valid(body); valid && v[0] != '{' {
			return Fields{}, errNotObject
		}
		return Fields{}, errInvalidJSON
	case typeErr != nil:
		return Fields{}, typeErr
	case !found:
		return Fields{}, errMissingModel
	}
	return f, nil
}

// ValidJSON reports whether b is exactly one JSON value (an upstream's unary
// answer must be, or it is a provider fault).
func ValidJSON(b []byte) bool {
	_, ok := jsonscan.Valid(b)
	return ok
}

// WithModel is body with model in place of the model it names, written
// into dst; body itself when the model is the same.
func (f Fields) WithModel(dst, body []byte, model string) []byte {
	if model == f.Model {
		return body
	}
	dst = append(dst[:0], body[:f.modelStart]...)
	dst = jsonscan.AppendString(dst, model)
	return append(dst, body[f.modelEnd:]...)
}

// Quote quotes a client-supplied string (a model name, an id) for an
// error message, cut short so a hostile value cannot bloat responses or
// logs.
func Quote(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}
