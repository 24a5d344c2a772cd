package relay

import (
	"io"
	"testing"
	"testing/iotest"
)

// read waits with one byte and takes the rest of what came into a pooled
// buffer: every byte arrives once and in order, however the upstream's
// body is cut, and between two chunks (after drop) nothing pooled is held.
func TestStreamReadHoldsNoBufferBetweenChunks(t *testing.T) {
	const body = "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n"
	for _, tc := range []struct {
		name string
		r    func() io.Reader
	}{
		{"whole", func() io.Reader { return newStringReader(body) }},
		{"one byte a read", func() io.Reader { return iotest.OneByteReader(newStringReader(body)) }},
		{"half a read", func() io.Reader { return iotest.HalfReader(newStringReader(body)) }},
		{"data with EOF", func() io.Reader { return iotest.DataErrReader(newStringReader(body)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r()
			var s Stream
			var got []byte
			for range 1000 {
				p, err := s.read(r)
				got = append(got, p...)
				s.Drop()
				if s.bufp != nil || s.outp != nil {
					t.Fatal("a buffer is held after drop")
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if string(got) != body {
				t.Errorf("read %q, want %q", got, body)
			}
		})
	}
}

type stringReader struct{ s string }

func newStringReader(s string) *stringReader { return &stringReader{s} }

func (r *stringReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p, r.s)
	r.s = r.s[n:]
	return n, nil
}
