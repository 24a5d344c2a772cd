// Package study is firstbyte's routing-quality study (firstbyte study): it
// drives the product's own routing modes, tracker and circuit breakers on a
// virtual clock through failure scenarios and measures what clients would
// have seen (time to first byte including failed attempts, failed attempts,
// skips, who got the first pick, how fast that changed after each change
// and how often the leader changed), against an oracle that knows every
// target's distribution (or, where the providers queue, the best static
// split of the load).
//
// Every request gets its route from router.Gateway.Route, exactly as the
// handler does, and the run drives the router's own pipeline (Route.Next,
// Route.End): every attempt asks the provider's real breaker and resolves
// it; every attempt ends in a real attempt span, through the real
// OpenTelemetry SDK and span processor, into the statistics source the
// modes read. Only the providers are simulated: log-normal latencies,
// faults and hangs drawn from seeded streams, one per provider, and
// providers that react to what they are sent (slots that queue what they
// cannot serve at once, a prompt cache). A fleet scenario runs several
// gateway replicas, each with its own statistics source, learning from
// every replica's spans as a collector's fan-out delivers them. Everything
// runs on one goroutine per run against a virtual clock, so a seed gives
// byte-identical tables and charts.
//
// What it must not do: copy a routing rule (the modes, the failure model
// and the breaker are the router's; the oracles are the only orderings of
// its own, and they are only yardsticks), import package collector (the
// statistics source and its span consumer are injected through Deps; cmd
// wires the collector's tracker), read the wall clock or an unseeded random
// source, or send a request anywhere.
//
// It lives under cmd/internal, beside the commands that run it (firstbyte
// study, the load test's goals, the routing e2e): it drives the router, so
// it sits above it, and Go's internal rule keeps router and every package
// below it from importing it. The failure model (internal/fault) and the
// statistics (internal/stats) stay below both.
package study
