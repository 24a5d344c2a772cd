package router_test

import (
	"time"

	"github.com/firstbyte-dev/firstbyte/collector"
)

// liveP50 is what the tracker's statistics (the ones every mode reads)
// say of (target, model) as of now: its p50 and live samples, ok false
// when it has none.
func liveP50(tr *collector.Tracker, now time.Time, target, model string) (time.Duration, int, bool) {
	st := tr.StatsAt(target, model, now)
	return st.P50, st.Samples, st.Samples > 0
}
