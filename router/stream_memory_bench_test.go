package router_test

// BenchmarkStreamsHeld: where a held stream's bytes go. N streams are held
// open at once (each has had its first chunk) through direct (client ->
// upstream), the bare proxy and the gateway, with the upstream on HTTP/1.1
// or HTTP/2 over TLS; then runtime/metrics is read after a GC. Client,
// proxy and upstream share this process, so an arm's figure minus
// direct's is what the proxy adds a stream:
//
//	goroutines/stream  goroutines alive per held stream
//	stack-B/stream     goroutine stack bytes (/memory/classes/heap/stacks)
//	heap-B/stream      live heap objects (/memory/classes/heap/objects)
//
// Run with: go test -run '^$' -bench StreamsHeld -benchtime=1x ./router/
// (and -memprofile mem.out for the objects by allocation site).

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// heldStreams is how many streams each arm holds at once.
const heldStreams = 1000

// holdingUpstream answers every stream with one chunk, then holds it until
// release is closed.
func holdingUpstream(release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sseChunk("held"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}
}

func BenchmarkStreamsHeld(b *testing.B) {
	for _, proto := range []string{"h1", "h2"} {
		for _, arm := range []string{"direct", "reverseproxy", "gateway"} {
			b.Run(proto+"/"+arm, func(b *testing.B) {
				for b.Loop() {
					holdStreams(b, proto, arm)
				}
			})
		}
	}
}

// holdStreams opens heldStreams streams through arm, reports the memory
// figures while all are open, then lets them end.
func holdStreams(b *testing.B, proto, arm string) {
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(holdingUpstream(release))
	base, settings, rpTransport := startProto(b, srv, proto)
	defer srv.Close()
	target := base
	switch arm {
	case "reverseproxy":
		u, _ := url.Parse(base)
		rp := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, Transport: rpTransport})
		defer rp.Close()
		target = rp.URL
	case "gateway":
		gw := httptest.NewServer(benchGatewayYAML(b, fmt.Sprintf("strategy: {mode: least-latency}\nlimits: {max_connections: %d}\n"+
			"providers:\n  up: {base_url: %q, api_key: key-up, models: [m]%s}\ntargets:\n  - {virtual_key: up}\n",
			2*heldStreams, base+"/v1", settings), router.Options{}).Handler())
		defer gw.Close()
		target = gw.URL
	}
	c := &http.Client{Transport: rpTransport.Clone()}
	if arm != "direct" {
		c = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: heldStreams, DisableCompression: true}}
	}
	defer c.CloseIdleConnections()
	var opened, done sync.WaitGroup
	for range heldStreams {
		opened.Add(1)
		done.Go(func() { heldStream(b, c, target, &opened) })
	}
	opened.Wait()
	runtime.GC()
	s := []metrics.Sample{{Name: "/sched/goroutines:goroutines"}, {Name: "/memory/classes/heap/stacks:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	b.ReportMetric(float64(s[0].Value.Uint64())/heldStreams, "goroutines/stream")
	b.ReportMetric(float64(s[1].Value.Uint64())/heldStreams, "stack-B/stream")
	b.ReportMetric(float64(s[2].Value.Uint64())/heldStreams, "heap-B/stream")
	close(release)
	done.Wait()
}

// heldStream posts one stream, says when its first chunk came, and reads
// it to the end.
func heldStream(b *testing.B, c *http.Client, target string, opened *sync.WaitGroup) {
	once := sync.OnceFunc(opened.Done)
	defer once()
	resp, err := c.Post(target+"/v1/chat/completions", "application/json", strings.NewReader(benchChatStreamRequest))
	if err != nil {
		b.Error(err)
		return
	}
	defer resp.Body.Close()
	buf := make([]byte, 512)
	if _, err := resp.Body.Read(buf); err != nil {
		b.Error(err)
		return
	}
	once()
	_, _ = io.Copy(io.Discard, resp.Body)
}
