package collector

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

const (
	contentProtobuf = "application/x-protobuf"
	contentJSON     = "application/json"
)

// newIngestServer serves NewIngestHandler for a tracker whose clock reads t0,
// for an instance "inst-a".
func newIngestServer(t *testing.T, o IngestOptions) (*httptest.Server, *Tracker) {
	t.Helper()
	tr := newTestTracker(newFakeClock(t0))
	srv := httptest.NewServer(NewIngestHandler(NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a"}), o))
	t.Cleanup(srv.Close)
	return srv, tr
}

// peerExport is an OTLP export request, encoded as contentType, carrying a
// peer's groq attempt (400 ms) and one of our own (together, skipped).
func peerExport(t testing.TB, contentType string) []byte {
	t.Helper()
	req := ptraceotlp.NewExportRequestFromTraces(buildTraces(t,
		attemptFixture("inst-b", "groq", "llama", 400*time.Millisecond, t0.Add(-time.Second)),
		attemptFixture("inst-a", "together", "llama", 100*time.Millisecond, t0.Add(-time.Second)),
	))
	var (
		b   []byte
		err error
	)
	if contentType == contentJSON {
		b, err = req.MarshalJSON()
	} else {
		b, err = req.MarshalProto()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type ingestRequest struct {
	method          string // "" is POST
	contentType     string
	contentEncoding string
	authorization   string
	body            io.Reader
}

func post(t *testing.T, srv *httptest.Server, r ingestRequest) (*http.Response, []byte) {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	req, err := http.NewRequest(r.method, srv.URL+"/v1/traces", r.body)
	if err != nil {
		t.Fatal(err)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if r.contentEncoding != "" {
		req.Header.Set("Content-Encoding", r.contentEncoding)
	}
	if r.authorization != "" {
		req.Header.Set("Authorization", r.authorization)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("POST /v1/traces: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestIngestAcceptsOTLP(t *testing.T) {
	for _, tc := range []struct {
		name            string
		contentType     string // sent
		encoding        string // of the body: contentJSON or contentProtobuf
		contentEncoding string
		token           string // configured; sent as the bearer token
	}{
		{"protobuf", contentProtobuf, contentProtobuf, "", ""},
		{"json", contentJSON, contentJSON, "", ""},
		{"json with charset", "application/json; charset=utf-8", contentJSON, "", ""},
		{"protobuf gzip", contentProtobuf, contentProtobuf, "gzip", ""},
		{"json gzip", contentJSON, contentJSON, "gzip", ""},
		{"identity encoding", contentProtobuf, contentProtobuf, "identity", ""},
		{"right token", contentProtobuf, contentProtobuf, "", "s3cret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, tr := newIngestServer(t, IngestOptions{Token: tc.token})
			body := peerExport(t, tc.encoding)
			if tc.contentEncoding == "gzip" {
				body = gzipped(t, body)
			}
			r := ingestRequest{contentType: tc.contentType, contentEncoding: tc.contentEncoding, body: bytes.NewReader(body)}
			if tc.token != "" {
				r.authorization = "Bearer " + tc.token
			}

			resp, respBody := post(t, srv, r)

			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d (%s), want 200", resp.StatusCode, respBody)
			}
			if got := resp.Header.Get("Content-Type"); got != tc.encoding {
				t.Errorf("response Content-Type = %q, want %q", got, tc.encoding)
			}
			exportResp := ptraceotlp.NewExportResponse()
			var err error
			if tc.encoding == contentJSON {
				err = exportResp.UnmarshalJSON(respBody)
			} else {
				err = exportResp.UnmarshalProto(respBody)
			}
			if err != nil {
				t.Errorf("response is not an ExportTraceServiceResponse: %v (%q)", err, respBody)
			}
			if got, _, ok := tr.P50("groq", "llama"); !ok || got != 400*time.Millisecond {
				t.Errorf("P50(%q,%q) = %v, %v; want 400ms, true (the peer's span)", "groq", "llama", got, ok)
			}
			if _, _, ok := tr.P50("together", "llama"); ok {
				t.Errorf("P50(%q,%q) ok = true, want false (our own span, skipped)", "together", "llama")
			}
		})
	}
}

func TestIngestRejects(t *testing.T) {
	valid := peerExport(t, contentProtobuf)
	big := bytes.Repeat([]byte{0}, 2048)
	for _, tc := range []struct {
		name       string
		opts       IngestOptions
		req        ingestRequest
		wantStatus int
		wantType   string // response Content-Type
		wantCode   codes.Code
	}{
		{"GET", IngestOptions{}, ingestRequest{method: http.MethodGet}, http.StatusMethodNotAllowed, "text/plain; charset=utf-8", 0},
		{"no token", IngestOptions{Token: "s3cret"},
			ingestRequest{contentType: contentProtobuf, body: bytes.NewReader(valid)}, http.StatusUnauthorized, "text/plain; charset=utf-8", 0},
		{"wrong token", IngestOptions{Token: "s3cret"},
			ingestRequest{contentType: contentProtobuf, authorization: "Bearer s3cre", body: bytes.NewReader(valid)}, http.StatusUnauthorized, "text/plain; charset=utf-8", 0},
		{"token without Bearer", IngestOptions{Token: "s3cret"},
			ingestRequest{contentType: contentProtobuf, authorization: "s3cret", body: bytes.NewReader(valid)}, http.StatusUnauthorized, "text/plain; charset=utf-8", 0},
		{"text/plain", IngestOptions{},
			ingestRequest{contentType: "text/plain", body: bytes.NewReader(valid)}, http.StatusUnsupportedMediaType, "text/plain; charset=utf-8", 0},
		{"no content type", IngestOptions{},
			ingestRequest{body: bytes.NewReader(valid)}, http.StatusUnsupportedMediaType, "text/plain; charset=utf-8", 0},
		{"brotli", IngestOptions{},
			ingestRequest{contentType: contentProtobuf, contentEncoding: "br", body: bytes.NewReader(valid)}, http.StatusUnsupportedMediaType, contentProtobuf, codes.InvalidArgument},
		{"too large", IngestOptions{MaxBody: 1024},
			ingestRequest{contentType: contentProtobuf, body: bytes.NewReader(big)}, http.StatusRequestEntityTooLarge, contentProtobuf, codes.InvalidArgument},
		{"too large, chunked", IngestOptions{MaxBody: 1024},
			ingestRequest{contentType: contentProtobuf, body: io.MultiReader(bytes.NewReader(big))}, http.StatusRequestEntityTooLarge, contentProtobuf, codes.InvalidArgument},
		{"too large once gunzipped", IngestOptions{MaxBody: 1024},
			ingestRequest{contentType: contentProtobuf, contentEncoding: "gzip", body: bytes.NewReader(gzipped(t, big))}, http.StatusRequestEntityTooLarge, contentProtobuf, codes.InvalidArgument},
		{"garbage protobuf", IngestOptions{},
			ingestRequest{contentType: contentProtobuf, body: strings.NewReader("\xff\xff\xff garbage")}, http.StatusBadRequest, contentProtobuf, codes.InvalidArgument},
		{"garbage json", IngestOptions{},
			ingestRequest{contentType: contentJSON, body: strings.NewReader(`{"resourceSpans": "garbage`)}, http.StatusBadRequest, contentJSON, codes.InvalidArgument},
		{"not gzip", IngestOptions{},
			ingestRequest{contentType: contentProtobuf, contentEncoding: "gzip", body: bytes.NewReader(valid)}, http.StatusBadRequest, contentProtobuf, codes.InvalidArgument},
		{"truncated gzip", IngestOptions{},
			ingestRequest{contentType: contentProtobuf, contentEncoding: "gzip", body: bytes.NewReader(gzipped(t, valid)[:40])}, http.StatusBadRequest, contentProtobuf, codes.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reasons []string
			tc.opts.OnReject = func(reason string, _ int) { reasons = append(reasons, reason) }
			srv, tr := newIngestServer(t, tc.opts)

			resp, body := post(t, srv, tc.req)
			if want, ok := wantRejectReason[tc.name]; ok && (len(reasons) != 1 || reasons[0] != want) {
				t.Errorf("rejections %v, want [%s]", reasons, want)
			}

			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status = %d (%q), want %d", resp.StatusCode, body, tc.wantStatus)
			}
			if got := resp.Header.Get("Content-Type"); got != tc.wantType {
				t.Errorf("Content-Type = %q, want %q", got, tc.wantType)
			}
			if tc.wantStatus == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != http.MethodPost {
				t.Errorf("Allow = %q, want POST", resp.Header.Get("Allow"))
			}
			if bytes.Contains(body, []byte("garbage")) {
				t.Errorf("response %q echoes the request body", body)
			}
			if tc.wantCode != 0 {
				st := &statuspb.Status{}
				var err error
				if tc.wantType == contentJSON {
					err = protojson.Unmarshal(body, st)
				} else {
					err = proto.Unmarshal(body, st)
				}
				if err != nil || codes.Code(st.GetCode()) != tc.wantCode || st.GetMessage() == "" {
					t.Errorf("body = %v (err %v), want a google.rpc.Status with code %v and a message", st, err, tc.wantCode)
				}
			}
			if all := tr.All(); len(all) != 0 {
				t.Errorf("tracker learned %v from a rejected request", all)
			}
		})
	}
}

// wantRejectReason is the firstbyte_ingest_rejected_total reason each
// refused request of TestIngestRejects counts under.
var wantRejectReason = map[string]string{
	"no token": RejectUnauthorized, "wrong token": RejectUnauthorized, "token without Bearer": RejectUnauthorized,
	"text/plain": RejectUnsupported, "no content type": RejectUnsupported, "brotli": RejectUnsupported,
	"too large": RejectTooLarge, "too large, chunked": RejectTooLarge, "too large once gunzipped": RejectTooLarge,
	"garbage protobuf": RejectUndecodable, "garbage json": RejectUndecodable, "not gzip": RejectUndecodable,
	"truncated gzip": RejectUndecodable,
}

// TestIngestOnlyConfiguredTargets: a payload naming 100,000 targets this
// instance does not route to teaches nothing and crowds out nothing: the
// spans are dropped and counted, and the real target learns as before.
func TestIngestOnlyConfiguredTargets(t *testing.T) {
	tr := newTestTracker(newFakeClock(t0))
	var rejected atomic.Int64
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a", OnReject: func(reason string, n int) {
		if reason == RejectUnknownTarget {
			rejected.Add(int64(n))
		}
	}})
	agg.SetTargets([]Target{{Name: "groq", Model: "llama", Host: "api.groq.com", Port: 443, Kind: "openai"}})
	srv := httptest.NewServer(NewIngestHandler(agg, IngestOptions{}))
	defer srv.Close()

	// Twice the tracker's key bound: were unknown targets admitted, the
	// junk would fill it and the real target's key would be dropped.
	const junk, perRequest = 2 * DefaultMaxKeys, DefaultMaxKeys
	for sent := 0; sent < junk; sent += perRequest {
		spans := make([]spanFixture, 0, perRequest)
		for i := range perRequest {
			spans = append(spans, attemptFixture("inst-evil", fmt.Sprintf("junk-%d", sent+i), "m", time.Millisecond, t0.Add(-time.Second)))
		}
		b, err := ptraceotlp.NewExportRequestFromTraces(buildTraces(t, spans...)).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		if resp, body := post(t, srv, ingestRequest{contentType: contentProtobuf, body: bytes.NewReader(b)}); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d (%s)", resp.StatusCode, body)
		}
	}
	if resp, _ := post(t, srv, ingestRequest{contentType: contentProtobuf, body: bytes.NewReader(peerExport(t, contentProtobuf))}); resp.StatusCode != http.StatusOK {
		t.Fatalf("real export: status %d", resp.StatusCode)
	}
	if n := rejected.Load(); n != junk {
		t.Errorf("rejected %d spans as unknown_target, want %d", n, junk)
	}
	if k := tr.Keys(); k != 1 {
		t.Errorf("tracker holds %d keys, want 1 (groq/llama)", k)
	}
	if _, n, ok := tr.P50("groq", "llama"); !ok || n != 1 {
		t.Errorf("groq/llama learned %d samples (ok %v), want 1", n, ok)
	}
}

