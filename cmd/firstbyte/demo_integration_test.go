//go:build integration

package main

import (
	"net"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// demoMetricsURL is the line of the demo's frame that says where its
// metrics are.
var demoMetricsURL = regexp.MustCompile(`metrics http://(\S+)/metrics`)

// TestDemoServesMetricsAndStopsOnSIGINT: while `firstbyte demo` runs, the
// admin address it prints answers /metrics with the gateway's metrics,
// counting the demo's own traffic; SIGINT stops it cleanly (exit 0, its
// closing line, the admin listener closed) long before -duration. Its
// admin port is taken by another listener: the demo moves to a free one
// and says so, on the frame and on stderr.
func TestDemoServesMetricsAndStopsOnSIGINT(t *testing.T) {
	parallelTimed(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	p := startChildProc(t, "demo", requireBinary(t, "FIRSTBYTE_BIN"), childEnv(),
		"demo", "-duration", "60s", "-listen", "127.0.0.1:0", "-admin", busy.Addr().String(), "-workers", "2")
	start := time.Now()
	var admin string
	pollUntil(t, 5*time.Second, "the demo's first frame naming its metrics address", func() bool {
		if p.exited() {
			t.Fatalf("the demo exited with %d:\n%s", p.exitCode, p.output())
		}
		if m := demoMetricsURL.FindStringSubmatch(p.stdout.String()); m != nil {
			admin = m[1]
			return true
		}
		return false
	})
	moved := busy.Addr().String() + " is busy: the admin listener listens on " + admin + " instead"
	if admin == busy.Addr().String() || !strings.Contains(p.stdout.String(), "\n  "+moved+"\n") || !strings.Contains(p.stderr.String(), moved) {
		t.Errorf("the demo's admin port was busy; want %q on the frame and on stderr:\n%s", moved, p.output())
	}
	// The demo's clients' requests are counted as they are answered.
	pollUntil(t, 5*time.Second, "firstbyte_requests_total > 0 on the demo's /metrics", func() bool {
		return scrapeMetric(t, admin, "firstbyte_requests_total", `model="llama-3.3-70b"`, `code="200"`) > 0
	})
	// The hosts pool is served too, by hosts that check their credentials
	// (a Bedrock API key, Vertex OAuth tokens): a wrong one would be 401s.
	pollUntil(t, 10*time.Second, "the hosts pool's requests answered 200 on the demo's /metrics", func() bool {
		return scrapeMetric(t, admin, "firstbyte_requests_total", `model="claude-sonnet-4-5"`, `code="200"`) > 0
	})
	text := httpGetText(t, "http://"+admin+"/metrics", "text/plain")
	for _, want := range []string{
		`firstbyte_circuit_open{target="groq-sim"}`,
		`firstbyte_circuit_open{target="claude-sim"}`,
		`firstbyte_circuit_open{target="bedrock-sim"}`,
		`firstbyte_circuit_open{target="vertex-sim"}`,
		"firstbyte_attempts_total{",
		"firstbyte_selections_total{",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's /metrics has no %s", want)
		}
	}

	sigint := time.Now()
	if code := p.stop(t, syscall.SIGINT, 5*time.Second); code != 0 {
		t.Errorf("demo exit code after SIGINT = %d, want 0", code)
	}
	t.Logf("stopped %v after SIGINT, %v after start", time.Since(sigint).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if !strings.Contains(p.stdout.String(), "demo stopped after") {
		t.Errorf("the demo did not print its closing line:\n%s", tailOf(p.stdout.String(), 2000))
	}
	if c, err := net.DialTimeout("tcp", admin, 500*time.Millisecond); err == nil {
		c.Close()
		t.Errorf("the demo's admin address %s still accepts connections after it stopped", admin)
	}
}

// TestDemoTellsItsWholeStory: within a 60 s run, on whatever machine runs
// the tests, the demo's story reaches its end: groq-sim degrades, loses
// the lead, recovers and leads again, and the output says so before the
// demo stops. Each step waits for what the gateway does, not for a time.
// The lead change is listed at the time the story says the lead moved, and
// the demo ends by itself, with exit 0, the epilogue after the story, not
// at -duration.
func TestDemoTellsItsWholeStory(t *testing.T) {
	// Plain parallel, not timed: each step waits for what the gateway
	// does, and the demo's simulated slowdown (~900 ms) dwarfs what a busy
	// sibling adds. As a timed test its 35-50 s held the heavy tests back.
	t.Parallel()
	p := startChildProc(t, "demo", requireBinary(t, "FIRSTBYTE_BIN"), childEnv(),
		"demo", "-duration", "90s", "-listen", "127.0.0.1:0", "-admin", "127.0.0.1:0")
	start := time.Now()
	const told = "groq-sim leads again, "
	pollUntil(t, 100*time.Second, "the story's last line, or the demo's end", func() bool {
		return strings.Contains(p.stdout.String(), told) || p.exited()
	})
	toldAt := time.Since(start)
	t.Logf("the story was told after %v", toldAt.Round(time.Second))
	if code := p.wait(t, demoEpilogue+10*time.Second); code != 0 {
		t.Errorf("demo exit code %d, want 0", code)
	}
	if ended := time.Since(start); ended > toldAt+demoEpilogue+5*time.Second {
		t.Errorf("the demo ended %v after its start, the story told at %v: want it to end about %s after the story",
			ended.Round(time.Second), toldAt.Round(time.Second), demoEpilogue)
	}
	out := p.stdout.String()
	i, end := strings.Index(out, told), strings.Index(out, "demo stopped after")
	if i < 0 || end < i {
		t.Fatalf("the demo stopped before its story ended:\n%s", tailOf(out, 3000))
	}
	for _, step := range []string{
		"groq-sim slows to ~900ms", // the story's steps, each with its times
		"leads; groq-sim stays degraded",
		"groq-sim is fast again",
	} {
		if !regexp.MustCompile(`\d+:\d\d-\d+:\d\d\s+[^\n]*` + regexp.QuoteMeta(step)).MatchString(out) {
			t.Errorf("no finished step %q with its start and end in the output:\n%s", step, tailOf(out, 3000))
		}
	}
	if !strings.Contains(out[end:], "the story was told by") {
		t.Errorf("the closing line does not say the story was told:\n%s", tailOf(out, 500))
	}
	// One clock: a lead change off groq-sim is listed at the time the
	// story says its degraded step ended (the lead moved).
	if ended := regexp.MustCompile(`\d+:\d\d-(\d+:\d\d)\s+groq-sim slows`).FindStringSubmatch(out); ended == nil ||
		!strings.Contains(out, "\n"+ended[1]+"  lead groq-sim -> ") {
		t.Errorf("the story's degraded step ended at %q; want a lead change off groq-sim listed at that time:\n%s", ended, tailOf(out, 3000))
	}
}
