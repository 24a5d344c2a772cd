package sim

import (
	"context"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// errors.after: an injected error waits its own fixed delay instead of the TTFB
// draw; successes keep the draw; zero keeps the draw for errors too.
func TestErrorAfterDelaysErrorsOnly(t *testing.T) {
	tests := []struct {
		name   string
		errors ErrorRate
		status int
		sleeps []time.Duration
	}{
		{"after set: the error waits it", ErrorRate{Rate: 1, After: 300 * time.Millisecond}, 503, []time.Duration{300 * time.Millisecond}},
		{"after zero: the error waits the TTFB", ErrorRate{Rate: 1}, 503, []time.Duration{time.Second}},
		{"after set, no error: the success waits the TTFB", ErrorRate{Rate: 0, After: 300 * time.Millisecond}, 200, []time.Duration{time.Second, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &sleepRecorder{}
			r := startSim(t, Provider{TTFB: Fixed(time.Second), Stream: Pace{Chunks: 1}, Errors: tt.errors}, Options{Sleep: rec.Sleep})
			status, body := readAll(t, post(t, context.Background(), nil, r.URL()+"/chat/completions", `{"model":"m"}`))
			if status != tt.status {
				t.Fatalf("status = %d, want %d: %s", status, tt.status, body)
			}
			if got := rec.take(); !reflect.DeepEqual(got, tt.sleeps) {
				t.Errorf("sleeps = %v, want %v", got, tt.sleeps)
			}
		})
	}
}

// A phase can set errors.after alone; the rate and status are inherited, and a
// later phase that names only the rate keeps the delay.
func TestErrorAfterInPhases(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
providers:
  - name: fast
    ttfb: {median: 20ms, spread: 0.25}
    errors: {rate: 0.3, status: 503}
    phases:
      - after: 2s
        errors: {after: 300ms}
      - after: 4s
        errors: {rate: 0.5}
`))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	p := cfg.Providers[0]
	if p.Errors != (ErrorRate{Rate: 0.3, Status: 503}) {
		t.Errorf("errors = %+v, want rate 0.3, status 503, after 0", p.Errors)
	}
	want := []ErrorRate{
		{Rate: 0.3, Status: 503, After: 300 * time.Millisecond},
		{Rate: 0.5, Status: 503, After: 300 * time.Millisecond},
	}
	for i, w := range want {
		if got := p.Phases[i].Errors; got == nil || *got != w {
			t.Errorf("phases[%d].errors = %+v, want %+v", i, got, w)
		}
	}
}

func TestErrorAfterValidation(t *testing.T) {
	p := Provider{Name: "p", Errors: ErrorRate{Rate: 0.3, After: -time.Millisecond}}
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "errors.after: must be >= 0") {
		t.Errorf("Validate() = %v, want errors.after: must be >= 0", err)
	}
	_, err = ParseConfig([]byte("providers:\n  - name: a\n    phases:\n      - after: 1s\n        errors: {after: -5ms}\n"))
	if err == nil || !strings.Contains(err.Error(), "providers[0].phases[0].errors.after: must be >= 0") {
		t.Errorf("ParseConfig = %v, want providers[0].phases[0].errors.after: must be >= 0", err)
	}
}

// The delay does not change the sequence of draws: with a seed, the same requests
// fail with or without errors.after.
func TestErrorAfterKeepsTheDraws(t *testing.T) {
	run := func(after time.Duration) []int {
		s := NewProvider(Provider{Name: "p", Errors: ErrorRate{Rate: 0.3, After: after}},
			Options{Rand: rand.New(rand.NewPCG(7, 7)), Sleep: (&sleepRecorder{}).Sleep})
		var statuses []int
		for range 200 {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptest.NewRequest("POST", "/v1/embeddings", strings.NewReader(`{"model":"m","input":"x"}`)))
			statuses = append(statuses, w.Code)
		}
		return statuses
	}
	if a, b := run(0), run(300*time.Millisecond); !reflect.DeepEqual(a, b) {
		t.Error("errors.after changed which requests fail")
	}
}
