package router_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// Stored responses live on the account that stored them. Two OpenAI
// accounts serve one model; each knows only the responses it created, as
// the real API does, and answers a follow-up naming any other id with a
// 404 previous_response_not_found.

// account is one OpenAI account's Responses API.
type account struct {
	name string
	srv  *httptest.Server

	mu       sync.Mutex
	stored   map[string]bool // guarded by mu
	created  int             // guarded by mu
	notFound int             // follow-ups it could not serve; guarded by mu
}

func startAccount(t *testing.T, name string) *account {
	a := &account{name: name, stored: map[string]bool{}}
	a.srv = httptest.NewServer(a)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *account) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream   bool   `json:"stream"`
		Store    *bool  `json:"store"`
		Previous string `json:"previous_response_id"`
	}
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &req)
	a.mu.Lock()
	if req.Previous != "" && !a.stored[req.Previous] {
		a.notFound++
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"message":"Previous response with id '%s' not found.","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}}`, req.Previous)
		return
	}
	a.created++
	id := fmt.Sprintf("resp_%s%04d", a.name, a.created)
	if req.Store == nil || *req.Store { // the Responses API stores unless told not to
		a.stored[id] = true
	}
	a.mu.Unlock()
	resp := fmt.Sprintf(`{"id":%q,"object":"response","created_at":1,"status":"completed","model":"gpt-4.1","output":[{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"hello","annotations":[]}]}],"usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}}`, id)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":%q,\"object\":\"response\",\"created_at\":1,\"status\":\"in_progress\",\"model\":\"gpt-4.1\",\"output\":[]}}\n\n", id)
	fmt.Fprint(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"hello\"}\n\n")
	fmt.Fprintf(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":%s}\n\n", resp)
}

func (a *account) notFounds() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.notFound
}

// twoAccounts is the config of two OpenAI accounts serving model m in
// turn (round-robin: consecutive requests go to different accounts).
func twoAccounts(a, b *account) string {
	return fmt.Sprintf(`
strategy: {mode: round-robin}
providers:
  a: {kind: openai, base_url: %q}
  b: {kind: openai, base_url: %q}
targets:
  - {virtual_key: a, model_map: {m: gpt-4.1}}
  - {virtual_key: b, model_map: {m: gpt-4.1}}
`, a.srv.URL+"/v1", b.srv.URL+"/v1")
}

// created is a stored response: its id, and the target that stored it.
type created struct{ id, target string }

// createResponse asks url for a response (stored: store omitted, the
// API's default) and returns its id, read from the answer or, for a
// stream, from its response.created event.
func createResponse(t *testing.T, url string, stream bool) created {
	t.Helper()
	resp := post(t, url, "/v1/responses", fmt.Sprintf(`{"model":"m","input":"hi","stream":%v}`, stream))
	body := readAll(t, resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create: status %d, body %s", resp.StatusCode, body)
	}
	i := strings.Index(body, `"id":"resp_`)
	if i < 0 {
		t.Fatalf("create: no response id in %s", body)
	}
	id := body[i+6:]
	return created{id: id[:strings.IndexByte(id, '"')], target: resp.Header.Get(router.HeaderTarget)}
}

// followUp asks url to continue prev and checks it went to prev's target
// at once.
func followUp(t *testing.T, url string, prev created, stream bool) {
	t.Helper()
	resp := post(t, url, "/v1/responses", fmt.Sprintf(`{"model":"m","previous_response_id":%q,"input":"and then?","stream":%v}`, prev.id, stream))
	body := readAll(t, resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("follow-up of %s (stored on %s): status %d, body %s", prev.id, prev.target, resp.StatusCode, body)
		return
	}
	wantHeaders(t, resp, prev.target, "1", "order")
}

func TestFollowUpGoesToTheAccountThatStored(t *testing.T) {
	t.Parallel()
	a, b := startAccount(t, "a"), startAccount(t, "b")
	srv := httptest.NewServer(newGatewayFromYAML(t, twoAccounts(a, b), router.Options{}).Handler())
	t.Cleanup(srv.Close)

	// 40 conversations, each created then continued at once: round-robin
	// alone would send every follow-up to the other account.
	for i := range 40 {
		stream := i%4 >= 2
		prev := createResponse(t, srv.URL, stream)
		followUp(t, srv.URL, prev, !stream)
	}
	if n := a.notFounds() + b.notFounds(); n != 0 {
		t.Errorf("previous_response_not_found answered %d times, want 0", n)
	}
}

// A follow-up whose home the gateway does not know (another gateway
// stored it, or it was forgotten) fails over past an account that does not
// know the id: that 404 is no fault of the account, and the account that
// stored the response answers.
func TestFollowUpOfAnUnknownIDFailsOverToItsHome(t *testing.T) {
	t.Parallel()
	a, b := startAccount(t, "a"), startAccount(t, "b")
	// The response was stored on b, by hand: the gateway never saw it.
	b.mu.Lock()
	b.stored["resp_elsewhere"] = true
	b.mu.Unlock()
	srv := httptest.NewServer(newGatewayFromYAML(t, strings.Replace(twoAccounts(a, b), "round-robin", "fallback", 1), router.Options{}).Handler())
	t.Cleanup(srv.Close)

	for range 6 { // more than the five faults that would open a's circuit
		resp := post(t, srv.URL, "/v1/responses", `{"model":"m","previous_response_id":"resp_elsewhere","input":"and then?"}`)
		body := readAll(t, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d, body %s; want 200 from b", resp.StatusCode, body)
		}
		wantHeaders(t, resp, "b", "2", "order") // fallback's own selection
	}
	if n := a.notFounds(); n != 6 {
		t.Errorf("a answered not-found %d times, want 6 (a's circuit stays closed: no fault)", n)
	}

	// An id no account knows: the client gets the provider's own 404.
	resp := post(t, srv.URL, "/v1/responses", `{"model":"m","previous_response_id":"resp_nowhere","input":"and then?"}`)
	body := readAll(t, resp.Body)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "previous_response_not_found") {
		t.Errorf("unknown id: status %d, body %s; want 404 previous_response_not_found", resp.StatusCode, body)
	}
}
