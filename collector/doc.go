// Package collector is firstbyte's embedded aggregator: it consumes spans,
// as OpenTelemetry Collector pdata, into the latency tracker the router
// ranks targets by, and into the Prometheus metrics.
//
//   - Tracker keeps the recent time-to-first-byte samples and attempt
//     outcomes per (target, upstream model) and answers their statistics
//     (stats.Target: p50, EWMA, recency-weighted log moments, fault rate);
//     the router reads them through an interface of its own (StatsAt), so
//     the request path costs a map read.
//   - Aggregator walks ptrace.Traces: this process's attempt spans, handed
//     over synchronously by telemetry's span processor the moment an attempt
//     ends, and peers' (and applications') spans, fanned out by an
//     OpenTelemetry Collector to the ingest handler. Each span that records
//     a successful attempt becomes a sample, a failed one a fault, as the
//     failure model (package internal/fault) judges it.
//   - Metrics derives the Prometheus series from this process's own spans,
//     on telemetry's asynchronous side: never on a request's path. Every
//     Prometheus metric of the process is defined in this package: the
//     span-derived series (metrics.go) and the gauges read at scrape time
//     (gauges.go).
//   - NewIngestHandler serves OTLP/HTTP POST /v1/traces for those peers.
//
// What it must not do: import package router, or learn anything from
// anywhere but spans. If a fact is not in a span, the tracker does not know
// it; that keeps one instance's view reproducible from the spans all
// instances export.
package collector
