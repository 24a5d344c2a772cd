package router

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// TestResponseBudgetReserve: a reservation fits or is refused whole; the
// limit is exact; given-back bytes can be taken again.
func TestResponseBudgetReserve(t *testing.T) {
	t.Parallel()
	b := newResponseBudget(100)
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
	b := newResponseBudget(100)
	lone := claim{b: b}
	if !lone.take(80) || !lone.take(80) {
		t.Fatal("the only answer held was refused")
	}
	other := claim{b: b}
	if other.take(1) {
		t.Error("a second answer fitted while the first holds 160 of 100")
	}
	lone.release()
	if !other.take(60) || lone.take(41) || !lone.take(40) {
		t.Errorf("after the first let go: held %d; want the limit exact again", b.held.Load())
	}
	lone.release()
	other.release()
	if n := b.held.Load(); n != 0 {
		t.Errorf("held %d after everything was given back", n)
	}
}

// TestResponseBudgetConcurrent: many goroutines taking and giving back
// never hold more than the limit together (run with -race), and end at 0.
func TestResponseBudgetConcurrent(t *testing.T) {
	t.Parallel()
	const limit = 1000
	b := newResponseBudget(limit)
	var wg sync.WaitGroup
	var over sync.Once
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				c := claim{b: b}
				for j := range 3 {
					if c.take(int64(50 + (g*7+i+j)%150)) {
						if n := b.held.Load(); n > limit {
							over.Do(func() { t.Errorf("held %d, over the limit %d", n, limit) })
						}
					}
				}
				if i%2 == 0 && c.n > 0 {
					c.give(c.n / 2)
				}
				c.release()
				if c.n != 0 {
					t.Errorf("a released claim holds %d", c.n)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := b.held.Load(); n != 0 {
		t.Errorf("held %d after every claim was released", n)
	}
}

// TestReadAtMostWithinTheBudget: each block is reserved before it is
// taken, the joined copy too; a read the budget cannot hold stops with
// errBufferFull, every block back and its bytes given back.
func TestReadAtMostWithinTheBudget(t *testing.T) {
	t.Parallel()
	answer := bytes.Repeat([]byte("x"), 300<<10)
	for _, tc := range []struct {
		name   string
		budget int64
		want   error
		held   int64 // by the claim after the read
	}{
		// 300 KiB into nothing: blocks of 64, 128 and 256 KiB (448),
		// then a copy of 300 KiB and a byte.
		{"room for the blocks and the copy", 448<<10 + 300<<10 + 1, nil, 300<<10 + 1},
		{"room for the blocks, not the copy", 448<<10 + 300<<10, errBufferFull, 0},
		{"room for two blocks only", 200 << 10, errBufferFull, 0},
		{"no room at all", 1, errBufferFull, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Another answer holds a byte: alone, an answer is never
			// refused.
			b := newResponseBudget(tc.budget + 1)
			other := claim{b: b}
			other.take(1)
			defer other.release()
			cl := &claim{b: b}
			body, over, err := readAtMost(nil, bytes.NewReader(answer), 1<<20, cl)
			if !errors.Is(err, tc.want) || over {
				t.Fatalf("err %v over %v, want %v", err, over, tc.want)
			}
			if tc.want == nil && !bytes.Equal(body, answer) || tc.want != nil && len(body) != 0 {
				t.Errorf("read %d bytes", len(body))
			}
			if cl.n != tc.held || b.held.Load() != tc.held+1 {
				t.Errorf("the claim holds %d, the budget %d; want %d and the other answer's byte", cl.n, b.held.Load(), tc.held)
			}
			cl.release()
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
	b := newResponseBudget(100<<10 + 1)
	other := claim{b: b} // another answer holds a byte: alone, an answer is never refused
	other.take(1)
	cl := &claim{b: b}
	buf := make([]byte, 0, answerBase)
	if _, _, err := readAnswer(&buf, bytes.NewReader(answer), int64(len(answer)), 1<<20, cl); err != errBufferFull || cl.n != 0 || cap(buf) != answerBase {
		t.Errorf("100 KiB with its Content-Length in a budget of 100 KiB: err %v, held %d, buffer %d; want errBufferFull before any buffer", err, cl.n, cap(buf))
	}
	b.limit.Store(200<<10 + 1)
	body, _, err := readAnswer(&buf, bytes.NewReader(answer), int64(len(answer)), 1<<20, cl)
	if err != nil || len(body) != len(answer) || cl.n != int64(len(answer))+1 {
		t.Fatalf("with room: err %v, %d bytes, held %d; want the answer, %d held", err, len(body), cl.n, len(answer)+1)
	}
	cl.release()
	// buf is now the 100 KiB one, as the pool would hand it to the next
	// answer: holding it takes what it has beyond answerBase.
	small := []byte(`{"ok":true}`)
	if _, _, err := readAnswer(&buf, bytes.NewReader(small), -1, 1<<20, cl); err != nil || cl.n != int64(cap(buf)-answerBase) {
		t.Errorf("a small answer in a grown buffer: err %v, held %d, want %d", err, cl.n, cap(buf)-answerBase)
	}
	cl.release()
	b.limit.Store(1<<10 + 1)
	if _, _, err := readAnswer(&buf, bytes.NewReader(small), -1, 1<<20, cl); err != nil || cl.n != 0 || cap(buf) != answerBase {
		t.Errorf("the grown buffer without room for it: err %v, held %d, buffer %d; want a small buffer and nothing held", err, cl.n, cap(buf))
	}
}

// TestReloadTakesTheBudgetAndSetsItsLimit: New with Previous shares the
// budget object, with the new config's limit.
func TestReloadTakesTheBudgetAndSetsItsLimit(t *testing.T) {
	build := func(limits string, prev *Gateway) *Gateway {
		t.Helper()
		cfg, err := config.Parse([]byte(limits+"\nstrategy: {mode: fallback}\nproviders: {p: {base_url: \"http://127.0.0.1:9/v1\", models: [m]}}\ntargets: [{virtual_key: p}]\n"),
			func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		g, err := New(cfg, Options{Previous: prev})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	first := build("limits: {max_buffered: 200MiB}", nil)
	if first.budget.limit.Load() != 200<<20 {
		t.Errorf("limit %d, want 200MiB", first.budget.limit.Load())
	}
	first.budget.held.Store(5 << 20) // answers in flight
	next := build("", first)
	if next.budget != first.budget || next.budget.limit.Load() != config.DefaultMaxBuffered || next.BufferedBytes() != 5<<20 {
		t.Errorf("after the reload: shared %v, limit %d, held %d; want the same budget, the default limit, 5MiB held",
			next.budget == first.budget, next.budget.limit.Load(), next.BufferedBytes())
	}
	if other := build("", nil); other.budget == first.budget {
		t.Error("a gateway built afresh took another's budget")
	}
	// Raising max_response alone raises the budget's default with it.
	if g := build("limits: {max_response: 128MiB}", nil); g.budget.limit.Load() != 128<<20 {
		t.Errorf("max_response 128MiB alone: budget %d, want 128MiB", g.budget.limit.Load())
	}
}

// A claim that held LargeAnswerHeld or more tells Options.OnLargeAnswerDone
// when it is released, once; smaller ones do not.
func TestLargeAnswerReleaseIsTold(t *testing.T) {
	b := newResponseBudget(1 << 30)
	told := 0
	f := func() { told++ }
	b.onLarge.Store(&f)
	small := claim{b: b}
	small.take(LargeAnswerHeld - 1)
	small.release()
	if told != 0 {
		t.Fatalf("a release of %d bytes was told", LargeAnswerHeld-1)
	}
	large := claim{b: b}
	large.take(LargeAnswerHeld)
	large.release()
	large.release()
	if told != 1 {
		t.Fatalf("a release of %d bytes was told %d times, want 1", LargeAnswerHeld, told)
	}
	var none func()
	b.onLarge.Store(&none)
	large.take(LargeAnswerHeld)
	large.release() // a nil hook: nothing to tell, no panic
}
