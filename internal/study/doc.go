// Package study is firstbyte's routing-quality study (firstbyte study): it
// drives the product's own routing modes, tracker and circuit breakers on a
// virtual clock through failure scenarios and measures what clients would
// have seen (time to first byte including failed attempts, failed attempts,
// skips, who got the first pick and how fast that changed after each
// change), against an oracle that knows every target's distribution.
//
// Every request gets its route from router.Gateway.Route, exactly as the
// handler does, and the run drives the router's own pipeline (Route.Next,
// Route.End): every attempt asks the provider's real breaker and resolves
// it; every attempt ends in a real attempt span, through the real
// OpenTelemetry SDK and span processor, into the statistics source the
// modes read. Only the providers are simulated: log-normal latencies,
// faults and hangs drawn from seeded streams, one per provider. Everything
// runs on one goroutine per run against a virtual clock, so a seed gives
// byte-identical tables and charts.
//
// What it must not do: copy a routing rule (the modes, the failure model
// and the breaker are the router's; the oracle is the one ordering of its
// own, and it is only a yardstick), import package collector (the
// statistics source and its span consumer are injected through Deps; cmd
// wires the collector's tracker), read the wall clock or an unseeded random
// source, or send a request anywhere.
package study
