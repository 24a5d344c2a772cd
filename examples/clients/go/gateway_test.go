package clients

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// The client-facing models of the gateway under test. The Node suite gets them
// through its environment (see testNode).
const (
	chatModel      = "llama-3.3-70b"           // openai kind, through a model_map
	chatUpstream   = "llama-3.3-70b-versatile" // what the simulated provider is asked for
	embeddingModel = "text-embedding-3-small"  // openai kind, listed in the provider's models
	messagesModel  = "claude-sonnet"           // anthropic kind
	brokenChat     = "llama-broken"            // openai kind; every answer breaks after 2 chunks
	brokenMessages = "claude-broken"           // anthropic kind; likewise
	unknownModel   = "no-such-model"
	// Served by the simulated Bedrock (Converse) and Gemini hosts: no client
	// speaks their formats, every request to them is translated.
	converseModel  = "llama-converse" // bedrock kind, meta.llama3-3-70b-instruct-v1:0 (Converse)
	geminiModel    = "gemini-flash"   // gemini kind, gemini-2.5-flash
	brokenConverse = "llama-converse-broken"
	brokenGemini   = "gemini-flash-broken"
	// Served by the crafted upstreams (crafted_test.go).
	mixedModel           = "mixed"          // by both, one pool: the order header picks each turn's
	craftedAnthropicOnly = "crafted-claude" // by the Anthropic one alone
	craftedOpenAIOnly    = "crafted-kimi"   // by the OpenAI-compatible one alone (no Responses API)
)

// simHostKey is the simulated hosts' API key (a Bedrock API key, the
// Gemini API's x-goog-api-key): not a secret.
const simHostKey = "sim-host-key-not-a-secret"

// Bounds on everything this test waits for.
const (
	readyWithin   = 15 * time.Second // the gateway's /readyz turning 200
	stopWithin    = 10 * time.Second // the gateway draining after SIGINT, before SIGKILL
	requestWithin = 15 * time.Second // one SDK request
)

// gateway is a running firstbyte binary.
type gateway struct {
	url   string // client API origin, http://127.0.0.1:PORT
	admin string // admin origin
	key   string // the one entry of auth.keys
	// requestedURL and requestedKey are a second gateway in front of the
	// same upstreams, with response_model: requested.
	requestedURL, requestedKey string
}

// TestSDKs runs every client SDK suite against one real gateway.
//
//	openai-go ─┐                 ┌─ sim-openai     (chat, responses, embeddings)
//	node SDKs ─┼─> firstbyte ────┼─ sim-anthropic  (messages, count_tokens)
//	           │   (FIRSTBYTE_BIN)├─ sim-converse, sim-gemini (Bedrock Converse and Gemini hosts)
//	           │                  ├─ sim-broken     (cut after 2 chunks, both kinds; and each host)
//	           │                  └─ crafted        (answers a provider can give, both kinds)
//	           └─> firstbyte, response_model: requested (the same upstreams)
func TestSDKs(t *testing.T) {
	up := startUpstreams(t)
	gw := startGateway(t, up, "")
	requested := startGateway(t, up, "response_model: requested")
	gw.requestedURL, gw.requestedKey = requested.url, requested.key
	t.Run("openai-go", func(t *testing.T) { testOpenAIGo(t, gw) })
	t.Run("openai-go translated upstreams", func(t *testing.T) { testOpenAIGoUpstreams(t, gw) })
	t.Run("node", func(t *testing.T) { testNode(t, gw) })
}

// upstreams are the loopback upstreams the gateways under test front.
type upstreams struct {
	openai, anthropic, broken       string // simulated (internal/sim)
	converse, gemini                string // simulated Bedrock and Gemini hosts
	brokenConverse, brokenGemini    string // likewise, every stream cut mid-answer
	craftedAnthropic, craftedOpenAI string // crafted_test.go
}

