package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// HeaderProvider is set on every response to the simulated provider's name, so a test
// or a person reading curl output can tell which upstream answered.
const HeaderProvider = "X-Sim-Provider"

// maxBody bounds what one request may upload; the real APIs refuse far less.
const maxBody = 64 << 20

// Options inject time and randomness. Zero values mean the real clock and a randomly
// seeded source.
type Options struct {
	// Now is the clock phases are timed on (from the moment NewProvider runs),
	// rate limit windows are counted on (an Anthropic reset header is an instant on
	// it) and `created` fields are read from. Nil means time.Now.
	Now func() time.Time
	// Sleep waits d or until ctx is done, whichever comes first, and returns ctx.Err()
	// in the second case. Every delay of the simulator goes through it, so a test can
	// record the delays or skip them. Nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand is the source of TTFB and error draws; the Server owns it afterwards (it is
	// used under the Server's lock and must not be used elsewhere). Nil means a
	// randomly seeded one.
	Rand *rand.Rand
	// Protocols is how it speaks HTTP when started (StartProvider, Start).
	// Zero: HTTP/1.1 in clear text.
	Protocols Protocols
}

// Server is one simulated provider as an [http.Handler]. It is safe for concurrent use.
type Server struct {
	// Immutable after NewProvider.
	name            string
	protocols       Protocols
	models          []string
	stages          []stage // stages[0] from the start, then one per phase
	cutAfter        int
	statusBody      *StatusBody
	contextOverflow bool
	parallelTools   bool
	limits          *limiter     // nil: no rate limit
	slots           *slots       // nil: no MaxConcurrency
	cache           *promptCache // nil: no PromptCache
	spikes          Spikes
	start           time.Time
	now             func() time.Time
	sleep           func(context.Context, time.Duration) error

	randMu sync.Mutex
	rand   *rand.Rand // guarded by randMu

	seq      atomic.Uint64 // numbers response ids
	total    atomic.Int64  // requests received, any path
	h2       atomic.Int64  // of them, over HTTP/2
	conns    atomic.Int64  // connections accepted
	inflight idleTracker

	mu         sync.Mutex       // guards the fields below
	perPath    map[string]int64 // requests received by URL path
	lastHeader http.Header
	lastBody   []byte

	host      *Host // nil: the plain OpenAI and Anthropic APIs (hosts.go)
	hostState hostState
}

// stage is the behaviour in force from `from` (time since start) on.
type stage struct {
	from   time.Duration
	ttfb   Dist
	pace   Pace
	errors ErrorRate
}

// NewProvider builds the handler for p. It does not validate p; call p.Validate (or
// Config.Validate) first, as StartProvider and Start do.
func NewProvider(p Provider, opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepContext
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	s := &Server{
		name:            p.Name,
		models:          append([]string(nil), p.Models...),
		cutAfter:        p.CutAfter,
		statusBody:      p.StatusBody,
		contextOverflow: p.ContextOverflow,
		parallelTools:   p.ParallelToolCalls,
		limits:          newLimiter(p.RateLimit),
		slots:           newSlots(p.MaxConcurrency),
		cache:           newPromptCache(p.PromptCache),
		spikes:          p.Spikes,
		start:           opts.Now(),
		now:             opts.Now,
		sleep:           opts.Sleep,
		rand:            opts.Rand,
		protocols:       opts.Protocols,
		perPath:         map[string]int64{},
		host:            p.Host,
		hostState:       hostState{tokens: map[string]time.Time{}},
	}
	cur := stage{ttfb: p.TTFB, pace: p.Stream, errors: p.Errors}
	s.stages = append(s.stages, cur)
	for _, ph := range p.Phases {
		cur.from = ph.After
		if ph.TTFB != nil {
			cur.ttfb = *ph.TTFB
		}
		if ph.Stream != nil {
			cur.pace = *ph.Stream
		}
		if ph.Errors != nil {
			cur.errors = *ph.Errors
		}
		s.stages = append(s.stages, cur)
	}
	return s
}

