package upstream

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// How HTTP/2 upstream connections are kept. One connection carries many
// streams; Go never opens more of them on one connection than the
// server's SETTINGS_MAX_CONCURRENT_STREAMS allows, and opens another
// connection only when every open one is full (not strict: a stream never
// waits for another to end). A connection that goes silent is pinged, so
// the streams it carries fail over instead of waiting for their own
// timeouts, and new requests do not pick it.
const (
	h2PingAfter   = 15 * time.Second // no frame for this long: ping
	h2PingTimeout = 10 * time.Second // no PING answer for this long: close
)

// Transports hands each provider the upstream transport its http2 and
// tls settings ask for. Providers with the same settings share one
// transport, so they share its connections; one Transports lives as long
// as the process, so a reload keeps the connections it has.
type Transports struct {
	// base is the transport of http2 auto without a CA file: the
	// gateway's Options.Transport, which tests may replace. Immutable.
	base http.RoundTripper

	mu    sync.Mutex
	byKey map[transportKey]http.RoundTripper // guarded by mu
}

// transportKey is what makes two providers' transports differ: the http2
// mode and the CA certificates they trust (by content, so an edited file
// after a reload is read anew).
type transportKey struct {
	http2 string
	ca    [sha256.Size]byte
}

// NewTransports makes the set; base (nil: NewTransport()) is the
// transport of providers with http2 auto and no tls.ca_file.
func NewTransports(base http.RoundTripper) *Transports {
	if base == nil {
		base = newFirstContact(NewTransport())
	}
	return &Transports{base: base, byKey: map[transportKey]http.RoundTripper{}}
}

// RoundTrip carries r on the transport of providers with the default
// settings, so a Transports can stand where one transport is asked for.
func (ts *Transports) RoundTrip(r *http.Request) (*http.Response, error) {
	return ts.base.RoundTrip(r)
}

// For is p's transport. A CA file that cannot be read (check refuses
// such a config; the file may have gone since) gives a transport whose
// every request fails with that error: never a silent fallback.
func (ts *Transports) For(p *config.Provider) http.RoundTripper {
	mode := p.HTTP2
	if mode == "" {
		mode = config.HTTP2Auto
	}
	var pem []byte
	if p.TLS.CAFile != "" {
		var err error
		if pem, err = os.ReadFile(p.TLS.CAFile); err != nil {
			return failingTransport{fmt.Errorf("tls.ca_file: %w", pathError(err))}
		}
	}
	if mode == config.HTTP2Auto && pem == nil {
		return ts.base
	}
	key := transportKey{http2: mode}
	if pem != nil {
		key.ca = sha256.Sum256(pem)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.byKey[key]; ok {
		return t
	}
	t, err := newTransportFor(mode, pem)
	if err != nil {
		return failingTransport{err}
	}
	var rt http.RoundTripper = t
	if mode == config.HTTP2Auto {
		rt = newFirstContact(t)
	}
	ts.byKey[key] = rt
	return rt
}

// CloseIdleConnections closes the idle connections of every transport
// of the set.
func (ts *Transports) CloseIdleConnections() {
	type closer interface{ CloseIdleConnections() }
	if c, ok := ts.base.(closer); ok {
		c.CloseIdleConnections()
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.byKey {
		if c, ok := t.(closer); ok {
			c.CloseIdleConnections()
		}
	}
}

// newTransportFor is NewTransport set for an http2 mode, trusting pem's
// certificates beside the system pool when pem is not nil.
func newTransportFor(mode string, pem []byte) (*http.Transport, error) {
	t := NewTransport()
	if pem != nil {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool() // no system pool here: the file alone
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("tls.ca_file holds no PEM certificate")
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	t.Protocols = new(http.Protocols)
	switch mode {
	case config.HTTP2Off:
		t.ForceAttemptHTTP2 = false
		t.Protocols.SetHTTP1(true)
	case config.HTTP2PriorKnowledge:
		t.Protocols.SetUnencryptedHTTP2(true)
		oneDialAtATime(t)
	default:
		t.Protocols.SetHTTP1(true)
		t.Protocols.SetHTTP2(true)
	}
	return t, nil
}

// failingTransport fails every request with err: a provider whose
// transport could not be made.
type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	return nil, f.err
}

// pathError is err without the path an *os.PathError repeats.
func pathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
