package translate

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Format names a wire format: the three client APIs, and the two upstream
// formats no client speaks to the gateway (Bedrock Converse, Gemini).
type Format uint8

const (
	// Chat is OpenAI Chat Completions (POST /v1/chat/completions).
	Chat Format = iota + 1
	// Messages is Anthropic Messages (POST /v1/messages).
	Messages
	// Responses is OpenAI Responses (POST /v1/responses).
	Responses
	// Converse is Amazon Bedrock's Converse API (/converse, /converse-stream).
	Converse
	// Gemini is Google's generateContent (the Gemini API and Vertex AI).
	Gemini
)

func (f Format) String() string {
	switch f {
	case Chat:
		return "openai-chat"
	case Messages:
		return "anthropic-messages"
	case Responses:
		return "openai-responses"
	case Converse:
		return "bedrock-converse"
	case Gemini:
		return "gemini"
	}
	return "format(" + strconv.Itoa(int(f)) + ")"
}

// RequestError is a client request the other API cannot express: a parameter
// with no counterpart whose loss would change what the client gets (n > 1,
// logprobs, a JSON response format, audio, ...), or a value of the wrong JSON
// type. The gateway answers it as a 400 invalid_request_error naming Param, or
// better, tries a target of the client's own format first. Its text names
// fields and positions only, never their contents, so it is safe to log.
type RequestError struct {
	// Param is the client's field at fault, as a path: "n",
	// "messages[2].content[0].image_url.url".
	Param string
	// Message says what is wrong; it starts with Param.
	Message string
}

func (e *RequestError) Error() string { return e.Message }

func refuse(param, why string) *RequestError {
	return &RequestError{Param: param, Message: param + ": " + why}
}

// ErrInvalidUpstream is wrapped by every error about a 2xx upstream answer that
// is not what its API documents (not JSON, no choices, a stream event that is
// not JSON, ...): a provider fault, as an unparseable unary body is.
var ErrInvalidUpstream = errors.New("upstream answer does not follow its API's format")

// ErrTruncated is returned by a stream's Finish when the upstream's stream
// ended before saying how the answer stopped (no finish_reason, no [DONE]; no
// message_delta, no message_stop): the client must get an error event, not a
// clean end that would pass a cut answer off as whole.
var ErrTruncated = errors.New("upstream stream ended before its final event")

// ErrStreamError is returned by a pass-through stream's Finish when the
// upstream ended its stream with its own error event: the stream is
// broken, and the client has the provider's event already.
var ErrStreamError = errors.New("upstream ended its stream with an error event")

// checkEventJSON reports a stream event whose data is not one JSON value.
func checkEventJSON(ev sseEvent) error {
	if _, ok := jsonscan.Valid(ev.data); !ok {
		return fmt.Errorf("%w: a stream event's data is not JSON", ErrInvalidUpstream)
	}
	return nil
}

type upstreamError struct{ what string }

func (e *upstreamError) Error() string { return ErrInvalidUpstream.Error() + ": " + e.what }
func (e *upstreamError) Unwrap() error { return ErrInvalidUpstream }

func invalidUpstream(what string) error { return &upstreamError{what} }

// anthropicErrorTypes are the only error types an Anthropic client may be
// given: its SDKs and users know these.
var anthropicErrorTypes = [...]string{
	"invalid_request_error", "authentication_error", "permission_error", "not_found_error",
	"request_too_large", "rate_limit_error", "api_error", "overloaded_error",
}

func isAnthropicErrorType(t []byte) bool {
	for _, a := range anthropicErrorTypes {
		if string(t) == a {
			return true
		}
	}
	return false
}