// Name is the provider's name.
func (s *Server) Name() string { return s.name }

// Requests is the number of requests received, on any path, errors included.
func (s *Server) Requests() int64 { return s.total.Load() }

// RequestsFor is the number of requests received on URL path, e.g. "/v1/messages".
func (s *Server) RequestsFor(path string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perPath[path]
}

// LastRequest returns copies of the headers and body of the last request received,
// or nils before the first.
func (s *Server) LastRequest() (http.Header, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastHeader.Clone(), append([]byte(nil), s.lastBody...)
}

// InFlight is the number of requests being handled right now.
func (s *Server) InFlight() int { return s.inflight.count() }

// WaitIdle blocks until no request is being handled or ctx is done.
func (s *Server) WaitIdle(ctx context.Context) error { return s.inflight.wait(ctx) }

// exchange is one request on its way through the handler.
type exchange struct {
	w       http.ResponseWriter
	ctx     context.Context
	model   string
	req     request
	stage   *stage
	id      uint64
	created int64
	// promptTokens is a stable stand-in for the prompt's size, so usage numbers
	// look plausible without tokenizing anything; cachedTokens is the part of
	// it a PromptCache answered from (prefix its prompt prefix).
	promptTokens, cachedTokens int
	prefix                     cachePrefix
}

// request holds the fields the simulator reads; the rest of the body is ignored.
type request struct {
	Model         string          `json:"model"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
	Input         json.RawMessage `json:"input"`
	// EncodingFormat "base64" asks for embeddings as base64 of little-endian
	// float32s (the OpenAI Node SDK's default).
	EncodingFormat string `json:"encoding_format"`
	// Chat completions and messages: what the answer is planned from.
	Messages          []message       `json:"messages"`
	System            json.RawMessage `json:"system"`
	Tools             []tool          `json:"tools"`
	ToolChoice        toolChoice      `json:"tool_choice"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	// Stop sequences: Anthropic's stop_sequences, OpenAI's stop (a string
	// or an array).
	StopSequences []string  `json:"stop_sequences"`
	Stop          stopField `json:"stop"`
	// The most output the request asks for, by each API's name for it: what a
	// token limit counts beside the prompt.
	MaxTokens           count `json:"max_tokens"`
	MaxCompletionTokens count `json:"max_completion_tokens"`
	MaxOutputTokens     count `json:"max_output_tokens"`
}

// maxOutput is the most output the request asks for (0 when it names no bound).
func (r *request) maxOutput() int {
	return int(max(r.MaxTokens, r.MaxCompletionTokens, r.MaxOutputTokens, 0))
}

// stopField is OpenAI's stop: a string or an array of strings; anything
// else reads as none.
type stopField []string

func (f *stopField) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*f = []string{one}
		return nil
	}
	var many []string
	if json.Unmarshal(b, &many) == nil {
		*f = many
	}
	return nil
}

// count is a number of tokens a request names. Anything but a number reads as 0:
// the simulator only reads it for a token limit and never refuses a request for it.
type count int

