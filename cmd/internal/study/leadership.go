package study

import (
	"math"
	"slices"
	"time"
)

// How often the leader changes: a gateway whose first choice swings back
// and forth between targets sends each of them waves of load, and
// replicas that learn the same samples may swing together. The leader of
// each LeaderWindow of measured time is the target with the most first
// picks in it, once it is ahead of the leader before it by more than
// chance gives two targets that share the load evenly: more than
// LeaderMargin standard deviations, LeaderMargin × √(a + b) for counts a
// and b (each count is near Poisson, so their difference has variance
// a + b). A window without a first pick, a tie or a lead within the margin
// keeps the leader. Without the margin the figure counts noise: a routing
// that splits the load 45/45/10 between its two best targets, as the best
// static split of (capacity) does, would "change leader" every other
// second while nothing moves. Each change counts, per minute of measured
// time; in a fleet, per replica (its own requests' first picks).

// LeaderWindow is the leadership figure's window.
const LeaderWindow = time.Second

// LeaderMargin is how many standard deviations of an even split a new
// leader must be ahead by.
const LeaderMargin = 3

// leaderWindows is how many windows cover the measured time d.
func leaderWindows(d time.Duration) int { return int((d + LeaderWindow - 1) / LeaderWindow) }

// LeaderChanges counts the changes of leader over picks[w][i], the first
// picks of target i in window w (the routing e2e counts its own runs'
// with it too).
func LeaderChanges(picks [][]int) int {
	leader, changes := -1, 0
	for _, counts := range picks {
		most := slices.Max(counts)
		if most == 0 || leader >= 0 && counts[leader] == most {
			continue
		}
		next := slices.Index(counts, most)
		if leader >= 0 {
			lead := float64(most - counts[leader])
			if lead <= LeaderMargin*math.Sqrt(float64(most+counts[leader])) {
				continue
			}
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
