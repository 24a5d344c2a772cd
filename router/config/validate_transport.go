package config

import (
	"crypto/x509"
	"os"
	"slices"
	"strings"
)

// upstreamTransport checks how the gateway connects to a provider: http2
// and tls.ca_file.
func (v *validation) upstreamTransport(path string, p *Provider) {
	if !slices.Contains(http2Modes, p.HTTP2) {
		v.add(path+".http2", "%s", unknownValue("http2 setting", p.HTTP2, http2Modes))
	} else if p.HTTP2 == HTTP2PriorKnowledge && strings.HasPrefix(p.BaseURL, "https:") {
		v.add(path+".http2", "prior_knowledge is unencrypted HTTP/2 (h2c), but base_url is https: leave it out (auto negotiates HTTP/2 over TLS)")
	}
	if f := p.TLS.CAFile; f != "" {
		pem, err := os.ReadFile(f)
		switch {
		case err != nil:
			v.add(path+".tls.ca_file", "cannot read %s: %v", quoteName(f), pathErr(err))
		case !x509.NewCertPool().AppendCertsFromPEM(pem):
			v.add(path+".tls.ca_file", "%s holds no PEM certificate", quoteName(f))
		}
	}
}

// pathErr is err without the path an *os.PathError repeats.
func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
