package router

import (
	"net/http"
	"strconv"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// apiShape is the client API family a request came in through; errors go
// back in its shape so SDKs parse them.
type apiShape uint8

const (
	shapeOpenAI apiShape = iota
	shapeAnthropic
)

// endpoint is one client-facing API path and how it maps upstream.
type endpoint struct {
	path      string   // client path
	suffix    string   // appended to the provider's base_url
	kind      string   // provider kind that serves it (no translation between formats)
	shape     apiShape // error shape
	operation string   // gen_ai.operation.name of its attempts
	spanName  string   // of the SERVER span: "POST {path}"
}

func init() {
	for _, ep := range endpoints {
		ep.spanName = "POST " + ep.path
	}
}

var endpoints = []*endpoint{
	{path: "/v1/chat/completions", suffix: "/chat/completions", kind: KindOpenAI, shape: shapeOpenAI, operation: telemetry.OperationChat},
	{path: "/v1/responses", suffix: "/responses", kind: KindOpenAI, shape: shapeOpenAI, operation: telemetry.OperationChat},
	{path: "/v1/embeddings", suffix: "/embeddings", kind: KindOpenAI, shape: shapeOpenAI, operation: telemetry.OperationEmbeddings},
	{path: "/v1/messages", suffix: "/messages", kind: KindAnthropic, shape: shapeAnthropic, operation: telemetry.OperationChat},
	{path: "/v1/messages/count_tokens", suffix: "/messages/count_tokens", kind: KindAnthropic, shape: shapeAnthropic, operation: telemetry.OperationCountTokens},
}

// Error types and codes the gateway itself answers with.
const (
	errTypeInvalidRequest = "invalid_request_error"
	errTypeAuth           = "authentication_error"
	errTypeNotFound       = "not_found_error"
	errTypeUpstream       = "upstream_error"
	errTypeTooLarge       = "request_too_large"
)

// writeError answers in the caller's API shape: OpenAI
// {"error":{"message","type","code"}} or Anthropic
// {"type":"error","error":{"type","message"}}. msg must never carry
// prompt text or credentials.
func writeError(w http.ResponseWriter, shape apiShape, status int, typ, code, msg string) {
	writeErrorExtra(w, shape, status, typ, code, msg, nil)
}

// writeErrorExtra is writeError with extra raw JSON members appended to the
// error object (e.g. the list of failed attempts).
func writeErrorExtra(w http.ResponseWriter, shape apiShape, status int, typ, code, msg string, extra []byte) {
	b := make([]byte, 0, 128+len(msg)+len(extra))
	if shape == shapeAnthropic {
		b = append(b, `{"type":"error","error":{"type":`...)
		b = appendJSONString(b, typ)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, msg)
	} else {
		b = append(b, `{"error":{"message":`...)
		b = appendJSONString(b, msg)
		b = append(b, `,"type":`...)
		b = appendJSONString(b, typ)
		b = append(b, `,"param":null,"code":`...)
		b = appendJSONString(b, code)
	}
	b = append(b, extra...)
	b = append(b, "}}\n"...)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// streamErrorEvent is the SSE event that ends a stream broken after its
// first byte reached the client (no failover is possible then).
func streamErrorEvent(shape apiShape, msg string) []byte {
	var b []byte
	if shape == shapeAnthropic {
		b = append(b, "event: error\ndata: "...)
		b = append(b, `{"type":"error","error":{"type":"api_error","message":`...)
		b = appendJSONString(b, msg)
		b = append(b, "}}\n\n"...)
		return b
	}
	b = append(b, `data: {"error":{"message":`...)
	b = appendJSONString(b, msg)
	b = append(b, `,"type":"upstream_error","param":null,"code":"stream_interrupted"}}`+"\n\n"...)
	return b
}
