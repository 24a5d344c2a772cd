package routinge2e

import (
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/study"
)

const ms = time.Millisecond

func TestOracleOrder(t *testing.T) {
	tests := []struct {
		name string
		s    Scenario
		at   time.Duration
		want []string
		ttfb float64 // expected seconds of the oracle's order, ±1%
	}{
		{"stable", Stable(10 * time.Second), 0, []string{Fast, Mid, Slow}, 0.020 * math.Exp(Spread*Spread/2)},
		{"slowdown, before", Slowdown(4*time.Second, 10*time.Second, 20*time.Second), 3 * time.Second, []string{Fast, Mid, Slow}, 0.0206},
		{"slowdown, during", Slowdown(4*time.Second, 10*time.Second, 20*time.Second), 4 * time.Second, []string{Mid, Fast, Slow}, 0.0413},
		{"slowdown, after", Slowdown(4*time.Second, 10*time.Second, 20*time.Second), 10 * time.Second, []string{Fast, Mid, Slow}, 0.0206},
		// 0.7 x 20.6 + 0.3 x (5 + 41.3) ms: failing fast is still worth it.
		{"quick 503s", QuickFaults(10 * time.Second), 0, []string{Fast, Mid, Slow}, 0.7*0.0206 + 0.3*(0.005+0.0413)},
		// Fast first would cost 0.7 x 20.6 + 0.3 x (300 + 41.3) ms.
		{"slow 503s", SlowFaults(10 * time.Second), 0, []string{Mid, Fast, Slow}, 0.0413},
		{"hang", Hang(2*time.Second, 8*time.Second, 10*time.Second, false), 5 * time.Second, []string{Mid, Slow, Fast}, 0.0413},
		{"hang ends", Hang(2*time.Second, 8*time.Second, 10*time.Second, true), 8 * time.Second, []string{Fast, Mid, Slow}, 0.0206},
		// A revoked key is never worth trying first (mid never fails: what
		// follows it is never tried, and ties keep declaration order).
		{"revoked key", RevokedKey(10 * time.Second), 0, []string{Mid, Fast, Slow}, 0.0413},
		// Every target refuses in 5 ms: every order costs the three refusals.
		{"outage", Outage(OutageFrom, OutageFrom+OutageLength, 10*time.Second), OutageFrom, []string{Fast, Mid, Slow}, 3 * 0.005},
		{"outage ends", Outage(OutageFrom, OutageFrom+OutageLength, 10*time.Second), OutageFrom + OutageLength, []string{Fast, Mid, Slow}, 0.0206},
		// With room in its limit, the rate-limited fastest leads.
		{"rate limit with room", RateLimited(10 * time.Second), 0, []string{Fast, Mid, Slow}, 0.0206},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.s.OracleOrder(tt.at)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("OracleOrder(%v) = %v, want %v", tt.at, got, tt.want)
			}
			if e := tt.s.ExpectedTTFB(got, tt.at); math.Abs(e-tt.ttfb) > 0.01*tt.ttfb {
				t.Errorf("ExpectedTTFB(%v) = %.4fs, want %.4fs", got, e, tt.ttfb)
			}
		})
	}
}

// A hanging target first costs the whole first-byte timeout, then the next.
func TestExpectedTTFBHangFirst(t *testing.T) {
	s := Hang(2*time.Second, 8*time.Second, 10*time.Second, false)
	got := s.ExpectedTTFB([]string{Fast, Mid, Slow}, 3*time.Second)
	if want := 0.200 + 0.0413; math.Abs(got-want) > 0.001 {
		t.Errorf("ExpectedTTFB(fast first, hanging) = %.4fs, want %.4fs", got, want)
	}
}

func TestExpectedMin(t *testing.T) {
	tests := []struct {
		m, s, T, want float64
	}{
		{0.02, 0, math.Inf(1), 0.02},
		{0.02, 0, 0.01, 0.01},
		{0.02, 0.25, math.Inf(1), 0.02 * math.Exp(0.03125)},
		{3600, 0, 0.2, 0.2},
		{0.02, 0.25, 10, 0.02 * math.Exp(0.03125)}, // a timeout far out changes nothing
		{0.2, 0.25, 0.2, 0},                        // computed below by integration
	}
	for _, tt := range tests {
		want := tt.want
		if want == 0 {
			want = integrateMin(tt.m, tt.s, tt.T)
		}
		if got := expectedMin(tt.m, tt.s, tt.T); math.Abs(got-want) > 1e-4*want {
			t.Errorf("expectedMin(%v, %v, %v) = %.6f, want %.6f", tt.m, tt.s, tt.T, got, want)
		}
	}
}

// integrateMin is E[min(X, T)] by the midpoint rule over the normal.
func integrateMin(m, s, T float64) float64 {
	sum, dz := 0.0, 1e-4
	for z := -10.0; z < 10; z += dz {
		x := min(m*math.Exp(s*(z+dz/2)), T)
		sum += x * math.Exp(-(z+dz/2)*(z+dz/2)/2) / math.Sqrt(2*math.Pi) * dz
	}
	return sum
}

