package collector

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// series holds the live samples and outcomes of one (target, model) and
// publishes their statistics for lock-free reads.
type series struct {
	// Immutable after newSeries.
	target, model string

	// stats is what readers see: the figures as of the last change and when
	// they go stale. It is replaced, never modified, under mu.
	stats atomic.Pointer[seriesStats]

	mu     sync.Mutex
	ring   sampleRing      // guarded by mu: live samples, oldest taken first
	sorted []time.Duration // guarded by mu: the TTFBs in ring, ascending
	// censored is the values of ring's censored samples, ascending: the
	// fit that values the next one reads them with the answers (guarded
	// by mu).
	censored []time.Duration
	outcomes outcomeRing // guarded by mu: live attempt outcomes, oldest taken first
	// lates are the live censored observations, oldest first: attempts
	// cancelled because another attempt of their request answered first
	// (hedge_lost), each with how long it had waited. Not outcomes: the
	// failure model says nothing of them.
	lates outcomeRing
	// tries are the live attempts that gave no latency sample, whatever
	// their outcome, the last stats.ColdTries of them: enough to say a
	// target without a sample was tried that often (stats.Target.RanksLast).
	tries    timeRing[attemptAt]
	lateSums decayingSums // guarded by mu: their recency-weighted count
	lateCost costSum      // guarded by mu: how long they had waited
	// guarded by mu: the load curve (the mean time to first byte by the
	// attempts in flight when a sample started), and the peers' latest
	// in-flight counts by service.instance.id.
	load  [stats.LoadLevels]loadLevel
	peers map[string]peerLoad
	clock int64 // guarded by mu: the now of the last expire, which publish reads
	// guarded by mu: the recency-weighted sums of ring's log TTFBs and of
	// outcomes' fault weights, kept up to date entry by entry.
	logSums, faultSums decayingSums
	// guarded by mu: exact counts and sums over the rings, kept up to date
	// entry by entry so publish needs no pass over them.
	byOrigin               [originCount]int // samples in ring, by origin
	halfFaults, fullFaults int              // outcomes with FaultHalf, FaultFull
	faulted                int              // outcomes with a fault (not FaultNone)
	faultCost              costSum          // of the faulted outcomes
	timeouts               int              // timed-out outcomes
	// guarded by mu: the EWMA of the samples and timeouts, folded as they
	// arrive; refoldEWMA recomputes it when that might not be exact.
	avg     runningEWMA
	refolds int // guarded by mu: how many times, for tests
}

// seriesStats is an immutable summary of a series.
type seriesStats struct {
	samples int
	p50     time.Duration
	p75     time.Duration
	p90     time.Duration
	p95     time.Duration
	p99     time.Duration
	p99c    time.Duration // of the samples and the censored values together
	ewma    time.Duration // of the samples and timeouts, oldest first
	oldest  int64         // takenAt of the oldest live sample, unix ns
	newest  int64         // takenAt of the newest live sample, unix ns
	staleAt int64         // unix ns at which the oldest sample or outcome expires; math.MaxInt64 with none

	logMean, logStd, logWeight float64 // recency-weighted, of ln(TTFB in seconds)
	byOrigin                   [originCount]int

	outcomes                         int
	faults, faultRate                float64
	weightedOutcomes, weightedFaults float64
	faultSeconds                     float64
	lastOutcome                      int64 // unix ns; 0 with none

	load         [stats.LoadLevels]float64
	peerInflight int

	unsampled                 int // live attempts without a sample, up to stats.ColdTries
	late                      int // censored observations (hedge_lost)
	weightedLate, lateSeconds float64
	lastLate                  int64 // unix ns; 0 with none
}

var emptyStats = &seriesStats{staleAt: math.MaxInt64}

// Origin is where a sample came from.
type Origin uint8

const (
	OriginSelf    Origin = iota // an attempt of this instance
	OriginPeer                  // another gateway instance's attempt span
	OriginForeign               // an application's GenAI span
	originCount
)

type sample struct {
	ttfb    time.Duration
	logTTFB float64 // logSeconds(ttfb), taken once at insert
	takenAt int64   // unix ns
	origin  Origin
	// censored: not a time to first byte measured but the time a hedge's
	// cancelled loser is expected to have taken (censoredValue). It counts
	// in the EWMA and the recency-weighted log moments, not in the sorted
	// samples: their quantiles, the count and the origins are the answers'.
	censored bool
}

