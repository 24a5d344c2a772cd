package relay

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
)

// A transport failure is every way an attempt can end without an HTTP
// answer. error.type says only "transport" (one value, for the failure
// model and the metrics); what the client reads in the all-failed answer
// says which kind, so a person can act on it: a refused connection is a
// wrong port or a provider down, a TLS failure a certificate or an http://
// URL for https, a DNS failure a typo in the host. The kind comes from the
// error's type and errno, never from its text where that could be avoided,
// and what is shown is a fixed phrase: the error's own text carries
// addresses (and in a proxy URL, credentials), which stay out.

// Transport failure kinds.
const (
	transportRefused     = "refused"     // nothing listens there: wrong port, or the provider is down
	transportReset       = "reset"       // the peer reset the connection (or an HTTP/2 stream)
	transportEOF         = "eof"         // the connection closed before a whole answer
	transportTimeout     = "timeout"     // connecting (dial, TLS handshake) took too long
	transportTLS         = "tls"         // the TLS handshake failed: certificate, or not TLS at all
	transportDNS         = "dns"         // the host name did not resolve
	transportUnreachable = "unreachable" // no route to the network or host
	transportProtocol    = "protocol"    // an answer that is not HTTP, or headers too large
	transportGoAway      = "goaway"      // the server closed the HTTP/2 connection under the stream
)

// transportKind names the kind of a transport failure: one of the
// transport* kinds, or "" when err is none of them.
func transportKind(err error) string {
	if err == nil {
		return ""
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return transportDNS // before timeouts: a DNS timeout is a DNS problem
	}
	if tlsDetail(err) != "" {
		return transportTLS
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return transportRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return transportReset
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return transportUnreachable
	}
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return transportTimeout
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return transportEOF
	}
	// What net/http reports only in text: its HTTP/2 stream resets and
	// GOAWAYs (the bundled http2 package's types are unexported), an
	// answer that is not HTTP, and the idle connection the server closed.
	msg := err.Error()
	switch {
	case strings.Contains(msg, "GOAWAY"):
		return transportGoAway
	case strings.Contains(msg, "stream error:"):
		return transportReset
	case strings.Contains(msg, "malformed HTTP"), strings.Contains(msg, "response headers exceeded"):
		return transportProtocol
	case strings.Contains(msg, "server closed idle connection"):
		return transportEOF
	}
	return ""
}

// transportPhrase is the kind as a person reads it; for TLS, what about
// the handshake failed.
func transportPhrase(kind string, err error) string {
	switch kind {
	case transportRefused:
		return "connection refused"
	case transportReset:
		return "connection reset"
	case transportEOF:
		return "connection closed before an answer"
	case transportTimeout:
		return "timed out connecting"
	case transportTLS:
		return tlsDetail(err)
	case transportDNS:
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return "DNS: no such host"
		}
		return "DNS lookup failed"
	case transportUnreachable:
		return "network unreachable"
	case transportProtocol:
		return "the answer was not valid HTTP"
	case transportGoAway:
		return "HTTP/2 connection closed by the server: GOAWAY"
	}
	return ""
}

// tlsDetail says what about a TLS handshake failed, or "" when err is
// not a TLS failure.
func tlsDetail(err error) string {
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		record    tls.RecordHeaderError
		alert     tls.AlertError
		verify    *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &unknownCA):
		return "TLS: certificate signed by an unknown authority"
	case errors.As(err, &hostname):
		return "TLS: certificate is not valid for this host"
	case errors.As(err, &invalid):
		if invalid.Reason == x509.Expired {
			return "TLS: certificate expired or not yet valid"
		}
		return "TLS: certificate is not valid"
	case errors.As(err, &record):
		return "TLS: the server did not answer in TLS (an http:// server behind an https:// URL?)"
	case errors.As(err, &alert):
		return "TLS: the server refused the handshake"
	case errors.As(err, &verify):
		return "TLS: certificate could not be verified"
	case strings.Contains(err.Error(), "tls: "):
		return "TLS: handshake failed"
	}
	return ""
}

// TransportReason is a transport failure as the all-failed answer names
// it: "transport (connection refused)", or "transport" when the kind is
// not known.
func TransportReason(err error) string {
	kind := transportKind(err)
	if kind == "" {
		return fault.ErrorTransport
	}
	return fault.ErrorTransport + " (" + transportPhrase(kind, err) + ")"
}
