package study

import (
	"slices"
	"time"
)

// How often the leader changes: a gateway whose first choice swings back
// and forth between targets sends each of them waves of load, and
// replicas that learn the same samples may swing together. The leader of
// each LeaderWindow of measured time is the target with the most first
// picks in it (a tie keeps the leader before it, if it is among the tied;
// else the first declared); a window without a first pick keeps the
// leader. Each change counts, per minute of measured time; in a fleet,
// per replica (its own requests' first picks).

// LeaderWindow is the leadership figure's window.
const LeaderWindow = time.Second

// leaderWindows is how many windows cover the measured time d.
func leaderWindows(d time.Duration) int { return int((d + LeaderWindow - 1) / LeaderWindow) }

// leaderChanges counts the changes of leader over picks[w][i], the first
// picks of target i in window w.
func leaderChanges(picks [][]int) int {
	leader, changes := -1, 0
	for _, counts := range picks {
		most := slices.Max(counts)
		if most == 0 || leader >= 0 && counts[leader] == most {
			continue
		}
		next := slices.Index(counts, most)
		if leader >= 0 {
			changes++
		}
		leader = next
	}
	return changes
}

// WorstLeaderChanges is the most leadership changes per minute of any
// replica (the only one, without replicas), and which replica that was.
func (r *Result) WorstLeaderChanges() (float64, int) {
	worst, at := 0.0, 0
	for k, x := range r.LeaderChanges {
		if x > worst {
			worst, at = x, k
		}
	}
	return worst, at
}
