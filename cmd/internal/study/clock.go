package study

import (
	"container/heap"
	"time"
)

// A run's time is virtual: an event queue of the clients' next moments,
// popped in time order (ties in the order they were scheduled), and a
// clock every part of the run reads, moved to each event as it is popped.

// epoch is the virtual instant the measured time starts at.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// clock is the virtual clock of a run: the gateway, its breakers, its
// modes and the statistics source all read it.
type clock struct{ t time.Duration }

func (c *clock) Now() time.Time { return epoch.Add(c.t) }

// event is a client's next moment: the end of its attempt in flight, or
// the start of its next request. seq breaks ties in scheduling order.
type event struct {
	at     time.Duration
	seq    uint64
	client int
	gen    int    // the client's request it is for (0: a request's start)
	racer  *racer // an attempt's end; nil with gen set: a hedge is due
	wake   int    // the client's race wake-up a hedge event is for
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

func (r *runner) schedule(client int, at time.Duration) {
	r.seq++
	heap.Push(&r.queue, event{at: at, seq: r.seq, client: client})
}

// scheduleEnd is rc's end, at its time.
func (r *runner) scheduleEnd(c *client, rc *racer) {
	r.seq++
	heap.Push(&r.queue, event{at: rc.endAt, seq: r.seq, client: c.id, gen: c.gen, racer: rc})
}

// scheduleHedge is a hedge of c's request due at at.
func (r *runner) scheduleHedge(c *client, at time.Duration) {
	r.seq++
	heap.Push(&r.queue, event{at: at, seq: r.seq, client: c.id, gen: c.gen, wake: c.wake})
}
