package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// Upstream protocols (-upstream-proto): every real provider speaks HTTP/2
// over TLS, where one connection carries many streams; self-hosted ones
// may speak h2c. The load test's upstream speaks HTTP/1.1 in clear text
// unless told otherwise.
const (
	protoH1  = "h1"  // HTTP/1.1, clear text
	protoH2  = "h2"  // HTTP/2 over TLS, a generated certificate the proxies trust
	protoH2C = "h2c" // unencrypted HTTP/2 with prior knowledge
)

// upstreamProto is how the upstream speaks, and how every arm reaches it.
type upstreamProto struct {
	name   string
	caFile string           // h2: the certificate's PEM, for the gateway's tls.ca_file and the baseline
	cert   *tls.Certificate // h2, in the process serving the upstream
}

// upProto is the run's upstream protocol, set from the flags.
var upProto = upstreamProto{name: protoH1}

// setUpstreamProto sets upProto from -upstream-proto (and, in a baseline
// child, -upstream-ca); for h2 in the parent it makes the certificate and
// writes its PEM into a temporary directory, which cleanup removes.
func setUpstreamProto(name, caFile string) (cleanup func(), err error) {
	cleanup = func() {}
	switch name {
	case protoH1, protoH2C:
	case protoH2:
		if caFile != "" { // a baseline child: the parent made the certificate
			break
		}
		cert, pem, err := sim.NewCertificate(time.Now())
		if err != nil {
			return cleanup, err
		}
		dir, err := os.MkdirTemp("", "firstbyte-loadtest-ca-")
		if err != nil {
			return cleanup, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		caFile = filepath.Join(dir, "ca.pem")
		if err := os.WriteFile(caFile, pem, 0o600); err != nil {
			return cleanup, err
		}
		upProto.cert = &cert
	default:
		return cleanup, fmt.Errorf("-upstream-proto %q: want h1, h2 or h2c", name)
	}
	upProto.name, upProto.caFile = name, caFile
	return cleanup, nil
}

// serve serves h as the upstream on a free loopback port.
func (p upstreamProto) serve(h http.Handler) (string, func(), error) {
	if p.name == protoH1 {
		return serveLoopback(h)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	scheme := "http"
	if p.name == protoH2 {
		scheme = "https"
		srv.Protocols.SetHTTP2(true)
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*p.cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	} else {
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "firstbyte-loadtest: serve %s: %v\n", ln.Addr(), err)
		}
	}()
	return scheme + "://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// providerSettings is what a gateway provider needs to reach the upstream
// this way, as more members of its flow mapping.
func (p upstreamProto) providerSettings() string {
	switch p.name {
	case protoH2:
		return fmt.Sprintf(", tls: {ca_file: %q}", p.caFile)
	case protoH2C:
		return ", http2: prior_knowledge"
	}
	return ""
}

// baselineArgs are the flags that tell a baseline child the protocol.
func (p upstreamProto) baselineArgs() []string {
	return []string{"-upstream-proto", p.name, "-upstream-ca", p.caFile}
}

// configure sets t (the baseline's upstream transport, or direct's
// client) to reach the upstream this way, as the gateway's transport does.
func (p upstreamProto) configure(t *http.Transport) error {
	switch p.name {
	case protoH2:
		pem, err := os.ReadFile(p.caFile)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		t.ForceAttemptHTTP2 = true
	case protoH2C:
		t.Protocols = new(http.Protocols)
		t.Protocols.SetUnencryptedHTTP2(true)
	}
	return nil
}
