package sim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"time"
)

// Protocols is how a simulated provider speaks HTTP. The zero value is
// HTTP/1.1 in clear text; real providers speak HTTP/2 over TLS, where one
// connection carries many streams, and self-hosted ones may speak h2c.
type Protocols struct {
	// TLS, when not nil, serves HTTPS with this certificate, HTTP/2
	// offered by ALPN beside HTTP/1.1 (NewCertificate makes one).
	TLS *tls.Certificate
	// H2C serves unencrypted HTTP/2 with prior knowledge beside
	// HTTP/1.1 (ignored with TLS).
	H2C bool
	// MaxConcurrentStreams is the HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS
	// the server announces. Zero: Go's default (250).
	MaxConcurrentStreams int
}

// scheme is the scheme of the URLs the protocols serve.
func (p Protocols) scheme() string {
	if p.TLS != nil {
		return "https"
	}
	return "http"
}

// apply sets srv up to serve the protocols.
func (p Protocols) apply(srv *http.Server) {
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	switch {
	case p.TLS != nil:
		srv.Protocols.SetHTTP2(true)
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*p.TLS}, MinVersion: tls.VersionTLS12}
	case p.H2C:
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	if p.MaxConcurrentStreams > 0 {
		srv.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: p.MaxConcurrentStreams}
	}
}

// NewCertificate makes a self-signed certificate for 127.0.0.1, ::1 and
// localhost, valid for a day, and its PEM: what a gateway trusts through a
// provider's tls.ca_file. The key never leaves memory.
func NewCertificate(now time.Time) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "firstbyte sim"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// HTTP2Requests is how many requests came over HTTP/2, any path.
func (s *Server) HTTP2Requests() int64 { return s.h2.Load() }

// Connections is how many connections it accepted: with HTTP/2, many
// streams share one.
func (s *Server) Connections() int64 { return s.conns.Load() }

// connState counts the connections accepted (http.Server.ConnState).
func (s *Server) connState(_ net.Conn, state http.ConnState) {
	if state == http.StateNew {
		s.conns.Add(1)
	}
}
