package upstream

import (
	"net/http"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/config"
)

// HostError is a host's error answer read the failure model's way: the
// status it stands for, its error.type (internal/fault), and how long the
// host asked to be left alone when its body says so.
type HostError struct {
	// Status is the HTTP status the failure model reads: the answer's,
	// except where a host says in its own words what another status says
	// (Bedrock's ServiceQuotaExceededException is a 400 that is a rate
	// limit: 429; its ModelErrorException and ModelStreamErrorException
	// are 424s that are the model's failure: 502).
	Status int
	// ErrorType is fault.OfAnswerScoped's verdict for Status.
	ErrorType string
	// TargetOnly: a disabling ErrorType concerns the (provider, upstream
	// model) target only (an AccessDeniedException: the type cannot tell
	// a key refused everything from a key refused this model).
	TargetOnly bool
	// RetryAfter is Google's RetryInfo.retryDelay (0: none); Retry-After
	// and retry-after-ms headers are read by the caller as for any host.
	RetryAfter time.Duration
	// ContextOverflow: the host says the prompt does not fit the model
	// (Bedrock's "too long" ValidationException); another target's window
	// may be larger.
	ContextOverflow bool
}

// bedrockStatus is the status each Bedrock error type stands for, where
// it differs from the one it comes with.
var bedrockStatus = map[string]int{
	"ThrottlingException":           http.StatusTooManyRequests,
	"ServiceQuotaExceededException": http.StatusTooManyRequests,
	"ModelNotReadyException":        http.StatusServiceUnavailable,
	"ModelTimeoutException":         http.StatusGatewayTimeout,
	"ServiceUnavailableException":   http.StatusServiceUnavailable,
	"InternalServerException":       http.StatusInternalServerError,
	"ModelErrorException":           http.StatusBadGateway,
	"ModelStreamErrorException":     http.StatusBadGateway,
}

// JudgeError reads an error answer of h's host: status, headers and the
// start of its body.
func (h *Host) JudgeError(status int, header http.Header, body []byte) HostError {
	e := HostError{Status: status}
	var awsType string
	switch h.kind {
	case config.KindBedrock:
		awsType = fault.AnswerType(header.Get("X-Amzn-Errortype"), body)
		if s, ok := bedrockStatus[awsType]; ok {
			e.Status = s
		}
		if awsType == "ValidationException" && bedrockTooLong(body) {
			e.ContextOverflow = true
		}
	case config.KindVertex, config.KindGemini:
		e.RetryAfter = fault.RetryDelay(body)
	}
	e.ErrorType, e.TargetOnly = fault.OfAnswerScoped(e.Status, awsType, body)
	return e
}

// bedrockTooLong reports whether a ValidationException says the input is
// too long for the model. The message is read only to tell a context
// overflow (which fails over, against no one) from other validation
// errors (the caller's): no verdict against a provider rests on it.
func bedrockTooLong(body []byte) bool {
	s := string(body)
	return strings.Contains(s, "too long") || strings.Contains(s, "Input is too long") || strings.Contains(s, "too many input tokens")
}

// StreamExceptionVerdict is what an event-stream exception (its
// :exception-type in lowerCamelCase, as Bedrock writes it) says, read as
// the same error answered before the stream: its status and error.type (a
// throttling one is a rate limit, a validation one the caller's, a refused
// credential auth as its 403 answer would be, anything else the
// provider's fault) and whether a disabling verdict concerns the target
// only (accessDeniedException).
func StreamExceptionVerdict(typ string) (status int, errorType string, targetOnly bool) {
	switch strings.ToLower(strings.TrimSuffix(typ, "Exception")) {
	case "throttling", "servicequotaexceeded":
		return http.StatusTooManyRequests, "429", false
	case "validation":
		return http.StatusBadRequest, "400", false
	case "accessdenied":
		return http.StatusForbidden, fault.ErrorAuth, true
	case "unrecognizedclient", "expiredtoken", "invalidsignature":
		return http.StatusForbidden, fault.ErrorAuth, false
	}
	return http.StatusBadGateway, "502", false
}
