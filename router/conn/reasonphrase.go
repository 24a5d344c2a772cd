package conn

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
)

// The gateway relays an upstream's status as it came, and providers and
// the CDNs in front of them use statuses net/http has no text for:
// Anthropic's 529 (overloaded), Cloudflare's 520-530, nginx's 499. For
// those, Go's server writes "HTTP/1.1 529 status code 529", which reads
// like a bug in the gateway. ReasonPhrases puts the phrase a person (and
// a log line, and curl -i) expects in its place. It works on the bytes of
// the connection because net/http offers no other way: the status line is
// written by the server, not by the handler.
//
// HTTP/2 has no reason phrase; its frames pass untouched.

// nonStandardPhrases are the reason phrases, de facto (none is in an RFC),
// of statuses that LLM providers, their CDNs and common proxies send. 529
// has had several; "Site is overloaded" is the one most clients and
// references print.
var nonStandardPhrases = map[int]string{
	494: "Request Header Too Large",             // nginx
	495: "SSL Certificate Error",                // nginx
	496: "SSL Certificate Required",             // nginx
	497: "HTTP Request Sent to HTTPS Port",      // nginx
	498: "Invalid Token",                        // Esri ArcGIS
	499: "Client Closed Request",                // nginx
	509: "Bandwidth Limit Exceeded",             // Apache, cPanel
	520: "Web Server Returned an Unknown Error", // Cloudflare, 520-527 and 530
	521: "Web Server Is Down",
	522: "Connection Timed Out",
	523: "Origin Is Unreachable",
	524: "A Timeout Occurred",
	525: "SSL Handshake Failed",
	526: "Invalid SSL Certificate",
	527: "Railgun Error",
	529: "Site is overloaded", // Anthropic's overloaded_error, Qualys
	530: "Origin DNS Error",
	598: "Network Read Timeout Error",    // some proxies
	599: "Network Connect Timeout Error", // some proxies
}

// ReasonPhrase is the reason phrase of an HTTP status: net/http's
// StatusText, else the de-facto phrase of a non-standard status
// (nonStandardPhrases), else the name of its class ("Client Error",
// "Server Error", ...). It is never empty.
func ReasonPhrase(code int) string {
	if s := http.StatusText(code); s != "" {
		return s
	}
	if s, ok := nonStandardPhrases[code]; ok {
		return s
	}
	switch code / 100 {
	case 1:
		return "Informational"
	case 2:
		return "Success"
	case 3:
		return "Redirection"
	case 4:
		return "Client Error"
	case 5:
		return "Server Error"
	}
	return "Unknown Status"
}

// ReasonPhrases wraps ln, which srv serves, so that an HTTP/1 response
// whose status net/http has no text for carries ReasonPhrase instead of
// "status code N". It installs srv.ConnState and srv.ConnContext, calling
// those already set with the connection ln returned, so it wraps any other
// listener guard (GuardFraming) from outside: serve the returned listener
// with srv. The listener must carry plain HTTP (no TLS under it).
//
// Cost: one atomic load per write, and a look at the first bytes of the
// first write of each response.
func ReasonPhrases(srv *http.Server, ln net.Listener) net.Listener {
	prevContext, prevState := srv.ConnContext, srv.ConnState
	inner := func(c net.Conn) net.Conn {
		if pc, ok := c.(*phraseConn); ok {
			return pc.Conn
		}
		return c
	}
	if prevContext != nil {
		srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
			return prevContext(ctx, inner(c))
		}
	}
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		if pc, ok := c.(*phraseConn); ok && st == http.StateIdle {
			// The response before is flushed whole (the server flushes
			// before it goes idle): the next bytes written start a status
			// line.
			pc.atStatus.Store(true)
		}
		if prevState != nil {
			prevState(inner(c), st)
		}
	}
	return phraseListener{ln}
}

type phraseListener struct{ net.Listener }

func (l phraseListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	pc := &phraseConn{Conn: c}
	pc.atStatus.Store(true)
	return pc, nil
}

// phraseConn rewrites the status line at the start of each response.
// net/http writes a response's status line at the start of one write (its
// buffered writer is empty then: the response before was flushed), so
// only the first write after the start or an idle state is looked at,
// and a body is never.
type phraseConn struct {
	net.Conn
	// atStatus: the next write starts a response. Set by Accept and the
	// server's idle state, cleared by the write of a final status line;
	// atomic because an HTTP/2 server writes from its own goroutine.
	atStatus atomic.Bool
}

// CloseWrite half-closes the connection when it can, so the server's
// lingering close after a final answer works through the wrapper.
func (c *phraseConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *phraseConn) Write(p []byte) (int, error) {
	if !c.atStatus.Load() {
		return c.Conn.Write(p)
	}
	return c.writeStatus(p)
}

// statusPrefixLen is len("HTTP/1.1 529"): protocol, space, the code.
const statusPrefixLen = 12

func (c *phraseConn) writeStatus(p []byte) (int, error) {
	if len(p) < statusPrefixLen || string(p[:7]) != "HTTP/1." || p[8] != ' ' {
		c.atStatus.Store(false) // not an HTTP/1 response (HTTP/2 frames): nothing to do on this connection
		return c.Conn.Write(p)
	}
	if p[9] != '1' {
		// A final status: the rest of the response is its headers and
		// body. After a 1xx (100 Continue, 103 Early Hints) another status
		// line follows.
		c.atStatus.Store(false)
	}
	end := genericStatusEnd(p)
	if end < 0 {
		return c.Conn.Write(p)
	}
	code, _ := strconv.Atoi(string(p[9:statusPrefixLen])) // three digits: genericStatusEnd checked
	phrase := ReasonPhrase(code)
	out := make([]byte, 0, len(p)-end+statusPrefixLen+1+len(phrase)+2)
	out = append(out, p[:statusPrefixLen]...)
	out = append(out, ' ')
	out = append(out, phrase...)
	out = append(out, "\r\n"...)
	lineLen := len(out)
	out = append(out, p[end:]...)
	n, err := c.Conn.Write(out)
	if n >= lineLen {
		return n - lineLen + end, err // the bytes of p written
	}
	return 0, err
}

// genericStatusEnd is the end of the status line at the start of p (after
// its CRLF) when it is the one net/http writes for a status it has no
// text for, "HTTP/1.1 529 status code 529\r\n"; else -1. p starts with
// "HTTP/1.x ".
func genericStatusEnd(p []byte) int {
	const mid = " status code "
	const end = statusPrefixLen + len(mid) + 3 + 2
	if len(p) < end || string(p[statusPrefixLen:statusPrefixLen+len(mid)]) != mid {
		return -1
	}
	code, again := p[9:statusPrefixLen], p[statusPrefixLen+len(mid):end-2]
	for i := range code {
		if code[i] < '0' || code[i] > '9' || again[i] != code[i] {
			return -1
		}
	}
	if p[end-2] != '\r' || p[end-1] != '\n' {
		return -1
	}
	return end
}
