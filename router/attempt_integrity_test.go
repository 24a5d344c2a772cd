package router_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router"
)

// keyLog is what a fake provider was sent: the key and path of every
// request, in order.
type keyLog struct {
	mu   sync.Mutex
	keys []string
}

func (k *keyLog) add(key string) {
	k.mu.Lock()
	k.keys = append(k.keys, key)
	k.mu.Unlock()
}

func (k *keyLog) all() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.keys...)
}

// The blackout rule's forced try goes to its own provider with that
// provider's own key: both providers' circuits open, the try chosen
// (the first in the order, whose circuit opened first) is sent a's URL,
// body and key, never b's URL with a's key.
func TestBlackoutTrySendsItsOwnProvidersKey(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	logs := map[string]*keyLog{"a": {}, "b": {}}
	fake := func(name string) *upstreamStub {
		return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			logs[name].add(r.Header.Get("Authorization"))
			jsonAnswer(503, `{"error":{"message":"down","type":"server_error"}}`)(w, r)
		})
	}
	a, b := fake("a"), fake("b")
	cfg := "strategy: {mode: fallback}\nproviders:\n" +
		"  a: {base_url: \"" + a.URL + "/v1\", api_key: key-a, models: [m], circuit_breaker: {failures: 1, cooldown: 30s}}\n" +
		"  b: {base_url: \"" + b.URL + "/v1\", api_key: key-b, models: [m], circuit_breaker: {failures: 1, cooldown: 30s}}\n" +
		"targets:\n  - {virtual_key: a}\n  - {virtual_key: b}\n"
	gw := gatewayFromYAML(t, cfg, router.Options{Now: clock.Now})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	for i := range 4 {
		resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
		readAll(t, resp.Body)
		clock.Advance(time.Second)
		if i > 0 && resp.Header.Get(router.HeaderAttempts) != "1" {
			t.Fatalf("request %d, every circuit open: %s attempts, want the one forced try", i, resp.Header.Get(router.HeaderAttempts))
		}
	}
	for name, l := range logs {
		for i, key := range l.all() {
			if want := "Bearer key-" + name; key != want {
				t.Errorf("provider %s, request %d: Authorization %q, want %q (its own key only)", name, i, key, want)
			}
		}
	}
}
