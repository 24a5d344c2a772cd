package mode

// Benchmarks of least-latency ordering over a real collector.Tracker, the
// way every request orders its candidates: one P50 read per eligible
// target, then the sort. 3 targets is the common deployment; 20 is past
// the 16 candidates Order ranks in stack buffers, so it shows the cost of
// going over.

import (
	"strconv"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/collector"
)

// benchCandidates returns n candidates for upstream model "m" and a tracker
// holding a full window (100 samples) for each, target i around i ms, so
// the order is settled; cold leaves the tracker empty for every target.
func benchCandidates(n int, cold bool) ([]*Candidate, *collector.Tracker) {
	tr := collector.NewTracker(collector.TrackerOptions{})
	cs := make([]*Candidate, n)
	now := time.Now()
	for i := range cs {
		name := "t" + strconv.Itoa(i)
		cs[i] = &Candidate{Target: name, Model: "m", Index: i, Weight: 1, Tries: 1}
		if cold {
			continue
		}
		for j := range collector.DefaultWindow {
			// Declared fastest-last, so the sort has work to do.
			tr.RecordSample(name, "m", time.Duration(n-i)*time.Millisecond+time.Duration(j)*time.Microsecond, now, collector.OriginSelf)
		}
	}
	return cs, tr
}

func BenchmarkLeastLatencyOrder(b *testing.B) {
	for _, n := range []int{3, 20} {
		for _, cold := range []bool{false, true} {
			name := "targets=" + strconv.Itoa(n) + "/sampled"
			if cold {
				name = "targets=" + strconv.Itoa(n) + "/cold"
			}
			b.Run(name, func(b *testing.B) {
				cs, tr := benchCandidates(n, cold)
				st, err := New("least-latency", Deps{Stats: tr})
				if err != nil {
					b.Fatal(err)
				}
				s := st.(*leastLatency) // the concrete type: the buffer below stays on the stack
				b.ReportAllocs()
				for b.Loop() {
					// As the handler calls it: a stack buffer of the
					// router's RankedCap (16) to append to.
					var buf [16]*Candidate
					order, _ := s.Order(buf[:0], "m", cs)
					if len(order) != n {
						b.Fatalf("Order returned %d candidates, want %d", len(order), n)
					}
				}
			})
		}
	}
}

// BenchmarkTrackerP50 is the read every eligible target costs a request.
func BenchmarkTrackerP50(b *testing.B) {
	cs, tr := benchCandidates(3, false)
	b.ReportAllocs()
	for b.Loop() {
		if st := tr.StatsAt(cs[1].Target, cs[1].Model, time.Now()); st.Samples == 0 {
			b.Fatal("no p50")
		}
	}
}
