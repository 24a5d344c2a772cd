package router

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// A hedge's client error (a 400 one provider made of the request) must not
// beat a valid answer still on its way: it is held, and served only when
// every other racer failed.
func TestClientErrorDoesNotWinWhileAnotherRacerRuns(t *testing.T) {
	for _, tc := range []struct {
		name       string
		firstEnds  func(a *heldUpstream)
		wantStatus int
		wantBody   string
		wantHedged string
	}{
		{"the first attempt answers", func(a *heldUpstream) { close(a.release) }, 200, "from a", HedgeLost},
		{"the first attempt fails", func(a *heldUpstream) { a.CloseClientConnections() }, 400, "refused by b", HedgeWon},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newHeldUpstream(t, "a"), newHeldUpstream(t, "b")
			b.status = http.StatusBadRequest
			g, timers := hedgedGateway(t, 1, 1, a, b)
			done := serve(g)
			WaitFor(t, a.arrived, "the first attempt")
			(<-timers).c <- time.Time{}
			WaitFor(t, b.arrived, "the hedge")
			close(b.release) // the hedge answers 400 at once
			select {
			case rec := <-done:
				t.Fatalf("answered %d %s while the first attempt still ran", rec.Code, rec.Body.String())
			case <-time.After(50 * time.Millisecond): // a negative: nothing may be answered while a runs
			}
			tc.firstEnds(a)
			rec := <-done
			if rec.Code != tc.wantStatus || !strings.Contains(rec.Body.String(), tc.wantBody) || rec.Header().Get(HeaderHedged) != tc.wantHedged {
				t.Fatalf("answer %d %s hedged %q; want %d with %q, hedged %q", rec.Code, rec.Body.String(), rec.Header().Get(HeaderHedged), tc.wantStatus, tc.wantBody, tc.wantHedged)
			}
		})
	}
}

// A request that leaves state at its provider is never sent twice at
// once; one that only asks for an answer is hedged.
func TestSideEffectsAreNeverHedged(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
		hedged           bool
	}{
		{"chat", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, true},
		{"chat store true", "/v1/chat/completions", `{"model":"m","store":true,"messages":[{"role":"user","content":"hi"}]}`, false},
		{"chat store false", "/v1/chat/completions", `{"model":"m","store":false,"messages":[{"role":"user","content":"hi"}]}`, true},
		{"messages", "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, true},
		{"responses stored by default", "/v1/responses", `{"model":"m","input":"hi"}`, false},
		{"responses store false", "/v1/responses", `{"model":"m","store":false,"input":"hi"}`, true},
		{"responses previous_response_id", "/v1/responses", `{"model":"m","store":false,"previous_response_id":"resp_1","input":"hi"}`, false},
		{"responses background", "/v1/responses", `{"model":"m","store":false,"background":true,"input":"hi"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newHeldUpstream(t, "a"), newHeldUpstream(t, "b")
			close(a.release)
			close(b.release)
			g, timers := hedgedGateway(t, 1, 1, a, b)
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			g.Handler().ServeHTTP(rec, req) // the race arms its timer before the first attempt is answered
			hedged := false
			select {
			case <-timers:
				hedged = true
			default:
			}
			if hedged != tc.hedged {
				t.Fatalf("%s %s: hedge armed %v, want %v", tc.path, tc.body, hedged, tc.hedged)
			}
		})
	}
}

// A client that leaves mid-race was served nothing: the race was neither
// won nor lost (no hedge result on the request span, no header).
func TestAbandonedRaceIsNeitherWonNorLost(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	a, b := newHeldUpstream(t, "a"), newHeldUpstream(t, "b")
	g, timers := hedgedGatewayWith(t, Options{TracerProvider: tp}, 1, 1, a, b)
	ctx, cancel := context.WithCancel(context.Background())
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		g.Handler().ServeHTTP(rec, req)
	}()
	WaitFor(t, a.arrived, "the first attempt")
	(<-timers).c <- time.Time{}
	WaitFor(t, b.arrived, "the hedge")
	cancel()
	<-done
	if h := rec.Header().Get(HeaderHedged); h != "" {
		t.Errorf("%s = %q on an abandoned request, want none", HeaderHedged, h)
	}
	for _, s := range exp.GetSpans() {
		for _, kv := range s.Attributes {
			if kv.Key == telemetry.KeyHedge {
				t.Errorf("span %s has %s = %q: a race that served nothing was %s", s.Name, kv.Key, kv.Value.Emit(), kv.Value.Emit())
			}
		}
	}
}