func (x sample) when() int64 { return x.takenAt }

// outcome is one attempt's end as the failure model sees it: a success
// (FaultNone, the attempt also gave a sample) or a fault, with what it cost.
type outcome struct {
	fault   fault.Fault
	timeout bool          // the fault was running out of time (ewma-latency counts it as a sample)
	cost    time.Duration // how long the faulted attempt took
	takenAt int64         // unix ns
}

func (x outcome) when() int64 { return x.takenAt }

// attemptAt is when an attempt without a sample ended (unix ns).
type attemptAt int64

func (x attemptAt) when() int64 { return int64(x) }

// insertTry adds an attempt that gave no sample, taken at at, keeping the
// newest stats.ColdTries. Called with mu held.
func (s *series) insertTry(at int64) {
	if _, _, ok := s.tries.makeRoom(attemptAt(at)); ok {
		s.tries.insertByTime(attemptAt(at))
	}
}

type (
	sampleRing  = timeRing[sample]
	outcomeRing = timeRing[outcome]
)

func newSeries(target, model string, window int) *series {
	s := &series{
		target:   target,
		model:    model,
		ring:     sampleRing{buf: make([]sample, window)},
		sorted:   make([]time.Duration, 0, window),
		censored: make([]time.Duration, 0, window),
		outcomes: outcomeRing{buf: make([]outcome, window)},
		lates:    outcomeRing{buf: make([]outcome, window)},
		tries:    timeRing[attemptAt]{buf: make([]attemptAt, stats.ColdTries)},
	}
	s.stats.Store(emptyStats)
	return s
}

