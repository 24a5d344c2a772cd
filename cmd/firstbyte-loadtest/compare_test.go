package main

import (
	"strings"
	"testing"
	"time"
)

// fakeRun is a unary run of n requests, each taking lat, over elapsed,
// with cpu of proxy CPU.
func fakeRun(n int, lat, elapsed, cpu time.Duration) unaryResult {
	r := unaryResult{elapsed: elapsed, use: usage{cpu: cpu}}
	for range n {
		r.lat = append(r.lat, lat)
	}
	return r
}

// The -compare report: every ratio is taken within a round and given as
// the median and spread over the rounds; the goals are judged on the
// gateway's median.
func TestCompareReport(t *testing.T) {
	s := &compareScenario{title: "unary, 32 clients", runs: map[string][]unaryResult{
		armDirect:   {fakeRun(100, 50*time.Microsecond, time.Second, 0), fakeRun(100, 50*time.Microsecond, time.Second, 0), fakeRun(100, 50*time.Microsecond, time.Second, 0)},
		armBaseline: {fakeRun(100, 250*time.Microsecond, time.Second, 10*time.Millisecond), fakeRun(100, 250*time.Microsecond, time.Second, 10*time.Millisecond), fakeRun(100, 250*time.Microsecond, time.Second, 10*time.Millisecond)},
		armRef:      {fakeRun(90, 300*time.Microsecond, time.Second, 12*time.Millisecond), fakeRun(90, 300*time.Microsecond, time.Second, 12*time.Millisecond), fakeRun(90, 300*time.Microsecond, time.Second, 12*time.Millisecond)},
		armGateway:  {fakeRun(95, 270*time.Microsecond, time.Second, 9*time.Millisecond), fakeRun(105, 270*time.Microsecond, time.Second, 9*time.Millisecond), fakeRun(102, 270*time.Microsecond, time.Second, 9*time.Millisecond)},
	}}
	s.goal = &compareGoal{what: "req/s >= 1.00x the bare proxy's",
		ratio: func(s *compareScenario) ratios { return s.roundRatios(armGateway, s.rps) },
		ok:    func(m float64) bool { return m >= 1.00 }}
	res := &compareResults{plan: comparePlan{rounds: 3}, arms: []string{armDirect, armBaseline, armRef, armGateway}, scenarios: []*compareScenario{s}}
	out := res.text()
	for _, want := range []string{
		"1.020x (0.950-1.050)", // gateway req/s over the baseline's: 95, 105, 102 against 100
		"0.900x (0.900-0.900)", // the reference's
		"1.100x (1.100-1.100)", // gateway added p50: (270-50)/(250-50)
		"gateway req/s / ref's, same round: 1.133x (1.056-1.167)",
		"goal: req/s >= 1.00x the bare proxy's; gateway 1.020x (0.950-1.050): yes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