func (c *count) UnmarshalJSON(b []byte) error {
	var f float64
	if json.Unmarshal(b, &f) == nil && f > 0 && f < 1<<31 {
		*c = count(f)
	}
	return nil
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// endpoint is one route of the simulated API.
type endpoint struct {
	method string
	shape  shape
	// generates: a completion endpoint, subject to context_overflow and Stream pace.
	generates bool
	// check, when set, rejects a request before the TTFB, as real APIs validate
	// before they queue work.
	check func(*request) *apiError
	serve func(*Server, *exchange)
}

var endpoints = map[string]endpoint{
	"/v1/chat/completions":      {http.MethodPost, openAIShape, true, nil, (*Server).serveChat},
	"/v1/responses":             {http.MethodPost, openAIShape, true, nil, (*Server).serveResponses},
	"/v1/embeddings":            {http.MethodPost, openAIShape, false, checkEmbeddings, (*Server).serveEmbeddings},
	"/v1/models":                {http.MethodGet, openAIShape, false, nil, nil},
	"/v1/messages":              {http.MethodPost, anthropicShape, true, nil, (*Server).serveMessages},
	"/v1/messages/count_tokens": {http.MethodPost, anthropicShape, false, nil, (*Server).serveCountTokens},
}

// ServeHTTP: count and record -> route -> validate -> answer.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.inflight.enter()
	defer s.inflight.leave()
	s.total.Add(1)
	if r.ProtoMajor == 2 {
		s.h2.Add(1)
	}
	w.Header().Set(HeaderProvider, s.name)

	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	s.record(r, body)
	if s.host != nil && readErr == nil {
		var ok bool
		if w, body, ok = s.front(w, r, body); !ok {
			return
		}
	}

	ep, ok := endpoints[r.URL.Path]
	if !ok {
		writeError(w, shapeOf(r.URL.Path), errorFor(http.StatusNotFound,
			fmt.Sprintf("Unknown request URL: %s %s.", r.Method, r.URL.Path)))
		return
	}
	if r.Method != ep.method {
		w.Header().Set("Allow", ep.method)
		writeError(w, ep.shape, errorFor(http.StatusMethodNotAllowed,
			fmt.Sprintf("Method %s not allowed on %s; use %s.", r.Method, r.URL.Path, ep.method)))
		return
	}
	if ep.serve == nil {
		s.serveModels(w)
		return
	}
	if readErr != nil {
		var tooBig *http.MaxBytesError
		if errors.As(readErr, &tooBig) {
			writeError(w, ep.shape, errorFor(http.StatusRequestEntityTooLarge, "Request body too large."))
		}
		return // otherwise the client is gone
	}
	x := &exchange{w: w, ctx: r.Context(), promptTokens: max(1, len(body)/4)}
	if err := json.Unmarshal(body, &x.req); err != nil {
		writeError(w, ep.shape, errorFor(http.StatusBadRequest,
			"We could not parse the JSON body of your request: "+err.Error()))
		return
	}
	if x.req.Model == "" {
		e := errorFor(http.StatusBadRequest, "model: Field required")
		e.param = "model"
		writeError(w, ep.shape, e)
		return
	}
	if ep.check != nil {
		if e := ep.check(&x.req); e != nil {
			writeError(w, ep.shape, *e)
			return
		}
	}
	x.model = x.req.Model
	if s.cache != nil && ep.generates {
		x.prefix = s.cache.prefixOf(body)
	}
	s.answer(x, ep, r.URL.Path)
}

// answer serves a valid request: count it against the rate limit (a refusal after
// its own delay) -> wait the TTFB (or an injected error's own delay) -> answer
// (fixed, injected error, or the endpoint's own answer at the configured pace).
func (s *Server) answer(x *exchange, ep endpoint, path string) {
	w := x.w
	now := s.now()
	x.stage = s.stageAt(now.Sub(s.start))
	x.created = now.Unix()
	x.id = s.seq.Add(1)
	// Drawn before the rate limit decides, so a refusal does not shift the draws.
	ttfb, fail := s.draw(x.stage)
	if fail && x.stage.errors.After > 0 {
		ttfb = x.stage.errors.After
	}
	if s.limits != nil {
		q := s.limits.take(now, x.promptTokens+x.req.maxOutput())
		q.setHeaders(w.Header(), ep.shape)
		if !q.ok {
			if s.sleep(x.ctx, q.limit.After) == nil {
				writeError(w, ep.shape, q.refusal(x.model))
			}
			return
		}
	}
	done, ok := s.admit(x, &ttfb, fail)
	if !ok {
		return
	}
	defer done()
	if s.sleep(x.ctx, ttfb) != nil {
		return
	}
	switch {
	case s.statusBody != nil:
		s.writeStatusBody(w, ep.shape)
	case s.contextOverflow && ep.generates:
		e := contextOverflow(ep.shape, x.promptTokens)
		if path == "/v1/responses" {
			e.param = "input" // the Responses API names its prompt field so
		}
		writeError(w, ep.shape, e)
	case fail:
		st := x.stage.errors.status()
		writeError(w, ep.shape, statusError(st, fmt.Sprintf("Simulated %d from provider %s.", st, s.name)))
	default:
		ep.serve(s, x)
	}
}

