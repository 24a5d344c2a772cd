package router

import (
	"errors"

	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/translate"
)

// Bedrock Converse and Gemini are upstream formats no client speaks: a
// chat or Responses request to a provider whose call is converse
// (Bedrock's non-Anthropic models) or gemini (the Gemini API, Gemini on
// Vertex) is decoded once into the neutral model and encoded in the
// upstream's format; its answer comes back the same way, unary or
// streamed. A Converse stream's AWS event-stream frames are unwrapped by
// the host adapter (router/upstream) into the events the model stream
// reads; Gemini's stream is server-sent events already.

// modelExchange builds the body a request sends a provider of format f:
// the client's request through the model.
func (c *request) modelExchange(cand *mode.Candidate, x exchange, f translate.Format) (exchange, error) {
	client := c.ep.shape.Format()
	x.ids = translate.NewToolIDs(c.body, client)
	body, r, err := translate.EncodeRequest(client, c.body, f, cand.Model, x.ids)
	if err != nil {
		return exchange{}, errors.Join(errUntranslatable, err)
	}
	x.body, x.conv, x.upstream, x.client = body, convModel, f, client
	x.clientWantsUsage = r.IncludeUsage
	return x, nil
}
