package apierror

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An error answer must parse as the caller's API's error object, carry
// the status, and keep the message's bytes exactly (quotes and control
// characters escaped, never raw).
func TestWriteShapes(t *testing.T) {
	const msg = "model \"x\" is not served\n"
	t.Run("openai", func(t *testing.T) {
		rec := httptest.NewRecorder()
		WriteParam(rec, OpenAI, http.StatusBadRequest, TypeInvalidRequest, "model_not_found", "model", msg, nil)
		if rec.Code != http.StatusBadRequest || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
		}
		if got, want := rec.Header().Get("Content-Length"), len(rec.Body.Bytes()); got != itoa(want) {
			t.Fatalf("Content-Length %s, body %d bytes", got, want)
		}
		var e struct {
			Error struct {
				Message, Type, Code string
				Param               *string
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatalf("not JSON: %v: %s", err, rec.Body)
		}
		if e.Error.Message != msg || e.Error.Type != TypeInvalidRequest || e.Error.Code != "model_not_found" || e.Error.Param == nil || *e.Error.Param != "model" {
			t.Fatalf("got %+v", e.Error)
		}
	})
	t.Run("openai without param", func(t *testing.T) {
		rec := httptest.NewRecorder()
		Write(rec, Responses, http.StatusUnauthorized, TypeAuth, "invalid_api_key", "bad key")
		if !strings.Contains(rec.Body.String(), `"param":null`) {
			t.Fatalf("param not null: %s", rec.Body)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		rec := httptest.NewRecorder()
		WriteExtra(rec, Anthropic, http.StatusNotFound, TypeNotFound, "model_not_found", msg, []byte(`,"firstbyte_x":1`))
		var e struct {
			Type  string
			Error map[string]any
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatalf("not JSON: %v: %s", err, rec.Body)
		}
		if e.Type != "error" || e.Error["type"] != "not_found_error" || e.Error["message"] != msg || e.Error["firstbyte_x"] != 1.0 {
			t.Fatalf("got %+v", e)
		}
		if _, ok := e.Error["code"]; ok {
			t.Fatalf("an Anthropic error has no code: %s", rec.Body)
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// The all-failed message names every attempt and every skip, and its
// status is the last failure's (503 when nothing could be tried).
func TestFailureMessage(t *testing.T) {
	status, msg := FailureMessage(0, nil, []Skip{{"a", "circuit_open"}})
	if status != http.StatusServiceUnavailable || msg != "no target could be tried: a skipped: circuit_open" {
		t.Fatalf("nothing tried: %d %q", status, msg)
	}
	status, msg = FailureMessage(2, []Failure{
		{Target: "a", Attempt: 1, Status: 502, Reason: "transport", Detail: "transport (connection refused)"},
		{Target: "b", Attempt: 2, Status: 504, Reason: "timeout"},
	}, []Skip{{"c", "rate_limited"}})
	want := "all 2 attempts failed: attempt 1 a: transport (connection refused); attempt 2 b: timeout; c skipped: rate_limited"
	if status != http.StatusGatewayTimeout || msg != want {
		t.Fatalf("got %d %q\nwant 504 %q", status, msg, want)
	}
}

// The summary set into an upstream's error keeps every byte of that error
// and adds the attempts beside its own members; a body with no error
// object is left alone.
func TestWithMembersKeepsTheUpstreamError(t *testing.T) {
	members := Summary([]Failure{{Target: `t"1`, Attempt: 1, Status: 429, Reason: "429"}}, []Skip{{"t2", "circuit_open"}})
	cases := []struct {
		name, body string
		ok         bool
	}{
		{"openai", `{"error":{"message":"slow down","type":"rate_limit","code":null}}`, true},
		{"anthropic", `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, true},
		{"empty error", `{"error":{}}`, true},
		{"no error object", `{"detail":"nope"}`, false},
		{"error is a string", `{"error":"nope"}`, false},
		{"not JSON", `<html>502</html>`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, ok := WithMembers([]byte(c.body), members)
			if ok != c.ok {
				t.Fatalf("ok %v, want %v: %s", ok, c.ok, out)
			}
			if !ok {
				if string(out) != c.body {
					t.Fatalf("changed a body it could not extend: %s", out)
				}
				return
			}
			var v map[string]any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("not JSON: %v: %s", err, out)
			}
			e := v["error"].(map[string]any)
			attempts := e["firstbyte_attempts"].([]any)
			if len(attempts) != 1 || attempts[0].(map[string]any)["target"] != `t"1` {
				t.Fatalf("attempts %v", attempts)
			}
			if s := e["firstbyte_skipped"].([]any); len(s) != 1 {
				t.Fatalf("skipped %v", s)
			}
			// every byte of the original error object is still there, in order
			prefix := c.body[:strings.LastIndex(c.body[:len(c.body)-1], "}")]
			if !strings.HasPrefix(string(out), prefix) {
				t.Fatalf("original bytes changed:\n%s\n%s", c.body, out)
			}
		})
	}
}