// current returns the series' stats as of now, first expiring samples if
// the published stats have gone stale. That check is the whole cost of a read
// with nothing to expire.
func (s *series) current(now, maxAge int64) *seriesStats {
	if st := s.stats.Load(); now < st.staleAt {
		return st
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.expire(now, maxAge) {
		s.publish(maxAge)
	}
	return s.stats.Load()
}

// expire drops the samples and outcomes that have expired by now and
// reports whether there were any. The rings are in takenAt order, so they are
// at their fronts. Called with mu held.
func (s *series) expire(now, maxAge int64) bool {
	s.clock = now
	dropped := false
	for s.ring.n > 0 && expired(s.ring.front().takenAt, now, maxAge) {
		s.sampleLeft(s.ring.popFront())
		dropped = true
	}
	for s.outcomes.n > 0 && expired(s.outcomes.front().takenAt, now, maxAge) {
		s.outcomeLeft(s.outcomes.popFront())
		dropped = true
	}
	for s.lates.n > 0 && expired(s.lates.front().takenAt, now, maxAge) {
		s.lateLeft(s.lates.popFront())
		dropped = true
	}
	for s.tries.n > 0 && expired(int64(s.tries.front()), now, maxAge) {
		s.tries.popFront()
		dropped = true
	}
	return s.expireLoad(now) || dropped
}

// insertSample adds x, evicting the oldest sample if the window is full (or
// dropping x, if it is older still). Called with mu held.
func (s *series) insertSample(x sample) {
	evicted, didEvict, ok := s.ring.makeRoom(x)
	if didEvict {
		s.sampleLeft(evicted)
	}
	if !ok {
		return
	}
	i := s.ring.insertByTime(x)
	if x.censored {
		s.censored = insertSorted(s.censored, x.ttfb)
	} else {
		s.sorted = insertSorted(s.sorted, x.ttfb)
		s.byOrigin[x.origin]++
	}
	s.logSums.add(x.logTTFB, x.takenAt)
	if v := float64(x.ttfb); s.avg.follows(x.takenAt, false) {
		s.avg.append(v, x.takenAt, false)
	} else {
		// Late: behind it, the samples taken after it and the timeouts
		// taken no earlier.
		s.avg.edit(v, s.ring.n-1-i+s.timeoutsFrom(x.takenAt))
	}
}

// sampleLeft takes x, just evicted or expired from the front of ring, out
// of everything kept over the samples. Called with mu held.
func (s *series) sampleLeft(x sample) {
	if x.censored {
		s.censored = removeSorted(s.censored, x.ttfb)
	} else {
		s.sorted = removeSorted(s.sorted, x.ttfb)
		s.byOrigin[x.origin]--
	}
	s.logSums.remove(x.logTTFB, x.takenAt)
	// Behind it in the EWMA: every sample left, and the timeouts taken no
	// earlier.
	s.ewmaLeft(float64(x.ttfb), s.ring.n+s.timeoutsFrom(x.takenAt))
}

// insertOutcome adds x, evicting the oldest outcome if the window is full
// (or dropping x, if it is older still). Called with mu held.
func (s *series) insertOutcome(x outcome) {
	evicted, didEvict, ok := s.outcomes.makeRoom(x)
	if didEvict {
		s.outcomeLeft(evicted)
	}
	if !ok {
		return
	}
	i := s.outcomes.insertByTime(x)
	s.faultSums.add(x.fault.Weight(), x.takenAt)
	s.countFault(x, 1)
	if !x.timeout {
		return
	}
	s.timeouts++
	if v := float64(x.cost); s.avg.follows(x.takenAt, true) {
		s.avg.append(v, x.takenAt, true)
	} else {
		// Late: behind it, the samples taken after it and the timeouts
		// inserted after it.
		after := s.ring.countAfter(x.takenAt)
		for j := i + 1; j < s.outcomes.n; j++ {
			if s.outcomes.at(j).timeout {
				after++
			}
		}
		s.avg.edit(v, after)
	}
}

// outcomeLeft takes x, just evicted or expired from the front of outcomes,
// out of everything kept over the outcomes. Called with mu held.
func (s *series) outcomeLeft(x outcome) {
	s.faultSums.remove(x.fault.Weight(), x.takenAt)
	s.countFault(x, -1)
	if x.timeout {
		s.timeouts--
		// Behind it in the EWMA: every timeout left, and the samples taken
		// after it.
		s.ewmaLeft(float64(x.cost), s.timeouts+s.ring.countAfter(x.takenAt))
	}
}

// ewmaLeft records that an entry of value v, with after entries behind it,
// has left the EWMA's entries. Called with mu held.
func (s *series) ewmaLeft(v float64, after int) {
	if s.ring.n+s.timeouts == 0 {
		s.avg.reset()
		return
	}
	s.avg.edit(v, after)
}

// timeoutsFrom is a lower bound on how many timeouts were taken at t or
// later, which a sample taken at t precedes in the EWMA: all of them if the
// oldest outcome was, else none. Called with mu held.
func (s *series) timeoutsFrom(t int64) int {
	if s.outcomes.n > 0 && s.outcomes.front().takenAt >= t {
		return s.timeouts
	}
	return 0
}

// countFault adds (by +1) or removes (by -1) x's fault to the exact counts
// and cost sum. Called with mu held.
func (s *series) countFault(x outcome, by int) {
	switch x.fault {
	case fault.None:
		return
	case fault.Half:
		s.halfFaults += by
	case fault.Full:
		s.fullFaults += by
	}
	s.faulted += by
	if by > 0 {
		s.faultCost.add(x.cost)
	} else {
		s.faultCost.sub(x.cost)
	}
}

// rebuildSums recomputes the recency-weighted sums from the rings, so the
// rounding of many incremental changes cannot accumulate, and refolds the
// EWMA, so a long-gone outlier stops widening its error bound. Called with
// mu held, every rebuildEvery changes.
func (s *series) rebuildSums() {
	s.logSums.reset()
	a, b := s.ring.segments()
	for _, seg := range [2][]sample{a, b} {
		for _, x := range seg {
			s.logSums.add(x.logTTFB, x.takenAt)
		}
	}
	s.lateSums.reset()
	la, lb := s.lates.segments()
	for _, seg := range [2][]outcome{la, lb} {
		for _, x := range seg {
			s.lateSums.add(1, x.takenAt)
		}
	}
	s.faultSums.reset()
	oa, ob := s.outcomes.segments()
	for _, seg := range [2][]outcome{oa, ob} {
		for _, x := range seg {
			s.faultSums.add(x.fault.Weight(), x.takenAt)
		}
	}
	s.logSums.changes, s.faultSums.changes, s.lateSums.changes = 0, 0, 0
	s.refoldEWMA()
}

// publish replaces the readers' stats with the current figures. Called with
// mu held.
func (s *series) publish(maxAge int64) {
	n := len(s.sorted)
	if s.ring.n == 0 && s.outcomes.n == 0 && s.lates.n == 0 && s.tries.n == 0 && !s.loaded() {
		s.stats.Store(emptyStats)
		return
	}
	if s.logSums.changes >= rebuildEvery || s.faultSums.changes >= rebuildEvery || s.lateSums.changes >= rebuildEvery {
		s.rebuildSums()
	}
	st := &seriesStats{samples: n, staleAt: math.MaxInt64}
	if s.ring.n > 0 { // samples, censored ones included
		st.oldest, st.newest = s.ring.front().takenAt, s.ring.back().takenAt
		st.staleAt = st.oldest + maxAge
		st.byOrigin = s.byOrigin
		st.logMean, st.logStd, st.logWeight = s.logSums.mean(), s.logSums.std(), s.logSums.weight()
	}
	if n > 0 {
		st.p50 = s.sorted[medianIndex(n)]
		st.p75, st.p90 = s.sorted[quantileIndex(n, 0.75)], s.sorted[quantileIndex(n, 0.9)]
		st.p95, st.p99 = s.sorted[quantileIndex(n, 0.95)], s.sorted[quantileIndex(n, 0.99)]
		st.p99c = st.p99
		if c := len(s.censored); c > 0 {
			st.p99c = unionAt(s.sorted, s.censored, quantileIndex(n+c, 0.99))
		}
	}
	st.ewma = s.ewma()
	if s.outcomes.n > 0 {
		st.staleAt = min(st.staleAt, s.outcomes.front().takenAt+maxAge)
		st.lastOutcome = s.outcomes.back().takenAt
		// Σ weight, exactly: the weights are 1 and 1/2.
		st.faults = float64(s.fullFaults)*fault.Full.Weight() + float64(s.halfFaults)*fault.Half.Weight()
		st.weightedOutcomes, st.weightedFaults = s.faultSums.weight(), max(0, s.faultSums.weightedSum())
		st.outcomes = s.outcomes.n
		st.faultRate = faultRate(st.faults, st.outcomes)
		st.faultSeconds = s.faultCost.meanSeconds(s.faulted)
	}
	for i, l := range s.load {
		if l.at != 0 && l.at+int64(loadFresh) > s.clock {
			st.load[i] = l.rel
			st.staleAt = min(st.staleAt, l.at+int64(loadFresh))
		}
	}
	for _, p := range s.peers {
		if p.at+int64(peerLoadFor) > s.clock {
			st.peerInflight += p.n
			st.staleAt = min(st.staleAt, p.at+int64(peerLoadFor))
		}
	}
	if s.tries.n > 0 {
		st.unsampled = s.tries.n
		st.staleAt = min(st.staleAt, int64(s.tries.front())+maxAge)
	}
	if s.lates.n > 0 {
		st.staleAt = min(st.staleAt, s.lates.front().takenAt+maxAge)
		st.late, st.weightedLate = s.lates.n, max(0, s.lateSums.weight())
		st.lastLate = s.lates.back().takenAt
		st.lateSeconds = s.lateCost.meanSeconds(s.lates.n)
	}
	s.stats.Store(st)
}

// ewma is the moving average ewma-latency ranks on, to the nanosecond: the
// fold of the samples and the timed-out attempts in the order they were
// taken (a timeout counts as a sample of the time it cost); 0 with neither.
// It is the running fold unless that might differ from a fold from scratch,
// which it then does (see runningEWMA). Called with mu held.
func (s *series) ewma() time.Duration {
	if v, exact := s.avg.rounded(); exact {
		return v
	}
	s.refoldEWMA()
	v, _ := s.avg.rounded() // the fold from scratch itself
	return v
}

// refoldEWMA folds the samples and timeouts into the EWMA from scratch,
// merging the two rings by takenAt; on a tie the sample goes first. Called
// with mu held.
func (s *series) refoldEWMA() {
	s.refolds++
	s.avg.reset()
	i, j := 0, 0
	for i < s.ring.n || j < s.outcomes.n {
		if j < s.outcomes.n && !s.outcomes.at(j).timeout {
			j++
			continue
		}
		if j == s.outcomes.n || (i < s.ring.n && s.ring.at(i).takenAt <= s.outcomes.at(j).takenAt) {
			x := s.ring.at(i)
			s.avg.append(float64(x.ttfb), x.takenAt, false)
			i++
			continue
		}
		x := s.outcomes.at(j)
		s.avg.append(float64(x.cost), x.takenAt, true)
		j++
	}
}
