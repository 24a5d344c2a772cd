package affinity

import (
	"github.com/firstbyte-dev/firstbyte/router/reqbody"

	"strings"
	"testing"
	"time"
)

func TestPrefixOf(t *testing.T) {
	long := strings.Repeat("You are a careful assistant. ", 200) // > 4 KiB
	key := func(body string) Prefix {
		t.Helper()
		f, err := reqbody.Scan([]byte(body))
		if err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return Of(&f, []byte(body))
	}
	turn := func(system, last string) string {
		return `{"model":"m","messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"` + last + `"}]}`
	}
	if p := key(turn("short", "hi")); p.Key != 0 {
		t.Errorf("a short prompt has a prefix key: %+v", p)
	}
	a, b := key(turn(long, "first question")), key(turn(long, "another question"))
	if a.Key == 0 || a.Key != b.Key || a.TTL != 5*time.Minute {
		t.Errorf("one conversation, two last turns: %+v and %+v; want the same key, 5m", a, b)
	}
	if c := key(turn(long+"!", "first question")); c.Key == a.Key {
		t.Error("another system prompt, the same key")
	}
	if p := key(`{"model":"m","prompt_cache_key":"user-42","messages":[{"role":"user","content":"hi"}]}`); p.Key == 0 {
		t.Error("prompt_cache_key ignored")
	}
	marked := `{"model":"m","system":[{"type":"text","text":"x","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":"hi"}]}`
	if p := key(marked); p.Key == 0 || p.TTL != time.Hour {
		t.Errorf("cache_control with ttl 1h: %+v", p)
	}
	if p := key(`{"model":"m","input":"just a string"}`); p.Key != 0 {
		t.Errorf("a bare string input: %+v", p)
	}
}

func TestAffinityRemembersUntilTheCacheExpires(t *testing.T) {
	a := New(nil)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	p := Prefix{Key: 7, TTL: 5 * time.Minute}
	if got := a.lookup("m", p, now); got != "" {
		t.Fatalf("nothing served yet: %q", got)
	}
	a.Record("m", p, "b", now)
	if got := a.lookup("m", p, now.Add(4*time.Minute)); got != "b" {
		t.Fatalf("within the cache's life: %q, want b", got)
	}
	if got := a.lookup("other", p, now); got != "" {
		t.Fatalf("another model: %q", got)
	}
	if got := a.lookup("m", p, now.Add(5*time.Minute)); got != "" {
		t.Fatalf("after the cache's life: %q", got)
	}
}
