package routinge2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firstbyte-dev/firstbyte/router"
)

// Outcome is one request as a client saw it, and as the upstreams saw it.
type Outcome struct {
	// Start is when it was sent, on the scenario's timeline.
	Start time.Duration
	// TTFB is the end-to-end time to first byte: from sending it to the
	// response headers (a unary answer's headers leave the gateway with the
	// whole answer), failed attempts included.
	TTFB time.Duration
	// Status is the HTTP status; 0 when no answer came (transport error).
	Status int
	// Target, Selection, Attempts and Skipped are the X-Firstbyte-* headers
	// (Skipped: how many targets it names).
	Target    string
	Selection string
	Attempts  int
	Skipped   int
	// First is the provider the request reached first (the first pick) and
	// Upstream how many upstream requests it made, as the providers saw it;
	// Hops are those requests in order, each with its provider's status.
	First    string
	Upstream int
	Hops     []Hop
	// Hedged is X-Firstbyte-Hedged ("won", "lost"; "": no hedge).
	Hedged string
	// Replica is the gateway the request went to (its index in Load.APIs),
	// Conv its conversation (-1: none).
	Replica, Conv int
	// Cached: its answer reported cached prompt tokens (a provider's prompt
	// cache hit).
	Cached bool

	traceID string
}

// Served reports whether the client got an answer (200).
func (o Outcome) Served() bool { return o.Status == http.StatusOK }

// End is when the client had its answer, on the scenario's timeline.
func (o Outcome) End() time.Duration { return o.Start + o.TTFB }

// HopsTo is how many of its upstream requests reached target.
func (o Outcome) HopsTo(target string) int {
	n := 0
	for _, h := range o.Hops {
		if h.Target == target {
			n++
		}
	}
	return n
}

// FailedAttempts is how many attempts failed over: all of them when the
// request was not served, all but the last when it was.
func (o Outcome) FailedAttempts() int {
	if o.Served() {
		return max(o.Attempts-1, 0)
	}
	return o.Attempts
}

// Load is a closed-loop load: Clients clients, each sending the next unary
// chat completion as soon as the last one was answered, for Duration.
type Load struct {
	// API is the gateway's client address (host:port); APIs, when set, are
	// several gateways' (a fleet): client i sends to APIs[i mod len(APIs)].
	API  string
	APIs []string
	// Clients is the number of clients; zero means Clients.
	Clients int
	// Conversations, when positive, makes every request one of that many
	// conversations, in turn: a system prompt of its own (ConversationBytes
	// long) and a last user turn that changes.
	Conversations int
	// Duration is how long requests are started; those in flight then are
	// awaited (each has RequestTimeout).
	Duration time.Duration
	// Order, when set, gives the X-Firstbyte-Provider-Order of a request
	// sent at t ("" for none): how the oracle is run.
	Order func(t time.Duration) string
	// Orderer, when set instead, gives the order of a request of
	// conversation conv (-1: none) sent at t, and learns who served each.
	Orderer Orderer
}

// Orderer is an oracle that needs more than the time: the request's
// conversation, and who served the requests before it.
type Orderer interface {
	Order(t time.Duration, conv int) string
	Served(conv int, target string, end time.Duration)
}

// RequestTimeout bounds every request.
const RequestTimeout = 30 * time.Second

var requestBody = []byte(`{"model":"` + Model + `","messages":[{"role":"user","content":"Say hello in one short sentence."}],"max_tokens":16}`)

// Run starts clock and drives the load; the outcomes come in no particular
// order, each with what up recorded of it.
func (l Load) Run(ctx context.Context, clock *Clock, up *Upstreams) []Outcome {
	n := l.Clients
	if n == 0 {
		n = Clients
	}
	client := &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: n,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}}
	defer client.CloseIdleConnections()
	apis := l.APIs
	if len(apis) == 0 {
		apis = []string{l.API}
	}
	var turns atomic.Int64 // conversations take their turns in order

	var (
		mu  sync.Mutex
		all []Outcome
		wg  sync.WaitGroup
	)
	clock.Start()
	for w := range n {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(rand.Uint64(), uint64(w)))
			url := "http://" + apis[w%len(apis)] + "/v1/chat/completions"
			var mine []Outcome
			for ctx.Err() == nil {
				start := clock.Elapsed()
				if start >= l.Duration {
					break
				}
				conv, body := -1, requestBody
				if l.Conversations > 0 {
					turn := turns.Add(1) - 1
					conv = int(turn % int64(l.Conversations))
					body = ConversationBody(conv, turn)
				}
				order := ""
				switch {
				case l.Orderer != nil:
					order = l.Orderer.Order(start, conv)
				case l.Order != nil:
					order = l.Order(start)
				}
				o := send(ctx, client, url, order, body, rnd)
				o.Start, o.Replica, o.Conv = start, w%len(apis), conv
				if l.Orderer != nil && o.Served() {
					l.Orderer.Served(conv, o.Target, o.End())
				}
				mine = append(mine, o)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	for i := range all {
		o := &all[i]
		o.Hops = up.Reached(o.traceID)
		if o.Upstream = len(o.Hops); o.Upstream > 0 {
			o.First = o.Hops[0].Target
		}
	}
	return all
}

// send makes one request with a fresh trace ID and reads the whole answer.
func send(ctx context.Context, client *http.Client, url, order string, body []byte, rnd *rand.Rand) Outcome {
	var id [16]byte
	for i := 0; i < len(id); i += 8 {
		v := rnd.Uint64()
		for j := range 8 {
			id[i+j] = byte(v >> (8 * j))
		}
	}
	o := Outcome{traceID: hex.EncodeToString(id[:])}
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return o
	}
	req.Header["Content-Type"] = []string{"application/json"}
	req.Header["Traceparent"] = []string{"00-" + o.traceID + "-00f067aa0ba902b7-01"}
	if order != "" {
		req.Header[router.HeaderProviderOrder] = []string{order}
	}
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		o.TTFB = time.Since(t0)
		return o
	}
	o.TTFB = time.Since(t0)
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err == nil {
		o.Status = resp.StatusCode
	}
	// A provider answering from its prompt cache says so in usage; a
	// provider without one, or a miss, leaves the field out.
	o.Cached = bytes.Contains(answer, []byte(`"cached_tokens":`))
	h := resp.Header
	o.Target, o.Selection, o.Hedged = h.Get(router.HeaderTarget), h.Get(router.HeaderSelection), h.Get(router.HeaderHedged)
	o.Attempts, _ = strconv.Atoi(h.Get(router.HeaderAttempts))
	if s := h.Get(router.HeaderSkipped); s != "" {
		o.Skipped = len(strings.Split(s, ","))
	}
	return o
}
