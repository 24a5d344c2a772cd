package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// Answer says how an upstream's answer is presented to its client, for
// every answer translator, unary and streaming.
type Answer struct {
	// Model is the model name the answer reports: the upstream model the
	// request was sent as, or the name the client asked for.
	Model string
	// UpstreamModel makes the model the upstream's answer names win over
	// Model, when it names one: the model that answered is what
	// cost-tracking tools price by (a request for claude-sonnet-4-5 is
	// answered by claude-sonnet-4-5-20250929).
	UpstreamModel bool
	// Created is the `created` time (Unix seconds) of an answer whose
	// upstream gave none.
	Created int64
	// IncludeUsage adds, to an OpenAI chat stream, the usage-only chunk
	// the client asked for (stream_options.include_usage).
	IncludeUsage bool
	// IDs are the request's tool ids (nil: no request ids to keep apart).
	IDs *ToolIDs
}

// appendModel writes the model the answer reports, given the model member
// of the upstream's answer (nil when it had none).
func (a *Answer) appendModel(out, upstream []byte) []byte {
	if a.UpstreamModel && isString(upstream) && len(upstream) > 2 {
		return append(out, upstream...)
	}
	return jsonscan.AppendString(out, a.Model)
}

// TranslateAnswer turns an upstream's unary answer (a 2xx body) of format
// upstream into the client's format, presented as a says, with the usage
// it reported: decoded into the neutral model, encoded from it. An answer
// that breaks its API is ErrInvalidUpstream. When the formats agree the
// body is not translated: it comes back as it came, with its usage.
func TranslateAnswer(upstream Format, body []byte, client Format, a Answer) ([]byte, Usage, error) {
	if upstream == client {
		return passAnswer(client, body)
	}
	// Room for the parts most answers have (text, reasoning, a call or
	// two) on the stack: a Part is large, and most answers need no more.
	var few [4]Part
	var rep *Reply
	var decoded Reply
	var err error
	switch upstream {
	case Chat:
		decoded, err = decodeChatAnswer(body, few[:0])
		if client == Messages {
			// An OpenAI-compatible server's reasoning has no signature,
			// and an Anthropic client's next turn could not send it back
			// to any Anthropic target: it is dropped (a Responses client
			// gets it as a reasoning summary).
			decoded.Parts = withoutKind(decoded.Parts, PartThinking)
		}
		rep = &decoded
	case Messages:
		decoded, err = decodeMessagesAnswer(body, few[:0])
		rep = &decoded
	case Converse:
		rep, err = decodeConverseAnswer(body)
	case Gemini:
		rep, err = decodeGeminiAnswer(body)
	default:
		return nil, Usage{}, invalidUpstream("no model decoder for " + upstream.String())
	}
	if err != nil {
		return nil, Usage{}, err
	}
	// A translated answer is about as long as the upstream's.
	size := len(body) + 256
	var out []byte
	switch client {
	case Messages:
		out, err = encodeMessagesAnswer(rep, &a, size)
	case Responses:
		out, err = encodeResponsesAnswer(rep, &a, size+512)
	default:
		out = encodeChatAnswer(rep, &a, size)
	}
	if err != nil {
		return nil, Usage{}, err
	}
	return out, rep.Usage, nil
}

// passAnswer is an answer whose client speaks its upstream's format: the
// body as it came, checked to be one JSON value, and its usage.
func passAnswer(f Format, body []byte) ([]byte, Usage, error) {
	var u Usage
	var valid bool
	switch f {
	case Messages:
		u, valid = UsageFromMessagesResponse(body)
	case Responses:
		u, valid = UsageFromResponsesResponse(body)
	default:
		u, valid = UsageFromChatResponse(body)
	}
	if !valid {
		return nil, Usage{}, invalidUpstream("the body is not one JSON value")
	}
	return body, u, nil
}

// withoutKind is parts without those of kind k, in place.
func withoutKind(parts []Part, k PartKind) []Part {
	n := 0
	for i := range parts {
		if parts[i].Kind != k {
			parts[n] = parts[i]
			n++
		}
	}
	return parts[:n]
}
