package router_test

import (
	"testing"
	"time"
)

// waitUntil polls cond every millisecond until it holds, failing the test
// after 5s: for what a test must wait for but cannot be told of (a count
// on an upstream, a log line written after the answer left).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5s for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