// TestIngestRefusesDeepJSON: nesting past the bound is refused before the
// body is decoded; an ordinary export passes.
func TestIngestRefusesDeepJSON(t *testing.T) {
	var reasons []string
	srv, tr := newIngestServer(t, IngestOptions{MaxDepth: 64, OnReject: func(r string, _ int) { reasons = append(reasons, r) }})
	deep := strings.Repeat(`{"a":[`, 5000) + strings.Repeat(`]}`, 5000)
	resp, _ := post(t, srv, ingestRequest{contentType: contentJSON, body: strings.NewReader(deep)})
	if resp.StatusCode != http.StatusBadRequest || len(reasons) != 1 || reasons[0] != RejectTooDeep {
		t.Errorf("deep body: status %d, rejections %v; want 400 too_deep", resp.StatusCode, reasons)
	}
	// Brackets inside strings do not count.
	if !withinDepth([]byte(`{"s":"[[[[[[[[[[\"[[[["}`), 2) || withinDepth([]byte(`[[[]]]`), 2) {
		t.Error("withinDepth miscounts")
	}
	resp, _ = post(t, srv, ingestRequest{contentType: contentJSON, body: bytes.NewReader(peerExport(t, contentJSON))})
	if resp.StatusCode != http.StatusOK || len(tr.All()) != 1 {
		t.Errorf("ordinary JSON export: status %d, learned %v", resp.StatusCode, tr.All())
	}
}

