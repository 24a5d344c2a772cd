// Package mode holds the routing modes: how the eligible candidates of
// one request are ordered. A Candidate is one way to serve a client model
// (a target and the upstream model it is asked for); a Strategy orders
// candidates and says how it ranks them; each mode is one file that
// registers itself by its config name (New, Names). Around them: the load
// a new request would meet at a target (LoadFactor), the re-measuring of
// stale runners-up, and the ranking helpers every scoring mode shares.
//
// A mode reads what the spans taught through StatsSource, which the
// collector's tracker satisfies; it never imports package collector.
// Its randomness and clock are injected (Deps), filled with their
// defaults in New alone. It must not block, admit or run an attempt:
// package router turns an order into attempts, and package upstream says
// which candidates would take one now.
package mode
