package fault

import (
	"bytes"
	"strconv"
)

// OfAnswer is the error.type of an upstream's HTTP error answer, from its
// status and (the start of) its body: a credential the provider refuses
// (401, 403) is ErrorAuth; an account out of credit or quota (402,
// OpenAI's insufficient_quota, whatever the status, Anthropic's
// credit-balance 400) is ErrorQuota; anything else is the status code.
// Both are the provider account's problem, not the request's: the target
// is disabled until a probe succeeds.
func OfAnswer(status int, body []byte) string {
	switch {
	case status == 401 || status == 403:
		return ErrorAuth
	case status == 402:
		return ErrorQuota
	case (status == 429 || status == 400 || status == 403) && quotaExhausted(body):
		return ErrorQuota
	}
	return strconv.Itoa(status)
}

// quotaMarkers are what providers' errors say when an account cannot pay:
// OpenAI's code and type "insufficient_quota", Anthropic's "Your credit
// balance is too low to access the Anthropic API".
var quotaMarkers = [][]byte{[]byte("insufficient_quota"), []byte("credit balance is too low")}

func quotaExhausted(body []byte) bool {
	for _, m := range quotaMarkers {
		if bytes.Contains(body, m) {
			return true
		}
	}
	return false
}

// Disabling reports whether errorType disables a target: the provider
// refuses its credential, or its account cannot pay.
func Disabling(errorType string) bool { return errorType == ErrorAuth || errorType == ErrorQuota }
