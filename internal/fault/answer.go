package fault

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// OfAnswer is the error.type of an upstream's HTTP error answer, from its
// status and (the start of) its body. Only the status and the error's
// structured fields decide (errorFields: OpenAI's error.code and
// error.type, Anthropic's error.type, Google's error.status and
// ErrorInfo reasons, Bedrock's __type); never the free text of a message,
// which may quote the request, so no client can write its way into a
// verdict that disables a provider for everyone.
//
//   - ErrorAuth: a 401, or a 400 or 403 coded as a refused key or account
//     (invalid_api_key, authentication_error, API_KEY_INVALID, ...).
//     Key-level: the provider is disabled. A 403 coded as the key refused
//     what the request asked for (Bedrock's AccessDeniedException,
//     Anthropic's permission_error) is ErrorAuth too, but its type cannot
//     tell a key refused everything from one refused this model: only the
//     target is disabled (OfAnswerScoped).
//   - ErrorQuota: a 402, an error coded as an account that cannot pay
//     (insufficient_quota, billing_error), or Anthropic's credit-balance
//     400 (isCreditBalance says what is trusted there). Key-level.
//   - ErrorModelAccess: a 403 or 404 coded as this key having no such
//     model (model_not_found, ...). The (provider, upstream model) target
//     is disabled; the provider's other models keep serving.
//   - ErrorConfig: a 404 or 405 that is not a model-not-found error: the
//     endpoint does not exist where the gateway called it (a base_url
//     without its version segment answers so, often with an HTML page).
//   - ErrorPreviousResponseNotFound: a 400 or 404 coded
//     previous_response_not_found: the account does not hold the stored
//     response the request continues, which another account may. Neither
//     a fault nor the caller's answer while another target may hold it.
//   - anything else is the status code: a 403 that says nothing coded
//     about the key (a content-policy refusal, an unknown shape) is the
//     caller's answer, as any other 4xx.
func OfAnswer(status int, body []byte) string {
	return OfAnswerTyped(status, "", body)
}

// OfAnswerTyped is OfAnswer for a host that names its error in a header:
// awsErrorType is Bedrock's X-Amzn-ErrorType (AWSErrorType reads it),
// which stands for the body's __type when that has none.
func OfAnswerTyped(status int, awsErrorType string, body []byte) string {
	t, _ := OfAnswerScoped(status, awsErrorType, body)
	return t
}

// OfAnswerScoped is OfAnswerTyped, and whether a disabling verdict
// concerns only the (provider, upstream model) target the answer came
// from: always for ErrorModelAccess (ModelScoped), and for an ErrorAuth
// whose code names a refusal of what the request asked for rather than of
// the key itself (AccessDeniedException, permission_error).
func OfAnswerScoped(status int, awsErrorType string, body []byte) (errorType string, targetOnly bool) {
	switch status {
	case 401:
		return ErrorAuth, false
	case 402:
		return ErrorQuota, false
	}
	if !NeedsBody(status) {
		return strconv.Itoa(status), false
	}
	e := readErrorFields(body)
	if e.awsType == "" {
		e.awsType = awsErrorType
	}
	switch scope := e.scope(); {
	case (status == 400 || status == 404) && e.code == codePreviousResponseNotFound:
		return ErrorPreviousResponseNotFound, false
	case scope == scopeQuota, status == 400 && e.isCreditBalance():
		return ErrorQuota, false
	case scope == scopeKey && (status == 400 || status == 403): // Google refuses a bad key with a 400
		return ErrorAuth, false
	case scope == scopeKeyForTarget && status == 403:
		return ErrorAuth, true
	case (status == 403 || status == 404) && scope == scopeModel:
		return ErrorModelAccess, true
	case status == 404 || status == 405:
		return ErrorConfig, false
	}
	return strconv.Itoa(status), false
}

// codePreviousResponseNotFound is OpenAI's error.code for a
// previous_response_id the account does not hold.
const codePreviousResponseNotFound = "previous_response_not_found"

// NeedsBody reports whether OfAnswer's verdict on status depends on the
// body: the answer must be read before it is judged.
func NeedsBody(status int) bool {
	switch status {
	case 400, 403, 404, 405, 429:
		return true
	}
	return false
}

// Disabling reports whether errorType disables a target: the provider
// refuses its credential, its account cannot pay, or it refuses the key
// the target's model (ModelScoped).
func Disabling(errorType string) bool {
	return errorType == ErrorAuth || errorType == ErrorQuota || errorType == ErrorModelAccess
}

// ModelScoped reports whether a disabling errorType concerns the
// (provider, upstream model) target it came from only, not the provider's
// other models.
func ModelScoped(errorType string) bool { return errorType == ErrorModelAccess }

// isCreditBalance reports whether e is Anthropic's credit-balance error: a
// 400 whose type is the generic invalid_request_error, so only its message
// tells it apart. The message is trusted only when it is, whole, one of
// the sentences Anthropic sends: an error that quotes the request (an
// unknown role, a bad field's value) always wraps the quoted text in its
// own words, so a client's "credit balance is too low" never makes the
// whole message. A rewording by Anthropic makes the error a plain 400
// (the caller's answer), never a disabled provider.
func (e *errorFields) isCreditBalance() bool {
	if e.typ != "invalid_request_error" {
		return false
	}
	msg := bytes.TrimSpace([]byte(e.message))
	for _, s := range creditBalanceMessages {
		if string(msg) == s {
			return true
		}
	}
	return false
}

// creditBalanceMessages are Anthropic's credit-balance sentences, whole.
var creditBalanceMessages = [...]string{
	"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
	"Your credit balance is too low to access the Claude API. Please go to Plans & Billing to upgrade or purchase credits.",
}

// AWSErrorType is the error type an AWS X-Amzn-ErrorType header (or a
// __type) names: "ThrottlingException:http://internal.amazon.com/..." and
// "com.amazon.bedrock#ThrottlingException" are ThrottlingException.
func AWSErrorType(v string) string {
	if i := strings.IndexByte(v, ':'); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v[strings.LastIndexByte(v, '#')+1:])
}

// AnswerType is the AWS error type of an answer: its X-Amzn-ErrorType
// header's, else its body's __type ("" when neither names one).
func AnswerType(header string, body []byte) string {
	if t := AWSErrorType(header); t != "" {
		return t
	}
	e := readErrorFields(body)
	return AWSErrorType(e.awsType)
}

// RetryDelay is the delay a Google error's RetryInfo asks for
// (RESOURCE_EXHAUSTED answers carry one): 0 when it has none or it does
// not parse. It is a google.protobuf.Duration in JSON: seconds with an
// optional fraction and an "s".
func RetryDelay(body []byte) time.Duration {
	s, ok := strings.CutSuffix(readErrorFields(body).retryDelay, "s")
	if !ok || s == "" {
		return 0
	}
	whole, frac, _ := strings.Cut(s, ".")
	secs, err := strconv.ParseUint(whole, 10, 32)
	if err != nil || len(frac) > 9 {
		return 0
	}
	d := time.Duration(secs) * time.Second
	if frac != "" {
		n, err := strconv.ParseUint(frac, 10, 32)
		if err != nil {
			return 0
		}
		for range 9 - len(frac) {
			n *= 10
		}
		d += time.Duration(n)
	}
	return d
}
