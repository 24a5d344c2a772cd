package upstream

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// CredentialError is a credential the gateway could not obtain (a token
// endpoint that refused, no AWS credentials in the chain, an unreadable
// key file) or that expired before it could be renewed. The attempt that
// meets it is class auth: its target is disabled and probed. Reason never
// holds the secret.
type CredentialError struct {
	Provider string
	Reason   string
}

func (e *CredentialError) Error() string {
	return "provider " + e.Provider + ": no credential: " + e.Reason
}

// Refresh timing. A credential is renewed refreshAhead before it expires
// (at half its remaining life when that is under twice as long), so the request
// path always reads one that is still good; a failed fetch is retried
// after retryMin, doubling to retryMax. A credential without expiry is
// fetched again every staticRefresh (an AWS profile edited on disk).
const (
	refreshAhead  = 5 * time.Minute
	minRefresh    = time.Second
	retryMin      = time.Second
	retryMax      = time.Minute
	staticRefresh = time.Hour
)

// credentialFetch obtains a fresh credential and when it expires (zero:
// never). It runs on the refresher goroutine only, never on a request.
type credentialFetch[T any] func(ctx context.Context) (T, time.Time, error)

// credentialCache holds one provider's current credential for the request
// path, which only reads it (get: one atomic load, no allocation); the
// refresher goroutine (run) fetches and swaps it before it expires.
type credentialCache[T any] struct {
	// immutable after newCredentialCache
	provider string
	fetch    credentialFetch[T]
	now      func() time.Time
	after    func(time.Duration) <-chan time.Time
	log      *slog.Logger

	cur atomic.Pointer[cachedCredential[T]] // nil until the first fetch ends

	// owned by the refresher goroutine
	failing bool // the last fetch failed (logged once per run of failures)
	backoff time.Duration
}

// cachedCredential is one fetch's outcome. A failure keeps the value of
// the last success while it has not expired.
type cachedCredential[T any] struct {
	value   T
	expires time.Time // zero: never
	ok      bool      // value is usable until expires
	err     *CredentialError
}

func newCredentialCache[T any](provider string, fetch credentialFetch[T], c Clock, log *slog.Logger) *credentialCache[T] {
	return &credentialCache[T]{provider: provider, fetch: fetch, now: c.now(), after: c.after(), log: log}
}

// get is the request path's read: the cached credential, or a
// CredentialError when there is none yet, it expired, or fetching failed.
func (c *credentialCache[T]) get() (T, *CredentialError) {
	var zero T
	cc := c.cur.Load()
	switch {
	case cc == nil:
		return zero, c.notYet()
	case !cc.ok:
		return zero, cc.err
	case !cc.expires.IsZero() && !c.now().Before(cc.expires):
		if cc.err != nil {
			return zero, cc.err
		}
		return zero, &CredentialError{Provider: c.provider, Reason: "the credential expired before it could be renewed"}
	}
	return cc.value, nil
}

const errNotYet = "the first fetch has not finished"

func (c *credentialCache[T]) notYet() *CredentialError {
	return &CredentialError{Provider: c.provider, Reason: errNotYet}
}

// refresh fetches once and says how long to wait before the next fetch.
func (c *credentialCache[T]) refresh(ctx context.Context) time.Duration {
	v, exp, err := c.fetch(ctx)
	now := c.now()
	if err != nil {
		reason := err.Error()
		cerr := &CredentialError{Provider: c.provider, Reason: reason}
		next := &cachedCredential[T]{err: cerr}
		if prev := c.cur.Load(); prev != nil && prev.ok && (prev.expires.IsZero() || now.Before(prev.expires)) {
			next.value, next.expires, next.ok = prev.value, prev.expires, true
		}
		c.cur.Store(next)
		if !c.failing && c.log != nil {
			c.log.Warn("credential: cannot obtain one", "provider", c.provider, "reason", reason)
		}
		c.failing = true
		c.backoff = min(max(2*c.backoff, retryMin), retryMax)
		return c.backoff
	}
	c.cur.Store(&cachedCredential[T]{value: v, expires: exp, ok: true})
	if c.failing && c.log != nil {
		c.log.Info("credential: obtained again", "provider", c.provider)
	}
	c.failing, c.backoff = false, 0
	return refreshIn(now, exp)
}

// refreshIn is how long after now a credential expiring at exp is renewed.
func refreshIn(now, exp time.Time) time.Duration {
	if exp.IsZero() {
		return staticRefresh
	}
	left := exp.Sub(now)
	if left > 2*refreshAhead {
		return left - refreshAhead
	}
	return max(left/2, minRefresh)
}

// run keeps the credential fresh until ctx ends. The first fetch happens
// at once, unless first (the wait prime returned) is positive.
func (c *credentialCache[T]) run(ctx context.Context, first time.Duration) {
	wait := first
	for {
		if wait <= 0 {
			wait = c.refresh(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-c.after(wait):
			wait = 0
		}
	}
}

// Clock is the time a host adapter reads: Now and After, injected so tests
// drive credential refreshes and signatures. Zero fields: the real clock.
type Clock struct {
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
}

func (c Clock) now() func() time.Time {
	if c.Now != nil {
		return c.Now
	}
	return time.Now
}

func (c Clock) after() func(time.Duration) <-chan time.Time {
	if c.After != nil {
		return c.After
	}
	return time.After
}
