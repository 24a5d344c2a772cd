// Package router is firstbyte's request path: the client API's handlers
// (OpenAI and Anthropic endpoints, answers in the caller's shape), the
// eligible candidates of a model, the pipeline every request takes
// through them (Route: order, admit, attempt, next or done), the hedge
// race, one attempt as a value with its relays (unary, stream,
// pass-through), the request and answer bodies and headers, and the
// answer budget.
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