// The oracle of (h) puts fast first for RateLimit requests of each whole
// second, then mid (a refusal would only cost time), and counts afresh when
// the second turns.
func TestOracleKnowsTheRateLimit(t *testing.T) {
	oracle := RateLimited(10 * time.Second).Oracle()
	steps := []struct {
		at   time.Duration
		n    int
		want string
	}{
		{0, RateLimit, "fast,mid,slow"},
		{900 * ms, 1, "mid,fast,slow"},
		{999 * ms, 3, "mid,fast,slow"},
		{time.Second, RateLimit, "fast,mid,slow"},
		{1500 * ms, 1, "mid,fast,slow"},
		{3200 * ms, 1, "fast,mid,slow"},
	}
	for _, st := range steps {
		for i := range st.n {
			if got := oracle(st.at); got != st.want {
				t.Fatalf("request %d at %v: order %q, want %q", i+1, st.at, got, st.want)
			}
		}
	}
	// Another run starts with a fresh count.
	if got := RateLimited(10 * time.Second).Oracle()(900 * ms); got != "fast,mid,slow" {
		t.Errorf("a fresh oracle at 0.9 s: %q, want fast first", got)
	}
	// Without a rate limit the oracle is the order of each phase.
	s := Slowdown(time.Second, 2*time.Second, 3*time.Second)
	if got, want := s.Oracle()(1500*ms), strings.Join(s.OracleOrder(1500*ms), ","); got != want {
		t.Errorf("slowdown oracle at 1.5 s = %q, want %q", got, want)
	}
}

// The settings of (g), (h) and (i), and the targets every scenario shares,
// are the routing study's: the two measure the same situations.
func TestSettingsAreTheStudys(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"clients", Clients, study.Clients},
		{"spread", Spread, study.Sigma},
		{"quick fault", QuickFaultDelay, study.QuickFault},
		{"slow fault", SlowFaultDelay, study.SlowFault},
		{"refusal delay", RefusalDelay, study.QuickFault},
		{"rate limit", RateLimit, study.RateLimit},
		{"retry after", RetryAfter, study.RetryAfter},
		{"probe interval", ProbeEvery, study.DisableProbeEvery},
		{"outage length", OutageLength, study.OutageTo - study.OutageFrom},
		{"outage breaker", OutageBreaker, Breaker(study.OutageBreaker)},
		{"(d-breaker) breaker", Breaker{BreakerFailures, BreakerCooldown}, Breaker(study.BreakerSettings)},
	} {
		if c.got != c.want {
			t.Errorf("%s: the e2e scenarios' %v, the study's %v", c.name, c.got, c.want)
		}
	}
}

func TestGatewayConfig(t *testing.T) {
	urls := map[string]string{Fast: "http://127.0.0.1:1/v1", Mid: "http://127.0.0.1:2/v1", Slow: "http://127.0.0.1:3/v1"}
	cfg := Hang(time.Second, 2*time.Second, 3*time.Second, true).GatewayConfig("ewma-latency", "127.0.0.1:0", "127.0.0.1:0", urls)
	var doc struct {
		Strategy  struct{ Mode string }
		Providers map[string]struct {
			BaseURL string `yaml:"base_url"`
			Timeout struct {
				FirstByte string `yaml:"first_byte"`
			}
			CircuitBreaker struct {
				Failures int
				Cooldown string
			} `yaml:"circuit_breaker"`
		}
		Targets []struct {
			VirtualKey string `yaml:"virtual_key"`
		}
	}
	if err := yaml.Unmarshal([]byte(cfg), &doc); err != nil {
		t.Fatalf("%v\n%s", err, cfg)
	}
	if doc.Strategy.Mode != "ewma-latency" || len(doc.Targets) != 3 || doc.Targets[0].VirtualKey != Fast {
		t.Errorf("config =\n%s", cfg)
	}
	p := doc.Providers[Mid]
	if p.BaseURL != urls[Mid] || p.Timeout.FirstByte != "200ms" || p.CircuitBreaker.Failures != BreakerFailures || p.CircuitBreaker.Cooldown != "1s" {
		t.Errorf("providers.mid = %+v", p)
	}
	if cfg := Stable(time.Second).GatewayConfig("least-latency", "a", "b", urls); !strings.Contains(cfg, "failures: 1000000") || strings.Contains(cfg, "first_byte") {
		t.Errorf("without a breaker or a timeout, config =\n%s", cfg)
	}
	if cfg := Outage(time.Second, 2*time.Second, 3*time.Second).GatewayConfig("least-latency", "a", "b", urls); !strings.Contains(cfg, "circuit_breaker: {failures: 5, cooldown: 30s}") {
		t.Errorf("the outage's breaker is the product default (5 / 30s); config =\n%s", cfg)
	}
}

// outcomesEvery makes one picked request every 10 ms over [0, d), going to
// pick(t).
func outcomesEvery(d time.Duration, pick func(time.Duration) string) []Outcome {
	var outs []Outcome
	for t := time.Duration(0); t < d; t += 10 * ms {
		outs = append(outs, Outcome{Start: t, First: pick(t), Target: pick(t), Status: http.StatusOK, Attempts: 1, TTFB: 20 * ms, Selection: "leader"})
	}
	return outs
}

