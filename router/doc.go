// Package router is firstbyte's request path: the client API's handlers
// (OpenAI and Anthropic endpoints, answers in the caller's shape), the
// eligible candidates of a model, the pipeline every request takes
// through them (Route: order, admit, attempt, next or done), the hedge
// race, one attempt as a value that decides what its answer is, what each
// candidate is sent, and the gateway's own headers.
//
// Beside it, each a subject it imports and that never imports it:
// package reqbody (a request body), preference (a request's provider
// preferences), affinity (the prompt-cache affinity), relay (an answer's
// bytes to the client, the headers that cross, the answer budget), conn
// (the framing guard and reason phrases), apierror (the gateway's own
// error answers), requestlog (the request's log line) and routingview
// (/debug/routing).
//
// The routing modes that order candidates are package mode's; what the
// gateway knows of each provider (breaker, concurrency limit, rate-limit
// cooldowns, disabled state, transport) is package upstream's. The
// router reads what the spans taught through mode.StatsSource, which the
// collector's tracker satisfies; it never imports package collector.
// What counts as a provider fault is package internal/fault's to say; the
// router puts that verdict on every attempt span, where everything else
// reads it.
package router
