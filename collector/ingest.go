package collector

import (
	"bytes"
	"compress/gzip"
	"crypto/subtle"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// DefaultIngestMaxBody is IngestOptions.MaxBody's zero value: 16 MiB, room
// for a collector's batch of several thousand spans.
const DefaultIngestMaxBody = 16 << 20

// IngestOptions configures the OTLP/HTTP ingest handler.
type IngestOptions struct {
	// Token, when non-empty, must come as "Authorization: Bearer TOKEN" on
	// every request; a request without it gets 401. Empty: no authentication
	// (keep the admin listener private then).
	Token string
	// MaxBody bounds the request body, both as sent and after gzip
	// decompression; a larger one gets 413. Zero (or negative) means
	// DefaultIngestMaxBody.
	MaxBody int64
	// MaxDepth bounds the nesting of a JSON body's arrays and objects (an
	// OTLP trace export nests a dozen deep; attribute values a few more); a
	// deeper one gets 400 before it is decoded. Zero (or negative) means
	// DefaultIngestMaxDepth.
	MaxDepth int
	// MaxConcurrent bounds how many ingest requests are read and decoded at
	// once; past it a request gets 503 with Retry-After, which an OTLP
	// exporter retries. Zero (or negative) means DefaultIngestConcurrency.
	MaxConcurrent int
	// OnReject is told of every request refused, by reason (Reject*), for
	// firstbyte_ingest_rejected_total and the logs. Nil: not told.
	OnReject func(reason string, spans int)
}

// Defaults of IngestOptions.
const (
	DefaultIngestMaxDepth    = 64
	DefaultIngestConcurrency = 4
)

// NewIngestHandler returns the admin POST /v1/traces handler: OTLP/HTTP trace
// export requests, protobuf or JSON, optionally gzipped, from an
// OpenTelemetry Collector fanning out peers' spans.
// The spans go to a.ConsumePeerTraces. Like the collector's otlphttp
// receiver, it only reads the content type, reads the body, unmarshals,
// consumes and answers with an empty ExportTraceServiceResponse in the
// request's encoding; errors carry a google.rpc.Status in that encoding too,
// and never echo the body.
func NewIngestHandler(a *Aggregator, o IngestOptions) http.Handler {
	h := &ingestHandler{agg: a, maxBody: o.MaxBody, maxDepth: o.MaxDepth, onReject: o.OnReject}
	if o.Token != "" {
		h.wantAuth = []byte("Bearer " + o.Token)
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultIngestMaxBody
	}
	if h.maxDepth <= 0 {
		h.maxDepth = DefaultIngestMaxDepth
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultIngestConcurrency
	}
	h.slots = make(chan struct{}, o.MaxConcurrent)
	if h.onReject == nil {
		h.onReject = func(string, int) {}
	}
	return h
}

type ingestHandler struct {
	// Immutable after NewIngestHandler.
	agg      *Aggregator
	wantAuth []byte // the whole Authorization header expected; nil: none
	maxBody  int64
	maxDepth int
	slots    chan struct{} // a token per request being read and decoded
	onReject func(reason string, spans int)

	decoded atomic.Int64 // bodies decoded into pdata (not prefiltered away); read by tests
}

func (h *ingestHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writePlain(w, http.StatusMethodNotAllowed, "405 method not allowed, supported: [POST]")
		return
	}
	if !h.authorized(r) {
		h.onReject(RejectUnauthorized, 0)
		w.Header().Set("WWW-Authenticate", "Bearer")
		writePlain(w, http.StatusUnauthorized, "401 missing or wrong bearer token")
		return
	}
	enc, ok := encodingOf(r.Header.Get("Content-Type"))
	if !ok {
		h.onReject(RejectUnsupported, 0)
		writePlain(w, http.StatusUnsupportedMediaType,
			"415 unsupported media type, supported: [application/json, application/x-protobuf]")
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		// Bounded memory: a burst of large bodies waits at the sender, not
		// here. OTLP exporters retry a 503.
		h.onReject(RejectBusy, 0)
		w.Header().Set("Retry-After", "1")
		enc.writeStatus(w, http.StatusServiceUnavailable, "too many ingest requests at once; retry")
		return
	}
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer putBodyBuffer(buf)
	body, status, msg := h.readBody(w, r, buf)
	if status != 0 {
		if status == http.StatusRequestEntityTooLarge {
			h.onReject(RejectTooLarge, 0)
		} else if status == http.StatusUnsupportedMediaType {
			h.onReject(RejectUnsupported, 0)
		} else {
			h.onReject(RejectUndecodable, 0)
		}
		enc.writeStatus(w, status, msg)
		return
	}
	if enc.contentType == jsonEncoding.contentType && !withinDepth(body, h.maxDepth) {
		// Decoding a deeply nested body costs memory in proportion to its
		// depth before anything can be refused.
		h.onReject(RejectTooDeep, 0)
		enc.writeStatus(w, http.StatusBadRequest, "JSON nested too deeply")
		return
	}
	// A request the prefilter proves would teach and count nothing (an
	// application's spans that map to no target, the common case) is
	// answered as if consumed, without decoding it: see prefilter.go.
	if !enc.prefilter || !h.agg.teachesNothing(body) {
		h.decoded.Add(1)
		req := ptraceotlp.NewExportRequest()
		if err := enc.unmarshalRequest(req, body); err != nil {
			h.onReject(RejectUndecodable, 0)
			enc.writeStatus(w, http.StatusBadRequest, "cannot decode the OTLP trace export request")
			return
		}
		if err := h.agg.ConsumePeerTraces(r.Context(), req.Traces()); err != nil {
			enc.writeStatus(w, http.StatusInternalServerError, "cannot consume the spans")
			return
		}
	}
	resp, err := enc.marshalResponse(ptraceotlp.NewExportResponse())
	if err != nil {
		enc.writeStatus(w, http.StatusInternalServerError, "cannot encode the response")
		return
	}
	w.Header().Set("Content-Type", enc.contentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(resp)
}

// authorized compares in constant time so the token cannot be guessed byte
// by byte from response times.
func (h *ingestHandler) authorized(r *http.Request) bool {
	if h.wantAuth == nil {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), h.wantAuth) == 1
}