// TestIngestBoundsConcurrency: past MaxConcurrent requests being read at
// once, the next one is told to retry (503, Retry-After), not buffered.
func TestIngestBoundsConcurrency(t *testing.T) {
	var reasons []string
	var mu sync.Mutex
	srv, _ := newIngestServer(t, IngestOptions{MaxConcurrent: 1, OnReject: func(r string, _ int) {
		mu.Lock()
		reasons = append(reasons, r)
		mu.Unlock()
	}})
	pr, pw := io.Pipe()
	firstDone := make(chan int, 1)
	go func() {
		resp, _ := post(t, srv, ingestRequest{contentType: contentProtobuf, body: pr})
		firstDone <- resp.StatusCode
	}()
	if _, err := pw.Write([]byte{0x0a}); err != nil { // the first request is being read
		t.Fatal(err)
	}
	// Until the first request's handler holds its slot a second one may get
	// through; once it does, every other is refused.
	var resp *http.Response
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		resp, _ = post(t, srv, ingestRequest{contentType: contentProtobuf, body: bytes.NewReader(peerExport(t, contentProtobuf))})
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second request while the first is read: status %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	pw.Close()
	<-firstDone
	mu.Lock()
	defer mu.Unlock()
	if len(reasons) == 0 || reasons[len(reasons)-1] != RejectBusy && reasons[0] != RejectBusy {
		t.Errorf("rejections %v, want busy", reasons)
	}
}

