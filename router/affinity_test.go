package router_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// A conversation stays on the target that served its prefix: the second
// turn goes where the first was served, not where the mode's order would
// send it, while a new conversation follows the order.
func TestAffinityKeepsAConversationOnItsTarget(t *testing.T) {
	var failFirst atomic.Bool
	failFirst.Store(true)
	a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if failFirst.Swap(false) {
			jsonAnswer(503, `{"error":{"message":"busy"}}`)(w, r)
			return
		}
		apiAnswer(w, r)
	})
	b := newUpstream(t, apiAnswer)
	gw := newGateway(t, "fallback", "", target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
	system := strings.Repeat("You are a careful assistant. ", 200)
	turn := func(last string) string {
		return `{"model":"m","messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"` + last + `"}]}`
	}
	// Turn 1: a fails once, b serves: b holds the prefix now.
	if resp := post(t, gw.URL, "/v1/chat/completions", turn("first")); resp.Header.Get(router.HeaderTarget) != "b" {
		t.Fatalf("turn 1 served by %s, want b after a's 503", resp.Header.Get(router.HeaderTarget))
	}
	// Turn 2, same prefix: b again, though fallback puts a first.
	if resp := post(t, gw.URL, "/v1/chat/completions", turn("second")); resp.Header.Get(router.HeaderTarget) != "b" || resp.Header.Get(router.HeaderAttempts) != "1" {
		t.Fatalf("turn 2 served by %s after %s attempts, want b at once (affinity)", resp.Header.Get(router.HeaderTarget), resp.Header.Get(router.HeaderAttempts))
	}
	// Another conversation follows the mode's order.
	other := `{"model":"m","messages":[{"role":"system","content":"` + system + `!"},{"role":"user","content":"x"}]}`
	if resp := post(t, gw.URL, "/v1/chat/completions", other); resp.Header.Get(router.HeaderTarget) != "a" {
		t.Fatalf("another conversation served by %s, want a (the order)", resp.Header.Get(router.HeaderTarget))
	}
}
