// Package upstream holds what the gateway knows of each provider at run
// time, and how a provider is reached: its URLs, credential and timeouts
// (Provider), the upstream HTTP transport, and the guards that keep an
// attempt away from a provider that would refuse it: the circuit breaker
// (Breaker, Admission), the concurrency limit (Limiter), the rate-limit
// cooldown and request allowance read from a provider's answers
// (RateSignal), and the disabled state of a refused credential or model
// (Model). Every guard's state is per provider, or per (provider,
// upstream model) where providers limit each model apart.
//
// The host adapters (how Azure OpenAI, Bedrock, Vertex or Gemini are
// addressed and signed) belong here too: a host knows its URL, its
// credentials and its framing, never a body's format.
//
// It must not order candidates (package mode does), run a request
// (package router does), or read the spans' statistics. What counts as a
// provider fault is package fault's to say; this package only acts on
// the verdict it is given (Verdict, Report).
package upstream
