package relay

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// Every case is a real failure on the loopback interface, produced the way
// an attempt meets it: a RoundTrip of the gateway's own transport (with a
// resolver or timeout swapped in where the case needs one).

// listenLoopback is a listener on a free loopback port, closed at the end
// of the test.
func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// rawServer accepts connections on a loopback port and hands each to
// serve, which owns it; it returns the server's URL.
func rawServer(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	ln := listenLoopback(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return "http://" + ln.Addr().String()
}

// readRequestHead reads a request's header block off c.
func readRequestHead(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil || line == "\r\n" {
			return
		}
	}
}

// closedPort is a loopback URL nothing listens on.
func closedPort(t *testing.T) string {
	ln := listenLoopback(t)
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

// nxdomainResolver answers every DNS query on a loopback UDP port with
// NXDOMAIN, as a resolver does for a name under .invalid, so a lookup
// fails the real way without leaving the machine.
func nxdomainResolver(t *testing.T) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 12 {
				continue
			}
			resp := append([]byte(nil), buf[:n]...)
			resp[2] = 0x81 | buf[2]&0x01 // QR, opcode 0, RD copied
			resp[3] = 0x83               // RA, rcode 3: NXDOMAIN
			for i := 6; i < 12; i++ {    // no answer, authority or additional records
				resp[i] = 0
			}
			_, _ = pc.WriteTo(resp, from)
		}
	}()
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// patience bounds how long roundTrip waits for the error. It guards
// against a hang; no case asserts on it: under -race on a machine at load
// 30 a TLS handshake with httptest took over 10 s, and the 10 s deadline
// this was then came back as the error, of kind timeout.
const patience = 2 * time.Minute

// roundTrip sends a POST to url with tr (when nil, the gateway's transport
// with patience for its TLS handshake: the cases that use it are about the
// error's kind, not its timing) and returns the error, failing the test
// when there is none or none came within patience.
func roundTrip(t *testing.T, tr http.RoundTripper, url string) error {
	t.Helper()
	if tr == nil {
		gw := upstream.NewTransport()
		gw.TLSHandshakeTimeout = patience
		tr = gw
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(`{"model":"m"}`))
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("POST %s: %d, want a transport error", url, resp.StatusCode)
	}
	if ctx.Err() != nil {
		t.Fatalf("POST %s: no answer within %v (%v)", url, patience, err)
	}
	return err
}

func TestTransportKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        func(t *testing.T) error
		wantKind   string
		wantReason string
	}{
		{"nothing listens on the port", func(t *testing.T) error {
			return roundTrip(t, nil, closedPort(t))
		}, transportRefused, "transport (connection refused)"},
		{"the server resets the connection", func(t *testing.T) error {
			return roundTrip(t, nil, rawServer(t, func(c net.Conn) {
				readRequestHead(c)
				c.(*net.TCPConn).SetLinger(0) // close sends RST
				c.Close()
			}))
		}, transportReset, "transport (connection reset)"},
		{"the server closes in the middle of its headers", func(t *testing.T) error {
			return roundTrip(t, nil, rawServer(t, func(c net.Conn) {
				readRequestHead(c)
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: appl")
				c.Close()
			}))
		}, transportEOF, "transport (connection closed before an answer)"},
		{"the server closes without a word", func(t *testing.T) error {
			return roundTrip(t, nil, rawServer(t, func(c net.Conn) {
				readRequestHead(c)
				c.Close()
			}))
		}, transportEOF, "transport (connection closed before an answer)"},
		{"the server answers something that is not HTTP", func(t *testing.T) error {
			return roundTrip(t, nil, rawServer(t, func(c net.Conn) {
				readRequestHead(c)
				_, _ = io.WriteString(c, "SSH-2.0-OpenSSH_9.6\r\n\r\n")
				c.Close()
			}))
		}, transportProtocol, "transport (the answer was not valid HTTP)"},
		{"a certificate no authority we trust signed", func(t *testing.T) error {
			srv := httptest.NewTLSServer(http.NotFoundHandler())
			t.Cleanup(srv.Close)
			return roundTrip(t, nil, srv.URL) // the gateway's transport does not trust httptest's CA
		}, transportTLS, "transport (TLS: certificate signed by an unknown authority)"},
		{"an https:// URL for a plain HTTP server", func(t *testing.T) error {
			srv := httptest.NewServer(http.NotFoundHandler())
			t.Cleanup(srv.Close)
			return roundTrip(t, nil, strings.Replace(srv.URL, "http://", "https://", 1))
		}, transportTLS, "transport (TLS: the server did not answer in TLS (an http:// server behind an https:// URL?))"},
		{"a TLS handshake that never ends", func(t *testing.T) error {
			url := rawServer(t, func(c net.Conn) {
				defer c.Close()
				_, _ = io.Copy(io.Discard, c) // reads the ClientHello, answers nothing
			})
			tr := upstream.NewTransport()
			tr.TLSHandshakeTimeout = 50 * time.Millisecond
			return roundTrip(t, tr, strings.Replace(url, "http://", "https://", 1))
		}, transportTimeout, "transport (timed out connecting)"},
		{"a host name that does not resolve", func(t *testing.T) error {
			tr := upstream.NewTransport()
			tr.DialContext = (&net.Dialer{Timeout: patience, Resolver: nxdomainResolver(t)}).DialContext
			tr.Proxy = nil
			return roundTrip(t, tr, "http://nonexistent.invalid")
		}, transportDNS, "transport (DNS: no such host)"},
		{"an HTTP/2 stream the server resets", func(t *testing.T) error {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				panic(http.ErrAbortHandler) // HTTP/2: RST_STREAM
			}))
			srv.EnableHTTP2 = true
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			srv.StartTLS()
			t.Cleanup(srv.Close)
			tr := srv.Client().Transport.(*http.Transport).Clone()
			tr.ForceAttemptHTTP2 = true
			return roundTrip(t, tr, srv.URL)
		}, transportReset, "transport (connection reset)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err(t)
			if got := transportKind(err); got != tt.wantKind {
				t.Errorf("transportKind(%v) = %q, want %q", err, got, tt.wantKind)
			}
			reason := TransportReason(err)
			if reason != tt.wantReason {
				t.Errorf("TransportReason(%v) = %q, want %q", err, reason, tt.wantReason)
			}
			if strings.Contains(reason, "127.0.0.1") || strings.Contains(reason, "invalid") {
				t.Errorf("TransportReason = %q names the address", reason)
			}
		})
	}
}

func TestTransportKindOfOtherErrors(t *testing.T) {
	t.Parallel()
	for _, err := range []error{nil, errors.New("something else"), context.Canceled} {
		if got := transportKind(err); got != "" {
			t.Errorf("transportKind(%v) = %q, want \"\"", err, got)
		}
	}
	if got := TransportReason(errors.New("something else")); got != "transport" {
		t.Errorf("TransportReason of an unknown error = %q, want transport", got)
	}
	// A proxy URL with credentials in the error's text stays out.
	err := &net.OpError{Op: "proxyconnect", Net: "tcp", Err: &tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}
	wrapped := errors.Join(errors.New("proxyconnect https://user:hunter2@proxy:3128"), err)
	if got := TransportReason(wrapped); strings.Contains(got, "hunter2") || !strings.HasPrefix(got, "transport (TLS: ") {
		t.Errorf("TransportReason = %q, want a TLS reason without the proxy's password", got)
	}
}
