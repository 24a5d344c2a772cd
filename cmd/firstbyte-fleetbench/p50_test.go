package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// The experiment behind docs/fleet.md's p50 table, short: 1 in 1 is the
// full tracker itself; fewer samples make the p50 follow a change later,
// about half a window (50 samples) at the rate the replica gets them;
// below 100 samples in 5 minutes the window is not full.
func TestP50Subsampling(t *testing.T) {
	t.Parallel()
	p := p50Params{Rate: 20, Median: 200 * time.Millisecond, Sigma: 0.5, Duration: 12 * time.Minute, Seed: 7, Ns: []int{1, 10, 100}}
	rs := runP50(p)
	full, tenth, hundredth := rs[0], rs[1], rs[2]
	if full.ErrMedian != 0 || full.ErrP95 != 0 || full.Samples != 100 {
		t.Errorf("N=1: %+v, want no error against itself and a full window of 100", full)
	}
	if full.TrueMedian <= 0 || full.TrueMedian > 0.15 {
		t.Errorf("N=1: median error against the true median %.3f, want a little above 0 (a window of 100 samples)", full.TrueMedian)
	}
	// Lag ~ 50 samples at the replica's rate (1 s checks).
	for _, r := range []struct {
		res     p50Result
		rate    float64
		samples int
	}{{full, 20, 100}, {tenth, 2, 100}} {
		want := time.Duration(50 / r.rate * float64(time.Second))
		if r.res.Lag < want/2 || r.res.Lag > 2*want {
			t.Errorf("N=%d: lag %v, want about %v (half a window at %.0f/s)", r.res.N, r.res.Lag, want, r.rate)
		}
	}
	if hundredth.Samples >= 100 || hundredth.Samples < 50 {
		t.Errorf("N=100: %d live samples at 0.2/s, want 60ish: the 5-minute expiry, not the window, bounds it", hundredth.Samples)
	}
	if !(hundredth.Lag > tenth.Lag && tenth.Lag > full.Lag) {
		t.Errorf("lags %v, %v, %v: want them to grow with N", full.Lag, tenth.Lag, hundredth.Lag)
	}

	var out bytes.Buffer
	writeP50Table(&out, p, []uint64{1, 2})
	if got := strings.Count(out.String(), "\n| ") - 1; got != 3 { // less the header
		t.Errorf("the table has %d rows, want 3:\n%s", got, out.String())
	}
}

func TestQuantile(t *testing.T) {
	t.Parallel()
	xs := []float64{5, 1, 4, 2, 3}
	for _, tt := range []struct{ q, want float64 }{{0.5, 3}, {0.95, 5}, {0, 1}, {1, 5}} {
		if got := quantile(xs, tt.q); got != tt.want {
			t.Errorf("quantile(%v, %v) = %v, want %v", xs, tt.q, got, tt.want)
		}
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("quantile of nothing is not 0")
	}
}

// docs/fleet.md's p50 table is this program's output for the default run:
// the run is deterministic, so the table cannot drift from the code.
func TestFleetDocShowsTheP50Table(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/fleet.md")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	writeP50Table(&out, defaultP50, []uint64{1, 2, 3})
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "| ") && !strings.Contains(string(doc), line+"\n") {
			t.Errorf("docs/fleet.md lacks the line\n%s\nof `go run ./cmd/firstbyte-fleetbench p50`; paste the table again:\n%s", line, out.String())
		}
	}
}
