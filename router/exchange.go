package router

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/firstbyte-dev/firstbyte/router/apierror"
	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/reqbody"
	"github.com/firstbyte-dev/firstbyte/router/translate"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// An exchange is one candidate's side of a request: the body it is sent,
// where, and what its answer goes through on the way back. A chat request
// to a provider of the other wire format is translated (OpenAI Chat
// Completions <-> Anthropic Messages, both ways, unary and streaming), as
// is a Responses request to a provider without the Responses API
// (responses.go); a request in the provider's own format goes as it came,
// with the model swapped (and held to Anthropic's rules for an Anthropic
// provider), and its answer as it came, read for its usage and, when the
// client's model name is asked for, named so.

// conversion is how an answer reaches the client.
type conversion uint8

const (
	convNone                conversion = iota // the client's format: relayed as it came
	convMessagesToChat                        // an Anthropic answer to an OpenAI chat client
	convChatToMessages                        // an OpenAI chat answer to an Anthropic client
	convChatToResponses                       // an OpenAI chat answer to a Responses client
	convMessagesToResponses                   // an Anthropic answer to a Responses client
	convModel                                 // a Converse or Gemini answer, through the neutral model (modelExchange)
)

// exchange is what prepare decided for one candidate.
type exchange struct {
	body []byte
	url  *url.URL // where it goes: the provider's path for the format sent
	conv conversion
	// clientWantsUsage: an OpenAI client that asked for stream usage
	// (stream_options.include_usage) gets the usage chunk; one that did not
	// never sees it, though the gateway asks an OpenAI upstream for it.
	clientWantsUsage bool
	// ids keeps a translated request's tool ids valid for the target and
	// unique, and its answer's for the client (nil when not translated).
	ids *translate.ToolIDs
	// answerModel is the model name the answer reports: the client's
	// (response_model: requested), or "" for the upstream's own.
	answerModel string
	// upstream is the format sent when conv is convModel (Converse or
	// Gemini), client the client's.
	upstream, client translate.Format
}

// errUntranslatable wraps a *translate.RequestError: the request uses a
// feature the candidate's wire format cannot honour.
var errUntranslatable = errors.New("request cannot be translated for this provider")

// exchange builds the body cand is sent. An error means the request cannot
// be served by cand's wire format (*translate.RequestError inside); another
// candidate may still serve it.
func (c *request) exchange(cand *mode.Candidate) (exchange, error) {
	u := cand.Upstream
	x := exchange{url: u.URL(c.ep.upstreamSuffix(u.Kind)), answerModel: c.answerModel(cand)}
	if f := modelFormat(u); f != 0 {
		return c.modelExchange(cand, x, f)
	}
	switch {
	case c.ep.family == familyResponses:
		return c.responsesExchange(cand, x)
	case c.ep.family != familyChat || u.Kind == c.ep.clientKind():
		x.body = c.fields.WithModel(nil, c.body, cand.Model)
		switch {
		case c.ep.family == familyChat && u.Kind == config.KindOpenAI && c.fields.Stream:
			// Ask the upstream for its final usage chunk; strip it again
			// unless the client asked too.
			out, asked, err := translate.WithStreamUsage(x.body)
			if err == nil {
				x.body, x.clientWantsUsage = out, asked
			}
		case c.ep.family == familyChat && (c.fields.Thinking || c.fields.TopP || translate.HasGeminiSignature(x.body)):
			// An Anthropic request to an Anthropic provider, after turns a
			// mixed pool may have served elsewhere (a Gemini target's
			// signed thinking among them): held to Anthropic's rules.
			x.body = translate.FitForAnthropic(x.body)
		}
		return x, nil
	case u.Kind == config.KindAnthropic: // an OpenAI chat request to an Anthropic provider
		x.ids = translate.NewToolIDs(c.body, translate.Chat)
		body, includeUsage, err := translate.ChatToMessages(c.body, cand.Model, x.ids)
		if err != nil {
			return exchange{}, errors.Join(errUntranslatable, err)
		}
		x.body, x.conv, x.clientWantsUsage = body, convMessagesToChat, includeUsage
		return x, nil
	}
	body, err := translate.MessagesToChat(c.body, cand.Model)
	if err != nil {
		return exchange{}, errors.Join(errUntranslatable, err)
	}
	x.body, x.conv, x.ids = body, convChatToMessages, translate.NewToolIDs(c.body, translate.Messages)
	return x, nil
}

// clientKind is the wire format ep's client speaks: a candidate of
// another is sent a translation.
func (ep *endpoint) clientKind() string {
	if ep.shape == apierror.Anthropic {
		return config.KindAnthropic
	}
	return config.KindOpenAI
}

// upstreamSuffix is the path, after a provider's base_url, where a request
// of ep goes on a provider of kind.
func (ep *endpoint) upstreamSuffix(kind string) string {
	if ep.family != familyChat {
		return ep.suffix
	}
	if kind == config.KindAnthropic {
		return suffixMessages
	}
	return suffixChat
}

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

