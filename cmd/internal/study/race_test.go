//go:build race

package study

import (
	"testing"
	"time"
)

// Under the race detector: every scenario under a hedged latency mode and
// the oracle, two runs at a time, each for a second past its warm-up
// (package mode's own tests run every mode under the detector). Each
// run is single-threaded on its own virtual clock, so what the detector can
// find here is runs sharing state (the statistics sources, the results
// they write, a scenario's or mode's package state); the goals and the
// byte-for-byte reproducibility are judged without it (norace_test.go,
// which make test runs in a pass of its own), where a run costs a fifth.
func TestStudyRunsShareNothing(t *testing.T) {
	t.Parallel()
	modes := []string{"reliable-latency" + HedgeSuffix}
	st := runStudy(t, Options{Seed: 1, Duration: time.Second, Modes: modes, Parallel: 2})
	if len(st.Scenarios) != len(ScenarioNames()) || len(st.Modes) != 2 {
		t.Fatalf("ran %d scenarios and %d modes, want every scenario (%d) under %s and the oracle",
			len(st.Scenarios), len(st.Modes), len(ScenarioNames()), modes[0])
	}
	for i, s := range st.Scenarios {
		for j, m := range st.Modes {
			if r := st.Results[i][j]; r == nil || r.Requests == 0 {
				t.Errorf("(%s) under %s: no request made", s.Name, m)
			}
		}
	}
}
