// Package router is firstbyte's request path: the client API's handlers
// (OpenAI and Anthropic endpoints, answers in the caller's shape), the
// eligible candidates of a model, the routing modes that order them (one
// file per mode, registered by name), the pipeline every request takes
// through them (Route: order, admit, attempt, next or done), one attempt
// as a value with its relays (unary, stream, pass-through), and the
// provider plumbing (circuit breaker, concurrency limit, answer budget,
// transport).
//
// It reads what the spans taught through its own small interface,
// StatsSource, which the collector's tracker satisfies; it never imports
// package collector. What counts as a provider fault is package
// internal/fault's to say; the router puts that verdict on every attempt
// span, where everything else reads it.
package router
