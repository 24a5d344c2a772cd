package conn

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// A request that carries both Transfer-Encoding and Content-Length frames
// its body two ways: the classic request-smuggling shape, where a proxy in
// front and the gateway may disagree on where one request ends and the
// next begins. Go's server accepts it, obeys Transfer-Encoding, deletes
// Content-Length from the header before the handler runs and keeps the
// connection open, so the handler alone cannot tell. An HTTP/1.0 request
// with Transfer-Encoding is the same shape the other way round: Go deletes
// Transfer-Encoding and obeys Content-Length. GuardFraming watches the
// bytes of each request's header block on the connection itself, and the
// handler answers such a request 400 and closes the connection.

// GuardFraming wraps ln so that the handler of srv can refuse a request
// that names both Transfer-Encoding and Content-Length. It installs
// srv.ConnContext and srv.ConnState (calling any already set); serve the
// returned listener with srv.
func GuardFraming(srv *http.Server, ln net.Listener) net.Listener {
	prevContext, prevState := srv.ConnContext, srv.ConnState
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevContext != nil {
			ctx = prevContext(ctx, c)
		}
		if fc, ok := c.(*framingConn); ok {
			ctx = context.WithValue(ctx, framingKey{}, fc)
		}
		return ctx
	}
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		if fc, ok := c.(*framingConn); ok && st == http.StateIdle {
			fc.nextRequest() // the next bytes read start the next request's header block
		}
		if prevState != nil {
			prevState(c, st)
		}
	}
	return framingListener{ln}
}

type framingKey struct{}

type framingListener struct{ net.Listener }

func (l framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	fc := &framingConn{Conn: c, lineStart: true}
	fc.scanning.Store(true)
	return fc, nil
}

// framingConn scans the header block of each request as it is read: only
// header names at the start of a line, and only until the blank line that
// ends the block, so a body costs nothing. A pipelined request whose bytes
// were read with the previous one is not seen (it is then served as Go
// would: Transfer-Encoding wins).
type framingConn struct {
	net.Conn

	mu sync.Mutex // guards the scanner; Read and the server's state hook run on different goroutines
	// scanning: inside a header block. Read looks at it without the lock
	// first, so a body, and the server's background read, cost no lock.
	scanning  atomic.Bool
	lineStart bool     // the next byte starts a line
	lineLen   int      // bytes of the current line so far
	seenLine  bool     // a non-empty line of this block was seen (leading blank lines do not end it)
	name      [20]byte // the current line's header name, lower-cased, while it may still match
	nameLen   int
	inName    bool // still reading the current line's name (before ':')
	cl, te    bool // this block named Content-Length, Transfer-Encoding
}

func (c *framingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.scanning.Load() {
		c.mu.Lock()
		if c.scanning.Load() {
			c.scan(p[:n])
		}
		c.mu.Unlock()
	}
	return n, err
}

// CloseWrite half-closes the connection when it can, so the server's
// lingering close after a final answer works through the wrapper.
func (c *framingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *framingConn) nextRequest() {
	c.mu.Lock()
	c.lineStart, c.lineLen, c.seenLine, c.nameLen, c.inName, c.cl, c.te = true, 0, false, 0, false, false, false
	c.scanning.Store(true)
	c.mu.Unlock()
}

// seen reports whether the header block being served named
// Content-Length and Transfer-Encoding.
func (c *framingConn) seen() (cl, te bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cl, c.te
}

func (c *framingConn) scan(b []byte) {
	for len(b) > 0 {
		if !c.lineStart && !c.inName {
			// Past the current line's name: nothing else on the line
			// matters but where it ends, and the line is not blank (its
			// name phase counted a byte), so skip to its end at once.
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				return
			}
			b = b[i+1:]
			c.seenLine, c.lineStart = true, true
			continue
		}
		if c.lineStart {
			switch b[0] {
			case 'c', 'C', 't', 'T', '\r', '\n':
			default:
				// No name we look for starts so: the line is not blank,
				// and its name is of no interest.
				c.lineStart, c.lineLen, c.nameLen, c.inName = false, 1, 0, false
				b = b[1:]
				continue
			}
		}
		if !c.step(b[0]) {
			return
		}
		b = b[1:]
	}
}

// step scans one byte at the start of a line or within its name; false
// once the blank line ending the header block is seen.
func (c *framingConn) step(ch byte) bool {
	if c.lineStart {
		c.lineStart, c.lineLen, c.nameLen, c.inName = false, 0, 0, true
	}
	switch ch {
	case '\n':
		if c.lineLen == 0 && c.seenLine { // the blank line: the block ends
			c.scanning.Store(false)
			return false
		}
		if c.lineLen > 0 {
			c.seenLine = true
		}
		c.lineStart = true
		return true
	case '\r':
		return true // a CR counts as nothing: "\r\n" ends a line, "\r\n\r\n" a block
	}
	c.lineLen++
	if !c.inName {
		return true
	}
	if ch == ':' {
		c.inName = false
		switch string(c.name[:c.nameLen]) {
		case "content-length":
			c.cl = true
		case "transfer-encoding":
			c.te = true
		}
		return true
	}
	if c.nameLen == len(c.name) {
		c.inName = false // longer than any name we look for
		return true
	}
	if 'A' <= ch && ch <= 'Z' {
		ch += 'a' - 'A'
	}
	c.name[c.nameLen] = ch
	c.nameLen++
	return true
}

// FramingFault says why r's framing is refused, or "" when it is not:
//   - HTTP/1.1 with both Transfer-Encoding and Content-Length. Only a
//     request Go decoded as chunked can have had both (any other transfer
//     coding Go refuses itself), so others cost one length check.
//   - HTTP/1.0 with Transfer-Encoding, with or without Content-Length. Go
//     drops the header and frames the body by Content-Length alone (or as
//     empty), so the bytes after it would be read as the next request,
//     while a proxy in front may have framed them as this one's chunked
//     body. RFC 9112 (section 6.1) says to treat such framing as faulty and
//     close the connection.
func FramingFault(r *http.Request) string {
	const both = "a request must not carry both Transfer-Encoding and Content-Length"
	fc, _ := r.Context().Value(framingKey{}).(*framingConn)
	if !r.ProtoAtLeast(1, 1) {
		if fc == nil {
			return ""
		}
		switch cl, te := fc.seen(); {
		case te && cl:
			return both
		case te:
			return "an HTTP/1.0 request must not carry Transfer-Encoding"
		}
		return ""
	}
	if len(r.TransferEncoding) == 0 {
		return ""
	}
	if len(r.Header["Content-Length"]) > 0 { // kept by a server that did not delete it
		return both
	}
	if fc != nil {
		if cl, te := fc.seen(); cl && te {
			return both
		}
	}
	return ""
}
