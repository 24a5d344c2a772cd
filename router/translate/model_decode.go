package translate

import "sync"

// DecodeRequest reads a client's request body of format f (Chat, Messages
// or Responses) into the neutral model. Its byte slices are slices of
// body, which must outlive the Request. What no other format can say is a
// *RequestError naming the client's field; what only some can is refused
// later, by the encoder of the format that cannot.
func DecodeRequest(f Format, body []byte) (*Request, error) {
	return decodeInto(new(Request), f, body)
}

// decodeInto is DecodeRequest into r, whose arrays (turns, parts, tools)
// it reuses.
func decodeInto(r *Request, f Format, body []byte) (*Request, error) {
	var err error
	switch f {
	case Chat:
		r, err = decodeChat(r, body)
	case Messages:
		r, err = decodeMessages(r, body)
	case Responses:
		r, err = decodeResponses(r, body)
	default:
		return nil, refuse("", "no client speaks "+f.String())
	}
	if err != nil {
		return nil, err
	}
	r.size = len(body)
	return r, nil
}

// EncodeRequest translates a client's request body of format from into a
// request body of format to for upstreamModel (Converse and Gemini take the
// model in the URL, not the body). ids keeps tool ids valid for the
// upstream and is shared with the answer's translation (nil: rewritten
// without memory). The request returned holds the decoded settings the
// answer's translation needs (r.Stream, r.IncludeUsage and the rest), not
// its content: the turns, system prompt and tools were decoded into
// scratch arrays that the next request reuses.
func EncodeRequest(from Format, body []byte, to Format, upstreamModel string, ids *ToolIDs) (out []byte, r *Request, err error) {
	s := scratch.Get().(*Request)
	defer s.release()
	d, err := decodeInto(s, from, body)
	if err != nil {
		return nil, nil, err
	}
	switch to {
	case Chat:
		out, err = EncodeChat(d, upstreamModel)
	case Messages:
		out, err = EncodeMessages(d, upstreamModel, ids)
	case Converse:
		out, err = EncodeConverse(d, ids)
	case Gemini:
		out, err = EncodeGemini(d)
	default:
		return nil, nil, refuse("", "no upstream speaks "+to.String()+" through the model")
	}
	if err != nil {
		return nil, nil, err
	}
	settings := *d
	settings.System, settings.Turns, settings.Tools, settings.parts = nil, nil, nil, nil
	return out, &settings, nil
}

// scratch keeps decoded requests' arrays for the next request: a 4 KB
// request otherwise allocates about as much for its turns and parts as
// for its translation.
var scratch = sync.Pool{New: func() any { return new(Request) }}

// reset empties r for a request from client c, keeping its arrays.
func (r *Request) reset(c Format) {
	turns, tools, parts := r.Turns[:0], r.Tools[:0], r.parts[:0]
	if cap(turns) == 0 {
		turns = make([]Turn, 0, 8)
	}
	*r = Request{Client: c, Turns: turns, Tools: tools, parts: parts}
}

// release returns r's arrays to scratch, cleared so that they hold no
// request's bytes; arrays grown for a very long request are let go.
func (r *Request) release() {
	turns, tools, parts := r.Turns, r.Tools, r.parts
	if cap(turns) > 256 || cap(tools) > 256 || cap(parts) > 256 {
		return
	}
	clear(turns)
	clear(tools)
	clear(parts)
	*r = Request{Turns: turns[:0], Tools: tools[:0], parts: parts[:0]}
	scratch.Put(r)
}

// one returns p as a one-part slice: most turns hold one part, and a few
// dozen of them then cost one allocation rather than one each.
func (r *Request) one(p Part) []Part {
	r.add(len(r.parts), p)
	n := len(r.parts)
	return r.parts[n-1 : n : n]
}

// add appends p to the run of parts that began at start in r.parts (a
// turn's parts, collected one by one) and returns where the run now
// begins: when r.parts is full the run moves to a new array twice as
// large (which scratch then keeps for the next request), and the slices
// already handed out keep the old one.
func (r *Request) add(start int, p Part) int {
	if len(r.parts) == cap(r.parts) {
		run := r.parts[start:]
		grown := make([]Part, len(run), max(8, 2*len(run)+1, 2*cap(r.parts)))
		copy(grown, run)
		r.parts, start = grown, 0
	}
	r.parts = append(r.parts, p)
	return start
}

// since returns the run of parts that began at start (nil: none), capped
// so that appending to it copies rather than overwrite the next run.
func (r *Request) since(start int) []Part {
	n := len(r.parts)
	if start == n {
		return nil
	}
	return r.parts[start:n:n]
}
