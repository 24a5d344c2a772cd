package router_test

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router"
)

// The property of an attempt: it is built from its own target alone. Every
// request a provider receives carries that provider's own key, path and
// upstream model, whatever came before (failures, timeouts, hangs, open
// circuits, disabled providers, cooldowns, the blackout's forced try,
// hedges), and a 200 names (X-Firstbyte-Target) the provider whose fake
// answered it. TestAttemptIntegrityProperty checks it over many random
// sequences of upstream behaviours in every routing mode, hedging on and
// off, unary and stream, through both client APIs; FuzzAttemptIntegrity
// lets the fuzzer choose the sequences.
//
// A sequence is bytes (the fuzzer's, or a seeded generator's):
//
//	[rig] then per request: [flags] [retry-after] [behaviour of p0] ... [behaviour of pN-1]
//
// flags: bit 0 stream, bit 1 the Messages API (else Chat Completions),
// bits 2-7 how far the clock moves before the request, in 4 s steps.

var (
	integritySeed = flag.Uint64("integrity.seed", 1, "TestAttemptIntegrityProperty: the first sequence's seed (sequence i is seed+i)")
	integrityN    = flag.Int("integrity.n", integrityDefaultN(), "TestAttemptIntegrityProperty: how many random sequences (10,000; 1,500 under the race detector, which make test-unit runs beside a 10,000 run without it)")
)

// maxSequenceRequests bounds a sequence's requests, so a fuzzer's long
// input costs no more than a few.
const maxSequenceRequests = 6

// requestTag is the client's content: a tag the fakes find the request's
// plan by.
var requestTag = regexp.MustCompile(`req-[0-9]+`)

// fromTag is what a fake's answer says of who sent it.
var fromTag = regexp.MustCompile(`from-p[0-9]`)

// runSequence sends seq's requests (seq[0], the rig, already read) and
// returns what went wrong.
func (r *integrityRig) runSequence(seq []byte) []string {
	chunk := 2 + len(r.fakes)
	for i := 0; i < maxSequenceRequests && 1+(i+1)*chunk <= len(seq); i++ {
		c := seq[1+i*chunk : 1+(i+1)*chunk]
		plan := &requestPlan{retryAfter: int(c[1] % 4)}
		for _, b := range c[2:] {
			plan.beh = append(plan.beh, behaviourTable[b%16])
		}
		r.clock.Advance(time.Duration(c[0]>>2) * 4 * time.Second)
		r.send(c[0]&1 == 1, c[0]&2 == 2, plan)
	}
	return r.takeViolations()
}

