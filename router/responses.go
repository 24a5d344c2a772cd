package router

import (
	"errors"

	"github.com/firstbyte-dev/firstbyte/router/config"

	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/translate"
)

// The Responses API on any target. POST /v1/responses goes as it came to
// an openai provider that serves the Responses API; to an OpenAI-compatible
// provider without it (providers.X.responses: false) it is translated to
// Chat Completions, and to an anthropic provider to Messages, and the
// answer back to the Responses API, unary and streaming. What needs state
// the gateway does not keep (previous_response_id, store: true) cannot be
// translated: only a provider with the Responses API serves it, and when
// none serves the model the client gets a 400 naming the field.

// responsesExchange builds what a Responses request sends cand; x holds
// what every exchange starts with.
func (c *request) responsesExchange(cand *mode.Candidate, x exchange) (exchange, error) {
	u := cand.Upstream
	switch {
	case u.Kind == config.KindOpenAI && u.Responses:
		x.body = c.fields.WithModel(nil, c.body, cand.Model)
		return x, nil
	case u.Kind == config.KindOpenAI:
		body, err := translate.ResponsesToChat(c.body, cand.Model)
		if err != nil {
			return exchange{}, errors.Join(errUntranslatable, err)
		}
		// The answer's tool ids: a call the upstream gave no id gets one
		// no call of the conversation holds.
		x.body, x.url, x.conv = body, u.URL(suffixChat), convChatToResponses
		x.ids = translate.NewToolIDs(c.body, translate.Responses)
		return x, nil
	}
	x.ids = translate.NewToolIDs(c.body, translate.Responses)
	body, err := translate.ResponsesToMessages(c.body, cand.Model, x.ids)
	if err != nil {
		return exchange{}, errors.Join(errUntranslatable, err)
	}
	x.body, x.url, x.conv = body, u.URL(suffixMessages), convMessagesToResponses
	return x, nil
}
