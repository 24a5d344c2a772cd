package router

import (
	"net/http"
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
	"github.com/firstbyte-dev/firstbyte/router/reqbody"

	"github.com/firstbyte-dev/firstbyte/router/translate"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// apiShape is the client API family a request came in through; errors go
// back in its shape so SDKs parse them.
type apiShape uint8

const (
	shapeOpenAI apiShape = iota
	shapeAnthropic
	shapeResponses // OpenAI's error shape; its streams are Responses events
)

// format is the shape's wire format, as the translator names it.
func (s apiShape) format() translate.Format {
	switch s {
	case shapeAnthropic:
		return translate.Messages
	case shapeResponses:
		return translate.Responses
	}
	return translate.Chat
}

// endpoint is one client-facing API path and how it maps upstream.
type endpoint struct {
	path      string      // client path
	family    string      // the routes it takes candidates from (familyChat: either kind, translated)
	suffix    string      // appended to the provider's base_url, outside familyChat
	shape     apiShape    // the client's wire format: its error shape, and what a chat answer is translated to
	operation string      // gen_ai.operation.name of its attempts
	spanName  string      // of the SERVER span: "POST {path}"
	input     reqbody.API // the input checks its requests take
}

// Endpoint families: which candidates an endpoint routes over. Chat
// completions and messages are one family: any chat target serves either,
// the gateway translating between the formats. Responses are served by
// targets of every kind too (translated to Chat Completions or Messages
// where the provider has no Responses API).
const (
	familyChat        = "chat"
	familyResponses   = "responses"
	familyEmbeddings  = "embeddings"
	familyCountTokens = "count_tokens"
)

// families is every family and the provider kinds that serve it.
var families = []struct {
	name  string
	kinds []string
}{
	{familyChat, []string{config.KindOpenAI, config.KindAnthropic}},
	{familyResponses, []string{config.KindOpenAI, config.KindAnthropic}},
	{familyEmbeddings, []string{config.KindOpenAI}},
	{familyCountTokens, []string{config.KindAnthropic}},
}

// clientKind is the wire format the client speaks.
func (ep *endpoint) clientKind() string {
	if ep.shape == shapeAnthropic {
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

// Upstream paths of the chat family.
const (
	suffixChat      = "/chat/completions"
	suffixMessages  = "/messages"
	suffixResponses = "/responses"
)

// upstreamSuffixes are every path a provider may be asked on.
var upstreamSuffixes = []string{suffixChat, suffixMessages, suffixResponses, "/embeddings", "/messages/count_tokens"}

func init() {
	for _, ep := range endpoints {
		ep.spanName = "POST " + ep.path
	}
}

var endpoints = []*endpoint{
	{path: "/v1/chat/completions", family: familyChat, shape: shapeOpenAI, operation: telemetry.OperationChat, input: reqbody.ChatCompletions},
	{path: "/v1/responses", family: familyResponses, suffix: suffixResponses, shape: shapeResponses, operation: telemetry.OperationChat, input: reqbody.Responses},
	{path: "/v1/embeddings", family: familyEmbeddings, suffix: "/embeddings", shape: shapeOpenAI, operation: telemetry.OperationEmbeddings},
	{path: "/v1/messages", family: familyChat, shape: shapeAnthropic, operation: telemetry.OperationChat, input: reqbody.Messages},
	{path: "/v1/messages/count_tokens", family: familyCountTokens, suffix: "/messages/count_tokens", shape: shapeAnthropic, operation: telemetry.OperationCountTokens},
}

// Error types and codes the gateway itself answers with.
const (
	errTypeInvalidRequest = "invalid_request_error"
	errTypeAuth           = "authentication_error"
	errTypeNotFound       = "not_found_error"
	errTypeUpstream       = "upstream_error"
	errTypeTooLarge       = "request_too_large"
	errTypeRateLimit      = "rate_limit_error"
)

// writeError answers in the caller's API shape: OpenAI
// {"error":{"message","type","code"}} or Anthropic
// {"type":"error","error":{"type","message"}}. typ is the OpenAI type; an
// Anthropic answer takes the one Anthropic's API gives the status (an
// Anthropic SDK knows only its own types), and has no code. msg must never
// carry prompt text or credentials.
func writeError(w http.ResponseWriter, shape apiShape, status int, typ, code, msg string) {
	writeErrorExtra(w, shape, status, typ, code, msg, nil)
}

// writeErrorExtra is writeError with extra raw JSON members appended to the
// error object (e.g. the list of failed attempts).
func writeErrorExtra(w http.ResponseWriter, shape apiShape, status int, typ, code, msg string, extra []byte) {
	writeErrorParam(w, shape, status, typ, code, "", msg, extra)
}

// writeErrorParam is writeErrorExtra naming the request field at fault in
// an OpenAI error's param ("": null; an Anthropic error has no such field,
// its message names it).
func writeErrorParam(w http.ResponseWriter, shape apiShape, status int, typ, code, param, msg string, extra []byte) {
	b := make([]byte, 0, 128+len(msg)+len(extra))
	if shape == shapeAnthropic {
		b = append(b, `{"type":"error","error":{"type":`...)
		b = jsonscan.AppendString(b, translate.AnthropicErrorType(status))
		b = append(b, `,"message":`...)
		b = jsonscan.AppendString(b, msg)
	} else {
		b = append(b, `{"error":{"message":`...)
		b = jsonscan.AppendString(b, msg)
		b = append(b, `,"type":`...)
		b = jsonscan.AppendString(b, typ)
		b = append(b, `,"param":`...)
		if param == "" {
			b = append(b, "null"...)
		} else {
			b = jsonscan.AppendString(b, param)
		}
		b = append(b, `,"code":`...)
		b = jsonscan.AppendString(b, code)
	}
	b = append(b, extra...)
	b = append(b, "}}\n"...)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
