package translate

// DecodeRequest reads a client's request body of format f (Chat, Messages
// or Responses) into the neutral model. Its byte slices are slices of
// body, which must outlive the Request. What no other format can say is a
// *RequestError naming the client's field; what only some can is refused
// later, by the encoder of the format that cannot.
func DecodeRequest(f Format, body []byte) (*Request, error) {
	var r *Request
	var err error
	switch f {
	case Chat:
		r, err = decodeChat(body)
	case Messages:
		r, err = decodeMessages(body)
	case Responses:
		r, err = decodeResponses(body)
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
// without memory). The decoded request says what the answer's translation
// needs: r.Stream, r.IncludeUsage.
func EncodeRequest(from Format, body []byte, to Format, upstreamModel string, ids *ToolIDs) (out []byte, r *Request, err error) {
	if r, err = DecodeRequest(from, body); err != nil {
		return nil, nil, err
	}
	switch to {
	case Chat:
		out, err = EncodeChat(r, upstreamModel)
	case Messages:
		out, err = EncodeMessages(r, upstreamModel, ids)
	case Converse:
		out, err = EncodeConverse(r, ids)
	case Gemini:
		out, err = EncodeGemini(r)
	default:
		return nil, nil, refuse("", "no upstream speaks "+to.String()+" through the model")
	}
	if err != nil {
		return nil, nil, err
	}
	return out, r, nil
}

// one returns p as a one-part slice: most turns hold one part, and a few
// dozen of them then cost one allocation rather than one each.
func (r *Request) one(p Part) []Part {
	if len(r.parts) == cap(r.parts) {
		r.parts = make([]Part, 0, 4)
	}
	r.parts = append(r.parts, p)
	n := len(r.parts)
	return r.parts[n-1 : n : n]
}