func TestIngestDefaultMaxBody(t *testing.T) {
	h := NewIngestHandler(nil, IngestOptions{}).(*ingestHandler)
	if h.maxBody != 16<<20 {
		t.Errorf("maxBody with zero MaxBody = %d, want %d", h.maxBody, 16<<20)
	}
}

// TestPeerServerSpansAreNotRejected: a peer's export carries its request
// (SERVER) spans too, which name the target that answered but no upstream
// model. They are not attempts: nothing is learned from them, and they are
// not counted as spans naming an unknown target.
func TestPeerServerSpansAreNotRejected(t *testing.T) {
	tr := newTestTracker(newFakeClock(t0))
	rejected := map[string]int{}
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a", OnReject: func(reason string, n int) { rejected[reason] += n }})
	agg.SetTargets([]Target{{Name: "groq", Model: "llama", Host: "api.groq.com", Port: 443, Kind: "openai"}})
	server := spanFixture{
		instance: "inst-b",
		name:     "POST /v1/chat/completions",
		kind:     ptrace.SpanKindServer,
		end:      t0.Add(-time.Second),
		attrs: map[string]any{
			string(telemetry.KeyTarget):         "groq",
			string(telemetry.KeyRequestedModel): "llama-3.3-70b",
			string(telemetry.KeySelection):      telemetry.SelectionLeader,
			string(telemetry.KeyHTTPStatus):     int64(200),
		},
	}
	attempt := attemptFixture("inst-b", "groq", "llama", 20*time.Millisecond, t0.Add(-time.Second))
	if err := agg.ConsumePeerTraces(context.Background(), buildTraces(t, attempt, server)); err != nil {
		t.Fatal(err)
	}
	if len(rejected) != 0 {
		t.Errorf("rejections %v, want none: a server span is not an attempt naming an unknown target", rejected)
	}
	if _, n, ok := tr.P50("groq", "llama"); !ok || n != 1 {
		t.Errorf("groq/llama learned %d samples (ok %v), want the attempt's 1", n, ok)
	}
}

