package routinge2e

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// served is a request at start that took ttfb and reached hops.
func served(start, ttfb time.Duration, hops ...Hop) Outcome {
	o := Outcome{Start: start, TTFB: ttfb, Status: http.StatusOK, Hops: hops, Attempts: len(hops)}
	if len(hops) > 0 {
		o.First, o.Upstream = hops[0].Target, len(hops)
	}
	return o
}

func TestRevoked(t *testing.T) {
	revoked, ok := Hop{Fast, 401}, Hop{Mid, 200}
	outs := []Outcome{
		// The cold start: three requests ordered before any 401 came back.
		served(0, 48*ms, revoked, ok),
		served(0, 50*ms, revoked, ok),
		served(2*ms, 47*ms, revoked, ok), // ends at 49 ms, after the first
		served(5*ms, 40*ms, ok),
		served(49*ms, 40*ms, ok),
		// The probe, 30 s later.
		served(30*time.Second+48*ms, 45*ms, revoked, ok),
		served(31*time.Second, 40*ms, ok),
	}
	r := Revoked(outs, Fast)
	if !r.Reached() || r.Found != 48*ms || r.Cold != 3 || r.Attempts != 1 ||
		!reflect.DeepEqual(r.Later, []time.Duration{30*time.Second + 48*ms}) {
		t.Errorf("Revoked = %+v, want found at 48ms, 3 cold attempts, the probe at 30.048s", r)
	}
	if got := r.MostPerInterval(outs, Fast, ProbeEvery); got != 1 {
		t.Errorf("MostPerInterval = %d, want 1", got)
	}
	// Two attempts in one interval: the goal's breach is seen.
	outs = append(outs, served(45*time.Second, 45*ms, revoked, ok))
	if got := Revoked(outs, Fast).MostPerInterval(outs, Fast, ProbeEvery); got != 2 {
		t.Errorf("MostPerInterval with a second attempt in (30 s, 60 s] = %d, want 2", got)
	}
	if r := Revoked([]Outcome{served(0, 40*ms, ok)}, Fast); r.Reached() || r.Cold != 0 || len(r.Later) != 0 {
		t.Errorf("never reached: Revoked = %+v", r)
	}
}

func TestRecoveryFrom(t *testing.T) {
	outage := Window{4 * time.Second, 7 * time.Second}
	failed := func(start, ttfb time.Duration) Outcome {
		return Outcome{Start: start, TTFB: ttfb, Status: http.StatusServiceUnavailable, Attempts: 1}
	}
	outs := []Outcome{
		served(3900*ms, 30*ms, Hop{Fast, 200}), // before: does not count
		failed(4100*ms, 6*ms),
		failed(6999*ms, 6*ms), // ends after the outage, before the first success
		// Sent during the outage, its 503 held up by a busy machine until
		// after the first success: the outage's failure, not the gateway's.
		failed(6990*ms, 200*ms),
		served(7010*ms, 25*ms, Hop{Mid, 200}),
		served(7005*ms, 21*ms, Hop{Fast, 200}), // the first served after: ends at 7.026 s
	}
	r := RecoveryFrom(outs, outage)
	if !r.Recovered() || r.After != 26*ms || r.LateFailures != 0 {
		t.Errorf("RecoveryFrom = %+v, want served 26ms after, no failure after", r)
	}
	// Sent after the outage's end and not served: the gateway's refusal.
	outs = append(outs, failed(7001*ms, time.Millisecond), failed(7100*ms, 6*ms))
	if r := RecoveryFrom(outs, outage); r.LateFailures != 2 {
		t.Errorf("with failures sent at 7.001 s and 7.1 s: LateFailures = %d, want 2", r.LateFailures)
	}
	if r := RecoveryFrom(outs[:4], outage); r.Recovered() {
		t.Errorf("nothing served after the outage: RecoveryFrom = %+v, want not recovered", r)
	}
}

// The upstreams note, per trace ID, every request a provider received and
// the status it answered: a revoked fast answers 401, mid 200.
func TestUpstreamsRecordHops(t *testing.T) {
	clock := NewClock()
	up, err := StartUpstreams(RevokedKey(time.Second), clock, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, name := range []string{Fast, Mid} {
		req, err := http.NewRequest(http.MethodPost, up.URLs()[name]+"/chat/completions", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Traceparent", "00-"+id+"-00f067aa0ba902b7-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got, want := up.Reached(id), []Hop{{Fast, 401}, {Mid, 200}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Reached = %v, want %v", got, want)
	}
	if got := up.Reached("00000000000000000000000000000000"); len(got) != 0 {
		t.Errorf("Reached(unknown) = %v, want none", got)
	}
}