// startUpstreams starts the simulated and crafted upstreams; they stop when
// the test ends.
func startUpstreams(t *testing.T) upstreams {
	t.Helper()
	pace := sim.Pace{Chunks: 8, Interval: 2 * time.Millisecond}
	var up upstreams
	up.openai = startUpstream(t, sim.Provider{Name: "sim-openai", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace})
	up.anthropic = startUpstream(t, sim.Provider{Name: "sim-anthropic", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace})
	up.broken = startUpstream(t, sim.Provider{Name: "sim-broken", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace, CutAfter: 2})
	// With prompt caches: a long prompt's second request reports cached
	// tokens (cacheReadInputTokens, cachedContentTokenCount).
	up.converse = startUpstream(t, sim.Provider{Name: "sim-converse", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace,
		PromptCache: &sim.PromptCache{}, Host: &sim.Host{Kind: sim.HostBedrock, APIKey: simHostKey}})
	up.gemini = startUpstream(t, sim.Provider{Name: "sim-gemini", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace,
		PromptCache: &sim.PromptCache{}, Host: &sim.Host{Kind: sim.HostGemini, APIKey: simHostKey}})
	// Bedrock ends a stream that fails mid-answer with an exception frame;
	// the Gemini API cuts the connection.
	up.brokenConverse = startUpstream(t, sim.Provider{Name: "sim-broken-converse", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace,
		Host: &sim.Host{Kind: sim.HostBedrock, APIKey: simHostKey, Exception: &sim.StreamException{Type: "modelStreamErrorException", AfterEvents: 3}}})
	up.brokenGemini = startUpstream(t, sim.Provider{Name: "sim-broken-gemini", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace, CutAfter: 2,
		Host: &sim.Host{Kind: sim.HostGemini, APIKey: simHostKey}})
	up.craftedAnthropic, up.craftedOpenAI = startCrafted(t)
	return up
}

