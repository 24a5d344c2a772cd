package sim

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
)

// shape is the API family whose error body an endpoint answers with.
type shape int

const (
	openAIShape shape = iota
	anthropicShape
)

// shapeOf picks the error shape for a path no endpoint serves: Anthropic's under
// /v1/messages, OpenAI's elsewhere.
func shapeOf(path string) shape {
	if strings.HasPrefix(path, "/v1/messages") {
		return anthropicShape
	}
	return openAIShape
}

// apiError is an error answer; writeError renders it in the endpoint's shape.
type apiError struct {
	status        int
	message       string
	openAIType    string
	openAICode    string // empty: null
	param         string // OpenAI only; empty: null
	anthropicType string
	// anthropicMessage, when set, is the message in Anthropic's shape, where its
	// own words differ from OpenAI's; empty: message.
	anthropicMessage string
}

// errorFor is the error each real API gives for a status, in both shapes.
func errorFor(status int, message string) apiError {
	e := apiError{status: status, message: message}
	switch {
	case status == http.StatusBadRequest:
		e.openAIType, e.openAICode, e.anthropicType = "invalid_request_error", "", "invalid_request_error"
	case status == http.StatusUnauthorized:
		e.openAIType, e.openAICode, e.anthropicType = "invalid_request_error", "invalid_api_key", "authentication_error"
	case status == http.StatusForbidden:
		e.openAIType, e.openAICode, e.anthropicType = "invalid_request_error", "unsupported_country_region_territory", "permission_error"
	case status == http.StatusNotFound:
		e.openAIType, e.openAICode, e.anthropicType = "invalid_request_error", "unknown_url", "not_found_error"
	case status == http.StatusRequestEntityTooLarge:
		e.openAIType, e.openAICode, e.anthropicType = "invalid_request_error", "request_too_large", "request_too_large"
	case status == http.StatusTooManyRequests:
		e.openAIType, e.openAICode, e.anthropicType = "requests", "rate_limit_exceeded", "rate_limit_error"
	case status == 529:
		e.openAIType, e.openAICode, e.anthropicType = "server_error", "overloaded", "overloaded_error"
	case status >= 500:
		e.openAIType, e.openAICode, e.anthropicType = "server_error", "", "api_error"
	default:
		e.openAIType, e.openAICode, e.anthropicType = "invalid_request_error", "", "invalid_request_error"
	}
	return e
}

// statusError is the answer of a provider that fails a request on purpose with
// status (errors, status_body): in the words each real API uses where clients and
// gateways read them (a revoked key's 401), else what (a message naming the
// simulator, so nobody mistakes it for a real provider's).
func statusError(status int, what string) apiError {
	e := errorFor(status, what)
	if status == http.StatusUnauthorized {
		// No part of the key is echoed, not even redacted as OpenAI does.
		e.message = "Incorrect API key provided: sim-****. You can find your API key at https://platform.openai.com/account/api-keys."
		e.anthropicMessage = "invalid x-api-key"
	}
	return e
}

// contextOverflow is the provider's own "prompt too long" 400, which a gateway must
// recognise as failover-safe (another model may have a longer context).
func contextOverflow(sh shape, promptTokens int) apiError {
	if sh == anthropicShape {
		const limit = 200000
		return apiError{
			status:        http.StatusBadRequest,
			anthropicType: "invalid_request_error",
			message:       fmt.Sprintf("prompt is too long: %d tokens > %d maximum", limit+promptTokens, limit),
		}
	}
	const limit = 8192
	return apiError{
		status:     http.StatusBadRequest,
		openAIType: "invalid_request_error",
		openAICode: "context_length_exceeded",
		param:      "messages",
		message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.",
			limit, limit+promptTokens),
	}
}

type openAIErrorBody struct {
	Error openAIErrorDetail `json:"error"`
}

type openAIErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

type anthropicErrorBody struct {
	Type  string                `json:"type"`
	Error anthropicErrorDetails `json:"error"`
}

type anthropicErrorDetails struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, sh shape, e apiError) {
	if e.status == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1") // a rate limit (ratelimit.go) says its own
	}
	if sh == anthropicShape {
		writeJSON(w, e.status, anthropicErrorBody{
			Type:  "error",
			Error: anthropicErrorDetails{Type: e.anthropicType, Message: cmp.Or(e.anthropicMessage, e.message)},
		})
		return
	}
	writeJSON(w, e.status, openAIErrorBody{Error: openAIErrorDetail{
		Message: e.message,
		Type:    e.openAIType,
		Param:   nullable(e.param),
		Code:    nullable(e.openAICode),
	}})
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
