package router

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// What a provider's answer says about its rate limits, read from its
// headers by one parser. The spellings:
//
//	Retry-After: 120 | Fri, 31 Dec 2027 23:59:59 GMT     (seconds, or an HTTP date)
//	retry-after-ms: 1500                                  (OpenAI, Azure)
//	x-ratelimit-remaining-requests: 0                     (OpenAI, Groq, Together, Fireworks, ...)
//	x-ratelimit-reset-requests: 1s | 6m0s | 20ms | 60     (a Go-style duration, or seconds)
//	x-ratelimit-remaining-tokens / x-ratelimit-reset-tokens
//	anthropic-ratelimit-requests-remaining: 0
//	anthropic-ratelimit-requests-reset: 2026-12-01T12:00:00Z  (RFC 3339)
//	anthropic-ratelimit-{tokens,input-tokens,output-tokens}-{remaining,reset}
//
// A value that is none of these (garbage, negative, not finite) is
// ignored, never an error.

// rateSignal is an answer's rate-limit headers, as instants.
type rateSignal struct {
	retryAt time.Time // Retry-After or retry-after-ms; zero when absent
	// exhausted is the latest reset of a limit the answer says has nothing
	// remaining; zero when none is at 0 (or its reset is unknown).
	exhausted time.Time
	// reset is the earliest reset of any limit; zero when none is given.
	reset time.Time
	// requests is what remains of the request limit (-1: not said), until
	// requestsReset.
	requests      int64
	requestsReset time.Time
}

// limitHeaders pairs each provider's remaining and reset headers, spelled
// canonically: they are read by map index (headerValue), not h.Get.
var limitHeaders = [][2]string{
	{"X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"},
	{"X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"},
	{"Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"},
	{"Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"},
	{"Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset"},
	{"Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset"},
}

// readRateSignal reads h's rate-limit headers as of now.
func readRateSignal(h http.Header, now time.Time) rateSignal {
	s := rateSignal{requests: -1}
	if v := headerValue(h, "Retry-After-Ms"); v != "" {
		if ms, ok := positiveNumber(v); ok {
			s.retryAt = now.Add(seconds(ms / 1000))
		}
	}
	if v := headerValue(h, "Retry-After"); v != "" && s.retryAt.IsZero() {
		if sec, ok := positiveNumber(v); ok {
			s.retryAt = now.Add(seconds(sec))
		} else if t, err := http.ParseTime(v); err == nil && t.After(now) {
			s.retryAt = t
		}
	}
	for k, hs := range limitHeaders {
		rv := headerValue(h, hs[1])
		if rv == "" {
			continue
		}
		at, ok := parseReset(rv, now)
		if !ok {
			continue
		}
		if s.reset.IsZero() || at.Before(s.reset) {
			s.reset = at
		}
		n, err := strconv.ParseInt(strings.TrimSpace(headerValue(h, hs[0])), 10, 64)
		if err != nil {
			continue
		}
		if n <= 0 && at.After(s.exhausted) {
			s.exhausted = at
		}
		if k == requestLimitOpenAI || k == requestLimitAnthropic {
			s.requests, s.requestsReset = max(n, 0), at
		}
	}
	return s
}

// headerValue is h.Get(key) for a key already in canonical form: what
// Get does but canonicalizing the key on every call, which cost about a
// thousand instructions for each of the ten headers every answer is read
// for (8 % of the gateway's instructions per request, callgrind).
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// The request limits among limitHeaders (the others count tokens).
const (
	requestLimitOpenAI    = 0
	requestLimitAnthropic = 2
)

// refusedUntil is how long a refusal (a 429, or a 503/529 that says when to
// come back) keeps the provider away: its Retry-After when it gives one;
// else the reset of a limit it says is spent; else the earliest reset it
// gives; zero when it says nothing of when.
func (s rateSignal) refusedUntil() time.Time {
	switch {
	case !s.retryAt.IsZero():
		return s.retryAt
	case !s.exhausted.IsZero():
		return s.exhausted
	}
	return s.reset
}

// parseReset reads a reset header's value: a Go-style duration ("1s",
// "6m0s", "20ms"), a number of seconds ("60"; a number past a billion is a
// Unix time in seconds), or an RFC 3339 instant; an instant already past
// is ignored.
func parseReset(v string, now time.Time) (time.Time, bool) {
	v = strings.TrimSpace(v)
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return time.Time{}, false
		}
		return now.Add(d), true
	}
	var t time.Time
	if n, ok := positiveNumber(v); ok {
		if n <= 1e9 {
			return now.Add(seconds(n)), true
		}
		t = time.Unix(0, 0).Add(seconds(n))
	} else if p, err := time.Parse(time.RFC3339, v); err == nil {
		t = p
	}
	if !t.After(now) { // unreadable, or already past: nothing to wait for
		return time.Time{}, false
	}
	return t, true
}

// positiveNumber reads a finite number that is not negative.
func positiveNumber(v string) (float64, bool) {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, false
	}
	return n, true
}

// seconds is n seconds as a Duration, saturating far beyond any cooldown.
func seconds(n float64) time.Duration {
	const most = float64(100 * 365 * 24 * time.Hour)
	return time.Duration(min(n*float64(time.Second), most))
}
