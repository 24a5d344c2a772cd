package collector

// timed is an entry of a timeRing: it knows when it was taken (unix ns).
type timed interface{ when() int64 }

// timeRing is a fixed-capacity ring of samples (or outcomes) kept in
// takenAt order, so the oldest, the next to expire or be evicted, is always
// at the front. They normally arrive in that order (an attempt ends after the
// previous one); a peer's that arrives late is slotted in by time.
type timeRing[T timed] struct {
	buf  []T // len(buf) is the capacity
	head int // index in buf of the front
	n    int // entries held
}

// insert adds x, evicting the oldest entry if the ring is full (or dropping
// x, if it is older still: it is not among the last len(buf)). It reports
// the entry evicted, if any.
func (r *timeRing[T]) insert(x T) (evicted T, didEvict, kept bool) {
	if r.n == len(r.buf) {
		if x.when() < r.front().when() {
			return evicted, false, false
		}
		evicted, didEvict = r.popFront(), true
	}
	r.insertByTime(x)
	return evicted, didEvict, true
}

func (r *timeRing[T]) at(i int) *T {
	j := r.head + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return &r.buf[j]
}

// segments returns the entries held, oldest first, as the two runs of buf
// they occupy (b is empty unless they wrap around its end).
func (r *timeRing[T]) segments() (a, b []T) {
	end := r.head + r.n
	if end <= len(r.buf) {
		return r.buf[r.head:end], nil
	}
	return r.buf[r.head:], r.buf[:end-len(r.buf)]
}

func (r *timeRing[T]) front() T { return r.buf[r.head] }

// back is the newest entry. The ring must not be empty.
func (r *timeRing[T]) back() T { return *r.at(r.n - 1) }

func (r *timeRing[T]) popFront() T {
	x := r.buf[r.head]
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
	r.n--
	return x
}

// insertByTime adds x after every entry taken no later than it. The ring
// must not be full.
func (r *timeRing[T]) insertByTime(x T) {
	i := r.n
	for ; i > 0 && (*r.at(i - 1)).when() > x.when(); i-- {
		*r.at(i) = *r.at(i - 1)
	}
	*r.at(i) = x
	r.n++
}
