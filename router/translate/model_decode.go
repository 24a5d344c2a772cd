package translate

// DecodeRequest reads a client's request body of format f (Chat, Messages
// or Responses) into the neutral model. Its byte slices are slices of
// body, which must outlive the Request. What no other format can say is a
// *RequestError naming the client's field; what only some can is refused
// later, by the encoder of the format that cannot.
func DecodeRequest(f Format, body []byte) (*Request, error) {
	switch f {
	case Chat:
		return decodeChat(body)
	case Messages:
		return decodeMessages(body)
	case Responses:
		return decodeResponses(body)
	}
	return nil, refuse("", "no client speaks "+f.String())
}
