package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// vertexToken gets a token from srv's token endpoint.
func vertexToken(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	resp, err := srv.Client().Post(srv.URL+"/token", "application/x-www-form-urlencoded", strings.NewReader("grant_type=x"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// TestVertexSimGoogleErrors: the refusals Vertex's own front gives (a
// denied permission, an exhausted quota, a bad token) come in Google's
// error shape with its status names, as the real host's do, whatever
// model sits behind; other injected errors are the model's (Anthropic's
// shape, as rawPredict relays them).
func TestVertexSimGoogleErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status          int
		want, notWanted string
	}{
		{http.StatusForbidden, `"status":"PERMISSION_DENIED"`, `"type":"error"`},
		{http.StatusTooManyRequests, `"status":"RESOURCE_EXHAUSTED"`, `"type":"error"`},
		{http.StatusServiceUnavailable, `"type":"error"`, `"status":`},
	} {
		h := Host{Kind: HostVertex}
		srv := httptest.NewServer(NewProvider(Provider{Name: "vx", Host: &h, Errors: ErrorRate{Rate: 1, Status: tc.status}}, Options{}))
		t.Cleanup(srv.Close)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-x:rawPredict",
			strings.NewReader(`{"anthropic_version":"vertex-2023-10-16","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer "+vertexToken(t, srv))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) || strings.Contains(string(b), tc.notWanted) {
			t.Errorf("injected %d: %d %s, want %d with %s", tc.status, resp.StatusCode, b, tc.status, tc.want)
		}
		if tc.status == http.StatusTooManyRequests && (!strings.Contains(string(b), `"retryDelay":"1s"`) || resp.Header.Get("Retry-After") != "") {
			t.Errorf("injected 429: Retry-After %q, body %s; want the delay in RetryInfo only, as Google says it", resp.Header.Get("Retry-After"), b)
		}
	}
}
