package router_test

// BenchmarkHostStream: what each cloud host's adapter adds to one streamed
// request, side by side in one run. Each sub-benchmark is the real gateway
// handler (telemetry on) serving one streamed request from an upstream on
// loopback that speaks the host's API: the host's URL, credential
// (SigV4 over the exact body from static test credentials, an API key,
// an OAuth token fetched at start), framing (Bedrock's event stream of
// base64 chunks, decoded with its CRCs checked) and translation where the
// host's format is not the client's.
//
// The upstream is a replay of the simulator: the first request of each
// kind goes to internal/sim, which checks it the way the host does (the
// SigV4 signature included) and answers in the host's framing; that answer
// is recorded and sent back for every later request, event by event (or
// frame by frame), each flushed as a generating upstream's are. So every
// sub-benchmark's upstream costs about the same and the differences are
// the gateway's:
//
//	anthropic, bedrock-sigv4, bedrock-apikey, vertex   an Anthropic Messages client (read against anthropic)
//	openai, azure, gemini                              an OpenAI Chat client (read against openai)
//
// Run with: go test -run '^$' -bench 'HostStream$' -benchmem -count=5 ./router/
// On a loaded machine read BenchmarkHostStreamAdded (below) instead.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/internal/benchutil"
)

// Client requests of the host benchmarks: one short streamed turn.
const (
	benchMessagesStream = `{"model":"m","max_tokens":64,"stream":true,"system":"You are a helpful assistant.",` +
		`"messages":[{"role":"user","content":"Say hello in one short sentence, please."}]}`
	benchChatStream = `{"model":"m","stream":true,"max_tokens":64,"messages":[{"role":"system","content":"You are a helpful assistant."},` +
		`{"role":"user","content":"Say hello in one short sentence, please."}]}`
)

// replayUpstream forwards the first request of each URL to a simulator
// (with the Host the gateway signed) and answers every later one with
// what the simulator answered.
type replayUpstream struct {
	sim   string // the simulator's bare URL
	mu    sync.Mutex
	calls map[string]*recordedAnswer // by request URI
}

type recordedAnswer struct {
	status int
	header http.Header
	pieces [][]byte // the body, one event (or event-stream frame) a piece
}

// split cuts a stream's body into its events, which the replay writes and
// flushes one by one as a generating upstream does (an SSE event ends at
// a blank line; an event-stream frame says its length first); any other
// body is one piece.
func split(contentType string, body []byte) [][]byte {
	var out [][]byte
	switch {
	case strings.HasPrefix(contentType, "text/event-stream"):
		for len(body) > 0 {
			i := bytes.Index(body, []byte("\n\n"))
			if i < 0 {
				i = len(body) - 2
			}
			out, body = append(out, body[:i+2]), body[i+2:]
		}
	case strings.HasPrefix(contentType, "application/vnd.amazon.eventstream"):
		for len(body) >= 4 {
			n := min(int(binary.BigEndian.Uint32(body)), len(body))
			out, body = append(out, body[:n]), body[n:]
		}
	default:
		out = [][]byte{body}
	}
	return out
}

func (u *replayUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	key := r.URL.RequestURI()
	u.mu.Lock()
	rec := u.calls[key]
	u.mu.Unlock()
	if rec == nil {
		var err error
		if rec, err = u.record(r, body); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
	}
	h := w.Header()
	for k, v := range rec.header {
		h[k] = v
	}
	w.WriteHeader(rec.status)
	for _, p := range rec.pieces {
		if _, err := w.Write(p); err != nil {
			return
		}
		http.NewResponseController(w).Flush()
	}
}

