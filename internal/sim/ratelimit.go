package sim

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// A provider's rate limits (RateLimit), counted the way real providers count
// them: fixed windows, a refusal that says when to come back, and on every
// answer the limit, what remains and when it resets, in the provider's own
// spelling.

// limiter counts one provider's requests and tokens in the current window.
type limiter struct {
	limit RateLimit // immutable after newLimiter; Window resolved

	mu       sync.Mutex // guards the fields below
	window   time.Time  // start of the window the counts are for
	requests int
	tokens   int
}

func newLimiter(l *RateLimit) *limiter {
	if l == nil {
		return nil
	}
	lim := &limiter{limit: *l}
	lim.limit.Window = l.window()
	return lim
}

// quota is what the limiter decided for one request, and what remains after it.
type quota struct {
	limit RateLimit
	ok    bool
	// refused names the limit a refusal is for ("requests" or "tokens"), used how
	// much of it the window had used, asked how much the request asked for.
	refused      string
	used, asked  int
	requestsLeft int
	tokensLeft   int
	now, reset   time.Time // reset: the end of the window
}

// take counts a request asking for tokens at now, unless it would go beyond a limit.
func (l *limiter) take(now time.Time, tokens int) quota {
	start := now.Truncate(l.limit.Window)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !start.Equal(l.window) {
		l.window, l.requests, l.tokens = start, 0, 0
	}
	q := quota{limit: l.limit, now: now, reset: start.Add(l.limit.Window)}
	switch {
	case l.limit.Requests > 0 && l.requests >= l.limit.Requests:
		q.refused, q.used, q.asked = "requests", l.requests, 1
	case l.limit.Tokens > 0 && l.tokens+tokens > l.limit.Tokens:
		q.refused, q.used, q.asked = "tokens", l.tokens, tokens
	default:
		l.requests++
		l.tokens += tokens
		q.ok = true
	}
	q.requestsLeft, q.tokensLeft = l.limit.Requests-l.requests, l.limit.Tokens-l.tokens
	return q
}

// setHeaders writes the limits, what remains of them and when they reset, as the
// provider whose API shape sh is spells them; on a refusal also when to retry.
func (q quota) setHeaders(h http.Header, sh shape) {
	type limit struct {
		name       string // "requests" or "tokens"
		of, remain int
	}
	var limits []limit
	if q.limit.Requests > 0 {
		limits = append(limits, limit{"requests", q.limit.Requests, q.requestsLeft})
	}
	if q.limit.Tokens > 0 {
		limits = append(limits, limit{"tokens", q.limit.Tokens, q.tokensLeft})
	}
	for _, l := range limits {
		if sh == anthropicShape {
			h.Set("anthropic-ratelimit-"+l.name+"-limit", strconv.Itoa(l.of))
			h.Set("anthropic-ratelimit-"+l.name+"-remaining", strconv.Itoa(l.remain))
			h.Set("anthropic-ratelimit-"+l.name+"-reset", q.reset.UTC().Format(time.RFC3339Nano))
			continue
		}
		h.Set("x-ratelimit-limit-"+l.name, strconv.Itoa(l.of))
		h.Set("x-ratelimit-remaining-"+l.name, strconv.Itoa(l.remain))
		h.Set("x-ratelimit-reset-"+l.name, resetDuration(q.reset.Sub(q.now)))
	}
	if q.ok {
		return
	}
	wait := q.wait()
	h.Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
	if sh == openAIShape {
		h.Set("retry-after-ms", strconv.FormatInt(int64((wait+time.Millisecond-1)/time.Millisecond), 10))
	}
}

// wait is how long a refusal tells the client to wait.
func (q quota) wait() time.Duration {
	if q.limit.RetryAfter > 0 {
		return q.limit.RetryAfter
	}
	return q.reset.Sub(q.now)
}

// resetDuration spells a time to reset as OpenAI does, a Go-style duration
// ("1s", "830ms", "6m0s"), rounded up to the millisecond so that a client never
// comes back before the window has turned.
func resetDuration(d time.Duration) string {
	return ((d + time.Millisecond - 1) / time.Millisecond * time.Millisecond).String()
}

// refusal is the 429 a real provider answers beyond its limits, in both shapes.
func (q quota) refusal(model string) apiError {
	per := q.limit.Window.String()
	of := q.limit.Requests
	if q.refused == "tokens" {
		of = q.limit.Tokens
	}
	e := errorFor(http.StatusTooManyRequests, fmt.Sprintf("Rate limit reached for %s in organization org-sim on %s per %s: "+
		"Limit %d, Used %d, Requested %d. Please try again in %s. Visit https://platform.openai.com/account/rate-limits to learn more.",
		model, q.refused, per, of, q.used, q.asked, resetDuration(q.wait())))
	e.openAIType = q.refused
	e.anthropicMessage = fmt.Sprintf("This request would exceed your organization's rate limit of %d %s per %s. "+
		"For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. "+
		"Please reduce the prompt length or the maximum tokens requested, or try again later.", of, q.refused, per)
	return e
}
