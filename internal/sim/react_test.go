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
// away.
func TestMaxConcurrencyQueuesFirstComeFirstServed(t *testing.T) {
	const ttfb = 60 * time.Millisecond
	r := startSim(t, Provider{TTFB: Fixed(ttfb), Stream: Pace{Chunks: 1}, MaxConcurrency: 2}, Options{})
	url := r.URL() + "/chat/completions"
	var (
		mu   sync.Mutex
		done []int
		took = map[int]time.Duration{}
		wg   sync.WaitGroup
	)
	start := time.Now()
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
			mu.Lock()
			done, took[i] = append(done, i), time.Since(start)
			mu.Unlock()
		})
	}
	wg.Wait()
	st := r.Slots()
	if st.Max != 2 || st.PeakServing != 2 || st.PeakWaiting != 3 || st.Queued != 3 || st.Serving != 0 || st.Waiting != 0 {
		t.Errorf("slots = %+v, want max 2, peak serving 2, peak waiting 3, queued 3, idle now", st)
	}
	// Rounds of two: 0 and 1, then 2 and 3, then 4.
	if took[4] < 3*ttfb {
		t.Errorf("the fifth request took %v, want at least three rounds of %v", took[4], ttfb)
	}
	if took[2] < 2*ttfb {
		t.Errorf("times %v: want request 2 in the second round", took)
	}
	// First come, first served: 4 waits for a slot that 2 or 3 frees, so
	// both end before it. (Order, not wall time: on a loaded machine the
	// arrivals themselves are late, so no upper bound on a time is safe.)
	pos := map[int]int{}
	for at, i := range done {
		pos[i] = at
	}
	if pos[4] != 4 || pos[2] > 3 || pos[3] > 3 {
		t.Errorf("requests ended in order %v: want 2 and 3 before 4, 4 last", done)
	}
}

func TestMaxConcurrencyCancelledWaiterLeavesTheQueue(t *testing.T) {
	r := startSim(t, Provider{TTFB: Fixed(100 * time.Millisecond), Stream: Pace{Chunks: 1}, MaxConcurrency: 1}, Options{})
	url := r.URL() + "/chat/completions"
	var wg sync.WaitGroup
	wg.Go(func() { readAll(t, post(t, context.Background(), nil, url, `{"model":"m"}`)) })
	pollTrue(t, func() bool { return r.Slots().Serving == 1 })
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
	wg.Wait()
	pollTrue(t, func() bool { return r.Slots().Serving == 0 })
	// The slot is free again: the next request takes it at once.
	t0 := time.Now()
	readAll(t, post(t, context.Background(), nil, url, `{"model":"m"}`))
	if d := time.Since(t0); d > 190*time.Millisecond {
		t.Errorf("a request after the queue emptied took %v, want about one TTFB (100ms)", d)
	}
}

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