func TestTimeToLead(t *testing.T) {
	// mid leads from 1.3 s after the change at 4 s; a blip at 7 s (one bin)
	// comes after the sustained second and changes nothing.
	outs := outcomesEvery(10*time.Second, func(t time.Duration) string {
		switch {
		case t < 5300*ms, t >= 7000*ms && t < 7250*ms:
			return Fast
		}
		return Mid
	})
	got, ok := TimeToLead(outs, Mid, 4*time.Second, 10*time.Second)
	// Bins from 4 s: [5.25, 5.5) is the first with mid ahead (70%), and the
	// next three too: the lead is taken at the end of that bin, 1.5 s.
	if !ok || got != 1500*ms {
		t.Errorf("TimeToLead = %v, %v; want 1.5s, true", got, ok)
	}
	// A lead that does not last a second does not count.
	outs = outcomesEvery(10*time.Second, func(t time.Duration) string {
		if t >= 5*time.Second && t < 5750*ms {
			return Mid
		}
		return Fast
	})
	if got, ok := TimeToLead(outs, Mid, 4*time.Second, 10*time.Second); ok {
		t.Errorf("TimeToLead of a 0.75 s lead = %v, true; want false", got)
	}
	// ... unless half a second is enough: it took the lead in [5, 5.25).
	if got, ok := TimeToLeadFor(outs, Mid, 4*time.Second, 10*time.Second, 500*ms); !ok || got != 1250*ms {
		t.Errorf("TimeToLeadFor(500ms) of a 0.75 s lead = %v, %v; want 1.25s, true", got, ok)
	}
}

func TestSummarize(t *testing.T) {
	outs := []Outcome{
		{Start: 0, First: Fast, Target: Fast, Status: 200, Attempts: 1, TTFB: 10 * ms, Selection: "cold"},
		{Start: 1, First: Fast, Target: Mid, Status: 200, Attempts: 2, TTFB: 50 * ms, Selection: "leader"},
		{Start: 2, First: Mid, Target: Slow, Status: 502, Attempts: 3, Skipped: 0, TTFB: 90 * ms, Selection: "leader"},
		{Start: 3, First: "", Status: 503, Attempts: 0, Skipped: 3, Selection: "leader"},
	}
	f := Summarize(outs, Window{})
	if f.Requests != 4 || f.Served != 0.5 || f.Mean != 30*ms || f.FailedAttempts != 4.0/4 || f.Skips != 3.0/4 {
		t.Errorf("Summarize = %+v", f)
	}
	if f.FirstPicks[Fast] != 2.0/3 || f.ServedBy[Mid] != 0.5 || f.Selections["leader"] != 0.75 {
		t.Errorf("shares: first %v, served %v, selections %v", f.FirstPicks, f.ServedBy, f.Selections)
	}
	if w := Summarize(outs, Window{From: 1, To: 2}); w.Requests != 1 || w.Mean != 50*ms {
		t.Errorf("Summarize in [1, 2) = %+v", w)
	}
}

func TestClockStandsStillUntilStart(t *testing.T) {
	c := NewClock()
	a := c.Now()
	time.Sleep(2 * ms)
	if b := c.Now(); !b.Equal(a) || c.Elapsed() != 0 {
		t.Errorf("before Start: Now moved from %v to %v", a, b)
	}
	c.Start()
	time.Sleep(2 * ms)
	if c.Elapsed() < 2*ms || !c.Now().After(a) {
		t.Errorf("after Start: Elapsed = %v", c.Elapsed())
	}
}

func TestTraceID(t *testing.T) {
	if id, ok := traceID("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"); !ok || id != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("traceID = %q, %v", id, ok)
	}
	if _, ok := traceID("garbage"); ok {
		t.Error("traceID(garbage) ok")
	}
}

func TestWriteCSV(t *testing.T) {
	var b strings.Builder
	outs := []Outcome{
		{Start: 20 * ms, TTFB: 41500 * time.Microsecond, Status: 200, Target: Mid, Selection: "leader", Attempts: 2, First: Fast, Upstream: 2,
			Hops: []Hop{{Fast, 401}, {Mid, 200}}},
		{Start: 10 * ms, TTFB: 21 * ms, Status: 200, Target: Fast, Selection: "cold", Attempts: 1, First: Fast, Upstream: 1,
			Hops: []Hop{{Fast, 200}}},
	}
	if err := WriteCSV(&b, outs); err != nil {
		t.Fatal(err)
	}
	want := "start_ms,ttfb_ms,status,target,selection,attempts,skipped,first,upstream,hops\n" +
		"10.000,21.000,200,fast,cold,1,0,fast,1,fast:200\n" +
		"20.000,41.500,200,mid,leader,2,0,fast,2,fast:401 mid:200\n"
	if b.String() != want {
		t.Errorf("WriteCSV =\n%s\nwant\n%s", b.String(), want)
	}
}