// send makes one client request under plan and checks its answer.
func (r *integrityRig) send(stream, messages bool, plan *requestPlan) {
	tag := fmt.Sprintf("req-%d", r.next.Add(1))
	r.plans.Store(tag, plan)
	defer r.plans.Delete(tag)
	path := "/v1/chat/completions"
	body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"%s"}],"stream":%t}`, tag, stream)
	if messages {
		path = "/v1/messages"
		body = fmt.Sprintf(`{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"%s"}],"stream":%t}`, tag, stream)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+rigClientKey)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	rec := httptest.NewRecorder()
	r.gateway.ServeHTTP(rec, req)
	resp := rec.Result()
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	what := fmt.Sprintf("%s (stream %t, messages %t, plan %v, retry-after %d)", tag, stream, messages, plan.beh, plan.retryAfter)
	if err != nil {
		r.violate("%s: reading the answer: %v", what, err)
	}
	r.checkAnswer(what, resp, got, plan)
}

// checkAnswer: a 200 names the fake that sent it, one whose plan was to
// answer; no answer is the gateway's own bug (500).
func (r *integrityRig) checkAnswer(what string, resp *http.Response, body []byte, plan *requestPlan) {
	if resp.StatusCode == http.StatusInternalServerError {
		r.violate("%s: the gateway answered 500: %.300s", what, body)
		return
	}
	if resp.StatusCode != http.StatusOK {
		return
	}
	target := resp.Header.Get(router.HeaderTarget)
	senders := slices.Compact(slices.Sorted(slices.Values(fromTags(body))))
	if len(senders) != 1 || senders[0] != "from-"+target {
		r.violate("%s: 200 with %s %q, but the answer came from %v: %.300s", what, router.HeaderTarget, target, senders, body)
		return
	}
	i := int(target[1] - '0')
	if i >= len(plan.beh) || (plan.beh[i] != behaveOK && plan.beh[i] != behaveSlow) {
		r.violate("%s: 200 from %s, whose plan was not to answer", what, target)
	}
}

func fromTags(body []byte) []string {
	var tags []string
	for _, m := range fromTag.FindAll(body, -1) {
		tags = append(tags, string(m))
	}
	return tags
}

// generateSequence is seed's sequence over rigs: a rig, then 1 to 3
// requests.
func generateSequence(seed uint64, rigs []*integrityRig) []byte {
	rnd := rand.New(rand.NewPCG(seed, 0x5eed))
	ri := rnd.IntN(len(rigs))
	seq := []byte{byte(ri)}
	n := (1 + rnd.IntN(3)) * (2 + len(rigs[ri].fakes))
	for range n {
		seq = append(seq, byte(rnd.Uint32()))
	}
	return seq
}

// rigOf is the rig a sequence runs on.
func rigOf(seq []byte, rigs []*integrityRig) *integrityRig { return rigs[int(seq[0])%len(rigs)] }

// integrityDefaultN is the property test's sequence count: 10,000, or
// 1,500 under the race detector (about 7 ms of CPU a sequence there, so
// 10,000 would cost over a minute of make test; make test-unit runs the
// 10,000 in a second pass without it).
func integrityDefaultN() int {
	if raceDetector {
		return 1500
	}
	return 10000
}

func TestAttemptIntegrityProperty(t *testing.T) {
	// Not parallel: it keeps the machine busy on its own for a few seconds.
	rigs := newIntegrityRigs(t)
	type failure struct {
		seed uint64
		seq  []byte
		v    []string
	}
	byRig := make(map[*integrityRig][]uint64)
	for i := range *integrityN {
		seed := *integritySeed + uint64(i)
		rig := rigOf(generateSequence(seed, rigs), rigs)
		byRig[rig] = append(byRig[rig], seed)
	}
	start := time.Now()
	var (
		mu       sync.Mutex
		failures []failure
		wg       sync.WaitGroup
	)
	sem := make(chan struct{}, 64*runtime.GOMAXPROCS(0)) // rigs mostly wait on timeouts
	for rig, seeds := range byRig {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, seed := range seeds {
				seq := generateSequence(seed, rigs)
				if v := rig.runSequence(seq); len(v) > 0 {
					mu.Lock()
					failures = append(failures, failure{seed, seq, v})
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d sequences over %d rigs in %v", *integrityN, len(rigs), time.Since(start).Round(time.Millisecond))
	slices.SortFunc(failures, func(a, b failure) int { return int(a.seed - b.seed) })
	for i, f := range failures {
		if i == 10 {
			t.Errorf("... and %d more failing sequences", len(failures)-10)
			break
		}
		// A rig's state carries over from its earlier sequences: the whole
		// run replays it (-integrity.seed=<base> -integrity.n=<n>), the one
		// sequence alone from a fresh rig (-integrity.seed=<seed> -integrity.n=1).
		t.Errorf("sequence seed %d of the run from seed %d, n %d (rig %s, bytes %x):\n  %s",
			f.seed, *integritySeed, *integrityN, rigOf(f.seq, rigs).name, f.seq, strings.Join(f.v, "\n  "))
	}
}

func FuzzAttemptIntegrity(f *testing.F) {
	rigs := newIntegrityRigs(f)
	for seed := range uint64(4) {
		f.Add(generateSequence(seed, rigs))
	}
	f.Fuzz(func(t *testing.T, seq []byte) {
		if len(seq) == 0 {
			return
		}
		rig := rigOf(seq, rigs)
		if v := rig.runSequence(seq); len(v) > 0 {
			t.Fatalf("rig %s, bytes %x:\n  %s", rig.name, seq, strings.Join(v, "\n  "))
		}
	})
}