// AnthropicErrorType is the Anthropic error type of an HTTP status, as its
// API documents them (one of the eight an Anthropic client knows); 503 is an
// overload too, which is what OpenAI-compatible servers mean by it. A 4xx
// Anthropic's table does not list (408 among them: the request did not
// arrive in time) is invalid_request_error, as Anthropic uses it for those.
func AnthropicErrorType(status int) string {
	switch {
	case status == http.StatusBadRequest:
		return "invalid_request_error"
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == 529 || status == http.StatusServiceUnavailable:
		return "overloaded_error"
	case status >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}

// anthropicTypeForOpenAI maps an OpenAI error with no status (a stream's
// error event) by its type and code.
func anthropicTypeForOpenAI(typ, code []byte) string {
	switch {
	case isAnthropicErrorType(typ):
		return string(typ)
	case string(code) == "rate_limit_exceeded" || string(typ) == "requests" || string(typ) == "tokens" || string(typ) == "rate_limit_error":
		return "rate_limit_error"
	case string(typ) == "invalid_request_error":
		return "invalid_request_error"
	}
	return "api_error"
}

// openAITypeForStatus names an OpenAI error type when the upstream gave none.
func openAITypeForStatus(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// overflowMarkers are phrases by which providers say a prompt does not fit the
// model's context. The gateway looks for the first four in an error body to
// fail over; "exceed context limit" is Anthropic's wording when input plus
// max_tokens is too long, which translation marks with the first one.
var overflowMarkers = [...]string{
	"context_length_exceeded", "prompt is too long", "maximum context length", "context window",
	"exceed context limit",
}

// IsContextOverflow reports whether an error answer says the prompt is too long
// for the model (another model may take it): a 413, or a body with one of the
// providers' phrases for it. It holds for a translated body whenever it held
// for the upstream's.
func IsContextOverflow(status int, body []byte) bool {
	if status == http.StatusRequestEntityTooLarge {
		return true
	}
	for _, m := range overflowMarkers {
		if bytes.Contains(body, []byte(m)) {
			return true
		}
	}
	return false
}

// errorFields is the neutral error: what an error answer or a stream's
// error event says, whichever API shaped it, as raw JSON values (message
// is a string token; typ and code the contents of string tokens, nil:
// none; param a JSON value, nil: none), and the status it came with (0:
// none, as inside a stream).
type errorFields struct {
	typ, message, code, param []byte
	status                    int
}

// parseError reads an error body in either API's shape: Anthropic's
// {"type":"error","error":{"type","message"}}, OpenAI's {"error":{"message",
// "type","param","code"}}, Google's {"error":{"code","message","status"}}
// (maybe inside a one-element array), or the looser {"error":"text"} and {"message":...}
// some servers send. A body that is none of these gives its own text as the
// message, at most maxErrorText bytes of it; an empty one, its status.
func parseError(status int, body []byte) errorFields {
	f := errorFields{status: status}
	v, ok := jsonscan.Valid(body)
	if ok && isArray(v) {
		// Google's errors may come as a one-element array.
		elems := jsonscan.ElementsOf(v)
		if e, ok := elems.Next(); ok {
			v = e
		}
	}
	if ok && isObject(v) {
		top := jsonscan.MembersOf(v)
		for k, val, ok := top.Next(); ok; k, val, ok = top.Next() {
			switch string(k) {
			case "error":
				if isString(val) && !isEmptyString(val) {
					f.message = val
					continue
				}
				if !isObject(val) {
					continue
				}
				inner := jsonscan.MembersOf(val)
				for k, val, ok := inner.Next(); ok; k, val, ok = inner.Next() {
					switch string(k) {
					case "type":
						if isString(val) && !isEmptyString(val) {
							f.typ = val[1 : len(val)-1]
						}
					case "message":
						if isString(val) && !isEmptyString(val) {
							f.message = val
						}
					case "code":
						if isString(val) && !isEmptyString(val) {
							f.code = val[1 : len(val)-1]
						}
					case "param":
						if isString(val) {
							f.param = val
						}
					}
				}
			case "message":
				if f.message == nil && isString(val) && !isEmptyString(val) {
					f.message = val
				}
			}
		}
		if f.message != nil {
			return f
		}
	}
	text := bytes.TrimSpace(body)
	if len(text) > maxErrorText {
		text = text[:maxErrorText] // a character cut in two becomes U+FFFD
	}
	if len(text) == 0 {
		text = []byte(strings.TrimSpace("upstream answered "+strconv.Itoa(status)+" "+http.StatusText(status)) + " with no body")
	}
	f.message = jsonscan.AppendString(nil, text)
	return f
}

// maxErrorText bounds the text of an error body that is not JSON (an HTML
// page from a proxy, say) carried into a translated error.
const maxErrorText = 1024

// TranslateError turns an upstream's error answer (any non-2xx body) of
// format upstream into the error shape of the client's format, for the
// same status: the body is read into the neutral error (parseError reads
// every provider's shape) and written from it. When both speak the same
// error shape (OpenAI's for Chat Completions and Responses) the body is
// the upstream's, untouched.
//
// Into OpenAI's {"error":{"message","type","param","code"}}: the message
// is the upstream's, byte for byte; the type the upstream's (Anthropic's
// as it was: OpenAI clients read the status), else one for the status;
// param and code as the body gave them, else code is
// "context_length_exceeded" when the message says the prompt is too long.
//
// Into Anthropic's {"type":"error","error":{"type","message"}}: the type is
// one of Anthropic's eight, the one Anthropic uses for the status (401
// authentication_error, 429 rate_limit_error, 503 and 529
// overloaded_error, ...), or the upstream's own where the status says only
// invalid_request_error or api_error and the upstream named one of the
// eight; when only the code said the context overflowed, the code is added
// to the message in parentheses so the overflow stays recognisable.
func TranslateError(upstream Format, status int, body []byte, client Format) []byte {
	if errorShape(upstream) == errorShape(client) {
		return body
	}
	e := parseError(status, body)
	if client == Messages {
		return appendAnthropicError(make([]byte, 0, len(e.message)+64), anthropicTypeFor(e.status, e.typ), e)
	}
	typ := e.typ
	if typ == nil {
		typ = []byte(openAITypeForStatus(e.status))
	}
	out := make([]byte, 0, len(e.message)+128)
	return append(appendChatError(out, e.message, typ, e.param, e.code), '}')
}

// errorShape names the error shape a format's answers come in: OpenAI's
// two APIs share one; every other format has its own.
func errorShape(f Format) Format {
	if f == Responses {
		return Chat
	}
	return f
}

// appendChatError writes OpenAI's error object up to its last brace,
// {"error":{"message","type","param","code"} (the caller closes it):
// message is a JSON string token, typ and code are the contents of string
// tokens as they came (so never escaped twice), param is a JSON value or nil
// for null. A nil code is "context_length_exceeded" when the message says the
// prompt is too long, else null.
func appendChatError(out, message, typ, param, code []byte) []byte {
	out = append(out, `{"error":{"message":`...)
	out = append(out, message...)
	out = append(out, `,"type":"`...)
	out = append(out, typ...)
	out = append(out, `","param":`...)
	if param != nil {
		out = append(out, param...)
	} else {
		out = append(out, "null"...)
	}
	out = append(out, `,"code":`...)
	switch {
	case code != nil:
		out = append(out, '"')
		out = append(out, code...)
		out = append(out, '"')
	case IsContextOverflow(0, message):
		out = append(out, `"context_length_exceeded"`...)
	default:
		out = append(out, "null"...)
	}
	return append(out, '}')
}

// anthropicTypeFor is the Anthropic type of an error of status whose body
// named typ (raw string contents, nil: none). The status decides (OpenAI
// says invalid_request_error for a bad key); where it only gives the
// generic type, an upstream that already speaks Anthropic's vocabulary
// keeps its own word.
func anthropicTypeFor(status int, typ []byte) string {
	t := AnthropicErrorType(status)
	if (t == "invalid_request_error" || t == "api_error") && isAnthropicErrorType(typ) {
		return string(typ)
	}
	return t
}

func appendAnthropicError(out []byte, typ string, f errorFields) []byte {
	out = append(out, `{"type":"error","error":{"type":`...)
	out = jsonscan.AppendString(out, typ)
	out = append(out, `,"message":`...)
	if string(f.code) == "context_length_exceeded" && !IsContextOverflow(0, f.message) {
		out = append(out, f.message[:len(f.message)-1]...)
		out = append(out, ` (context_length_exceeded)"`...)
	} else {
		out = append(out, f.message...)
	}
	return append(out, "}}"...)
}

// StreamErrorEvent is the event that ends a stream of format f with an error,
// for the gateway's own mid-stream failures (an upstream cut after the first
// byte, a total timeout): OpenAI's data: {"error":{...}} (type
// "upstream_error", code "stream_interrupted"), Anthropic's event: error
// (type "api_error"), or the Responses API's event: error (code
// "stream_interrupted"). The SDKs raise each as an API error.
func StreamErrorEvent(f Format, message string) []byte {
	if f == Responses {
		// The Responses API's error event (type, code, message, param), with
		// the same as an error object, which the OpenAI SDKs raise on.
		msg := jsonscan.AppendString(nil, message)
		out := append([]byte(nil), `event: error`+"\n"+`data: {"type":"error","code":"stream_interrupted","message":`...)
		out = append(out, msg...)
		out = append(out, `,"param":null,"error":{"message":`...)
		out = append(out, msg...)
		return append(out, `,"type":"upstream_error","param":null,"code":"stream_interrupted"}}`+"\n\n"...)
	}
	if f == Messages {
		out := append([]byte(nil), "event: error\ndata: "...)
		out = appendAnthropicError(out, "api_error", errorFields{message: jsonscan.AppendString(nil, message)})
		return append(out, "\n\n"...)
	}
	out := append([]byte(nil), `data: {"error":{"message":`...)
	out = jsonscan.AppendString(out, message)
	return append(out, `,"type":"upstream_error","param":null,"code":"stream_interrupted"}}`+"\n\n"...)
}
