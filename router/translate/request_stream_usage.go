package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// WithStreamUsage sets stream_options.include_usage to true in an OpenAI chat
// request, so that a streamed answer ends with its usage, and reports whether
// the client had asked for it itself (then the body comes back unchanged, and
// the usage chunk is the client's to see). Every other byte of the body is
// kept as it came. The body must be a JSON object.
func WithStreamUsage(body []byte) (out []byte, clientAsked bool, err error) {
	v, err := requestObject(body)
	if err != nil {
		return nil, false, err
	}
	// Find the last stream_options (the one a JSON decoder keeps).
	var opts []byte
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		if string(k) == "stream_options" {
			opts = val
		}
	}
	switch {
	case isObject(opts) && isTrue(jsonscan.Field(opts, "include_usage")):
		return body, true, nil
	case opts == nil: // one new member after the opening brace
		start := jsonscan.Offset(body, v)
		out = make([]byte, 0, len(body)+40)
		out = append(out, body[:start+1]...)
		out = append(out, `"stream_options":{"include_usage":true}`...)
		if body[jsonscan.SkipSpace(body, start+1)] != '}' {
			out = append(out, ',')
		}
		return append(out, body[start+1:]...), false, nil
	case isNull(opts):
		return splice(body, opts, []byte(`{"include_usage":true}`)), false, nil
	case !isObject(opts):
		return nil, false, refuse("stream_options", "must be an object")
	}
	// An options object without include_usage true: rewrite that object only.
	repl := []byte(`{"include_usage":true`)
	om := jsonscan.MembersOf(opts)
	for k, val, ok := om.Next(); ok; k, val, ok = om.Next() {
		if string(k) == "include_usage" {
			continue
		}
		repl = append(repl, ',')
		repl = jsonscan.AppendString(repl, k)
		repl = append(repl, ':')
		repl = append(repl, val...)
	}
	repl = append(repl, '}')
	return splice(body, opts, repl), false, nil
}

// splice returns body with old (a slice of body) replaced by repl.
func splice(body, old, repl []byte) []byte {
	at := jsonscan.Offset(body, old)
	out := make([]byte, 0, len(body)-len(old)+len(repl))
	out = append(out, body[:at]...)
	out = append(out, repl...)
	return append(out, body[at+len(old):]...)
}

// requestObject is a client request body's JSON object, without the
// whitespace around it, or the error for a body that is not one.
func requestObject(body []byte) ([]byte, error) {
	v, ok := jsonscan.Valid(body)
	switch {
	case !ok:
		return nil, errNotJSON
	case !isObject(v):
		return nil, errNotObject
	}
	return v, nil
}

// readRequest reads a request body's top-level members: set records (or
// refuses) each in turn, then check refuses values of the wrong kind. It
// returns the body's object, as requestObject does.
func readRequest(body []byte, set func(k, v []byte) error, check func() error) ([]byte, error) {
	v, err := requestObject(body)
	if err != nil {
		return nil, err
	}
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		if err := set(k, val); err != nil {
			return nil, err
		}
	}
	if err := check(); err != nil {
		return nil, err
	}
	return v, nil
}

// appendRequestHead begins a translated request: the model, then the
// messages array, which Chat Completions and Anthropic Messages both call
// messages.
func appendRequestHead(out []byte, upstreamModel string) []byte {
	out = append(out, `{"model":`...)
	out = jsonscan.AppendString(out, upstreamModel)
	return append(out, `,"messages":[`...)
}