// startGateway starts the gateway binary in front of up, with extra
// top-level config, waits until it is ready, and stops it when the test
// ends.
func startGateway(t *testing.T, up upstreams, extra string) *gateway {
	t.Helper()
	bin := os.Getenv("FIRSTBYTE_BIN")
	if bin == "" {
		t.Fatal("FIRSTBYTE_BIN is not set: build the gateway (make build) and set it to " +
			"the binary's absolute path, e.g. FIRSTBYTE_BIN=/path/to/firstbyte/bin/firstbyte go test ./...")
	}
	openaiURL, anthropicURL, brokenURL := up.openai, up.anthropic, up.broken
	craftedProviders, craftedTargets := craftedConfig(up.craftedAnthropic, up.craftedOpenAI)

	gw := &gateway{key: randomKey(t)}
	listen, admin := freeAddr(t), freeAddr(t)
	gw.url, gw.admin = "http://"+listen, "http://"+admin
	config := fmt.Sprintf(`# The gateway under the client SDK tests (examples/clients/go).
listen: %s
admin: {listen: %s}
auth: {keys: [%q]}
strategy: {mode: least-latency}
%s
providers:
  sim-openai:           {kind: openai,    base_url: %q, api_key: upstream-not-a-secret, models: [%s]}
  sim-anthropic:        {kind: anthropic, base_url: %q, api_key: upstream-not-a-secret}
  sim-broken-openai:    {kind: openai,    base_url: %q, models: [%s], circuit_breaker: {failures: 1000}}
  sim-broken-anthropic: {kind: anthropic, base_url: %q, models: [%s], circuit_breaker: {failures: 1000}}
  sim-converse:         {kind: bedrock, region: us-east-1, base_url: %q, api_key: %s}
  sim-gemini:           {kind: gemini, base_url: %q, api_key: %s}
  sim-broken-converse:  {kind: bedrock, region: us-east-1, base_url: %q, api_key: %s, circuit_breaker: {failures: 1000}}
  sim-broken-gemini:    {kind: gemini, base_url: %q, api_key: %s, circuit_breaker: {failures: 1000}}
%stargets:
  - {virtual_key: sim-openai,    model_map: {%s: %s}}
  - {virtual_key: sim-anthropic, model_map: {%s: claude-sonnet-4-5}}
  - {virtual_key: sim-broken-openai}
  - {virtual_key: sim-broken-anthropic}
  - {virtual_key: sim-converse,        model_map: {%s: "meta.llama3-3-70b-instruct-v1:0"}}
  - {virtual_key: sim-gemini,          model_map: {%s: gemini-2.5-flash}}
  - {virtual_key: sim-broken-converse, model_map: {%s: "meta.llama3-3-70b-instruct-v1:0"}}
  - {virtual_key: sim-broken-gemini,   model_map: {%s: gemini-2.5-flash}}
%s`, listen, admin, gw.key, extra,
		openaiURL, embeddingModel,
		anthropicURL,
		brokenURL, brokenChat,
		brokenURL, brokenMessages,
		strings.TrimSuffix(up.converse, "/v1"), simHostKey,
		strings.TrimSuffix(up.gemini, "/v1")+"/v1beta", simHostKey,
		strings.TrimSuffix(up.brokenConverse, "/v1"), simHostKey,
		strings.TrimSuffix(up.brokenGemini, "/v1")+"/v1beta", simHostKey,
		craftedProviders,
		chatModel, chatUpstream,
		messagesModel,
		converseModel, geminiModel, brokenConverse, brokenGemini,
		craftedTargets)
	path := filepath.Join(t.TempDir(), "firstbyte.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "-config", path)
	cmd.Env = hermeticEnv()
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) } // let it drain
	cmd.WaitDelay = stopWithin                                            // then SIGKILL
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		if err := <-exited; err != nil && ctx.Err() == nil {
			t.Errorf("gateway: %v", err)
		}
		if t.Failed() {
			t.Logf("gateway output:\n%s", out)
		}
	})

	deadline := time.Now().Add(readyWithin)
	probe := &http.Client{Timeout: time.Second}
	for {
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("gateway exited before it was ready: %v\n%s", err, out)
		default:
		}
		if resp, err := probe.Get(gw.admin + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return gw
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway not ready on %s/readyz after %v\n%s", gw.admin, readyWithin, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startUpstream serves p on a free loopback port until the test ends and
// returns its API base ("http://127.0.0.1:PORT/v1").
func startUpstream(t *testing.T, p sim.Provider) string {
	t.Helper()
	r, err := sim.StartProvider(p, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("close %s: %v", p.Name, err)
		}
	})
	return r.URL()
}

// freeAddr is a loopback address that was free a moment ago. The gateway binds
// it shortly after; another process taking it in between is possible but rare,
// and shows as "gateway exited before it was ready".
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func randomKey(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "fb-test-" + hex.EncodeToString(b)
}

// hermeticEnv is this process's environment without the variables that would
// change what the gateway does (OTEL_* would start exporting spans somewhere)
// or which gateway the Node suite talks to.
func hermeticEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OTEL_") || strings.HasPrefix(kv, "FIRSTBYTE_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// checkRouting checks the three routing headers every answered request
// carries and returns the target and selection.
func checkRouting(t *testing.T, h http.Header) (target, selection string) {
	t.Helper()
	target, selection = h.Get("X-Firstbyte-Target"), h.Get("X-Firstbyte-Selection")
	if target == "" {
		t.Errorf("X-Firstbyte-Target is missing; headers: %v", h)
	}
	if a := h.Get("X-Firstbyte-Attempts"); a == "" || strings.Trim(a, "0123456789") != "" || a == "0" {
		t.Errorf("X-Firstbyte-Attempts = %q, want a positive integer", a)
	}
	switch selection {
	case "cold", "leader", "explore", "order", "manual":
	default:
		t.Errorf("X-Firstbyte-Selection = %q, want cold, leader, explore, order or manual", selection)
	}
	return target, selection
}

// syncBuffer collects a child process's output; it is written by the
// process's copier goroutines and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
