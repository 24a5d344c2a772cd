package router

import (
	"context"
	"net"
	"net/http"
	"sync"
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
	return &framingConn{Conn: c, scanning: true, lineStart: true}, nil
}

// framingConn scans the header block of each request as it is read: only
// header names at the start of a line, and only until the blank line that
// ends the block, so a body costs nothing. A pipelined request whose bytes
// were read with the previous one is not seen (it is then served as Go
// would: Transfer-Encoding wins).
type framingConn struct {
	net.Conn

	mu        sync.Mutex // guards the scanner; Read and the server's state hook run on different goroutines
	scanning  bool       // inside a header block
	lineStart bool       // the next byte starts a line
	lineLen   int        // bytes of the current line so far
	seenLine  bool       // a non-empty line of this block was seen (leading blank lines do not end it)
	name      [20]byte   // the current line's header name, lower-cased, while it may still match
	nameLen   int
	inName    bool // still reading the current line's name (before ':')
	cl, te    bool // this block named Content-Length, Transfer-Encoding
}

func (c *framingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if c.scanning {
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
	c.scanning, c.lineStart, c.lineLen, c.seenLine, c.nameLen, c.inName, c.cl, c.te = true, true, 0, false, 0, false, false, false
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
	for _, ch := range b {
		if c.lineStart {
			c.lineStart, c.lineLen, c.nameLen, c.inName = false, 0, 0, true
		}
		switch ch {
		case '\n':
			if c.lineLen == 0 && c.seenLine { // the blank line: the block ends
				c.scanning = false
				return
			}
			if c.lineLen > 0 {
				c.seenLine = true
			}
			c.lineStart = true
			continue
		case '\r':
			continue // a CR counts as nothing: "\r\n" ends a line, "\r\n\r\n" a block
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
			c.inName = false // longer than any name we look for
			continue
		}
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		c.name[c.nameLen] = ch
		c.nameLen++
	}
}

// framingFault says why r's framing is refused, or "" when it is not:
//   - HTTP/1.1 with both Transfer-Encoding and Content-Length. Only a
//     request Go decoded as chunked can have had both (any other transfer
//     coding Go refuses itself), so others cost one length check.
//   - HTTP/1.0 with Transfer-Encoding, with or without Content-Length. Go
//     drops the header and frames the body by Content-Length alone (or as
//     empty), so the bytes after it would be read as the next request,
//     while a proxy in front may have framed them as this one's chunked
//     body. RFC 9112 (section 6.1) says to treat such framing as faulty and
//     close the connection.
func framingFault(r *http.Request) string {
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
