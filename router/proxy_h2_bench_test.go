package router_test

// BenchmarkUnaryProxiedHTTP2: BenchmarkUnaryProxied's bare proxy and
// gateway with the upstream on each protocol a provider may speak, side by
// side in one run: HTTP/1.1 in clear text (the other benchmarks'), HTTP/2
// over TLS (every real provider) and h2c. At 1 client (c1) and at 32
// (c32: over HTTP/2 the 32 share one upstream connection, over HTTP/1.1
// they hold 32).
//
// Run with: go test -run '^$' -bench 'UnaryProxiedHTTP2' -benchmem ./router/

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/internal/benchutil"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// benchProtoUpstream is the fixed-answer upstream speaking proto; settings
// is what a provider needs to reach it, rp a bare proxy's transport to it.
func benchProtoUpstream(b *testing.B, proto string) (base, settings string, rp *http.Transport) {
	b.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(benchUpstreamHandler))
	base, settings, rp = startProto(b, srv, proto)
	b.Cleanup(srv.Close)
	return base, settings, rp
}

// startProto starts srv speaking proto (h1, h2 over TLS, h2c); settings is
// what a provider needs to reach it, rp a bare proxy's transport to it.
func startProto(b *testing.B, srv *httptest.Server, proto string) (base, settings string, rp *http.Transport) {
	b.Helper()
	rp = upstream.NewTransport()
	switch proto {
	case "h1":
		srv.Start()
	case "h2":
		srv.EnableHTTP2 = true
		srv.StartTLS()
		ca := filepath.Join(b.TempDir(), "ca.pem")
		pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
			b.Fatal(err)
		}
		settings = fmt.Sprintf(", tls: {ca_file: %q}", ca)
		pool := x509.NewCertPool()
		pool.AddCert(srv.Certificate())
		rp.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	case "h2c":
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
		settings = ", http2: prior_knowledge"
		rp.Protocols = new(http.Protocols)
		rp.Protocols.SetUnencryptedHTTP2(true)
	}
	return srv.URL, settings, rp
}

func BenchmarkUnaryProxiedHTTP2(b *testing.B) {
	for _, proto := range []string{"h1", "h2", "h2c"} {
		base, settings, rpTransport := benchProtoUpstream(b, proto)
		target, _ := url.Parse(base)
		rp := httptest.NewServer(&httputil.ReverseProxy{
			Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
			Transport: rpTransport,
		})
		b.Cleanup(rp.Close)
		tp, tracker := benchTelemetryWith(b, "", 0)
		gw := httptest.NewServer(benchGatewayYAML(b, fmt.Sprintf("strategy: {mode: least-latency}\n"+
			"providers:\n  up: {base_url: %q, api_key: key-up, models: [m]%s}\n"+
			"targets:\n  - {virtual_key: up}\n", base+"/v1", settings), router.Options{TracerProvider: tp, Stats: tracker}).Handler())
		b.Cleanup(gw.Close)
		for _, arm := range []struct{ name, url string }{{"reverseproxy", rp.URL}, {"gateway", gw.URL}} {
			for _, clients := range []int{1, 32} {
				b.Run(fmt.Sprintf("%s/%s/c%d", proto, arm.name, clients), func(b *testing.B) {
					benchUnaryClients(b, arm.url+"/v1/chat/completions", clients)
				})
			}
		}
	}
}

// benchUnaryClients posts unary requests from clients goroutines at once.
func benchUnaryClients(b *testing.B, url string, clients int) {
	c := benchClient()
	defer c.CloseIdleConnections()
	b.ReportAllocs()
	cpu := benchutil.ProcessCPU(b)
	if clients == 1 {
		for b.Loop() {
			benchPost(b, c, url, benchChatRequest)
		}
	} else {
		b.SetParallelism((clients + 1) / 2) // 2 cores here: 16 x GOMAXPROCS
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				benchPost(b, c, url, benchChatRequest)
			}
		})
	}
	reportCPU(b, cpu)
}
