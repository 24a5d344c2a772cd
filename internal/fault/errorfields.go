package fault

import (
	"bytes"
	"encoding/json"
	"strings"
)

// errorFields are the structured fields of a provider's error body: the
// codes and types each host documents, which name what went wrong from a
// fixed vocabulary, unlike the message, which may quote the request.
//
//	OpenAI and compatible hosts: {"error":{"code":"insufficient_quota","type":"insufficient_quota","message":...}}
//	Anthropic:                   {"type":"error","error":{"type":"authentication_error","message":...}}
//	Google (Gemini, Vertex):     {"error":{"code":403,"status":"PERMISSION_DENIED","details":[{"@type":"...ErrorInfo","reason":"API_KEY_INVALID"}]}}
//	Bedrock:                     {"__type":"AccessDeniedException","message":...} (also its X-Amzn-ErrorType header)
type errorFields struct {
	code, typ string // error.code (when a string), error.type
	status    string // Google's error.status
	reasons   []string
	awsType   string // Bedrock's __type (or X-Amzn-ErrorType), without its namespace
	// retryDelay is Google's RetryInfo.retryDelay ("30s", "1.5s").
	retryDelay string
	// message is read for one thing only: Anthropic's documented prefix
	// of a model-not-found error ("model: NAME", the model the gateway
	// itself sent) and its credit-balance sentence (isCreditBalance).
	message string
}

// readErrorFields reads body's structured error fields; a body that is not
// a JSON object (an HTML page, text, a cut-short prefix) has none.
func readErrorFields(body []byte) errorFields {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		AWSType string          `json:"__type"`
	}
	var e errorFields
	body = unwrapArray(body)
	if json.Unmarshal(body, &doc) != nil {
		return e
	}
	e.awsType = doc.AWSType[strings.LastIndexByte(doc.AWSType, '#')+1:]
	var inner struct {
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Details []struct {
			Type       string `json:"@type"`
			Reason     string `json:"reason"`
			RetryDelay string `json:"retryDelay"`
		} `json:"details"`
	}
	if len(doc.Error) == 0 || doc.Error[0] != '{' || json.Unmarshal(doc.Error, &inner) != nil {
		return e
	}
	_ = json.Unmarshal(inner.Code, &e.code) // a string code; Google's is the HTTP status, a number
	e.typ, e.status, e.message = inner.Type, inner.Status, inner.Message
	for _, d := range inner.Details {
		if d.Reason != "" {
			e.reasons = append(e.reasons, d.Reason)
		}
		if strings.HasSuffix(d.Type, ".RetryInfo") {
			e.retryDelay = d.RetryDelay
		}
	}
	return e
}

// unwrapArray is the one element of a JSON array around an error:
// Google's APIs answer a streaming call made without alt=sse with
// [{"error":{...}}]. Anything else is body as it is.
func unwrapArray(body []byte) []byte {
	t := bytes.TrimSpace(body)
	if len(t) < 2 || t[0] != '[' {
		return body
	}
	var arr []json.RawMessage
	if json.Unmarshal(t, &arr) != nil || len(arr) == 0 {
		return body
	}
	return arr[0]
}

// scope is what an error's structured fields say is refused: the key or
// account, its money, or this model for this key.
type scope uint8

const (
	scopeNone  scope = iota // nothing about the key: the request's own error
	scopeKey                // the key or account is refused
	scopeQuota              // the account cannot pay
	// scopeKeyForTarget: the key is refused what the request asked for
	// (Bedrock's AccessDeniedException, Anthropic's permission_error):
	// a credential failure, but its type alone cannot tell a key refused
	// everything from a key refused this model, so only the (provider,
	// upstream model) target is judged.
	scopeKeyForTarget
	scopeModel // this key may not use this model, or it does not exist
)

// codeScopes are the codes, types, statuses and reasons that name a
// scope, from every host's documentation; one vocabulary, as the hosts do
// not reuse each other's words for different things.
var codeScopes = map[string]scope{
	// OpenAI and OpenAI-compatible hosts
	"invalid_api_key":                      scopeKey,
	"account_deactivated":                  scopeKey,
	"unsupported_country_region_territory": scopeKey,
	"insufficient_quota":                   scopeQuota,
	"model_not_found":                      scopeModel,
	// Anthropic (and hosts that copy its types)
	"authentication_error": scopeKey,
	"billing_error":        scopeQuota,
	"permission_error":     scopeKeyForTarget,
	// Google: error.status and ErrorInfo reasons
	"UNAUTHENTICATED":         scopeKey,
	"PERMISSION_DENIED":       scopeKey,
	"API_KEY_INVALID":         scopeKey,
	"API_KEY_SERVICE_BLOCKED": scopeKey,
	"CONSUMER_SUSPENDED":      scopeKey,
	"BILLING_DISABLED":        scopeQuota,
	// Bedrock's __type (X-Amzn-ErrorType)
	"UnrecognizedClientException":         scopeKey,
	"InvalidSignatureException":           scopeKey,
	"ExpiredTokenException":               scopeKey,
	"MissingAuthenticationTokenException": scopeKey,
	"AccessDeniedException":               scopeKeyForTarget,
}

// scope is the widest scope any of e's fields names (a key refused beats
// a model refused: disabling the provider is the verdict to trust then).
func (e *errorFields) scope() scope {
	s := scopeNone
	widen := func(v string) {
		if v == "" {
			return
		}
		if w, ok := codeScopes[v]; ok && (s == scopeNone || w < s) {
			s = w
		}
	}
	widen(e.code)
	widen(e.typ)
	widen(e.status)
	widen(e.awsType)
	for _, r := range e.reasons {
		widen(r)
	}
	if s == scopeNone && e.typ == "not_found_error" && strings.HasPrefix(e.message, "model:") {
		s = scopeModel // Anthropic's model-not-found: "model: claude-..."
	}
	return s
}
