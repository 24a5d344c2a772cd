package relay

import (
	"io"
	"sync"
)

// Holding a unary answer whole: read into a pooled buffer, or into pooled
// blocks joined once at the end, every byte beyond the answer's own
// allowance reserved from the answer budget (budget.go) before it is
// taken.

// readAnswer reads a unary answer of contentLength bytes (-1: unknown) from
// r, up to limit bytes (over: more came), into *bufp, a pooled buffer it
// may replace with a larger one. Every byte it holds beyond AnswerBase is
// reserved from cl first; err is ErrBufferFull when that did not fit.
func readAnswer(bufp *[]byte, r io.Reader, contentLength, limit int64, cl *Claim) (body []byte, over bool, err error) {
	switch {
	case contentLength > 0 && int64(cap(*bufp)) <= contentLength:
		// One byte past the answer: the read that finds the end has room,
		// else readAtMost would take a block only to be told EOF.
		if !cl.Take(contentLength + 1) {
			return nil, false, ErrBufferFull
		}
		*bufp = make([]byte, 0, contentLength+1)
	case cap(*bufp) > AnswerBase:
		// A larger answer left this buffer in the pool: this answer holds
		// it now, or, when the budget has no room for it, a small one.
		if !cl.Take(int64(cap(*bufp) - AnswerBase)) {
			*bufp = make([]byte, 0, AnswerBase)
		}
	}
	body, over, err = readAtMost((*bufp)[:0], r, limit+1, cl)
	if cap(body) <= maxReadBlock {
		*bufp = body[:0]
	}
	return body, over, err
}

// readAtMost appends r to dst until EOF, or until n bytes have come (then
// over is true and the bytes are dropped). Past dst's capacity it reads into
// pooled blocks of growing size, joined once at the end when the whole is
// within n: an answer over the limit costs the limit in memory and no copy
// (growing one slice by doubling would hold one and a half times it while it
// copies, and leave the rest as garbage). Each block, and the joined copy,
// is reserved from cl before it is taken; every block is back in its pool,
// its bytes given back to cl, when readAtMost returns, so the caller's Claim
// holds the joined copy only (a panic skips that, and the caller's release
// of the whole Claim gives the bytes back). A reservation that does not fit
// ends the read with ErrBufferFull; any error returns no body.
func readAtMost(dst []byte, r io.Reader, n int64, cl *Claim) (body []byte, over bool, err error) {
	var spare [24]*[]byte // a 64 MiB answer takes 22
	blocks := spare[:0]   // after dst, in order
	total := int64(len(dst))
	cur := &dst
	for total < n {
		if len(*cur) == cap(*cur) {
			// Twice the last block (or dst, or AnswerBase), at most
			// maxReadBlock, and no larger than what may still come.
			c := blockClass(min(2*max(int64(cap(*cur)), AnswerBase), maxReadBlock, n-total))
			if !cl.Take(minReadBlock << c) {
				dropBlocks(blocks, cl)
				return dst[:0], false, ErrBufferFull
			}
			blocks = append(blocks, getBlock(c))
			cur = blocks[len(blocks)-1]
		}
		room := (*cur)[len(*cur):min(int64(cap(*cur)), int64(len(*cur))+n-total)]
		m, err := r.Read(room)
		*cur = (*cur)[:len(*cur)+m]
		total += int64(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			dropBlocks(blocks, cl)
			return dst[:0], false, err
		}
	}
	if total >= n {
		dropBlocks(blocks, cl)
		return dst[:0], true, nil
	}
	if int64(len(dst)) == total {
		// Empty blocks (the last one may have been taken only to be told
		// EOF) are no reason to copy.
		dropBlocks(blocks, cl)
		return dst, false, nil
	}
	// One slice of the whole, with a byte to spare, so an answer of the
	// same size read into it again (it goes back to answerPool) sees its
	// end without a block.
	if !cl.Take(total + 1) {
		dropBlocks(blocks, cl)
		return dst[:0], false, ErrBufferFull
	}
	out := make([]byte, 0, total+1)
	out = append(out, dst...)
	for _, p := range blocks {
		out = append(out, *p...)
	}
	dropBlocks(blocks, cl)
	return out, false, nil
}

// dropBlocks puts blocks back in their pools and gives their bytes back.
func dropBlocks(blocks []*[]byte, cl *Claim) {
	for _, p := range blocks {
		cl.give(int64(cap(*p)))
		putBlock(blockClass(int64(cap(*p))), p)
	}
}

// AnswerBase is the buffer each unary answer starts with (answerPool's
// New): the answer's own, not taken from the budget.
const AnswerBase = 32 << 10

// answerPool holds unary answer buffers.
var answerPool = sync.Pool{New: func() any { b := make([]byte, 0, AnswerBase); return &b }}

// Held is one unary answer's hold: its pooled buffer and its Claim on the
// budget, taken together (Budget.Hold) and given back together (Release).
// The zero Held holds nothing.
type Held struct {
	bufp *[]byte
	Claim
}

// Hold is a pooled buffer of AnswerBase bytes (or one an answer left) and
// an empty claim on b, for one answer.
func (b *Budget) Hold() Held {
	return Held{bufp: answerPool.Get().(*[]byte), Claim: Claim{b: b}}
}

// Read reads an answer into h's buffer within h's claim; see readAnswer.
func (h *Held) Read(r io.Reader, contentLength, limit int64) (body []byte, over bool, err error) {
	return readAnswer(h.bufp, r, contentLength, limit, &h.Claim)
}

// Release gives the bytes back to the budget, then the buffer to its
// pool, in that order of care (a buffer in the pool is nobody's), unless
// it grew past maxReadBlock: the odd huge answer is not kept alive.
func (h *Held) Release() {
	if h.bufp == nil {
		return
	}
	h.Claim.Release()
	if cap(*h.bufp) <= maxReadBlock {
		answerPool.Put(h.bufp)
	}
	h.bufp = nil
}
