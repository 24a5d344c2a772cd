package upstream

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

// RateSignal is an answer's rate-limit headers, as instants.
type RateSignal struct {
	RetryAt time.Time // Retry-After or retry-after-ms; zero when absent
	// Exhausted is the latest reset of a limit the answer says has nothing
	// remaining; zero when none is at 0 (or its reset is unknown).
	Exhausted time.Time
	// Reset is the earliest reset of any limit; zero when none is given.
	Reset time.Time
	// Requests is what remains of the request limit (-1: not said), until
	// RequestsReset.
	Requests      int64
	RequestsReset time.Time
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

// ReadRateSignal reads h's rate-limit headers as of now.
func ReadRateSignal(h http.Header, now time.Time) RateSignal {
	s := RateSignal{Requests: -1}
	if v := HeaderValue(h, "Retry-After-Ms"); v != "" {
		if ms, ok := positiveNumber(v); ok {
			s.RetryAt = now.Add(seconds(ms / 1000))
		}
	}
	if v := HeaderValue(h, "Retry-After"); v != "" && s.RetryAt.IsZero() {
		if sec, ok := positiveNumber(v); ok {
			s.RetryAt = now.Add(seconds(sec))
		} else if t, err := http.ParseTime(v); err == nil && t.After(now) {
			s.RetryAt = t
		}
	}
	for k, hs := range limitHeaders {
		rv := HeaderValue(h, hs[1])
		if rv == "" {
			continue
		}
		at, ok := parseReset(rv, now)
		if !ok {
			continue
		}
		if s.Reset.IsZero() || at.Before(s.Reset) {
			s.Reset = at
		}
		n, err := strconv.ParseInt(strings.TrimSpace(HeaderValue(h, hs[0])), 10, 64)
		if err != nil {
			continue
		}
		if n <= 0 && at.After(s.Exhausted) {
			s.Exhausted = at
		}
		if k == requestLimitOpenAI || k == requestLimitAnthropic {
			s.Requests, s.RequestsReset = max(n, 0), at
		}
	}
	return s
}

// HeaderValue is h.Get(key) for a key already in canonical form: what
// Get does but canonicalizing the key on every call, which cost about a
// thousand instructions for each of the ten headers every answer is read
// for (8 % of the gateway's instructions per request, callgrind).
func HeaderValue(h http.Header, key string) string {
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

// RefusedUntil is how long a refusal (a 429, or a 503/529 that says when to
// come back) keeps the provider away: its Retry-After when it gives one;
// else the reset of a limit it says is spent; else the earliest reset it
// gives; zero when it says nothing of when.
func (s RateSignal) RefusedUntil() time.Time {
	switch {
	case !s.RetryAt.IsZero():
		return s.RetryAt
	case !s.Exhausted.IsZero():
		return s.Exhausted
	}
	return s.Reset
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

// positiveNumber reads a delay as providers write one: ASCII digits,
// optionally a '.' and more digits ("120", "1.5"), spaces around. Nothing
// else: no sign, exponent, hex, underscore, Inf or NaN (strconv.ParseFloat
// reads "0x1p4" as 16 and "Inf" as infinity; ParseInt with base 0 reads
// "1_0" as 10), because no provider means those, and a value the gateway
// could not have meant must not cool a target or reach a client.
func positiveNumber(v string) (float64, bool) {
	v = strings.TrimSpace(v)
	if !decimalDigits(v) {
		return 0, false
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(n, 0) { // more digits than a float64 holds
		return 0, false
	}
	return n, true
}

// decimalDigits reports whether v is digits, or digits '.' digits.
func decimalDigits(v string) bool {
	digits, dot := 0, -1
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && dot < 0:
			dot = i
		default:
			return false
		}
	}
	return digits > 0 && dot != 0 && dot != len(v)-1
}

// RelayedRetryAfter is the Retry-After a client is given for the
// upstream's v: what the gateway read of it, written canonically (whole
// seconds, rounded up; an HTTP date in the IMF-fixdate form), or "" when
// it read nothing: garbage is never relayed. A v already canonical comes
// back as it is, without an allocation.
func RelayedRetryAfter(v string) string {
	if sec, ok := positiveNumber(v); ok {
		if canonicalCount(v, 7) { // under 10^7 s: far below the year it is capped at
			return v
		}
		return strconv.FormatInt(int64(math.Ceil(min(sec, maxRelayedSeconds))), 10)
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.UTC().Format(http.TimeFormat)
	}
	return ""
}

// RelayedRetryAfterMs is RelayedRetryAfter for retry-after-ms, a number
// of milliseconds: whole ones, rounded up.
func RelayedRetryAfterMs(v string) string {
	ms, ok := positiveNumber(v)
	if !ok {
		return ""
	}
	if canonicalCount(v, 10) { // under 10^10 ms: far below a year
		return v
	}
	return strconv.FormatInt(int64(math.Ceil(min(ms, maxRelayedSeconds*1000))), 10)
}

// maxRelayedSeconds bounds a relayed delay (a year): no client is told to
// wait longer, and no count overflows.
const maxRelayedSeconds = 365 * 24 * 3600

// canonicalCount reports whether v is a whole number as FormatInt writes
// it (digits, no leading zero), of at most most digits.
func canonicalCount(v string, most int) bool {
	if v == "" || len(v) > most || (v[0] == '0' && len(v) > 1) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// seconds is n seconds as a Duration, saturating far beyond any cooldown.
func seconds(n float64) time.Duration {
	const most = float64(100 * 365 * 24 * time.Hour)
	return time.Duration(min(n*float64(time.Second), most))
}
