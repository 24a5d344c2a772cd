// Package sim runs simulated LLM providers: fake OpenAI- and Anthropic-compatible
// upstreams whose time to first byte, streaming pace, error rate and failure modes are
// set by configuration, so that the gateway's routing can be demonstrated, tested end
// to end and benchmarked without a real provider, an API key or a network.
//
// It backs `firstbyte sim -config FILE` and `firstbyte demo`, and tests use it through
// [NewProvider] (an [http.Handler]), [StartProvider] and [Start]. Time and randomness
// are injected through [Options], so a test can make every delay exact and every
// error draw reproducible.
//
// What it must not do: listen on anything but a loopback address (every listener is
// checked after it is bound, whatever the configuration says), echo any part of a
// request's prompt in its answers (the reply text is fixed filler), or keep working
// for a client that has gone away (every wait selects on the request's context).
package sim
