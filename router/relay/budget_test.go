package relay

import (
	"bytes"
	"errors"
	"sync"
	"testing"
)

// TestResponseBudgetReserve: a reservation fits or is refused whole; the
// limit is exact; given-back bytes can be taken again.
func TestResponseBudgetReserve(t *testing.T) {
	t.Parallel()
	b := NewBudget(100)
	if !b.reserve(60, 0) || !b.reserve(40, 0) {
		t.Fatal("100 bytes in two reservations refused by a budget of 100")
	}
	if b.reserve(1, 0) {
		t.Error("a byte past the limit fitted")
	}
	b.release(40)
	if b.reserve(41, 0) || !b.reserve(40, 0) {
		t.Error("after giving back 40: want 41 refused, 40 taken")
	}
	b.release(100)
	if n := b.held.Load(); n != 0 {
		t.Errorf("held %d after everything was given back", n)
	}
}

// TestResponseBudgetLoneAnswer: the budget never refuses the only answer
// holding bytes (alone, max_response bounds it), so an answer within
// max_response is served when nothing else is held; while it holds more
// than the limit, every other answer is refused, and the budget is exact
// again once it lets go.
func TestResponseBudgetLoneAnswer(t *testing.T) {
	t.Parallel()
	b := NewBudget(100)
	lone := Claim{b: b}
	if !lone.Take(80) || !lone.Take(80) {
		t.Fatal("the only answer held was refused")
	}
	other := Claim{b: b}
	if other.Take(1) {
		t.Error("a second answer fitted while the first holds 160 of 100")
	}
	lone.Release()
	if !other.Take(60) || lone.Take(41) || !lone.Take(40) {
		t.Errorf("after the first let go: held %d; want the limit exact again", b.held.Load())
	}
	lone.Release()
	other.Release()
	if n := b.held.Load(); n != 0 {
		t.Errorf("held %d after everything was given back", n)
	}
}

// TestResponseBudgetConcurrent: many goroutines taking and giving back
// never hold more than the limit together (run with -race), and end at 0.
func TestResponseBudgetConcurrent(t *testing.T) {
	t.Parallel()
	const limit = 1000
	b := NewBudget(limit)
	var wg sync.WaitGroup
	var over sync.Once
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				c := Claim{b: b}
				for j := range 3 {
					if c.Take(int64(50 + (g*7+i+j)%150)) {
						if n := b.held.Load(); n > limit {
							over.Do(func() { t.Errorf("held %d, over the limit %d", n, limit) })
						}
					}
				}
				if i%2 == 0 && c.n > 0 {
					c.give(c.n / 2)
				}
				c.Release()
				if c.n != 0 {
					t.Errorf("a released Claim holds %d", c.n)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := b.held.Load(); n != 0 {
		t.Errorf("held %d after every Claim was released", n)
	}
}

// TestReadAtMostWithinTheBudget: each block is reserved before it is
// taken, the joined copy too; a read the budget cannot hold stops with
// ErrBufferFull, every block back and its bytes given back.
func TestReadAtMostWithinTheBudget(t *testing.T) {
	t.Parallel()
	answer := bytes.Repeat([]byte("x"), 300<<10)
	for _, tc := range []struct {
		name   string
		budget int64
		want   error
		held   int64 // by the Claim after the read
	}{
		// 300 KiB into nothing: blocks of 64, 128 and 256 KiB (448),
		// then a copy of 300 KiB and a byte.
		{"room for the blocks and the copy", 448<<10 + 300<<10 + 1, nil, 300<<10 + 1},
		{"room for the blocks, not the copy", 448<<10 + 300<<10, ErrBufferFull, 0},
		{"room for two blocks only", 200 << 10, ErrBufferFull, 0},
		{"no room at all", 1, ErrBufferFull, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Another answer holds a byte: alone, an answer is never
			// refused.
			b := NewBudget(tc.budget + 1)
			other := Claim{b: b}
			other.Take(1)
			defer other.Release()
			cl := &Claim{b: b}
			body, over, err := readAtMost(nil, bytes.NewReader(answer), 1<<20, cl)
			if !errors.Is(err, tc.want) || over {
				t.Fatalf("err %v over %v, want %v", err, over, tc.want)
			}
			if tc.want == nil && !bytes.Equal(body, answer) || tc.want != nil && len(body) != 0 {
				t.Errorf("read %d bytes", len(body))
			}
			if cl.n != tc.held || b.held.Load() != tc.held+1 {
				t.Errorf("the Claim holds %d, the budget %d; want %d and the other answer's byte", cl.n, b.held.Load(), tc.held)
			}
			cl.Release()
			if b.held.Load() != 1 {
				t.Errorf("held %d after the release", b.held.Load())
			}
		})
	}
}