// record asks the simulator, keeping its answer when it is a success.
func (u *replayUpstream) record(r *http.Request, body []byte) (*recordedAnswer, error) {
	req, err := http.NewRequest(r.Method, u.sim+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	req.Host = r.Host // what SigV4 signed
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	rec := &recordedAnswer{status: resp.StatusCode, header: http.Header{}, pieces: split(resp.Header.Get("Content-Type"), b)}
	for _, k := range []string{"Content-Type", "X-Amzn-Errortype"} {
		if v := resp.Header.Values(k); len(v) > 0 {
			rec.header[k] = v
		}
	}
	if resp.StatusCode == http.StatusOK {
		u.mu.Lock()
		u.calls[r.URL.RequestURI()] = rec
		u.mu.Unlock()
	}
	return rec, nil
}

// countingCreds is a static AWS key pair that counts its retrievals.
type countingCreds struct {
	key   sim.AWSKey
	calls atomic.Int64
}

func (c *countingCreds) Retrieve(context.Context) (aws.Credentials, error) {
	c.calls.Add(1)
	return aws.Credentials{AccessKeyID: c.key.AccessKeyID, SecretAccessKey: c.key.SecretAccessKey, Source: "test"}, nil
}

// hostBench is one sub-benchmark: the host the simulator speaks, the
// provider entry (%[1]s: the replay's bare URL; %[2]s: a service-account
// file for vertex), the upstream model, the client's path and body.
type hostBench struct {
	name     string
	host     *sim.Host
	provider string
	model    string
	path     string
	body     string
	want     string // the stream's end in the client's format
}

var hostBenches = []hostBench{
	{"anthropic", nil, "{kind: anthropic, base_url: \"%[1]s/v1\", api_key: sim-key-1}", "claude-sonnet-4-5-20250929",
		"/v1/messages", benchMessagesStream, "event: message_stop"},
	{"bedrock-sigv4", &sim.Host{Kind: sim.HostBedrock, AWSKeys: []sim.AWSKey{simAWS}, Region: "us-west-2"},
		"{kind: bedrock, region: us-west-2, base_url: %[1]q}", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		"/v1/messages", benchMessagesStream, "event: message_stop"},
	{"bedrock-apikey", &sim.Host{Kind: sim.HostBedrock, APIKey: "bedrock-sim-api-key-1", Region: "us-west-2"},
		"{kind: bedrock, region: us-west-2, base_url: %[1]q, api_key: bedrock-sim-api-key-1}", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		"/v1/messages", benchMessagesStream, "event: message_stop"},
	{"vertex", &sim.Host{Kind: sim.HostVertex},
		"{kind: vertex, region: us-east5, project: p, base_url: %[1]q, credentials: %[2]q}", "claude-sonnet-4-5@20250929",
		"/v1/messages", benchMessagesStream, "event: message_stop"},
	{"openai", nil, "{kind: openai, base_url: \"%[1]s/v1\", api_key: sim-key-1}", "gpt-4o",
		"/v1/chat/completions", benchChatStream, "data: [DONE]"},
	{"azure", &sim.Host{Kind: sim.HostAzure, APIKey: "azure-sim-key-1"},
		"{kind: azure, base_url: %[1]q, api_key: azure-sim-key-1}", "gpt-4o-deployment",
		"/v1/chat/completions", benchChatStream, "data: [DONE]"},
	{"gemini", &sim.Host{Kind: sim.HostGemini, APIKey: "gemini-sim-key-1"},
		"{kind: gemini, base_url: \"%[1]s/v1beta\", api_key: gemini-sim-key-1}", "gemini-2.5-flash",
		"/v1/chat/completions", benchChatStream, "data: [DONE]"},
}

// hostBenchGateway starts hb's simulator behind a replay and returns a
// handler of a gateway serving client model m from it, and the AWS
// credentials it signs with.
func hostBenchGateway(tb testing.TB, hb hostBench, o router.Options) (http.Handler, *countingCreds) {
	tb.Helper()
	s, err := sim.StartProvider(sim.Provider{Name: "h", Stream: sim.Pace{Chunks: 8}, Host: hb.host}, sim.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	replay := httptest.NewServer(&replayUpstream{sim: strings.TrimSuffix(s.URL(), "/v1"), calls: map[string]*recordedAnswer{}})
	tb.Cleanup(replay.Close)
	creds := ""
	if hb.host != nil && hb.host.Kind == sim.HostVertex {
		creds = serviceAccountFile(tb, replay.URL+"/token")
	}
	aws := &countingCreds{key: simAWS}
	o.AWSCredentials = aws
	yaml := "strategy: {mode: fallback}\nproviders:\n  p: " + fmt.Sprintf(hb.provider, replay.URL, creds) +
		"\ntargets:\n  - {virtual_key: p, model_map: {m: " + fmt.Sprintf("%q", hb.model) + "}}\n"
	gw := gatewayFromYAML(tb, yaml, o)
	return gw.Handler(), aws
}

// serveHostStream makes one streamed request of hb through h.
func serveHostStream(tb testing.TB, h http.Handler, hb hostBench, req *http.Request, body *rewindBody) {
	body.rewind()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(hb.want)) {
		tb.Fatalf("%s: status %d: %s", hb.name, w.Code, w.Body)
	}
}

func hostBenchRequest(hb hostBench) (*http.Request, *rewindBody) {
	req, body := benchRequest(hb.body)
	req.URL.Path = hb.path
	req.RequestURI = hb.path
	return req, body
}

func BenchmarkHostStream(b *testing.B) {
	// A Bedrock API key in the environment would replace SigV4.
	b.Setenv("AWS_BEARER_TOKEN_BEDROCK", "")
	for _, hb := range hostBenches {
		b.Run(hb.name, func(b *testing.B) {
			h, _ := hostBenchGateway(b, hb, handlerOptions(b, true, false, nil))
			req, body := hostBenchRequest(hb)
			serveHostStream(b, h, hb, req, body) // records the simulator's answer
			b.ReportAllocs()
			cpu := benchutil.ProcessCPU(b)
			for b.Loop() {
				serveHostStream(b, h, hb, req, body)
			}
			reportCPU(b, cpu)
		})
	}
}

// TestSigV4CredentialsNotFetchedOnTheRequestPath: a signing Bedrock
// provider gets its credentials once, when the gateway starts; streamed
// requests after that only read the cached pair, never the provider.
func TestSigV4CredentialsNotFetchedOnTheRequestPath(t *testing.T) {
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "")
	hb := hostBenches[1]
	if hb.name != "bedrock-sigv4" {
		t.Fatalf("hostBenches[1] is %s", hb.name)
	}
	h, creds := hostBenchGateway(t, hb, router.Options{})
	warm := creds.calls.Load()
	if warm != 1 {
		t.Errorf("credentials retrieved %d times at start, want 1", warm)
	}
	req, body := hostBenchRequest(hb)
	for range 20 {
		serveHostStream(t, h, hb, req, body)
	}
	if n := creds.calls.Load(); n != warm {
		t.Errorf("credentials retrieved %d times by 20 requests, want none", n-warm)
	}
}

