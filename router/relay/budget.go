package relay

import (
	"errors"
	"sync"
	"sync/atomic"
)

// The answer budget (limits.max_buffered): limits.max_response bounds one
// unary answer, but the gateway holds every unary answer whole before it
// sends it, so N answers at once could hold N times that. The budget
// bounds them together. Each answer starts with a pooled buffer of
// AnswerBase bytes of its own; every buffer beyond it (a block of a large
// answer, the contiguous copy of the blocks, a buffer sized by the
// Content-Length, a translation) is reserved from the budget before it is
// allocated, and given back when the attempt's relay returns, on every
// path. A reservation that does not fit ends the attempt as
// response_buffer_full, which fails over: the gateway's memory pressure,
// no fault of the provider's.

// Budget is the process-wide count of bytes held for unary
// answers against its limit. A reload hands it to the next gateway, which
// only changes the limit: answers in flight on the old one stay counted.
type Budget struct {
	limit atomic.Int64
	held  atomic.Int64
	// onLarge is Options.OnLargeAnswerDone of the gateway that last took
	// the budget (nil or a nil func: none).
	onLarge atomic.Pointer[func()]
}

// LargeAnswerHeld is the budget an answer must have held for its release
// to be told to Options.OnLargeAnswerDone.
const LargeAnswerHeld = 32 << 20

func NewBudget(limit int64) *Budget {
	b := &Budget{}
	b.limit.Store(limit)
	return b
}

// reserve takes n bytes for a Claim that holds own bytes already, if they
// fit under the limit, or if that Claim is the only one holding any: an
// answer alone is never refused by the budget, so every answer within
// limits.max_response is served when nothing else is held (a chunked one
// needs about twice its size for a moment, its blocks and the contiguous
// copy it is checked in). Alone, an answer is bounded by max_response
// itself; the budget bounds answers together.
func (b *Budget) reserve(n, own int64) bool {
	limit := b.limit.Load()
	for {
		held := b.held.Load()
		if held+n > limit && held != own {
			return false
		}
		if b.held.CompareAndSwap(held, held+n) {
			return true
		}
	}
}

func (b *Budget) release(n int64) { b.held.Add(-n) }

// Held is how many bytes unary answers hold of the budget
// (limits.max_buffered) now: this gateway's and those of every gateway a
// reload replaced, whose requests may still be in flight.
func (b *Budget) Held() int64 { return b.held.Load() }

// SetLimit sets the limit (a reload's limits.max_buffered); answers held
// already stay counted.
func (b *Budget) SetLimit(limit int64) { b.limit.Store(limit) }

// OnLarge sets what a release of LargeAnswerHeld bytes or more calls (nil:
// nothing).
func (b *Budget) OnLarge(f *func()) { b.onLarge.Store(f) }

// ErrBufferFull ends a read whose next buffer the budget could not give.
var ErrBufferFull = errors.New("the unary answer budget (limits.max_buffered) is spent")

// Claim is one answer's share of the budget: what it holds now.
type Claim struct {
	b *Budget
	n int64
}

// Take reserves n more bytes for the answer, if they fit.
func (c *Claim) Take(n int64) bool {
	if !c.b.reserve(n, c.n) {
		return false
	}
	c.n += n
	return true
}

// give hands n bytes of the answer's back (a buffer it no longer holds).
func (c *Claim) give(n int64) {
	c.n -= n
	c.b.release(n)
}

// Release hands back everything the answer holds.
func (c *Claim) Release() {
	if c.n == 0 {
		return
	}
	c.b.release(c.n)
	if c.n >= LargeAnswerHeld {
		if f := c.b.onLarge.Load(); f != nil && *f != nil {
			(*f)()
		}
	}
	c.n = 0
}

// The blocks a large answer is read into, by size class: minReadBlock,
// doubling up to maxReadBlock. Pooled, so the blocks of an answer that
// ends (over the limit, failed, or copied out) are the next answer's
// instead of garbage the collector lets grow to twice the live heap.
const (
	minReadBlock = 64 << 10
	maxReadBlock = 4 << 20
	blockClasses = 7 // 64 KiB ... 4 MiB
)

var blockPools [blockClasses]sync.Pool

// blockClass is the class of the smallest block of at least n bytes (n at
// most maxReadBlock).
func blockClass(n int64) int {
	c := 0
	for int64(minReadBlock)<<c < n {
		c++
	}
	return c
}

// getBlock returns an empty block of class c (minReadBlock<<c bytes).
func getBlock(c int) *[]byte {
	if p, ok := blockPools[c].Get().(*[]byte); ok {
		return p
	}
	b := make([]byte, 0, minReadBlock<<c)
	return &b
}

// putBlock returns a block of class c to its pool.
func putBlock(c int, p *[]byte) {
	*p = (*p)[:0]
	blockPools[c].Put(p)
}
