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

// makeRoom readies the ring for x: when it is full it evicts the oldest
// entry and reports it, or, if x is older still (it is not among the last
// len(buf)), reports that x is to be dropped (ok false). Then insertByTime
// adds x. The two are apart so an owner can account for the eviction first.
func (r *timeRing[T]) makeRoom(x T) (evicted T, didEvict, ok bool) {
	if r.n < len(r.buf) {
		return evicted, false, true
	}
	if x.when() < r.front().when() {
		return evicted, false, false
	}
	return r.popFront(), true, true
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

// insertByTime adds x after every entry taken no later than it and returns
// its index from the front. The ring must not be full.
func (r *timeRing[T]) insertByTime(x T) int {
	i := r.n
	for ; i > 0 && (*r.at(i - 1)).when() > x.when(); i-- {
		*r.at(i) = *r.at(i - 1)
	}
	*r.at(i) = x
	r.n++
	return i
}

// countAfter is how many entries were taken after t (strictly), by binary
// search.
func (r *timeRing[T]) countAfter(t int64) int {
	if r.n == 0 || (*r.at(r.n - 1)).when() <= t {
		return 0
	}
	if r.front().when() > t {
		return r.n
	}
	lo, hi := 0, r.n // the first entry after t is in [lo, hi)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if (*r.at(mid)).when() > t {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return r.n - lo
}