// BenchmarkHostStreamAdded is what a host adds over the host its client
// format needs no adapter for (anthropic for the Messages hosts, openai
// for the Chat ones), read on a shared, loaded machine: every op serves
// one request of each, in alternating order, each timed on its own, so
// that load that comes and goes weighs on both alike. It reports the
// medians of both and added-p50-ns, the difference of the medians.
func BenchmarkHostStreamAdded(b *testing.B) {
	b.Setenv("AWS_BEARER_TOKEN_BEDROCK", "")
	byName := map[string]hostBench{}
	for _, hb := range hostBenches {
		byName[hb.name] = hb
	}
	for _, pair := range [][2]string{
		{"anthropic", "bedrock-sigv4"}, {"anthropic", "bedrock-apikey"}, {"anthropic", "vertex"},
		{"openai", "azure"}, {"openai", "gemini"},
	} {
		b.Run(pair[1], func(b *testing.B) {
			var hs [2]http.Handler
			var reqs [2]*http.Request
			var bodies [2]*rewindBody
			var hbs [2]hostBench
			for i, name := range pair {
				hbs[i] = byName[name]
				hs[i], _ = hostBenchGateway(b, hbs[i], handlerOptions(b, true, false, nil))
				reqs[i], bodies[i] = hostBenchRequest(hbs[i])
				serveHostStream(b, hs[i], hbs[i], reqs[i], bodies[i]) // records the simulator's answer
			}
			var took [2][]time.Duration
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				for k := range 2 {
					i := (n + k) % 2
					start := time.Now()
					serveHostStream(b, hs[i], hbs[i], reqs[i], bodies[i])
					took[i] = append(took[i], time.Since(start))
				}
				n++
			}
			base, host := median(took[0]), median(took[1])
			b.ReportMetric(float64(base), pair[0]+"-p50-ns")
			b.ReportMetric(float64(host), "host-p50-ns")
			b.ReportMetric(float64(host-base), "added-p50-ns")
		})
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
