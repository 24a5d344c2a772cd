package router

import "time"

// The request path's timers: the hedge delay of a race and an attempt's
// timeouts (first byte, total, idle). Both kinds are made by the gateway's
// timer functions (newTimer, afterFunc): the real clock's, or a test's,
// which fires them when the test says rather than when the wall clock
// does.

// hedgeTimer is a timer for the race: the real one, or a test's.
type hedgeTimer interface {
	C() <-chan time.Time
	Stop() bool
}

// timeout is an attempt's timeout: it runs its function once its time is
// up, unless stopped first; Reset re-arms it (a stream's idle bound after
// each chunk). *time.Timer is one.
type timeout interface {
	Stop() bool
	Reset(d time.Duration) bool
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

func newRealTimer(d time.Duration) hedgeTimer { return realTimer{time.NewTimer(d)} }

func realAfterFunc(d time.Duration, f func()) timeout { return time.AfterFunc(d, f) }