func (s *Server) record(r *http.Request, body []byte) {
	h := r.Header.Clone()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perPath[r.URL.Path]++
	s.lastHeader = h
	s.lastBody = body
}

// stageAt is the behaviour in force after elapsed time since start.
func (s *Server) stageAt(elapsed time.Duration) *stage {
	i := len(s.stages) - 1
	for i > 0 && elapsed < s.stages[i].from {
		i--
	}
	return &s.stages[i]
}

// draw takes both random numbers of a request at once, so the sequence of draws (and
// with a seed, the whole run) does not depend on which branch a request takes.
func (s *Server) draw(st *stage) (ttfb time.Duration, fail bool) {
	s.randMu.Lock()
	z := s.rand.NormFloat64()
	u := s.rand.Float64()
	spike := s.spikes.Rate > 0 && s.rand.Float64() < s.spikes.Rate // a third draw only with Spikes
	s.randMu.Unlock()
	ttfb = lognormal(st.ttfb.Median, st.ttfb.Spread, z)
	if spike {
		ttfb = time.Duration(min(float64(ttfb)*s.spikes.Factor, float64(maxDelay)))
	}
	return ttfb, u < st.errors.Rate
}

func (s *Server) writeStatusBody(w http.ResponseWriter, sh shape) {
	sb := s.statusBody
	if sb.Body == "" {
		writeError(w, sh, statusError(sb.Status, fmt.Sprintf("Fixed %d from provider %s.", sb.Status, s.name)))
		return
	}
	ct := sb.ContentType
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(sb.Status)
	io.WriteString(w, sb.Body)
}

func (s *Server) serveModels(w http.ResponseWriter) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, m := range s.models {
		list.Data = append(list.Data, model{ID: m, Object: "model", Created: s.start.Unix(), OwnedBy: s.name})
	}
	writeJSON(w, http.StatusOK, list)
}

// generate waits the time a unary reply of steps steps takes to generate
// after its first byte, so that a unary answer arrives when a stream of the
// same pace would have ended. With CutAfter set it aborts the connection
// instead of answering. It reports whether to answer.
func (s *Server) generate(x *exchange, steps int) bool {
	if s.sleep(x.ctx, scaled(x.stage.pace.Interval, steps)) != nil {
		return false
	}
	if s.cutAfter > 0 {
		abort()
	}
	return true
}

// stream runs the timeline every streaming answer shares: head right away (the
// TTFB has passed), then steps deltas (a text's chunks, or the pieces of tool
// calls) Interval apart, then tail. After CutAfter deltas the connection is
// aborted without the tail.
func (s *Server) stream(x *exchange, steps int, head func(*sseWriter), delta func(e *sseWriter, i int), tail func(*sseWriter)) {
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	x.w.WriteHeader(http.StatusOK)
	e := &sseWriter{w: x.w, rc: http.NewResponseController(x.w)}
	head(e)
	if e.flush() != nil {
		return
	}
	cut := 0
	if s.cutAfter > 0 {
		cut = min(s.cutAfter, steps)
	}
	for i := range steps {
		if s.sleep(x.ctx, x.stage.pace.Interval) != nil {
			return
		}
		delta(e, i)
		if e.flush() != nil {
			return
		}
		if i+1 == cut {
			abort()
		}
	}
	tail(e)
	e.flush()
}
