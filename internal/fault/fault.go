// Package fault is the failure model: what an attempt's end says about its
// provider. The request path classifies each attempt once, where it ends,
// and puts the verdict on the attempt span; the circuit breaker, the
// collector's statistics, every routing mode and the metrics read that one
// verdict. Both the router and the collector import it; it imports neither,
// and knows nothing of HTTP handling, spans or routing beyond the verdict.
package fault

import "strconv"

// The failure model: what an attempt's end says about its provider. It is
// decided once, by Classify, where the attempt ends; the pipeline puts the
// result on the attempt span (KeyFault, next to error.type and the span's
// duration), and the breaker, the tracker's statistics, every routing mode
// and the metrics read it from there. Nothing else decides what a fault is.

// Fault is how much an attempt's end counts against its provider.
type Fault uint8

const (
	// None: a success, or an end that says nothing against the
	// provider (the client's own 4xx, a context-length overflow, a client
	// that went away, the gateway's own answer buffers full).
	None Fault = iota
	// Half: the provider's own 400 or 422. It may be the request's
	// fault as much as the provider's, so it weighs half in a fault rate
	// and never opens a circuit.
	Half
	// Full: a provider fault: a transport error, a first-byte, idle
	// (stall) or total timeout, 408, 429, 5xx (529 included), a credential
	// or quota failure (auth, quota), a model the key may not use
	// (model_access), an endpoint that does not exist (config), an
	// unusable 2xx (a unary body that is not valid JSON or is larger than
	// limits.max_response), or a broken stream.
	Full
)

// Weight is the fault's weight in a fault rate: 0, 0.5 or 1.
func (f Fault) Weight() float64 {
	switch f {
	case Full:
		return 1
	case Half:
		return 0.5
	}
	return 0
}

// String is the value of KeyFault.
func (f Fault) String() string {
	switch f {
	case Full:
		return "full"
	case Half:
		return "half"
	}
	return "none"
}

// Parse reads a KeyFault value.
func Parse(s string) (Fault, bool) {
	switch s {
	case "none":
		return None, true
	case "half":
		return Half, true
	case "full":
		return Full, true
	}
	return None, false
}

// error.type values of attempts that did not end with a usable HTTP status
// (an HTTP failure's error.type is its status code, e.g. "503").
const (
	ErrorTimeout            = "timeout"                 // first-byte or total timeout
	ErrorTransport          = "transport"               // connection refused, reset, closed before an answer
	ErrorInvalidResponse    = "invalid_response"        // a 2xx unary body that is not valid JSON, or a 1xx/3xx
	ErrorResponseTooLarge   = "response_too_large"      // a unary answer over limits.max_response
	ErrorResponseBufferFull = "response_buffer_full"    // limits.max_buffered, shared by every request, was spent: the gateway's own memory pressure
	ErrorStreamBroken       = "broken_stream"           // a stream cut, unterminated or malformed, or not a stream at all
	ErrorStall              = "stall"                   // a stream paused longer than timeout.idle after its first byte
	ErrorAuth               = "auth"                    // the provider refused the gateway's credential (401, a 403 coded so)
	ErrorQuota              = "quota"                   // the provider's account has no credit or quota left (402, insufficient_quota, a credit-balance 400)
	ErrorModelAccess        = "model_access"            // the provider refused the key this upstream model (a 403 or 404 coded model_not_found)
	ErrorConfig             = "config"                  // the endpoint does not exist where it was called (a 404 or 405 that is not model_not_found): a wrong base_url
	ErrorContextOverflow    = "context_length_exceeded" // the provider's own context window was too small
	// ErrorPreviousResponseNotFound: the account does not hold the stored
	// response a Responses request continues (previous_response_id); another
	// account may. Not the provider's fault.
	ErrorPreviousResponseNotFound = "previous_response_not_found"
	ErrorCanceled                 = "canceled"   // the client went away first
	ErrorHedgeLost                = "hedge_lost" // another attempt of the request answered first; this one was cancelled
)

// Exception class names the official OpenAI and Anthropic SDKs report as
// error.type on spans of applications that call providers directly.
const (
	sdkRateLimit         = "RateLimitError"
	sdkInternalServer    = "InternalServerError"
	sdkConnection        = "APIConnectionError"
	sdkConnectionTimeout = "APIConnectionTimeoutError"
	sdkOverloaded        = "OverloadedError"
	sdkServiceUnavail    = "ServiceUnavailableError"
	sdkTimeout           = "APITimeoutError"
)

// Classify is the failure model. status is the upstream HTTP status (0
// when there was none), errorType the attempt's error.type ("" on success).
// An error.type that names what happened wins over the status (a 200 whose
// body was invalid is a fault); otherwise the status decides.
func Classify(status int, errorType string) Fault {
	switch errorType {
	case ErrorTimeout, ErrorTransport, ErrorInvalidResponse, ErrorResponseTooLarge, ErrorStreamBroken,
		ErrorStall, ErrorAuth, ErrorQuota, ErrorModelAccess, ErrorConfig,
		sdkRateLimit, sdkInternalServer, sdkConnection, sdkConnectionTimeout, sdkOverloaded, sdkServiceUnavail, sdkTimeout:
		if status == 0 || errorType[0] < 'A' || errorType[0] > 'Z' {
			return Full
		}
		// An SDK class name with a status: the status is the better witness.
	case ErrorContextOverflow, ErrorPreviousResponseNotFound, ErrorCanceled, ErrorResponseBufferFull, ErrorHedgeLost:
		return None
	}
	switch {
	case status == 408 || status == 429 || status >= 500 && status <= 599:
		return Full
	case status == 400 || status == 422:
		return Half
	case status >= 100 && status < 200, status >= 300 && status < 400:
		return Full // nothing a client could use
	}
	if status == 0 && errorType != "" {
		if n, err := strconv.Atoi(errorType); err == nil {
			return Classify(n, "")
		}
	}
	return None
}

// IsTimeout reports whether errorType says the attempt ran out of time (the
// cost ewma-latency counts as a sample).
func IsTimeout(errorType string) bool {
	return errorType == ErrorTimeout || errorType == sdkConnectionTimeout || errorType == sdkTimeout
}