// readBody reads the whole body, decompressing gzip, bounded by maxBody on
// both sides of the decompression (a small gzip body can inflate to
// gigabytes). On failure it returns the HTTP status and a short message.
func (h *ingestHandler) readBody(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer) ([]byte, int, string) {
	if r.ContentLength > h.maxBody {
		return nil, http.StatusRequestEntityTooLarge, "request body too large"
	}
	// MaxBytesReader also tells the server to close the connection rather
	// than drain the rest of an oversized body.
	var src io.Reader = http.MaxBytesReader(w, r.Body, h.maxBody)
	sizeHint := int64(0)
	switch ce := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); ce {
	case "", "identity":
		sizeHint = r.ContentLength
	case "gzip":
		gz, err := getGzipReader(src)
		if err != nil {
			status, msg := readErrorStatus(err)
			return nil, status, msg
		}
		defer gzipReaders.Put(gz)
		src = io.LimitReader(gz, h.maxBody+1)
	default:
		return nil, http.StatusUnsupportedMediaType, "unsupported Content-Encoding, supported: [gzip, identity]"
	}
	if sizeHint > 0 {
		buf.Grow(int(sizeHint))
	}
	if _, err := buf.ReadFrom(src); err != nil {
		status, msg := readErrorStatus(err)
		return nil, status, msg
	}
	if int64(buf.Len()) > h.maxBody {
		return nil, http.StatusRequestEntityTooLarge, "request body too large"
	}
	return buf.Bytes(), 0, ""
}

