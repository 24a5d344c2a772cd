// Package clients proves firstbyte with the client SDKs its users have: its test
// starts simulated upstreams in-process, runs the real gateway binary
// (FIRSTBYTE_BIN) in front of them, and drives it with the official openai-go
// client and then with the official OpenAI and Anthropic Node SDKs (../node).
//
// It is a module of its own so that the SDKs it needs never become dependencies
// of the gateway. It must not reach the network: every listener is on the
// loopback, and the simulated upstreams stand in for the providers.
package clients
