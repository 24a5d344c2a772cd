package requestlog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/apierror"
)

func logged(t *testing.T, l Line) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	l.Write(context.Background(), slog.New(slog.NewJSONHandler(&buf, nil)))
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("not one JSON line: %v: %s", err, buf.String())
	}
	return m
}

// An API call's line says where it went and why its last attempt failed,
// in the failure model's words; what was not set is left out.
func TestLineOfAFailedCall(t *testing.T) {
	m := logged(t, Line{
		Endpoint: "/v1/chat/completions", API: true, Model: "m", Alias: "fast",
		Target: "groq", Attempts: 2, Skipped: []apierror.Skip{{Target: "t3", Reason: "circuit_open"}},
		Selection: "cold",
		End:       End{ErrorType: "transport", Detail: "transport (connection refused)"},
		Status:    502, Duration: 3 * time.Millisecond,
	})
	want := map[string]any{
		"endpoint": "/v1/chat/completions", "model": "m", "alias": "fast", "target": "groq",
		"attempts": 2.0, "skipped": "t3:circuit_open", "selection": "cold",
		"error_class": "transport", "error_reason": "connection refused", "status": 502.0,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	for _, k := range []string{"route", "preference", "hedged", "ttfb", "trace_id"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s logged though not set: %v", k, m[k])
		}
	}
}

// A path that is no API call logs its endpoint, status and times only,
// and a hostile path is cut short.
func TestLineOfANonAPIPath(t *testing.T) {
	m := logged(t, Line{Endpoint: Endpoint("/" + strings.Repeat("x", 500)), Status: 404, Model: "m", Attempts: 3})
	if e := m["endpoint"].(string); len(e) != 64+3 || !strings.HasSuffix(e, "...") {
		t.Fatalf("endpoint not cut: %q", e)
	}
	for _, k := range []string{"model", "attempts"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s logged for a non-API path", k)
		}
	}
	if Endpoint("/v1/models/gpt-4o") != "/v1/models" {
		t.Fatal("model path not folded into /v1/models")
	}
}

// The class names an HTTP failure by what its status means; the reason
// is the detail's inside, a phrase, or the status, never the upstream's
// message.
func TestEndClassAndReason(t *testing.T) {
	cases := []struct {
		end           End
		class, reason string
	}{
		{End{ErrorType: "429", Status: 429}, "rate_limit", "upstream 429"},
		{End{ErrorType: "503", Status: 503}, "server_error", "upstream 503"},
		{End{ErrorType: "404", Status: 404}, "client_error", "upstream 404"},
		{End{ErrorType: "408", Status: 408}, fault.ErrorTimeout, "upstream 408"},
		{End{ErrorType: fault.ErrorStall}, fault.ErrorStall, "stream paused past timeout.idle"},
		{End{ErrorType: "config", Detail: "config (endpoint not found: POST http://127.0.0.1:1/chat/completions)"}, "config", "endpoint not found: POST http://127.0.0.1:1/chat/completions"},
		{End{ErrorType: "timeout", Detail: "first byte after 2s"}, "timeout", "first byte after 2s"},
		{End{ErrorType: "unknown_kind"}, "unknown_kind", ""},
	}
	for _, c := range cases {
		if got := c.end.Class(); got != c.class {
			t.Errorf("%+v: class %q, want %q", c.end, got, c.class)
		}
		if got := c.end.Reason(); got != c.reason {
			t.Errorf("%+v: reason %q, want %q", c.end, got, c.reason)
		}
	}
}
