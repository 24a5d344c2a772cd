package upstream

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

var rlNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func TestReadRateSignal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                    string
		h                       http.Header
		retryAt, exhausted, rst time.Duration // from rlNow; -1: zero time
		refused                 time.Duration // RefusedUntil, -1: zero
	}{
		{"nothing", http.Header{}, -1, -1, -1, -1},
		{"Retry-After seconds", http.Header{"Retry-After": {"120"}}, 120 * time.Second, -1, -1, 120 * time.Second},
		{"Retry-After fractional", http.Header{"Retry-After": {" 1.5 "}}, 1500 * time.Millisecond, -1, -1, 1500 * time.Millisecond},
		{"Retry-After HTTP date", http.Header{"Retry-After": {"Tue, 01 Dec 2026 12:00:30 GMT"}}, 30 * time.Second, -1, -1, 30 * time.Second},
		{"Retry-After RFC 850 date", http.Header{"Retry-After": {"Tuesday, 01-Dec-26 12:01:00 GMT"}}, time.Minute, -1, -1, time.Minute},
		{"Retry-After date in the past", http.Header{"Retry-After": {"Tue, 01 Dec 2026 11:00:00 GMT"}}, -1, -1, -1, -1},
		{"Retry-After garbage", http.Header{"Retry-After": {"soon"}}, -1, -1, -1, -1},
		{"Retry-After negative", http.Header{"Retry-After": {"-5"}}, -1, -1, -1, -1},
		{"Retry-After NaN", http.Header{"Retry-After": {"NaN"}}, -1, -1, -1, -1},
		{"Retry-After Inf", http.Header{"Retry-After": {"+Inf"}}, -1, -1, -1, -1},
		{"Retry-After hex float", http.Header{"Retry-After": {"0x1p4"}}, -1, -1, -1, -1},
		{"Retry-After underscores", http.Header{"Retry-After": {"1_0"}}, -1, -1, -1, -1},
		{"Retry-After exponent", http.Header{"Retry-After": {"1e2"}}, -1, -1, -1, -1},
		{"Retry-After signed", http.Header{"Retry-After": {"+5"}}, -1, -1, -1, -1},
		{"Retry-After bare fraction", http.Header{"Retry-After": {".5"}}, -1, -1, -1, -1},
		{"Retry-After trailing dot", http.Header{"Retry-After": {"5."}}, -1, -1, -1, -1},
		{"Retry-After two dots", http.Header{"Retry-After": {"1.2.3"}}, -1, -1, -1, -1},
		{"Retry-After leading zeros", http.Header{"Retry-After": {"007"}}, 7 * time.Second, -1, -1, 7 * time.Second},
		{"Retry-After beyond float64", http.Header{"Retry-After": {"1" + strings.Repeat("0", 400)}}, -1, -1, -1, -1},
		{"retry-after-ms hex", http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"0x10"}}, 2 * time.Second, -1, -1, 2 * time.Second},
		{"reset seconds hex", http.Header{"X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {"0x3c"}}, -1, -1, -1, -1},
		{"reset seconds underscores", http.Header{"X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {"6_0"}}, -1, -1, -1, -1},
		{"remaining underscores is not a count", http.Header{"X-Ratelimit-Remaining-Requests": {"0_0"}, "X-Ratelimit-Reset-Requests": {"1s"}}, -1, -1, time.Second, time.Second},
		{"retry-after-ms wins", http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"1234"}}, 1234 * time.Millisecond, -1, -1, 1234 * time.Millisecond},
		{"retry-after-ms garbage falls back", http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"x"}}, 2 * time.Second, -1, -1, 2 * time.Second},
		{"OpenAI reset durations", http.Header{
			"X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {"6m0s"},
			"X-Ratelimit-Remaining-Tokens": {"1200"}, "X-Ratelimit-Reset-Tokens": {"20ms"},
		}, -1, 6 * time.Minute, 20 * time.Millisecond, 6 * time.Minute},
		{"OpenAI reset compound", http.Header{"X-Ratelimit-Remaining-Tokens": {"0"}, "X-Ratelimit-Reset-Tokens": {"1m30.5s"}}, -1, 90500 * time.Millisecond, 90500 * time.Millisecond, 90500 * time.Millisecond},
		{"reset in seconds", http.Header{"X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {"60"}}, -1, time.Minute, time.Minute, time.Minute},
		{"reset as a Unix time", http.Header{"X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {"1796126445"}}, -1, time.Unix(1796126445, 0).Sub(rlNow), time.Unix(1796126445, 0).Sub(rlNow), time.Unix(1796126445, 0).Sub(rlNow)},
		{"nothing spent: the earliest reset for a refusal", http.Header{
			"X-Ratelimit-Remaining-Requests": {"3"}, "X-Ratelimit-Reset-Requests": {"5s"},
			"X-Ratelimit-Remaining-Tokens": {"10"}, "X-Ratelimit-Reset-Tokens": {"2s"},
		}, -1, -1, 2 * time.Second, 2 * time.Second},
		{"Anthropic RFC 3339", http.Header{
			"Anthropic-Ratelimit-Requests-Remaining": {"0"}, "Anthropic-Ratelimit-Requests-Reset": {"2026-12-01T12:00:45Z"},
			"Anthropic-Ratelimit-Input-Tokens-Remaining": {"0"}, "Anthropic-Ratelimit-Input-Tokens-Reset": {"2026-12-01T12:00:10Z"},
		}, -1, 45 * time.Second, 10 * time.Second, 45 * time.Second},
		{"Anthropic output tokens", http.Header{"Anthropic-Ratelimit-Output-Tokens-Remaining": {"0"}, "Anthropic-Ratelimit-Output-Tokens-Reset": {"2026-12-01T12:00:05+00:00"}}, -1, 5 * time.Second, 5 * time.Second, 5 * time.Second},
		{"Retry-After beats resets", http.Header{"Retry-After": {"3"}, "X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {"1m"}}, 3 * time.Second, time.Minute, time.Minute, 3 * time.Second},
		{"garbage resets", http.Header{"X-Ratelimit-Remaining-Requests": {"zero"}, "X-Ratelimit-Reset-Requests": {"later"}, "Anthropic-Ratelimit-Tokens-Reset": {"-1s"}}, -1, -1, -1, -1},
		{"negative remaining counts as spent", http.Header{"X-Ratelimit-Remaining-Requests": {"-1"}, "X-Ratelimit-Reset-Requests": {"1s"}}, -1, time.Second, time.Second, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ReadRateSignal(tc.h, rlNow)
			at := func(d time.Duration) time.Time {
				if d == -1 {
					return time.Time{}
				}
				return rlNow.Add(d)
			}
			if !s.RetryAt.Equal(at(tc.retryAt)) || !s.Exhausted.Equal(at(tc.exhausted)) || !s.Reset.Equal(at(tc.rst)) {
				t.Errorf("ReadRateSignal = retry %v, exhausted %v, reset %v; want %v, %v, %v", s.RetryAt, s.Exhausted, s.Reset, at(tc.retryAt), at(tc.exhausted), at(tc.rst))
			}
			if got := s.RefusedUntil(); !got.Equal(at(tc.refused)) {
				t.Errorf("RefusedUntil = %v, want %v", got, at(tc.refused))
			}
		})
	}
}

// FuzzRateSignal: any header values parse without a panic into instants
// that are never before now (a provider cannot make the gateway cool a
// target into the past, or forever: the cooldown's cap applies after).
func FuzzRateSignal(f *testing.F) {
	for _, v := range []string{"120", "1.5", "Tue, 01 Dec 2026 12:00:30 GMT", "6m0s", "20ms", "2026-12-01T12:00:45Z", "-1", "NaN", "1e400", "9999999999999999999", ""} {
		f.Add(v, v, "0")
	}
	f.Fuzz(func(t *testing.T, retry, reset, remaining string) {
		h := http.Header{"Retry-After": {retry}, "Retry-After-Ms": {reset}, "X-Ratelimit-Reset-Requests": {reset},
			"X-Ratelimit-Remaining-Requests": {remaining}, "Anthropic-Ratelimit-Tokens-Reset": {retry}, "Anthropic-Ratelimit-Tokens-Remaining": {remaining}}
		s := ReadRateSignal(h, rlNow)
		for _, at := range []time.Time{s.RetryAt, s.Exhausted, s.Reset, s.RefusedUntil()} {
			if !at.IsZero() && at.Before(rlNow) {
				t.Fatalf("an instant before now: %v (headers %v)", at, h)
			}
		}
		c := cooldown{max: 5 * time.Minute}
		c.extend(rlNow, s.RefusedUntil())
		if u := c.Until(rlNow); !u.IsZero() && u.After(rlNow.Add(5*time.Minute)) {
			t.Fatalf("cooled until %v, past the 5m cap", u)
		}
	})
}

func TestCooldownExtendsNeverShortens(t *testing.T) {
	t.Parallel()
	c := cooldown{max: time.Minute}
	if !c.extend(rlNow, rlNow.Add(10*time.Second)) || !c.cooled(rlNow.Add(9*time.Second)) || c.cooled(rlNow.Add(10*time.Second)) {
		t.Fatal("a 10s cooldown does not cool for 10s")
	}
	if c.extend(rlNow, rlNow.Add(5*time.Second)) || !c.Until(rlNow).Equal(rlNow.Add(10*time.Second)) {
		t.Fatal("a shorter one shortened it")
	}
	if !c.extend(rlNow, rlNow.Add(time.Hour)) || !c.Until(rlNow).Equal(rlNow.Add(time.Minute)) {
		t.Fatalf("an hour was not capped at max_cooldown: until %v", c.Until(rlNow))
	}
	if c.extend(rlNow, rlNow.Add(-time.Second)) {
		t.Fatal("a time in the past moved it")
	}
}

// TestAllowanceKeepsTheLeastLeft: attempts reach the provider in an order
// of their own, so within one window the answer that leaves less for now
// wins, whichever attempt was sent first; an answer of a later window
// replaces it, one of an earlier window is ignored.
func TestAllowanceKeepsTheLeastLeft(t *testing.T) {
	t.Parallel()
	var a allowance
	for range 10 { // attempts 0..9 admitted
		if _, ok := a.take(rlNow); !ok {
			t.Fatal("refused with nothing known")
		}
	}
	window := rlNow.Add(800 * time.Millisecond)
	a.set(9, 5, window) // attempt 9 counted early: 5 left after it
	a.set(8, 5, window) // attempt 8, counted after 9: 5 left after both (one fewer for now)
	if left := a.remaining - (a.admitted - a.from); left != 4 {
		t.Fatalf("left for now = %d, want 4 (attempt 8's answer: 5 after it, attempt 9 since)", left)
	}
	a.set(7, 9, window.Add(100*time.Millisecond)) // the same window, read later: says more is left
	if left := a.remaining - (a.admitted - a.from); left != 4 {
		t.Fatalf("a report of more left replaced one of less: %d, want 4", left)
	}
	a.set(6, 0, rlNow.Add(-time.Second)) // an answer of the window before
	if left := a.remaining - (a.admitted - a.from); left != 4 {
		t.Fatalf("an earlier window's answer counted: %d, want 4", left)
	}
	next := rlNow.Add(1800 * time.Millisecond)
	a.set(9, 39, next) // the next window
	if left := a.remaining - (a.admitted - a.from); left != 39 || !a.until.Equal(next) {
		t.Fatalf("a later window's answer: %d left until %v, want 39 until %v", left, a.until, next)
	}
	for range 39 {
		if _, ok := a.take(rlNow); !ok {
			t.Fatal("refused before the 39 left were taken")
		}
	}
	if _, ok := a.take(rlNow); ok {
		t.Fatal("a 40th attempt admitted with 39 left")
	}
}

// TestDisabledProbeDoublesOnlyOnItsProbe: a revoked key's first refusal
// schedules its probe; the refusals of attempts already in flight then
// (a cold start's concurrent requests) leave that schedule alone; a failed
// probe doubles the wait.
func TestDisabledProbeDoublesOnlyOnItsProbe(t *testing.T) {
	t.Parallel()
	var d disabler
	d.disable(rlNow, "auth", false)
	_, next := d.state()
	if !next.Equal(rlNow.Add(disableProbeFirst)) {
		t.Fatalf("first probe at %v, want %v", next, rlNow.Add(disableProbeFirst))
	}
	d.disable(rlNow.Add(time.Second), "auth", false)
	d.disable(rlNow.Add(2*time.Second), "auth", false)
	if _, again := d.state(); !again.Equal(next) {
		t.Fatalf("in-flight refusals moved the probe to %v, want it still at %v", again, next)
	}
	if !d.claimProbe(next) {
		t.Fatal("the probe was not due")
	}
	d.disable(next, "auth", true)
	if _, after := d.state(); !after.Equal(next.Add(2 * disableProbeFirst)) {
		t.Fatalf("after a failed probe the next at %v, want %v", after, next.Add(2*disableProbeFirst))
	}
}

// The rate-limit headers are read by map index, so each name must be the
// canonical form the transport stores it under: a misspelt one would never
// be found.
func TestRateLimitHeaderNamesAreCanonical(t *testing.T) {
	names := []string{"Retry-After", "Retry-After-Ms"}
	for _, hs := range limitHeaders {
		names = append(names, hs[0], hs[1])
	}
	for _, n := range names {
		if c := http.CanonicalHeaderKey(n); c != n {
			t.Errorf("%q is read by map index but its canonical form is %q", n, c)
		}
	}
}

// TestRelayedRetryAfter: a client is given the Retry-After the gateway
// read, written canonically, and nothing for a value it could not read.
func TestRelayedRetryAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, v, want, wantMs string
	}{
		{"seconds", "120", "120", "120"},
		{"zero", "0", "0", "0"},
		{"spaces", " 30 ", "30", "30"},
		{"leading zeros", "007", "7", "7"},
		{"fraction rounds up", "1.2", "2", "2"},
		{"a year at most", "99999999999", "31536000", "31536000000"},
		{"HTTP date", "Tue, 01 Dec 2026 12:00:30 GMT", "Tue, 01 Dec 2026 12:00:30 GMT", ""},
		{"RFC 850 date, written as IMF-fixdate", "Tuesday, 01-Dec-26 12:01:00 GMT", "Tue, 01 Dec 2026 12:01:00 GMT", ""},
		{"ANSI C date", "Tue Dec  1 12:00:30 2026", "Tue, 01 Dec 2026 12:00:30 GMT", ""},
		{"garbage", "soon", "", ""},
		{"negative", "-5", "", ""},
		{"hex float", "0x1p4", "", ""},
		{"hex", "0x10", "", ""},
		{"underscores", "1_0", "", ""},
		{"exponent", "1e3", "", ""},
		{"signed", "+5", "", ""},
		{"Inf", "Inf", "", ""},
		{"NaN", "NaN", "", ""},
		{"empty", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RelayedRetryAfter(tc.v); got != tc.want {
				t.Errorf("RelayedRetryAfter(%q) = %q, want %q", tc.v, got, tc.want)
			}
			if got := RelayedRetryAfterMs(tc.v); got != tc.wantMs {
				t.Errorf("RelayedRetryAfterMs(%q) = %q, want %q", tc.v, got, tc.wantMs)
			}
		})
	}
}
