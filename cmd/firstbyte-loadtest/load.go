package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// arm is one way to reach the upstream: directly, through the baseline
// proxy, or through the gateway. Each has its own client (and so its own
// connection pool) so that one arm's connections never serve another's.
type arm struct {
	name   string
	client *http.Client
	// url returns the URL a request for model goes to; body is the request.
	url  func(model string) string
	body func(model string, stream bool) []byte
	pid  int // the proxy process; 0 for direct
}

// newLoadClient is a client tuned not to be the bottleneck: enough idle
// connections per host for every worker (so no request pays a dial or
// waits for a connection), no compression, HTTP/1.1 as the gateway's
// clients mostly speak it, and no proxy from the environment.
func newLoadClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     2 * time.Minute,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}}
}

// requestBody is the chat request every arm sends for model. The gateway
// routes on the model; the upstream ignores it (the path says what to do).
func requestBody(model string, stream bool) []byte {
	s := ""
	if stream {
		s = `"stream":true,`
	}
	return []byte(`{"model":"` + model + `",` + s + `"messages":[{"role":"system","content":"You are a helpful assistant."},` +
		`{"role":"user","content":"Say hello in one short sentence, please."}],"temperature":0.2,"max_tokens":64}`)
}

// unaryResult is what one unary run measured.
type unaryResult struct {
	lat     []time.Duration
	errors  int
	elapsed time.Duration
	use     usage // what the arm's proxy process did during the run
	self    usage // what this process (load generator, upstream) did: -compare only
	first   error // the first failure, for the log
}

// runUnary runs conc closed-loop workers sending unary requests for model
// until n requests have been sent in all or dur has passed, whichever is
// first (both bound every run). At dur workers stop sending but let their
// requests in flight finish: cancelling them would cut connections that
// the next run then has to dial again.
func runUnary(ctx context.Context, a *arm, model string, conc, n int, dur time.Duration) unaryResult {
	body := a.body(model, false)
	url := a.url(model)
	ctx, cancel := context.WithTimeout(ctx, dur+30*time.Second) // the hard bound
	defer cancel()
	var (
		mu  sync.Mutex
		res unaryResult
		wg  sync.WaitGroup
	)
	var left atomic.Int64 // requests still to send: a count, not a channel of n tokens
	left.Store(int64(n))
	use0 := procUsageOf(a.pid)
	start := time.Now()
	stopAt := start.Add(dur)
	for range conc {
		wg.Go(func() {
			lat := make([]time.Duration, 0, min(n/conc+1, 1<<16))
			errs := 0
			var first error
			for left.Add(-1) >= 0 {
				if ctx.Err() != nil || time.Now().After(stopAt) {
					break
				}
				t0 := time.Now()
				if err := unaryOnce(ctx, a.client, url, body); err != nil {
					if ctx.Err() == nil {
						errs++
						first = cmp.Or(first, err)
					}
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			res.errors += errs
			res.first = cmp.Or(res.first, first)
			mu.Unlock()
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.use = procUsageOf(a.pid).sub(use0)
	return res
}

func unaryOnce(ctx context.Context, c *http.Client, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header["Content-Type"] = []string{"application/json"}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// streamSample is what one stream measured, from the client's side.
type streamSample struct {
	ttfc  time.Duration // request sent -> first body byte
	total time.Duration // request sent -> end of body
}

var errShortStream = errors.New("stream ended early")

// streamOnce sends one streaming request and reads it to the end. Each SSE
// event (ended by a blank line; events may be split across reads, or come
// several in one) carries the moment the upstream wrote it; the latency of
// every chunk after the first (upstream write -> read here) is appended to
// chunkLat. The first is left out: it is the TTFC's business.
func streamOnce(ctx context.Context, c *http.Client, url string, body []byte, chunks int, buf []byte, chunkLat []time.Duration) (streamSample, []time.Duration, error) {
	kept := len(chunkLat) // a failed stream's chunks are not kept
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return streamSample{}, chunkLat, err
	}
	req.Header["Content-Type"] = []string{"application/json"}
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return streamSample{}, chunkLat, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return streamSample{}, chunkLat, fmt.Errorf("status %d", resp.StatusCode)
	}
	var (
		s         streamSample
		gotFirst  bool
		event     []byte // the event read so far
		events    int
		lastWasNL bool
	)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			now := time.Now()
			if !gotFirst {
				s.ttfc, gotFirst = now.Sub(t0), true
			}
			for _, b := range buf[:n] {
				event = append(event, b)
				endOfEvent := b == '\n' && lastWasNL
				lastWasNL = b == '\n'
				if !endOfEvent {
					continue
				}
				if stamp, ok := parseStamp(event); ok {
					if events > 0 {
						chunkLat = append(chunkLat, now.Sub(epoch)-stamp)
					}
					events++
				}
				event = event[:0]
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return streamSample{}, chunkLat[:kept], rerr
		}
	}
	s.total = time.Since(t0)
	if events < chunks {
		return streamSample{}, chunkLat[:kept], errShortStream
	}
	return s, chunkLat, nil
}

// streamResult is what one streaming run measured.
type streamResult struct {
	samples  []streamSample
	chunkLat []time.Duration
	errors   int
	firstErr error // the first failure, for the log
}

// runStreams runs conc workers, each sending perWorker streams one after
// the other. Workers start evenly spread over spread, so that the streams'
// chunks do not all land at the same instant (one chunk gap spreads them
// over the whole cycle).
func runStreams(ctx context.Context, a *arm, model string, chunks int, spread time.Duration, conc, perWorker int, dur time.Duration) streamResult {
	body := a.body(model, true)
	url := a.url(model)
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	var (
		mu  sync.Mutex
		res streamResult
		wg  sync.WaitGroup
	)
	for w := range conc {
		wg.Go(func() {
			if !sleepCtx(ctx, spread*time.Duration(w)/time.Duration(conc)) {
				return
			}
			buf := make([]byte, 32<<10)
			var (
				mine     []streamSample
				lat      = make([]time.Duration, 0, perWorker*chunks)
				errs     int
				firstErr error
			)
			for range perWorker {
				if ctx.Err() != nil {
					break
				}
				var (
					s   streamSample
					err error
				)
				s, lat, err = streamOnce(ctx, a.client, url, body, chunks, buf, lat)
				if err != nil {
					if ctx.Err() == nil {
						errs++
						firstErr = cmp.Or(firstErr, err)
					}
					continue
				}
				mine = append(mine, s)
			}
			mu.Lock()
			res.samples = append(res.samples, mine...)
			res.chunkLat = append(res.chunkLat, lat...)
			res.errors += errs
			res.firstErr = cmp.Or(res.firstErr, firstErr)
			mu.Unlock()
		})
	}
	wg.Wait()
	return res
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// procUsageOf is what pid has done so far, or zero for the direct arm or
// when /proc cannot tell.
func procUsageOf(pid int) usage {
	if pid == 0 {
		return usage{}
	}
	u, err := procUsage(pid)
	if err != nil {
		return usage{}
	}
	return u
}

// percentile returns the p-th percentile (0 < p <= 100) of ds by the
// nearest-rank method; ds is sorted in place.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	rank := int(p/100*float64(len(ds))+0.5) - 1
	return ds[min(max(rank, 0), len(ds)-1)]
}

// field extracts one measure of every stream sample.
func field(ss []streamSample, f func(streamSample) time.Duration) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}