// TestReadAnswerWithinTheBudget: a Content-Length answer reserves its
// buffer before it is made; a grown pooled buffer is the answer's to
// reserve, or, without room for it, traded for a small one.
func TestReadAnswerWithinTheBudget(t *testing.T) {
	t.Parallel()
	answer := bytes.Repeat([]byte("x"), 100<<10)
	b := NewBudget(100<<10 + 1)
	other := Claim{b: b} // another answer holds a byte: alone, an answer is never refused
	other.Take(1)
	cl := &Claim{b: b}
	buf := make([]byte, 0, AnswerBase)
	if _, _, err := readAnswer(&buf, bytes.NewReader(answer), int64(len(answer)), 1<<20, cl); err != ErrBufferFull || cl.n != 0 || cap(buf) != AnswerBase {
		t.Errorf("100 KiB with its Content-Length in a budget of 100 KiB: err %v, held %d, buffer %d; want ErrBufferFull before any buffer", err, cl.n, cap(buf))
	}
	b.limit.Store(200<<10 + 1)
	body, _, err := readAnswer(&buf, bytes.NewReader(answer), int64(len(answer)), 1<<20, cl)
	if err != nil || len(body) != len(answer) || cl.n != int64(len(answer))+1 {
		t.Fatalf("with room: err %v, %d bytes, held %d; want the answer, %d held", err, len(body), cl.n, len(answer)+1)
	}
	cl.Release()
	// buf is now the 100 KiB one, as the pool would hand it to the next
	// answer: holding it takes what it has beyond AnswerBase.
	small := []byte(`{"ok":true}`)
	if _, _, err := readAnswer(&buf, bytes.NewReader(small), -1, 1<<20, cl); err != nil || cl.n != int64(cap(buf)-AnswerBase) {
		t.Errorf("a small answer in a grown buffer: err %v, held %d, want %d", err, cl.n, cap(buf)-AnswerBase)
	}
	cl.Release()
	b.limit.Store(1<<10 + 1)
	if _, _, err := readAnswer(&buf, bytes.NewReader(small), -1, 1<<20, cl); err != nil || cl.n != 0 || cap(buf) != AnswerBase {
		t.Errorf("the grown buffer without room for it: err %v, held %d, buffer %d; want a small buffer and nothing held", err, cl.n, cap(buf))
	}
}

// A Claim that held LargeAnswerHeld or more tells Options.OnLargeAnswerDone
// when it is released, once; smaller ones do not.
func TestLargeAnswerReleaseIsTold(t *testing.T) {
	b := NewBudget(1 << 30)
	told := 0
	f := func() { told++ }
	b.onLarge.Store(&f)
	small := Claim{b: b}
	small.Take(LargeAnswerHeld - 1)
	small.Release()
	if told != 0 {
		t.Fatalf("a release of %d bytes was told", LargeAnswerHeld-1)
	}
	large := Claim{b: b}
	large.Take(LargeAnswerHeld)
	large.Release()
	large.Release()
	if told != 1 {
		t.Fatalf("a release of %d bytes was told %d times, want 1", LargeAnswerHeld, told)
	}
	var none func()
	b.onLarge.Store(&none)
	large.Take(LargeAnswerHeld)
	large.Release() // a nil hook: nothing to tell, no panic
}
