package main

import (
	"log"
	"net"
	"net/http"
	"sync"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// newServer is an HTTP server bounded the way limits says, for either
// listener: read_timeout for a whole request (its headers get at most
// HeaderTimeout of it), idle_timeout for a kept-alive connection between
// requests. There is no write timeout: a stream may rightly last minutes,
// so the gateway bounds each write instead (router.Options.StreamWriteTimeout).
func newServer(h http.Handler, l config.Limits, errLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadTimeout:       l.ReadTimeout,
		ReadHeaderTimeout: l.HeaderTimeout(),
		IdleTimeout:       l.IdleTimeout,
		ErrorLog:          errLog,
	}
}

// limitListener accepts at most n connections at once: beyond that it does
// not call Accept, so new connections wait in the kernel's backlog until
// one closes. golang.org/x/net/netutil.LimitListener does the same, but
// its connections hide the TCP connection's CloseWrite, which the server
// needs to end a connection after a final answer (a 400, 408 or 413 whose
// body was not read) without a reset that can swallow that answer.
type limitListener struct {
	net.Listener
	sem       chan struct{} // a token per open connection
	done      chan struct{} // closed by Close: a waiting Accept gives up
	closeOnce sync.Once
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its token back once, on the first Close.
type limitedConn struct {
	net.Conn
	releaseOnce sync.Once
	release     func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.releaseOnce.Do(c.release)
	return err
}

// CloseWrite half-closes the TCP connection, as the server's lingering
// close expects.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
