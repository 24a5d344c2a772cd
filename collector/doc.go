// Package collector is firstbyte's embedded aggregator: it consumes spans,
// as OpenTelemetry Collector pdata, into the latency tracker the router
// ranks targets by.
//
//   - Tracker keeps the recent time-to-first-byte samples per (target,
//     upstream model) and answers their median; the router reads it through
//     an interface of its own (P50), so the request path costs a map read.
//   - Aggregator walks ptrace.Traces: this process's attempt spans, handed
//     over synchronously by telemetry's span processor the moment an attempt
//     ends, and peers' (and applications') spans, fanned out by an
//     OpenTelemetry Collector to the ingest handler. Each span that records
//     a successful attempt becomes a sample, a failed one a fault.
//   - Metrics derives the Prometheus series from this process's own spans,
//     on telemetry's asynchronous side: never on a request's path.
//   - NewIngestHandler serves OTLP/HTTP POST /v1/traces for those peers.
//
// What it must not do: import package router, or learn anything from
// anywhere but spans. If a fact is not in a span, the tracker does not know
// it; that keeps one instance's view reproducible from the spans all
// instances export.
package collector
