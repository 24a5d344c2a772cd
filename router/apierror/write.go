// Package apierror is the gateway's own error answers, in the shape of the
// API the client called: the error body (Write, with the request field at
// fault and extra members), and what the all-failed answer says of a
// route's attempts and skips (Summary, FailureMessage), set into an
// upstream's error beside its own members (WithMembers). It knows no route
// or request: the router hands it what to say.
package apierror

import (
	"net/http"
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
	"github.com/firstbyte-dev/firstbyte/router/translate"
)

// Shape is the client API family a request came in through; errors go
// back in its shape so SDKs parse them.
type Shape uint8

const (
	OpenAI Shape = iota
	Anthropic
	Responses // OpenAI's error shape; its streams are Responses events
)

// Format is the shape's wire format, as the translator names it.
func (s Shape) Format() translate.Format {
	switch s {
	case Anthropic:
		return translate.Messages
	case Responses:
		return translate.Responses
	}
	return translate.Chat
}

// Error types and codes the gateway itself answers with.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeAuth           = "authentication_error"
	TypeNotFound       = "not_found_error"
	TypeUpstream       = "upstream_error"
	TypeTooLarge       = "request_too_large"
	TypeRateLimit      = "rate_limit_error"
)

// Write answers in the caller's API shape: OpenAI
// {"error":{"message","type","code"}} or Anthropic
// {"type":"error","error":{"type","message"}}. typ is the OpenAI type; an
// Anthropic answer takes the one Anthropic's API gives the status (an
// Anthropic SDK knows only its own types), and has no code. msg must never
// carry prompt text or credentials.
func Write(w http.ResponseWriter, shape Shape, status int, typ, code, msg string) {
	WriteExtra(w, shape, status, typ, code, msg, nil)
}

// WriteExtra is Write with extra raw JSON members appended to the
// error object (e.g. the list of failed attempts).
func WriteExtra(w http.ResponseWriter, shape Shape, status int, typ, code, msg string, extra []byte) {
	WriteParam(w, shape, status, typ, code, "", msg, extra)
}

// WriteParam is WriteExtra naming the request field at fault in
// an OpenAI error's param ("": null; an Anthropic error has no such field,
// its message names it).
func WriteParam(w http.ResponseWriter, shape Shape, status int, typ, code, param, msg string, extra []byte) {
	b := make([]byte, 0, 128+len(msg)+len(extra))
	if shape == Anthropic {
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
