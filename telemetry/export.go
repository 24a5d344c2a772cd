package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// pdataExporter is the OTLP/HTTP protobuf export path. Every span is already
// turned into pdata for the aggregator; this marshals that same pdata with
// the collector's generated marshaler, where the SDK's exporter would convert
// each span a second time and marshal it reflectively (in the profile, that
// second conversion was the largest single cost of a request:
// docs/benchmarks.md). Spans not sampled for export are skipped, so
// OTEL_TRACES_SAMPLER still decides what leaves the process.
//
// Each span is marshalled on the goroutine that ended it (about a
// microsecond) and appended to a buffer; concatenated TracesData messages
// are one valid ExportTraceServiceRequest, since resource_spans is a
// repeated field. A background goroutine posts the buffer every interval or
// when it holds maxBatch spans. When the endpoint is slow or down, at most
// maxQueue spans wait; later ones are dropped and counted, never blocking a
// request.
type pdataExporter struct {
	// immutable after newPdataExporter
	url      string
	headers  http.Header
	gzip     bool
	timeout  time.Duration
	interval time.Duration
	maxBatch int
	maxQueue int
	client   *http.Client
	onError  func(spans int, err error)

	mu      sync.Mutex // guards pending, n, spare
	pending []byte     // marshalled TracesData messages, concatenated
	n       int        // spans in pending
	spare   []byte     // the last posted buffer, emptied: pending's next backing array

	kick chan struct{} // a full batch is waiting
	stop chan struct{}
	done chan struct{}
}

var _ TracesConsumer = (*pdataExporter)(nil)

// errExportQueueFull is why spans are dropped while the endpoint is slow or
// down and the queue is full.
var errExportQueueFull = errors.New("traces export: queue full (the endpoint is slow or down); spans dropped")

// exportSettings are the OTEL_* variables the SDK's OTLP/HTTP exporter and
// batch processor read, read the same way.
func newPdataExporter(endpoint string, getenv func(string) string, onError func(int, error)) (*pdataExporter, error) {
	env := func(traces, general string) string {
		if v := getenv(traces); v != "" {
			return v
		}
		return getenv(general)
	}
	ms := func(name string, def time.Duration) (time.Duration, error) {
		v := getenv(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%s: want a positive number of milliseconds, got %q", name, v)
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	count := func(name string, def int) (int, error) {
		v := getenv(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%s: want a positive number, got %q", name, v)
		}
		return n, nil
	}
	e := &pdataExporter{url: endpoint, headers: http.Header{}, onError: onError,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	var err error
	if e.timeout, err = ms("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", 0); err == nil && e.timeout == 0 {
		e.timeout, err = ms("OTEL_EXPORTER_OTLP_TIMEOUT", 10*time.Second)
	}
	if err != nil {
		return nil, err
	}
	if e.interval, err = ms("OTEL_BSP_SCHEDULE_DELAY", 5*time.Second); err != nil {
		return nil, err
	}
	if e.maxBatch, err = count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512); err != nil {
		return nil, err
	}
	if e.maxQueue, err = count("OTEL_BSP_MAX_QUEUE_SIZE", 2048); err != nil {
		return nil, err
	}
	switch c := env("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"); c {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION: unsupported %q (want gzip or none)", c)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for kv := range strings.SplitSeq(getenv(name), ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				continue
			}
			if dv, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
				v = dv
			}
			e.headers.Set(strings.TrimSpace(k), v)
		}
	}
	e.client = &http.Client{Timeout: e.timeout}
	go e.loop()
	return e, nil
}

// ConsumeTraces marshals the sampled spans of td into the pending batch. It
// does not keep td (the aggregating processor reuses it).
func (e *pdataExporter) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	if !anySampled(td) {
		return nil
	}
	spans := td.SpanCount()
	var m ptrace.ProtoMarshaler
	data, err := m.MarshalTraces(td)
	if err != nil {
		e.onError(spans, err)
		return err
	}
	e.mu.Lock()
	if e.n+spans > e.maxQueue {
		e.mu.Unlock()
		e.onError(spans, errExportQueueFull) // the endpoint is not keeping up: drop, never block
		return nil
	}
	e.pending = append(e.pending, data...)
	e.n += spans
	full := e.n >= e.maxBatch
	e.mu.Unlock()
	if full {
		select {
		case e.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// anySampled: the one-span traces from the aggregating processor carry the
// span's W3C flags; bit 0 is "sampled".
func anySampled(td ptrace.Traces) bool {
	for _, spans := range SpanSlices(td) {
		for k := range spans.Len() {
			if spans.At(k).Flags()&1 != 0 {
				return true
			}
		}
	}
	return false
}

func (e *pdataExporter) loop() {
	defer close(e.done)
	tick := time.NewTicker(e.interval)
	defer tick.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-tick.C:
		case <-e.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
		_ = e.flush(ctx)
		cancel()
	}
}

// flush posts what is pending, as one or more batches.
func (e *pdataExporter) flush(ctx context.Context) error {
	e.mu.Lock()
	body, n := e.pending, e.n
	// Double buffering: the next spans go into the buffer posted last time,
	// which has grown to a batch's size already, so appends do not regrow.
	e.pending, e.n, e.spare = e.spare, 0, nil
	e.mu.Unlock()
	if n == 0 {
		e.mu.Lock()
		e.spare = body[:0]
		e.mu.Unlock()
		return nil
	}
	released, err := e.post(ctx, body)
	e.mu.Lock()
	if released && e.spare == nil && cap(body) <= 8<<20 { // keep it unless huge
		e.spare = body[:0]
	}
	e.mu.Unlock()
	if err != nil {
		e.onError(n, err)
		return err
	}
	return nil
}

// post sends body. released says the transport is done reading it, so its
// array may be reused: at once when a gzip copy went out, else once the
// transport has closed the body (it may still be writing it after a server
// answered early).
func (e *pdataExporter) post(ctx context.Context, body []byte) (released bool, err error) {
	sent := &sentBody{Reader: bytes.NewReader(body), closed: make(chan struct{})}
	var rd io.Reader = sent
	if e.gzip {
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		_, _ = zw.Write(body)
		_ = zw.Close()
		rd = &zb
		_ = sent.Close()
	}
	defer func() {
		select {
		case <-sent.closed:
			released = true
		case <-time.After(time.Second):
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, rd)
	if err != nil {
		_ = sent.Close()
		return false, err
	}
	if !e.gzip {
		req.ContentLength = int64(len(body)) // a sentBody hides its length from NewRequest
	}
	for k, v := range e.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "firstbyte-otlp-exporter")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return false, fmt.Errorf("traces export: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return false, fmt.Errorf("traces export: %s answered %d", e.url, resp.StatusCode)
	}
	return false, nil
}

// sentBody tells when the transport has closed a request body.
type sentBody struct {
	*bytes.Reader
	once   sync.Once
	closed chan struct{}
}

func (b *sentBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// Shutdown stops the loop and exports what is pending.
func (e *pdataExporter) Shutdown(ctx context.Context) error {
	select {
	case <-e.stop:
		return errors.New("exporter already shut down")
	default:
	}
	close(e.stop)
	<-e.done
	return e.flush(ctx)
}

// teeConsumer hands each span to several consumers in order: on the
// asynchronous side, the observers (the metrics), then the export. (The
// tracker is not among them: it has had the span synchronously.)
type teeConsumer []TracesConsumer

func (t teeConsumer) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	var errs []error
	for _, c := range t {
		if err := c.ConsumeTraces(ctx, td); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
