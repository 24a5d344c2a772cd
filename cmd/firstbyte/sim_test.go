package main

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// TestSimCertificate: -tls writes a PEM the gateway's tls.ca_file can
// trust, and the simulator serves with its certificate.
func TestSimCertificate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ca.pem")
	var p sim.Protocols
	if err := simCertificate(&p, path); err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) || p.TLS == nil {
		t.Errorf("PEM %q, TLS %v: want a certificate in both", pem, p.TLS)
	}
}

// TestSimTLSAndH2CExclude: -tls already offers HTTP/2, so -h2c beside it
// is a usage error.
func TestSimTLSAndH2CExclude(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	code := cmdSim([]string{"-config", "x.yaml", "-tls", filepath.Join(t.TempDir(), "ca.pem"), "-h2c"}, &bytes.Buffer{}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "exclude each other") {
		t.Errorf("exit %d, %q; want 2 and a usage error", code, stderr.String())
	}
}
