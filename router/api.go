package router

import (
	"github.com/firstbyte-dev/firstbyte/router/apierror"
	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/reqbody"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// endpoint is one client-facing API path and how it maps upstream.
type endpoint struct {
	path      string         // client path
	family    string         // the routes it takes candidates from (familyChat: either kind, translated)
	suffix    string         // appended to the provider's base_url, outside familyChat
	shape     apierror.Shape // the client's wire format: its error shape, and what a chat answer is translated to
	operation string         // gen_ai.operation.name of its attempts
	spanName  string         // of the SERVER span: "POST {path}"
	input     reqbody.API    // the input checks its requests take
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
	{path: "/v1/chat/completions", family: familyChat, shape: apierror.OpenAI, operation: telemetry.OperationChat, input: reqbody.ChatCompletions},
	{path: "/v1/responses", family: familyResponses, suffix: suffixResponses, shape: apierror.Responses, operation: telemetry.OperationChat, input: reqbody.Responses},
	{path: "/v1/embeddings", family: familyEmbeddings, suffix: "/embeddings", shape: apierror.OpenAI, operation: telemetry.OperationEmbeddings},
	{path: "/v1/messages", family: familyChat, shape: apierror.Anthropic, operation: telemetry.OperationChat, input: reqbody.Messages},
	{path: "/v1/messages/count_tokens", family: familyCountTokens, suffix: "/messages/count_tokens", shape: apierror.Anthropic, operation: telemetry.OperationCountTokens},
}
