package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// A simulated provider may speak a cloud host's API instead of the plain
// OpenAI and Anthropic ones: requests arrive on the host's paths with the
// host's credential, are checked the way the host checks them, and are
// answered by the same simulated API in the host's framing.
//
//	azure    /openai/v1/{chat/completions,responses,embeddings} and
//	         /openai/deployments/{d}/...?api-version=; api-key checked;
//	         streams open with a frame of empty choices and
//	         prompt_filter_results, and a filter-only frame follows the first
//	         content frame, as Azure's do
//	bedrock  /model/{id}/invoke, /invoke-with-response-stream; SigV4
//	         (service bedrock) verified against AWSKeys, or a Bearer API key;
//	         streams in AWS event-stream frames (chunk events, base64 bytes,
//	         p padding); errors typed by X-Amzn-ErrorType; Host.Exception
//	         ends streams with an exception frame
//	vertex   /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{m}:rawPredict,
//	         :streamRawPredict; a Bearer token this server issued on POST /token
//	         (the token_uri of a service-account file pointed here); 401, 403
//	         and 429 answers come in Google's error shape (UNAUTHENTICATED,
//	         PERMISSION_DENIED, RESOURCE_EXHAUSTED with RetryInfo), as the
//	         host's own front refuses, other errors in the model's;
//	         .../publishers/google/models/{m}:generateContent,
//	         :streamGenerateContent?alt=sse (Gemini, hosts_gemini.go);
//	         .../endpoints/openapi/chat/completions (the OpenAI-compatible
//	         endpoint of partner and open models: the chat API as is)
//	bedrock  /model/{id}/converse, /converse-stream: Converse (hosts_converse.go)
//	gemini   {any}/models/{m}:generateContent, :streamGenerateContent?alt=sse;
//	         x-goog-api-key checked (a wrong one: 400 API_KEY_INVALID)

// Host kinds a simulated provider can speak.
const (
	HostAzure   = "azure"
	HostBedrock = "bedrock"
	HostVertex  = "vertex"
	HostGemini  = "gemini"
)

// Host is the cloud API a simulated provider speaks.
type Host struct {
	// Kind is azure, bedrock, vertex or gemini.
	Kind string `yaml:"kind"`
	// APIKey is Azure's api-key, a Bedrock API key (Bearer) or the Gemini
	// API's x-goog-api-key. Empty on
	// bedrock: only SigV4 is accepted.
	APIKey string `yaml:"api_key"`
	// AWSKeys are the key pairs a Bedrock SigV4 signature may use.
	AWSKeys []AWSKey `yaml:"aws_keys"`
	// Region is the region a Bedrock signature must name. Empty: us-east-1.
	Region string `yaml:"region"`
	// Exception, when set, ends every Bedrock stream (invoke and
	// converse) with an exception frame instead of its remaining events.
	// Nil: none.
	Exception *StreamException `yaml:"exception,omitempty"`
}

// StreamException is an exception frame (:message-type exception) a
// Bedrock stream ends with, as the host sends one when a stream fails
// after its answer started: before the first event frame (AfterEvents 0:
// the stream carries nothing else, as a throttled stream), or after
// AfterEvents event frames (a model failing mid-answer). A stream with no
// more frames than AfterEvents ends without it.
type StreamException struct {
	// Type is the :exception-type, in Bedrock's lowerCamelCase
	// (throttlingException, modelStreamErrorException,
	// internalServerException, ...).
	Type string `yaml:"type"`
	// AfterEvents is how many event frames go before it.
	AfterEvents int `yaml:"after_events,omitempty"`
}

// hostState is what a host front keeps between requests: the OAuth
// tokens it issued.
type hostState struct {
	mu     sync.Mutex
	tokens map[string]time.Time // guarded by mu: token → expiry
}

// front turns a host request into the simulated API's: it answers itself
// (false) when the request is refused or is a token request.
func (s *Server) front(w http.ResponseWriter, r *http.Request, body []byte) (http.ResponseWriter, []byte, bool) {
	switch s.host.Kind {
	case HostAzure:
		return s.azureFront(w, r, body)
	case HostBedrock:
		return s.bedrockFront(w, r, body)
	case HostVertex:
		return s.vertexFront(w, r, body)
	case HostGemini:
		return s.geminiFront(w, r, body)
	}
	return w, body, true
}

func (s *Server) azureFront(w http.ResponseWriter, r *http.Request, body []byte) (http.ResponseWriter, []byte, bool) {
	if r.Header.Get("Api-Key") != s.host.APIKey || s.host.APIKey == "" {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": "401",
			"message": "Access denied due to invalid subscription key or wrong API endpoint."}})
		return w, nil, false
	}
	p := r.URL.Path
	if rest, ok := strings.CutPrefix(p, "/openai/v1/"); ok {
		r.URL.Path = "/v1/" + rest
	} else if rest, ok := strings.CutPrefix(p, "/openai/deployments/"); ok && r.URL.Query().Get("api-version") != "" {
		deployment, op, _ := strings.Cut(rest, "/")
		r.URL.Path = "/v1/" + op
		body = withFields(body, map[string]any{"model": deployment})
	} else {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": "404", "message": "Resource not found"}})
		return w, nil, false
	}
	return &azureWriter{ResponseWriter: w}, body, true
}

// azureWriter adds Azure's content-filter frames to a chat stream.
type azureWriter struct {
	http.ResponseWriter
	opened, annotated bool
}

const (
	azurePromptFilter = `data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}` + "\n\n"
	azureFilterOnly   = `data: {"choices":[{"content_filter_offsets":{"check_offset":0,"start_offset":0,"end_offset":5},"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"finish_reason":null,"index":0}],"created":0,"id":"","model":"","object":""}` + "\n\n"
)

func (a *azureWriter) Write(p []byte) (int, error) {
	stream := strings.HasPrefix(a.Header().Get("Content-Type"), "text/event-stream")
	if !stream {
		return a.ResponseWriter.Write(p)
	}
	var out []byte
	if !a.opened {
		a.opened = true
		out = append(out, azurePromptFilter...)
	}
	out = append(out, p...)
	if !a.annotated && bytes.Contains(p, []byte(`"content"`)) {
		a.annotated = true
		out = append(out, azureFilterOnly...)
	}
	if _, err := a.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (a *azureWriter) Flush() { http.NewResponseController(a.ResponseWriter).Flush() }

func (a *azureWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// withFields sets top-level fields of a JSON object body (a body that is
// not one is returned as it is, for the API to refuse).
func withFields(body []byte, set map[string]any) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return body
	}
	for k, v := range set {
		b, _ := json.Marshal(v)
		m[k] = b
	}
	out, _ := json.Marshal(m)
	return out
}

// hasField reports whether body, a JSON object, has the field name.
func hasField(body []byte, name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	_, ok := m[name]
	return ok
}

// anthropicVersionOf is a body's anthropic_version.
func anthropicVersionOf(body []byte) string {
	var v struct {
		AnthropicVersion string `json:"anthropic_version"`
	}
	_ = json.Unmarshal(body, &v)
	return v.AnthropicVersion
}

// badRequest answers an Anthropic-shaped 400.
func badRequest(w http.ResponseWriter, msg string) {
	writeError(w, anthropicShape, errorFor(http.StatusBadRequest, msg))
}