// answerModel is the model name cand's answer reports for this call: the
// alias the client sent, when it sent one and answers report the client's
// name; else the candidate's own rule.
func (c *request) answerModel(cand *mode.Candidate) string {
	if c.alias != "" && cand.AnswerModel != "" {
		return c.alias
	}
	return cand.AnswerModel
}

// modelFormat is the upstream format u's call speaks through the neutral
// model (Converse or Gemini), or 0 when u speaks a client API.
func modelFormat(u *upstream.Provider) translate.Format {
	if u.Cloud == nil {
		return 0
	}
	switch u.Cloud.Call() {
	case config.APIConverse:
		return translate.Converse
	case config.APIGemini:
		return translate.Gemini
	}
	return 0
}

// answer is how a translated answer is presented: under the upstream model
// that answered, or the client's when response_model says so.
func (x exchange) answer(cand *mode.Candidate, created int64) translate.Answer {
	a := translate.Answer{Model: x.answerModel, Created: created, IncludeUsage: x.clientWantsUsage, IDs: x.ids}
	if a.Model == "" {
		a.Model, a.UpstreamModel = cand.Model, true
	}
	return a
}

// streamFor is what a streamed answer goes through: a translator, or a
// pass-through that holds the stream to its API and reads its usage (and
// strips the usage chunk the client did not ask for, and names the
// client's model when asked); nil for the endpoints that do not stream.
func (x exchange) streamFor(c *call, cand *mode.Candidate, created int64) translate.Stream {
	switch {
	case x.conv == convModel:
		return translate.NewModelStream(x.upstream, c.ep.shape.Format(), x.answer(cand, created))
	case x.conv == convMessagesToChat:
		return translate.NewModelStream(translate.Messages, translate.Chat, x.answer(cand, created))
	case x.conv == convChatToMessages:
		return translate.NewModelStream(translate.Chat, translate.Messages, x.answer(cand, created))
	case x.conv == convChatToResponses:
		return translate.NewModelStream(translate.Chat, translate.Responses, x.answer(cand, created))
	case x.conv == convMessagesToResponses:
		return translate.NewModelStream(translate.Messages, translate.Responses, x.answer(cand, created))
	case c.ep.family == familyResponses:
		return translate.NewPassThrough(translate.Responses, false, x.answerModel)
	case c.ep.family != familyChat:
		return nil
	case cand.Upstream.Kind == config.KindOpenAI:
		return translate.NewPassThrough(translate.Chat, !x.clientWantsUsage, x.answerModel)
	}
	return translate.NewPassThrough(translate.Messages, false, x.answerModel)
}

// unary converts a whole unary answer for the client and reads its usage.
// An error wrapping translate.ErrInvalidUpstream means the answer is not
// the API's: a provider fault. An answer relayed as it came must be one
// valid JSON value; reading its usage checks that in the same pass.
func (x exchange) unary(c *call, cand *mode.Candidate, body []byte, created int64) ([]byte, translate.Usage, error) {
	switch x.conv {
	case convModel:
		return translate.TranslateAnswer(x.upstream, body, c.ep.shape.Format(), x.answer(cand, created))
	case convMessagesToChat, convMessagesToResponses:
		return translate.TranslateAnswer(translate.Messages, body, c.ep.shape.Format(), x.answer(cand, created))
	case convChatToMessages, convChatToResponses:
		return translate.TranslateAnswer(translate.Chat, body, c.ep.shape.Format(), x.answer(cand, created))
	}
	var (
		u     translate.Usage
		valid bool
	)
	switch {
	case c.ep.operation == "count_tokens":
		valid = reqbody.ValidJSON(body)
	case c.ep.family == familyResponses:
		u, valid = translate.UsageFromResponsesResponse(body)
	case cand.Upstream.Kind == config.KindAnthropic:
		u, valid = translate.UsageFromMessagesResponse(body)
	default:
		u, valid = translate.UsageFromChatResponse(body)
	}
	if !valid {
		return nil, translate.Usage{}, errNotJSONAnswer
	}
	if x.answerModel != "" && c.ep.operation != "count_tokens" {
		body = translate.WithAnswerModel(body, x.answerModel)
	}
	return body, u, nil
}

// errNotJSONAnswer: a 2xx unary body cut short or not JSON.
var errNotJSONAnswer = fmt.Errorf("%w: the body is not one JSON value", translate.ErrInvalidUpstream)

// errorBody is a non-failover error answer in the client's error shape:
// translated when the formats differ (status, type and message kept).
func (x exchange) errorBody(status int, body []byte) []byte {
	switch x.conv {
	case convMessagesToChat:
		return translate.TranslateError(translate.Messages, status, body, translate.Chat)
	case convMessagesToResponses:
		return translate.TranslateError(translate.Messages, status, body, translate.Responses)
	case convChatToMessages:
		return translate.TranslateError(translate.Chat, status, body, translate.Messages)
	case convModel:
		return translate.TranslateError(x.upstream, status, body, x.client)
	}
	return body // convChatToResponses: OpenAI's error shape already
}
