package relay

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

func TestReadAtMost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		in     int
		limit  int64
		want   int
		maxCap int
	}{
		{"small", 100, 1000, 100, 32 << 10},
		{"as many bytes as n: over (the caller asks for one past its limit)", 5000, 5000, 0, 32 << 10},
		{"one under n", 4999, 5000, 4999, 32 << 10},
		{"over the limit: stops at it, keeps nothing", 1 << 20, 100_001, 0, 32 << 10},
		{"large, under the limit", 300_000, 1 << 20, 300_000, 600_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := unlimitedClaim()
			got, over, err := readAtMost(nil, strings.NewReader(strings.Repeat("x", tc.in)), tc.limit, cl)
			if err != nil {
				t.Fatal(err)
			}
			if held := int64(cap(got)); cl.n != held { // dst is nil: what came is in the joined copy
				t.Errorf("the Claim holds %d bytes, want the joined copy's %d", cl.n, held)
			}
			if over != (int64(tc.in) >= tc.limit) {
				t.Errorf("over = %v for %d bytes against %d", over, tc.in, tc.limit)
			}
			if len(got) != tc.want || cap(got) > tc.maxCap || tc.want > 0 && got[len(got)-1] != 'x' {
				t.Errorf("read %d bytes into cap %d; want %d bytes, cap at most %d", len(got), cap(got), tc.want, tc.maxCap)
			}
		})
	}
	boom := errors.New("reset")
	cl := unlimitedClaim()
	if got, _, err := readAtMost(nil, io.MultiReader(strings.NewReader(strings.Repeat("x", 1<<20)), errReader{boom}), 2<<20, cl); !errors.Is(err, boom) || len(got) != 0 || cl.n != 0 {
		t.Errorf("a read error: %v with %d bytes, the Claim holding %d; want the error, no body and nothing held", err, len(got), cl.n)
	}
}

// unlimitedClaim is a Claim on a budget nothing exhausts.
func unlimitedClaim() *Claim { return &Claim{b: NewBudget(1 << 40)} }

// TestReadAnswerReusesItsBuffer: once the pool's buffer has held an answer,
// an answer of that size again, with or without a Content-Length, costs no
// allocation, even from a body that says EOF only on the read after its
// last byte (HTTP/2's): the buffer keeps a byte of room to hear it.
func TestReadAnswerReusesItsBuffer(t *testing.T) {
	answer := bytes.Repeat([]byte("x"), 100<<10)
	for _, contentLength := range []int64{int64(len(answer)), -1} {
		buf := make([]byte, 0, 32<<10)
		r := bytes.NewReader(answer)
		cl := unlimitedClaim()
		read := func() {
			r.Reset(answer)
			body, over, err := readAnswer(&buf, r, contentLength, 1<<20, cl)
			if err != nil || over || !bytes.Equal(body, answer) {
				t.Fatalf("Content-Length %d: read %d bytes, over %v, err %v", contentLength, len(body), over, err)
			}
			cl.Release()
		}
		read() // the buffer grows to the answer
		if allocs := testing.AllocsPerRun(20, read); allocs != 0 {
			t.Errorf("Content-Length %d: %v allocations reading into the grown buffer, want 0", contentLength, allocs)
		}
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// BenchmarkReadAtMost reads a 100 KiB unary answer the way relayUnary does
// (readAnswer), with and without a Content-Length, into a buffer fresh from
// answerPool (32 KiB) or into the one the previous answer left in the pool.
// The body reports EOF on the read after its last byte, as an HTTP/2
// response body does.
func BenchmarkReadAtMost(b *testing.B) {
	answer := bytes.Repeat([]byte("x"), 100<<10)
	const limit = 64 << 20
	for _, bc := range []struct {
		name          string
		contentLength int64
		pooled        bool
	}{
		{"content-length/fresh", int64(len(answer)), false},
		{"content-length/pooled", int64(len(answer)), true},
		{"chunked/fresh", -1, false},
		{"chunked/pooled", -1, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			fresh := make([]byte, 0, 32<<10)
			pooled := fresh
			r := bytes.NewReader(answer)
			cl := &Claim{b: NewBudget(config.DefaultMaxBuffered)}
			b.SetBytes(int64(len(answer)))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(answer)
				buf := fresh
				if bc.pooled {
					buf = pooled
				}
				body, over, err := readAnswer(&buf, r, bc.contentLength, limit, cl)
				if err != nil || over || len(body) != len(answer) {
					b.Fatalf("read %d bytes, over %v, err %v", len(body), over, err)
				}
				cl.Release() // as relayUnary does
				if bc.pooled {
					pooled = buf
				}
			}
		})
	}
}
