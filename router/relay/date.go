package relay

import (
	"net/http"
	"sync/atomic"
	"time"
)

// An answer's Date header, formatted once a second rather than per answer:
// net/http formats one for every response that has none (about 1,900
// instructions, an eighth of what the gateway adds to a small unary
// request beside the bare proxy, which relays the upstream's).

type dateValue struct {
	sec int64
	v   []string // len 1, cap 1: an append to it copies
}

var lastDate atomic.Pointer[dateValue]

// Date is the Date header value of an answer sent at now (http.TimeFormat),
// shared by every answer of the same second: callers must not modify it.
func Date(now time.Time) []string {
	sec := now.Unix()
	if d := lastDate.Load(); d != nil && d.sec == sec {
		return d.v
	}
	d := &dateValue{sec: sec, v: []string{now.UTC().Format(http.TimeFormat)}}
	lastDate.Store(d)
	return d.v
}