// TestIngestReusesItsBuffersSafely: bodies and gzip readers are pooled, so
// a request must never see what an earlier one left: a good gzipped export
// after a truncated one, a plain one after a gzipped one, and a small one
// after a large one all decode as if each came first.
func TestIngestReusesItsBuffersSafely(t *testing.T) {
	srv, tr := newIngestServer(t, IngestOptions{})
	valid := peerExport(t, contentProtobuf)
	// A large export: 50 of the peer's spans.
	var many []spanFixture
	for range 50 {
		many = append(many, attemptFixture("inst-b", "groq", "llama", 900*time.Millisecond, t0.Add(-time.Second)))
	}
	large, err := ptraceotlp.NewExportRequestFromTraces(buildTraces(t, many...)).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name     string
		encoding string
		body     []byte
		status   int
	}{
		{"large gzipped", "gzip", gzipped(t, large), http.StatusOK},
		{"truncated gzip", "gzip", gzipped(t, valid)[:40], http.StatusBadRequest},
		{"good gzip after a bad one", "gzip", gzipped(t, valid), http.StatusOK},
		{"plain after gzip", "", valid, http.StatusOK},
		{"not gzip", "gzip", valid, http.StatusBadRequest},
		{"plain, small after large", "", valid, http.StatusOK},
	}
	for _, s := range steps {
		resp, body := post(t, srv, ingestRequest{contentType: contentProtobuf, contentEncoding: s.encoding, body: bytes.NewReader(s.body)})
		if resp.StatusCode != s.status {
			t.Fatalf("%s: status %d (%s), want %d", s.name, resp.StatusCode, body, s.status)
		}
	}
	// 50 samples of 900 ms, then three good requests of one 400 ms sample
	// each: 53, unless a request was read wrong (fewer) or a buffer kept
	// an earlier body (more).
	ks, ok := tr.Stats("groq", "llama")
	if !ok || ks.Samples != 53 {
		t.Fatalf("groq/llama: %d samples (%v), want 53", ks.Samples, ok)
	}
	if p50, _, _ := tr.P50("groq", "llama"); p50 != 900*time.Millisecond {
		t.Errorf("p50 %v, want 900ms", p50)
	}
}
