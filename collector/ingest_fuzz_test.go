package collector

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzIngest: whatever arrives on the trace ingest (protobuf or JSON,
// gzipped or not), the handler answers with one of its statuses, never
// panics, never learns a key that is not configured.
func FuzzIngest(f *testing.F) {
	f.Add(peerExport(f, contentProtobuf), false, false)
	f.Add(peerExport(f, contentJSON), true, false)
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"key":"firstbyte.target","value":{"stringValue":"x"}}]}]}]}]}`), true, false)
	f.Add([]byte{0x1f, 0x8b, 0x08}, false, true)
	tr := newTestTracker(newFakeClock(t0))
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a"})
	agg.SetTargets([]Target{{Name: "groq", Model: "llama", Host: "api.groq.com", Port: 443, Kind: "openai"}})
	agg.SetForeign(ForeignOptions{Enabled: true})
	h := NewIngestHandler(agg, IngestOptions{MaxBody: 1 << 20})
	f.Fuzz(func(t *testing.T, body []byte, json, gz bool) {
		req := httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(body))
		req.Header.Set("Content-Type", contentProtobuf)
		if json {
			req.Header.Set("Content-Type", contentJSON)
		}
		if gz {
			req.Header.Set("Content-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		default:
			t.Fatalf("status %d", rec.Code)
		}
		if k := tr.Keys(); k > 1 {
			t.Fatalf("tracker holds %d keys; only groq/llama is configured", k)
		}
	})
}
