package sim

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// A provider with MaxConcurrency 2 serves two requests at once; the others
// wait, first come first served, and leave the queue when their client goes
// away. The requests' TTFBs are held until the test ends them, one at a
// time, so which request a freed slot goes to is read from events, not
// from how fast a loaded machine runs the clients (a real 60 ms TTFB let
// the first requests end before the last ones were queued).
func TestMaxConcurrencyQueuesFirstComeFirstServed(t *testing.T) {
	held := newHeldSleep()
	r := startSim(t, Provider{TTFB: Fixed(60 * time.Millisecond), Stream: Pace{Chunks: 1}, MaxConcurrency: 2}, Options{Sleep: held.Sleep})
	t.Cleanup(held.stop)
	url := r.URL() + "/chat/completions"
	ended := make(chan int, 5)
	var wg sync.WaitGroup
	for i := range 5 {
		if i > 0 {
			// Each arrives once the one before is in: the queue's order is known.
			pollTrue(t, func() bool { st := r.Slots(); return st.Serving+st.Waiting == i })
		}
		wg.Go(func() {
			status, body := readAll(t, post(t, context.Background(), nil, url, `{"model":"m"}`))
			if status != http.StatusOK {
				t.Errorf("request %d: %d %s", i, status, body)
			}
			ended <- i
		})
	}
	pollTrue(t, func() bool { st := r.Slots(); return st.Serving == 2 && st.Waiting == 3 })
	first, second := held.next(t), held.next(t) // requests 0 and 1, in service
	// end lets a held TTFB end and returns the request that answered: the
	// only one that can, as every other is held or waiting.
	end := func(wake chan struct{}) int {
		t.Helper()
		close(wake)
		select {
		case i := <-ended:
			return i
		case <-time.After(10 * time.Second):
			t.Fatal("no request ended within 10s of its TTFB")
			return -1
		}
	}
	a := end(first)
	if a != 0 && a != 1 {
		t.Fatalf("request %d ended first, want 0 or 1 (in service)", a)
	}
	// First come, first served: each freed slot goes to the request that
	// has waited longest.
	for _, want := range []int{2, 3} {
		if got := end(held.next(t)); got != want {
			t.Errorf("a freed slot served request %d, want %d", got, want)
		}
	}
	if b := end(second); a+b != 1 {
		t.Errorf("requests %d and %d ended, want 0 and 1", a, b)
	}
	if got := end(held.next(t)); got != 4 {
		t.Errorf("the last slot served request %d, want 4", got)
	}
	wg.Wait()
	if st := r.Slots(); st.Max != 2 || st.PeakServing != 2 || st.PeakWaiting != 3 || st.Queued != 3 || st.Serving != 0 || st.Waiting != 0 {
		t.Errorf("slots = %+v, want max 2, peak serving 2, peak waiting 3, queued 3, idle now", st)
	}
}

