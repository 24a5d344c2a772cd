package upstream

import (
	"net/url"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// Where each host's calls go. A host adapter knows its URLs, its
// credentials and its framing; the body's format is the codecs' business.
//
//	azure v1     {base}/openai/v1/chat/completions              (the deployment is the body's model)
//	azure dated  {base}/openai/deployments/{d}/chat/completions?api-version=DATE
//	bedrock      {base}/model/{id}/invoke | invoke-with-response-stream | converse | converse-stream
//	vertex       {base}/v1/projects/{p}/locations/{r}/publishers/anthropic/models/{m}:rawPredict | :streamRawPredict
//	             .../publishers/google/models/{m}:generateContent | :streamGenerateContent?alt=sse
//	             .../endpoints/openapi/chat/completions
//	gemini       {base}/models/{m}:generateContent | :streamGenerateContent?alt=sse
//
// Model ids with ':' or '/' are escaped once in the path (Bedrock's
// "...-v1:0", Vertex's "claude-sonnet-4-5@20250929" is left as is: '@' is
// a path character); SigV4's canonical path escapes the escaped path again.

// OpenAI-format operations: the path under an OpenAI-compatible root.
const (
	OpChat       = "/chat/completions"
	OpResponses  = "/responses"
	OpEmbeddings = "/embeddings"
)

// Endpoint is one call's URL: Path is the decoded path, RawPath its
// escaped form (what goes on the wire and into a signature), Query its
// encoded query.
type Endpoint struct {
	Scheme, Host  string
	Path, RawPath string
	RawQuery      string
}

// URL is e as a *url.URL (a new one: requests may change theirs).
func (e Endpoint) URL() *url.URL {
	return &url.URL{Scheme: e.Scheme, Host: e.Host, Path: e.Path, RawPath: e.RawPath, RawQuery: e.RawQuery}
}

// String is e's URL as sent.
func (e Endpoint) String() string { return e.URL().String() }

// base is a parsed base_url, its path without a trailing slash.
type base struct {
	scheme, host, path string
}

func parseBase(s string) (base, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return base{}, false
	}
	return base{scheme: u.Scheme, host: u.Host, path: strings.TrimSuffix(u.EscapedPath(), "/")}, true
}

// endpoint joins b with a path whose segments are given raw and escaped.
func (b base) endpoint(raw, escaped, query string) Endpoint {
	p, _ := url.PathUnescape(b.path)
	return Endpoint{Scheme: b.scheme, Host: b.host, Path: p + raw, RawPath: b.path + escaped, RawQuery: query}
}

// escapeSegment escapes a model id for one path segment: everything but
// unreserved characters and '@' (RFC 3986 pchar) is percent-encoded, ':'
// and '/' included, as the hosts' own SDKs do.
func escapeSegment(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~@", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// AzureEndpoint is an Azure OpenAI call: op (OpChat, OpResponses,
// OpEmbeddings) under /openai/v1, or, with a dated apiVersion, under the
// deployment's path with ?api-version=.
func AzureEndpoint(baseURL, apiVersion, op, deployment string) (Endpoint, bool) {
	b, ok := parseBase(baseURL)
	if !ok {
		return Endpoint{}, false
	}
	if apiVersion == "" || apiVersion == config.AzureAPIV1 {
		return b.endpoint("/openai/v1"+op, "/openai/v1"+op, ""), true
	}
	q := url.Values{"api-version": {apiVersion}}.Encode()
	return b.endpoint("/openai/deployments/"+deployment+op, "/openai/deployments/"+escapeSegment(deployment)+op, q), true
}

// BedrockEndpoint is a Bedrock runtime call for model: api invoke
// (InvokeModel, InvokeModelWithResponseStream) or converse.
func BedrockEndpoint(baseURL, api, model string, stream bool) (Endpoint, bool) {
	b, ok := parseBase(baseURL)
	if !ok {
		return Endpoint{}, false
	}
	action := "/invoke"
	switch {
	case api == config.APIConverse && stream:
		action = "/converse-stream"
	case api == config.APIConverse:
		action = "/converse"
	case stream:
		action = "/invoke-with-response-stream"
	}
	return b.endpoint("/model/"+model+action, "/model/"+escapeSegment(model)+action, ""), true
}

// VertexEndpoint is a Vertex AI call in project and region (location):
// api invoke (Anthropic's rawPredict), gemini (generateContent) or openai
// (the OpenAI-compatible endpoint, op under it).
func VertexEndpoint(baseURL, project, region, api, op, model string, stream bool) (Endpoint, bool) {
	b, ok := parseBase(baseURL)
	if !ok {
		return Endpoint{}, false
	}
	loc := "/v1/projects/" + project + "/locations/" + region
	locEsc := "/v1/projects/" + escapeSegment(project) + "/locations/" + escapeSegment(region)
	switch api {
	case config.APIInvoke:
		verb := ":rawPredict"
		if stream {
			verb = ":streamRawPredict"
		}
		m := "/publishers/anthropic/models/"
		return b.endpoint(loc+m+model+verb, locEsc+m+escapeSegment(model)+verb, ""), true
	case config.APIGemini:
		verb, q := geminiVerb(stream)
		m := "/publishers/google/models/"
		return b.endpoint(loc+m+model+verb, locEsc+m+escapeSegment(model)+verb, q), true
	}
	return b.endpoint(loc+"/endpoints/openapi"+op, locEsc+"/endpoints/openapi"+op, ""), true
}

// GeminiEndpoint is a Gemini API call for model.
func GeminiEndpoint(baseURL, model string, stream bool) (Endpoint, bool) {
	b, ok := parseBase(baseURL)
	if !ok {
		return Endpoint{}, false
	}
	verb, q := geminiVerb(stream)
	return b.endpoint("/models/"+model+verb, "/models/"+escapeSegment(model)+verb, q), true
}

func geminiVerb(stream bool) (verb, query string) {
	if stream {
		return ":streamGenerateContent", "alt=sse"
	}
	return ":generateContent", ""
}
