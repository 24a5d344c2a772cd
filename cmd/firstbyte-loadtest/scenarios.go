package main

import (
	"context"
	"fmt"
	"time"
)

// warmUp sends n unary requests one at a time through each arm, then 64
// connections' worth and 4 streams, so no measured run pays for a first
// dial, a cold cache or a goroutine stack's growth.
func (b *bench) warmUp(ctx context.Context, n int, logf func(string, ...any)) error {
	logf("warm-up: %d requests per arm, then 64 connections and 4 streams each", n)
	for _, a := range b.arms {
		if r := runUnary(ctx, a, modelZero, 1, n, 20*time.Second); r.errors > 0 {
			return fmt.Errorf("warm-up through %s: %d of %d requests failed", a.name, r.errors, n)
		}
		runUnary(ctx, a, modelZero, 64, 64*8, 10*time.Second)
		if r := runStreams(ctx, a, modelStream, streamChunks, streamGap, 4, 1, 10*time.Second); r.errors > 0 {
			return fmt.Errorf("warm-up streams through %s: %d failed (first: %v); its output:\n%s", a.name, r.errors, r.firstErr, outputOf(b.children, a.name))
		}
		if err := b.check(ctx); err != nil {
			return err
		}
	}
	return nil
}

// runScenarios runs scenarios 1 to 4 into res, the arms' order rotated
// each round.
func (b *bench) runScenarios(ctx context.Context, p plan, res *results, logf func(string, ...any)) error {
	for r := range p.s1Rounds {
		logf("scenario 1 (unary, concurrency 1, zero delay): round %d/%d", r+1, p.s1Rounds)
		for _, a := range rotate(b.arms, r) {
			res.s1[a.name].add(runUnary(ctx, a, modelZero, 1, p.s1Requests, 30*time.Second))
		}
		if err := b.check(ctx); err != nil {
			return err
		}
	}
	for r := range p.s2Rounds {
		logf("scenario 2 (unary, concurrency %d, 20 ms upstream): round %d/%d", p.s2Conc, r+1, p.s2Rounds)
		for _, a := range rotate(b.arms, r) {
			// The count bound is far above what 64 workers can send in
			// s2Dur at 20 ms each: the time bound ends the run.
			res.s2[a.name].add(runUnary(ctx, a, modelSlow, p.s2Conc, p.s2Conc*int(p.s2Dur/(10*time.Millisecond)), p.s2Dur))
		}
		if err := b.check(ctx); err != nil {
			return err
		}
	}
	for r := range p.s3Rounds {
		logf("scenario 3 (streams of %d chunks %v apart, %d at once): round %d/%d", streamChunks, streamGap, p.s3Conc, r+1, p.s3Rounds)
		for _, a := range rotate(b.arms, r) {
			sr := runStreams(ctx, a, modelStream, streamChunks, streamGap, p.s3Conc, p.s3PerWorker, 60*time.Second)
			agg := res.s3[a.name]
			agg.samples = append(agg.samples, sr.samples...)
			agg.chunkLat = append(agg.chunkLat, sr.chunkLat...)
			agg.errors += sr.errors
		}
		if err := b.check(ctx); err != nil {
			return err
		}
	}
	for _, a := range b.arms[1:] {
		logf("scenario 4 (%d concurrent streams through %s)", p.s4Streams, a.name)
		h, err := holdStreams(ctx, a, b.up, p.s4Streams, logf)
		if err != nil {
			return err
		}
		res.s4[a.name] = h
		if err := b.check(ctx); err != nil {
			return err
		}
	}
	return nil
}

// holdStreams opens n streams through a at once (starts spread over 250 ms)
// on the slow-paced upstream, so all are open together, and records the
// proxy's peak RSS: VmHWM reset before, and VmRSS sampled every 20 ms.
func holdStreams(ctx context.Context, a *arm, up *upstream, n int, logf func(string, ...any)) (*holdResult, error) {
	h := &holdResult{}
	rss, _, err := procStatus(a.pid)
	if err != nil {
		return nil, err
	}
	h.before, h.peak = rss, rss
	hwmReset := resetPeakRSS(a.pid) == nil
	up.resetPeak()

	// A client of its own: n connections at once, dropped afterwards.
	hold := &arm{name: a.name, client: newLoadClient(), url: a.url, body: a.body, pid: a.pid}
	defer hold.client.CloseIdleConnections()
	peakRSS := watchPeakRSS(a.pid)
	sr := runStreams(ctx, hold, modelHold, streamChunks, 250*time.Millisecond, n, 1, 60*time.Second)
	h.peak = max(h.peak, peakRSS())
	if _, hwm, err := procStatus(a.pid); err == nil && hwmReset {
		h.peak = max(h.peak, hwm)
	}
	h.ok, h.errors = len(sr.samples), sr.errors
	h.concurrent = up.peak.Load()
	if sr.errors > 0 {
		logf("  %d of %d streams through %s failed (%d cut short at the upstream); first: %v", sr.errors, n, a.name, up.cut.Load(), sr.firstErr)
	}
	if h.ok == 0 {
		return nil, fmt.Errorf("scenario 4 through %s: all %d streams failed", a.name, n)
	}
	return h, nil
}

// rotate returns arms starting at round mod len(arms), so no arm always
// runs first (right after the previous round's last) or last.
func rotate[T any](arms []T, round int) []T {
	k := round % len(arms)
	return append(append([]T(nil), arms[k:]...), arms[:k]...)
}