// The buffers a body is read into and the gzip readers that inflate it,
// pooled: a collector posts a batch every few seconds per pipeline, and a
// fresh buffer grown by doubling plus a fresh inflater cost more than the
// spans of a batch that teaches nothing (the prefilter's case). Nothing
// keeps a body once its request is answered: pdata copies what it decodes
// (strings and bytes), and the prefilter only looks.
var (
	bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	gzipReaders sync.Pool
)

// maxPooledBody is the largest body buffer kept for the next request; the
// odd huge batch does not pin its memory.
const maxPooledBody = 1 << 20

func putBodyBuffer(b *bytes.Buffer) {
	if b.Cap() > maxPooledBody {
		return
	}
	b.Reset()
	bodyBuffers.Put(b)
}

// getGzipReader is a pooled gzip reader reset onto src (the caller puts it
// back when done).
func getGzipReader(src io.Reader) (*gzip.Reader, error) {
	if gz, ok := gzipReaders.Get().(*gzip.Reader); ok {
		if err := gz.Reset(src); err != nil {
			gzipReaders.Put(gz)
			return nil, err
		}
		return gz, nil
	}
	return gzip.NewReader(src)
}

// withinDepth reports whether the JSON text b nests its arrays and objects
// at most max deep. It only counts brackets outside strings; whether b is
// valid JSON is the decoder's business.
func withinDepth(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return false
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return true
}

func readErrorStatus(err error) (int, string) {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge, "request body too large"
	}
	return http.StatusBadRequest, "cannot read the request body"
}

// otlpEncoding is one of the two OTLP/HTTP encodings.
type otlpEncoding struct {
	contentType string
	// prefilter: a body may be proved to teach nothing before it is
	// decoded (Aggregator.teachesNothing). Protobuf only: a JSON string
	// can spell a key or a host with escapes, so its bytes cannot be
	// matched without decoding it, and JSON ingest is rare.
	prefilter        bool
	unmarshalRequest func(ptraceotlp.ExportRequest, []byte) error
	marshalResponse  func(ptraceotlp.ExportResponse) ([]byte, error)
	marshalStatus    func(*statuspb.Status) ([]byte, error)
}

var (
	protobufEncoding = otlpEncoding{
		contentType:      "application/x-protobuf",
		prefilter:        true,
		unmarshalRequest: ptraceotlp.ExportRequest.UnmarshalProto,
		marshalResponse:  ptraceotlp.ExportResponse.MarshalProto,
		marshalStatus:    func(s *statuspb.Status) ([]byte, error) { return proto.Marshal(s) },
	}
	jsonEncoding = otlpEncoding{
		contentType:      "application/json",
		unmarshalRequest: ptraceotlp.ExportRequest.UnmarshalJSON,
		marshalResponse:  ptraceotlp.ExportResponse.MarshalJSON,
		marshalStatus:    func(s *statuspb.Status) ([]byte, error) { return protojson.Marshal(s) },
	}
)

// encodingOf picks the encoding from a Content-Type header, ignoring
// parameters such as charset.
func encodingOf(contentType string) (otlpEncoding, bool) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return otlpEncoding{}, false
	}
	switch mediaType {
	case protobufEncoding.contentType:
		return protobufEncoding, true
	case jsonEncoding.contentType:
		return jsonEncoding, true
	default:
		return otlpEncoding{}, false
	}
}

// writeStatus answers with a google.rpc.Status, as OTLP/HTTP asks of every
// 4xx and 5xx once the encoding is known.
func (e otlpEncoding) writeStatus(w http.ResponseWriter, status int, msg string) {
	b, err := e.marshalStatus(&statuspb.Status{Code: int32(grpcCode(status)), Message: msg}) //nolint:gosec // small enum
	if err != nil {
		writePlain(w, status, msg)
		return
	}
	w.Header().Set("Content-Type", e.contentType)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// grpcCode is the google.rpc.Status code for an HTTP status.
func grpcCode(status int) codes.Code {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	default:
		return codes.Internal
	}
}

// writePlain answers before the request's encoding is known.
func writePlain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg)
}
