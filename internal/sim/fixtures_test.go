package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// startSim serves p on a loopback port for the length of the test.
func startSim(t testing.TB, p Provider, opts Options) *Running {
	t.Helper()
	if p.Name == "" {
		p.Name = "sim"
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(1, 1))
	}
	r, err := StartProvider(p, opts)
	if err != nil {
		t.Fatalf("StartProvider: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// post sends body to base+path and returns the response; the caller closes it.
func post(t testing.TB, ctx context.Context, client *http.Client, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return resp
}

// readAll returns the status and body of a response, closing it.
func readAll(t testing.TB, resp *http.Response) (int, []byte) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return resp.StatusCode, b
}

func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("body is not the expected JSON: %v\n%s", err, b)
	}
	return v
}

// sseEvent is one server-sent event: its `event:` name (empty when absent) and data.
type sseEvent struct {
	name string
	data string
}

// readSSE parses a text/event-stream until EOF, returning the events and the error
// that ended the stream (nil for a clean EOF).
func readSSE(r io.Reader) ([]sseEvent, error) {
	var events []sseEvent
	var cur sseEvent
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" {
				return events, nil
			}
			return events, err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			events = append(events, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			return events, &unexpectedLine{line}
		}
	}
}

type unexpectedLine struct{ line string }

func (e *unexpectedLine) Error() string { return "unexpected SSE line " + e.line }

func eventNames(events []sseEvent) []string {
	var names []string
	for _, e := range events {
		names = append(names, e.name)
	}
	return names
}

// sleepRecorder is an Options.Sleep that returns at once and remembers every delay
// asked for, so a test can check the timeline without waiting it out.
type sleepRecorder struct {
	mu  sync.Mutex
	got []time.Duration
}

func (s *sleepRecorder) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.got = append(s.got, d)
	s.mu.Unlock()
	return ctx.Err()
}

// take returns the delays recorded so far and forgets them.
func (s *sleepRecorder) take() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.got
	s.got = nil
	return got
}

// fakeClock is an Options.Now a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// pretty is for failure messages.
func pretty(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}