func TestMaxConcurrencyCancelledWaiterLeavesTheQueue(t *testing.T) {
	held := newHeldSleep()
	r := startSim(t, Provider{TTFB: Fixed(100 * time.Millisecond), Stream: Pace{Chunks: 1}, MaxConcurrency: 1}, Options{Sleep: held.Sleep})
	t.Cleanup(held.stop)
	url := r.URL() + "/chat/completions"
	var wg sync.WaitGroup
	wg.Go(func() { readAll(t, post(t, context.Background(), nil, url, `{"model":"m"}`)) })
	inService := held.next(t)
	ctx, cancel := context.WithCancel(context.Background())
	wg.Go(func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"model":"m"}`))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	pollTrue(t, func() bool { return r.Slots().Waiting == 1 })
	cancel()
	pollTrue(t, func() bool { return r.Slots().Waiting == 0 })
	close(inService)
	wg.Wait()
	pollTrue(t, func() bool { return r.Slots().Serving == 0 })
	// The slot is free again: the next request takes it without waiting
	// (it reaches its TTFB, and the queue counts no one more).
	wg.Go(func() { readAll(t, post(t, context.Background(), nil, url, `{"model":"m"}`)) })
	close(held.next(t))
	wg.Wait()
	if st := r.Slots(); st.Queued != 1 || st.PeakWaiting != 1 || st.Serving != 0 || st.Waiting != 0 {
		t.Errorf("slots = %+v, want queued 1 (the cancelled request), peak waiting 1, idle now", st)
	}
}

// heldSleep is a Sleep that holds every delay until the test ends it: a
// test decides when each request in service answers.
type heldSleep struct {
	asleep chan chan struct{} // a held delay's wake, in the order they began
	done   chan struct{}      // closed by stop: every delay ends
	once   sync.Once
}

func newHeldSleep() *heldSleep {
	return &heldSleep{asleep: make(chan chan struct{}, 16), done: make(chan struct{})}
}

func (h *heldSleep) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	wake := make(chan struct{})
	select {
	case h.asleep <- wake:
	case <-h.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-wake:
		return nil
	case <-h.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// next returns the wake of the next delay to begin.
func (h *heldSleep) next(t *testing.T) chan struct{} {
	t.Helper()
	select {
	case w := <-h.asleep:
		return w
	case <-time.After(10 * time.Second):
		t.Fatal("no request began its TTFB within 10s")
		return nil
	}
}

// stop ends every delay, held or to come (a failed test's requests end
// before the server closes).
func (h *heldSleep) stop() { h.once.Do(func() { close(h.done) }) }

// cacheBody is a chat completion of conversation conv: a system prompt over
// CacheMinBytes and a last turn that changes.
func cacheBody(conv string, turn int) string {
	return `{"model":"m","messages":[{"role":"system","content":"` + conv + strings.Repeat("x", CacheMinBytes) +
		`"},{"role":"user","content":"turn ` + string(rune('a'+turn)) + `"}]}`
}

// A prompt cache halves the TTFB of a prefix answered within its TTL and
// reports its tokens as cached; another prefix, a short one or an expired
// one is not.
func TestPromptCacheHalvesTTFBAndReportsCachedTokens(t *testing.T) {
	rec, clock := &sleepRecorder{}, newFakeClock()
	r := startSim(t, Provider{TTFB: Fixed(40 * time.Millisecond), Stream: Pace{Chunks: 1}, PromptCache: &PromptCache{TTL: time.Minute}},
		Options{Sleep: rec.Sleep, Now: clock.Now})
	type usage struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			Details      *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	ask := func(body string) (time.Duration, int) {
		t.Helper()
		status, b := readAll(t, post(t, context.Background(), nil, r.URL()+"/chat/completions", body))
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, b)
		}
		u := decode[usage](t, b)
		cached := 0
		if u.Usage.Details != nil {
			cached = u.Usage.Details.CachedTokens
		}
		return rec.take()[0], cached
	}
	if d, c := ask(cacheBody("A", 0)); d != 40*time.Millisecond || c != 0 {
		t.Errorf("first turn: TTFB %v, cached %d; want 40ms, 0", d, c)
	}
	d, c := ask(cacheBody("A", 1))
	if d != 20*time.Millisecond || c < CacheMinBytes/4 {
		t.Errorf("second turn: TTFB %v, cached %d; want 20ms and the system prompt's tokens (>= %d)", d, c, CacheMinBytes/4)
	}
	if d, _ := ask(cacheBody("B", 1)); d != 40*time.Millisecond {
		t.Errorf("another conversation: TTFB %v, want 40ms", d)
	}
	short := `{"model":"m","messages":[{"role":"system","content":"short"},{"role":"user","content":"hi"}]}`
	ask(short)
	if d, _ := ask(short); d != 40*time.Millisecond {
		t.Errorf("a short prefix again: TTFB %v, want 40ms (not cached)", d)
	}
	clock.Advance(time.Minute)
	if d, _ := ask(cacheBody("A", 2)); d != 40*time.Millisecond {
		t.Errorf("after the TTL: TTFB %v, want 40ms", d)
	}
	if st := r.PromptCacheStats(); st.Hits != 1 || st.Misses != 3 {
		t.Errorf("stats = %+v, want 1 hit, 3 misses (the short prompt is neither)", st)
	}
}

// Spikes make a share of the draws Factor times as long.
func TestSpikes(t *testing.T) {
	rec := &sleepRecorder{}
	r := startSim(t, Provider{TTFB: Fixed(10 * time.Millisecond), Stream: Pace{Chunks: 1}, Spikes: Spikes{Rate: 0.2, Factor: 10}},
		Options{Sleep: rec.Sleep})
	spiked := 0
	const n = 400
	for range n {
		readAll(t, post(t, context.Background(), nil, r.URL()+"/chat/completions", `{"model":"m"}`))
		switch d := rec.take()[0]; d {
		case 100 * time.Millisecond:
			spiked++
		case 10 * time.Millisecond:
		default:
			t.Fatalf("TTFB %v, want 10ms or 100ms", d)
		}
	}
	if share := float64(spiked) / n; share < 0.13 || share > 0.27 {
		t.Errorf("spiked share %.3f, want about 0.2", share)
	}
}

func TestReactingProviderConfigFile(t *testing.T) {
	cfg, err := ParseConfig([]byte(`providers:
  - name: q
    max_concurrency: 4
    prompt_cache: {ttl: 1m}
    spikes: {rate: 0.05, factor: 10}
`))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Providers[0]
	if p.MaxConcurrency != 4 || p.PromptCache == nil || p.PromptCache.TTL != time.Minute || p.Spikes != (Spikes{0.05, 10}) {
		t.Errorf("parsed %+v", p)
	}
	bad := Provider{Name: "b", MaxConcurrency: -1, PromptCache: &PromptCache{Speedup: 2}, Spikes: Spikes{Rate: 0.1}}
	err = bad.Validate()
	for _, want := range []string{"max_concurrency", "prompt_cache.speedup", "spikes.factor"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want an error on %s", err, want)
		}
	}
}

// pollTrue waits up to 5 s for cond.
func pollTrue(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
