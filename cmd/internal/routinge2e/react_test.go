package routinge2e

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/study"
)

// The scenarios of slow moments and of providers that react are the
// study's, setting for setting.
func TestReactingScenariosAreTheStudys(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"tail sigma", TailSpread, study.TailSigma},
		{"spike rate", SpikeRate, study.SpikeRate},
		{"spike factor", SpikeFactor, study.SpikeFactor},
		{"hedge budget", HedgeBudget, study.HedgeBudget},
		{"hedge max", HedgeMax, study.HedgeMax},
		{"slots fast", SlotsFast, study.SlotsT20},
		{"slots mid", SlotsMid, study.SlotsT40},
		{"capacity clients", CapacityClients, study.CapacityClients},
		{"fleet replicas", FleetReplicas, study.FleetReplicas},
		{"conversations", CacheConversations, study.CacheConversations},
		{"cache ttl", CacheTTL.Seconds(), study.CacheTTL.Seconds()},
		{"cache speedup", CacheSpeedup, study.CacheSpeedup},
		{"leader window", LeaderWindow.Seconds(), study.LeaderWindow.Seconds()},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v here, %v in the study", c.name, c.got, c.want)
		}
	}
	if HedgeAfter != study.HedgeAfter {
		t.Errorf("hedge after %s here, %s in the study", HedgeAfter, study.HedgeAfter)
	}
}

func TestLeaderChangesKeepsTheMargin(t *testing.T) {
	// 45/45/10 with noise: no change; a real move from fast to mid: one.
	even := [][]int{{45, 40, 10}, {40, 46, 9}, {44, 45, 11}}
	if n := study.LeaderChanges(even); n != 0 {
		t.Errorf("an even split: %d changes, want 0", n)
	}
	moved := [][]int{{90, 5, 5}, {88, 7, 5}, {5, 90, 5}, {4, 91, 5}}
	if n := study.LeaderChanges(moved); n != 1 {
		t.Errorf("one move: %d changes, want 1", n)
	}
	var outs []Outcome
	for i := range 120 {
		first := Fast
		if i >= 60 {
			first = Mid
		}
		outs = append(outs, Outcome{Start: time.Duration(i) * 50 * time.Millisecond, First: first, Replica: i % 2})
	}
	if x := LeaderChanges(outs, []string{Fast, Mid, Slow}, 0, 6*time.Second); math.Abs(x-10) > 1e-9 {
		t.Errorf("one change in 6 s = %v a minute, want 10", x)
	}
}

func TestSplitOracleDrawsTheShares(t *testing.T) {
	s := Capacity(time.Second)
	o := s.SplitOracle([]float64{0.5, 0.5, 0}, 1)
	count := map[string]int{}
	for range 2000 {
		count[o.Order(0, -1)]++
	}
	if count["fast,mid,slow"] < 900 || count["mid,fast,slow"] < 900 || len(count) != 2 {
		t.Errorf("orders drawn %v, want about half fast first, half mid first, never slow", count)
	}
	moves := SplitMoves(StudySplit, 0.05)
	if len(moves) != 6 || !slices.Equal(moves[0], []float64{0.4, 0.5, 0.1}) {
		t.Errorf("moves %v", moves)
	}
}

func TestCacheOracleKnowsTheCaches(t *testing.T) {
	s := Cache(time.Second)
	s.Targets[1].TTFB.Median = 30 * time.Millisecond // cached: 15 ms, ahead of fast's 20
	o := s.CacheOracle()
	if got := o.Order(0, 3); got != "fast,mid,slow" {
		t.Errorf("nothing cached: %s", got)
	}
	o.Served(3, Slow, time.Second)
	// slow cached: 40 ms median, behind fast and mid.
	if got := o.Order(2*time.Second, 3); got != "fast,mid,slow" {
		t.Errorf("slow cached: %s", got)
	}
	o.Served(3, Mid, time.Second)
	if got := o.Order(2*time.Second, 3); got != "mid,fast,slow" {
		t.Errorf("mid and slow cached: %s, want mid (15 ms) first", got)
	}
	if got := o.Order(2*time.Second+CacheTTL, 3); got != "fast,mid,slow" {
		t.Errorf("after the TTL: %s", got)
	}
}
