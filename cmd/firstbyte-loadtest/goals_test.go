package main

import (
	"testing"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/routinge2e"
	"github.com/firstbyte-dev/firstbyte/cmd/internal/study"
)

// TestRoutingGoalsAreTheStudys: the real-binary routing run is held to the
// same thresholds as firstbyte study. The constants are written out rather
// than imported so the load test binary, whose baseline mode must stay a
// bare proxy, does not link the study and its chart library.
func TestRoutingGoalsAreTheStudys(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"leader share", goalLeaderShare, study.LeaderShare},
		{"leader tolerance", goalLeaderTolerance, study.LeaderShareSlack},
		{"stable ratio", goalStableRatio, study.StableRatio},
		{"adapt", goalAdapt.Seconds(), study.AdaptWithin.Seconds()},
		{"recover", goalRecover.Seconds(), study.RecoverWithin.Seconds()},
		{"quick faults ratio", goalQuickFaultsRatio, study.QuickFaultRatio},
		{"slow faults ratio", goalSlowFaultsRatio, study.SlowFaultRatio},
		{"slow faults share", goalSlowFaultsShare, study.SlowFaultShare},
		{"hang ratio", goalHangRatio, study.HangRatio},
		{"skips", goalSkips, study.BreakerSkips},
		{"served", goalServed, study.MinServedShare},
		{"probe interval", goalProbeEvery.Seconds(), study.DisableProbeEvery.Seconds()},
		{"rate limit faults", goalRateLimitFaults, study.RateLimitFaults},
		{"rate limit ratio", goalRateLimitRatio, study.RateLimitRatio},
		{"outage recovery", goalOutageRecovery.Seconds(), study.OutageRecovery.Seconds()},
		{"hedge tail ratio", goalHedgeTailRatio, study.HedgeTailRatio},
		{"hedge spikes ratio", goalHedgeSpikesRatio, study.HedgeSpikesRatio},
		{"hedge budget", routinge2e.HedgeBudget, study.HedgeBudget},
		{"capacity ratio", goalCapacityRatio, study.CapacityRatio},
		{"fleet ratio", goalFleetRatio, study.FleetRatio},
		{"cache ratio", goalCacheRatio, study.CacheRatio},
		{"leadership changes", goalLeaderChanges, study.MaxLeaderChanges},
	} {
		if c.got != c.want {
			t.Errorf("%s: the routing run's goal is %v, the study's %v", c.name, c.got, c.want)
		}
	}
}
