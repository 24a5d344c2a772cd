package conn

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// refScanner is the header-block scanner as first written, a byte at a
// time: the reference the line-skipping scanner must agree with.
type refScanner struct {
	scanning, lineStart, seenLine, inName, cl, te bool
	lineLen, nameLen                              int
	name                                          [20]byte
}

func (c *refScanner) scan(b []byte) {
	for _, ch := range b {
		if c.lineStart {
			c.lineStart, c.lineLen, c.nameLen, c.inName = false, 0, 0, true
		}
		switch ch {
		case '\n':
			if c.lineLen == 0 && c.seenLine {
				c.scanning = false
				return
			}
			if c.lineLen > 0 {
				c.seenLine = true
			}
			c.lineStart = true
			continue
		case '\r':
			continue
		}
		c.lineLen++
		if !c.inName {
			continue
		}
		if ch == ':' {
			c.inName = false
			switch string(c.name[:c.nameLen]) {
			case "content-length":
				c.cl = true
			case "transfer-encoding":
				c.te = true
			}
			continue
		}
		if c.nameLen == len(c.name) {
			c.inName = false
			continue
		}
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		c.name[c.nameLen] = ch
		c.nameLen++
	}
}

// checkScanAgrees feeds input in the given pieces to both scanners and
// compares what they conclude after each piece.
func checkScanAgrees(t *testing.T, input string, cuts []int) {
	t.Helper()
	c := &framingConn{lineStart: true}
	c.scanning.Store(true)
	ref := &refScanner{scanning: true, lineStart: true}
	rest := input
	for _, n := range append(cuts, len(input)) {
		n = min(n, len(rest))
		piece := []byte(rest[:n])
		rest = rest[n:]
		if c.scanning.Load() {
			c.scan(piece)
		}
		if ref.scanning {
			ref.scan(piece)
		}
		if c.scanning.Load() != ref.scanning || c.cl != ref.cl || c.te != ref.te {
			t.Fatalf("input %q cut %v: scanning/cl/te = %v/%v/%v, the byte-at-a-time scanner %v/%v/%v",
				input, cuts, c.scanning.Load(), c.cl, c.te, ref.scanning, ref.cl, ref.te)
		}
	}
}

func TestFramingScanAgreesWithReference(t *testing.T) {
	for _, in := range []string{
		"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nbody",
		"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\n",
		"POST / HTTP/1.1\r\nTRANSFER-ENCODING: chunked\r\nCONTENT-LENGTH: 1\r\n\r\n",
		"\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 1\r\n\r\n",
		"POST / HTTP/1.1\nContent-Length: 1\nTransfer-Encoding: x\n\n",
		"POST / HTTP/1.1\r\n\rContent-Length: 1\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Le\rngth: 1\r\n\r\n",
		"POST / HTTP/1.1\r\nX-Content-Length: 1\r\nContent-Lengthy: 2\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding-Extra-Long-Name: 1\r\n:Content-Length: 1\r\n\r\n",
		"POST / HTTP/1.1\r\n  Content-Length: 1\r\ncontent-length:1\r\n\r\n",
	} {
		for cut := 1; cut <= len(in); cut++ {
			checkScanAgrees(t, in, []int{cut})
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	parts := []string{"\r\n", "\n", "\r", ":", " ", "Content-Length", "content-length", "TRANSFER-ENCODING", "Transfer-Encoding",
		"Host", "t", "c", "C", "T", "x", "chunked", "5", "abcdefghijklmnopqrstuvwxyz", "\r\n\r\n"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		in := b.String()
		var cuts []int
		for range rng.IntN(4) {
			cuts = append(cuts, 1+rng.IntN(max(len(in), 1)))
		}
		checkScanAgrees(t, in, cuts)
	}
}

// FuzzFramingScan holds the line-skipping scanner to the byte-at-a-time
// one on any input cut anywhere.
func FuzzFramingScan(f *testing.F) {
	f.Add("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", uint8(7))
	f.Fuzz(func(t *testing.T, in string, cut uint8) {
		checkScanAgrees(t, in, []int{int(cut)})
	})
}

func BenchmarkFramingScan(b *testing.B) {
	req := []byte("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: OpenAI/Python 1.54.0\r\n" +
		"Content-Length: 296\r\nAccept: application/json\r\nAccept-Encoding: gzip, deflate\r\nAuthorization: Bearer sk-0123456789abcdef0123456789abcdef\r\n" +
		"Content-Type: application/json\r\nX-Stainless-Lang: python\r\nX-Stainless-Package-Version: 1.54.0\r\nTraceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n\r\n")
	c := &framingConn{}
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		c.nextRequest()
		c.scan(req)
	}
}
