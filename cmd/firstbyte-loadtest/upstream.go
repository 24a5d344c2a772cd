package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// behaviour is how the upstream answers under one path prefix. Each
// scenario gets its own prefix, so one listener serves them all and the
// gateway config is one provider (with one target) per scenario.
type behaviour struct {
	delay  time.Duration // before the unary answer or the first chunk
	chunks int           // 0: unary JSON; else an SSE stream of this many chunks
	gap    time.Duration // between chunk starts
}

// The upstream's path prefixes (and the gateway's client models, one each).
const (
	modelZero   = "zero"   // scenario 1: unary, no delay
	modelSlow   = "slow"   // scenario 2: unary, 20 ms
	modelStream = "stream" // scenario 3: 64 chunks 20 ms apart
	modelHold   = "hold"   // scenario 4: 64 chunks 50 ms apart, so 1,000 streams overlap
)

const (
	streamChunks = 64
	streamGap    = 20 * time.Millisecond
	holdGap      = 50 * time.Millisecond
)

var behaviours = map[string]behaviour{
	modelZero:   {},
	modelSlow:   {delay: 20 * time.Millisecond},
	modelStream: {chunks: streamChunks, gap: streamGap},
	modelHold:   {chunks: streamChunks, gap: holdGap},
	// -streams (streams.go): many slow streams held at once.
	modelTrickle: {chunks: trickleChunks, gap: trickleGap},
}

// chatResponse is a typical unary chat.completion: what every arm relays.
var chatResponse = []byte(`{"id":"chatcmpl-loadtest","object":"chat.completion","created":1700000000,"model":"m",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"Hello! How can I help you today?"},` +
	`"finish_reason":"stop"}],"usage":{"prompt_tokens":24,"completion_tokens":9,"total_tokens":33}}`)

var chatResponseLength = []string{strconv.Itoa(len(chatResponse))}

// epoch is the time base of chunk stamps. The upstream and the load
// client share this process, and so its monotonic clock: a chunk's stamp
// (when the upstream wrote it) and its arrival at the client compare
// directly, whatever proxy it went through.
var epoch = time.Now()

// stampDigits is the width of a stamp: nanoseconds since epoch, zero-padded
// so every event has the same size in every arm.
const stampDigits = 16

// Every chunk is one SSE event: eventHead, the stamp, eventTail. The last
// also carries "data: [DONE]" in the same write, as providers send it.
const (
	eventHead = `data: {"id":"chatcmpl-loadtest","object":"chat.completion.chunk","created":1700000000,"model":"m",` +
		`"choices":[{"index":0,"delta":{"content":"t=`
	eventTail = ` "},"finish_reason":null}]}` + "\n\n"
	eventDone = "data: [DONE]\n\n"
)

// appendEvent appends chunk i (of n) stamped now.
func appendEvent(dst []byte, i, n int) []byte {
	dst = append(dst, eventHead...)
	dst = appendStamp(dst, time.Since(epoch))
	dst = append(dst, eventTail...)
	if i == n-1 {
		dst = append(dst, eventDone...)
	}
	return dst
}

func appendStamp(dst []byte, d time.Duration) []byte {
	var digits [stampDigits]byte
	v := uint64(max(d, 0))
	for i := stampDigits - 1; i >= 0; i-- {
		digits[i] = byte('0' + v%10)
		v /= 10
	}
	return append(dst, digits[:]...)
}

// parseStamp finds the stamp in one event; ok is false if there is none.
func parseStamp(event []byte) (time.Duration, bool) {
	i := bytes.Index(event, []byte(`"content":"t=`))
	if i < 0 {
		return 0, false
	}
	i += len(`"content":"t=`)
	if len(event) < i+stampDigits {
		return 0, false
	}
	var v int64
	for _, c := range event[i : i+stampDigits] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return time.Duration(v), true
}

// upstream is the zero-overhead provider every arm talks to. It does as
// little as an honest server can (it reads the request, writes a fixed
// answer), so that what the arms differ by is the proxy in between. It
// costs the same CPU in every arm, and it shares the load generator's
// process.
type upstream struct {
	streaming atomic.Int64 // streams being served now
	peak      atomic.Int64 // most streams served at once since the last resetPeak
	cut       atomic.Int64 // streams that ended early: the proxy or client went away
	served    atomic.Int64 // requests answered, every kind
}

func newUpstream() *upstream { return &upstream{} }

func (u *upstream) resetPeak() { u.peak.Store(u.streaming.Load()) }

// ServeHTTP answers /{model}/v1/... by the model's behaviour.
func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.served.Add(1)
	_, _ = io.Copy(io.Discard, r.Body)
	name, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	b, ok := behaviours[name]
	if !ok || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var timer *time.Timer
	wait := func(d time.Duration) bool {
		if d <= 0 {
			return true
		}
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case <-timer.C:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	if !wait(b.delay) {
		return
	}
	h := w.Header()
	if b.chunks == 0 {
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = chatResponseLength
		_, _ = w.Write(chatResponse)
		return
	}
	u.stream(w, b, wait)
}

// stream sends the chunks on an absolute schedule (chunk i at start+i*gap),
// not gap after the previous write, so timer lateness does not pile up
// over the stream and the stream's total is the same in every arm.
func (u *upstream) stream(w http.ResponseWriter, b behaviour, wait func(time.Duration) bool) {
	if n := u.streaming.Add(1); n > u.peak.Load() {
		u.peak.Store(n) // racy max: good enough for a report
	}
	defer u.streaming.Add(-1)
	h := w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	flusher, _ := w.(http.Flusher)
	var ev []byte
	start := time.Now()
	for i := range b.chunks {
		if !wait(time.Until(start.Add(time.Duration(i) * b.gap))) {
			u.cut.Add(1)
			return
		}
		// The headers leave with the first chunk, in one write, as a
		// provider's first byte does.
		ev = appendEvent(ev[:0], i, b.chunks)
		if _, err := w.Write(ev); err != nil {
			u.cut.Add(1)
			return
		}
		flusher.Flush()
	}
}

// otlpSink stands in for an OpenTelemetry Collector: it accepts OTLP/HTTP
// exports and answers 200 with an empty, valid ExportTraceServiceResponse,
// counting what came so the report can show export was on.
type otlpSink struct {
	requests atomic.Int64
	bytes    atomic.Int64
}

func (s *otlpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.NotFound(w, r)
		return
	}
	n, _ := io.Copy(io.Discard, r.Body)
	s.requests.Add(1)
	s.bytes.Add(n)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}
