package upstream

import (
	"crypto/tls"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
)

// firstContact learns, from the first connection to each https host,
// whether the host speaks HTTP/2, and then sends the host's requests on an
// HTTP/2-only twin transport that keeps one connection per host taking
// new streams, dialing the next only when that one is full (the server's
// SETTINGS_MAX_CONCURRENT_STREAMS). Go's transport alone, not knowing
// before a TLS handshake which protocol a host speaks, dials a connection
// for every request that finds none free: a burst of thousands of streams
// would open thousands of connections, each carrying one stream. The
// first request's burst waits until its connection is up. Hosts on
// HTTP/1.1 (and http:// URLs) go on as before; once learned, a host's
// requests pay one map read.
type firstContact struct {
	next  http.RoundTripper // auto: the first contact, and HTTP/1.1 hosts
	h2    http.RoundTripper // HTTP/2 only, one connection dialed at a time
	hosts sync.Map          // URL host → *contact
}

// contact is what the first connection to a host told.
type contact struct {
	ready chan struct{} // closed once the first request got a connection or failed
	once  sync.Once
	h2    atomic.Bool // the host negotiated HTTP/2; set before ready is closed
}

func (c *contact) release() { c.once.Do(func() { close(c.ready) }) }

func (f *firstContact) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" {
		return f.next.RoundTrip(r)
	}
	host := r.URL.Host
	if v, ok := f.hosts.Load(host); ok {
		return f.after(v.(*contact), r)
	}
	c := &contact{ready: make(chan struct{})}
	if v, loaded := f.hosts.LoadOrStore(host, c); loaded {
		return f.after(v.(*contact), r)
	}
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if tc, ok := info.Conn.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol == "h2" {
			c.h2.Store(true)
		}
		c.release()
	}}
	resp, err := f.next.RoundTrip(r.WithContext(httptrace.WithClientTrace(r.Context(), trace)))
	if err != nil && !c.h2.Load() {
		f.hosts.CompareAndDelete(host, c) // nothing learned: the next request tries afresh
	}
	c.release()
	return resp, err
}

// after sends r once c's first connection is up.
func (f *firstContact) after(c *contact, r *http.Request) (*http.Response, error) {
	select {
	case <-c.ready:
	case <-r.Context().Done():
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, r.Context().Err()
	}
	if c.h2.Load() {
		return f.h2.RoundTrip(r)
	}
	return f.next.RoundTrip(r)
}

// CloseIdleConnections closes the idle connections of the transport
// under it.
func (f *firstContact) CloseIdleConnections() {
	for _, t := range []http.RoundTripper{f.next, f.h2} {
		if c, ok := t.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}

// newFirstContact is auto's transport: t, with an HTTP/2-only twin for
// the hosts that speak it.
func newFirstContact(t *http.Transport) *firstContact {
	h2 := t.Clone()
	h2.Protocols = new(http.Protocols)
	h2.Protocols.SetHTTP2(true)
	oneDialAtATime(h2)
	return &firstContact{next: t, h2: h2}
}

// oneDialAtATime sets an HTTP/2-only transport to keep one connection per
// host taking new streams: over HTTP/2 Go counts, per host, the
// connections that still take new streams and those being dialed, and a
// connection that is full makes room for the next dial.
func oneDialAtATime(t *http.Transport) { t.MaxConnsPerHost = 1 }
