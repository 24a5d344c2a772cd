package router

import (
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Candidate is one eligible way to serve a client model: a target (virtual
// key) and the upstream model it is asked for. Candidates are built once
// from the config; requests share them.
type Candidate struct {
	Target string  // virtual key
	Model  string  // upstream model
	Index  int     // declaration order among the targets
	Weight float64 // loadbalance weight; cost-optimized ties
	Tries  int     // 1 + retry.attempts
	// Price is the provider's rate card for Model: input + output USD per
	// million tokens; Priced is false when the provider has no price for it.
	Price  float64
	Priced bool

	upstream *upstream   // runtime state of the provider (breaker, limiter)
	guard    *modelGuard // runtime state of (provider, upstream model): cooldown, disabled
	// answerModel is the model name its answers report: the client's
	// (response_model: requested), or "" for the upstream's own.
	answerModel string
	spanNames   map[string]string // attempt span name by operation: "{operation} {upstream model}"

	// lastProbe is when a mode last sent this candidate a re-measuring
	// probe (unix ns): shared by every request, so probes stay bounded.
	lastProbe atomic.Int64
}

// spanName names an attempt span of operation, built once per candidate.
func (c *Candidate) spanName(operation string) string {
	if n, ok := c.spanNames[operation]; ok {
		return n
	}
	return operation + " " + c.Model
}

// attemptAttributes are the attributes an attempt span starts with.
func (c *Candidate) attemptAttributes(operation, requestedModel string, attempt int, selection string, inflight int64) []attribute.KeyValue {
	u := c.upstream
	return []attribute.KeyValue{
		telemetry.KeyOperationName.String(operation),
		telemetry.KeyProviderName.String(u.providerName),
		telemetry.KeyRequestModel.String(c.Model),
		telemetry.KeyServerAddress.String(u.host),
		telemetry.KeyServerPort.Int(u.port),
		telemetry.KeyTarget.String(c.Target),
		telemetry.KeyRequestedModel.String(requestedModel),
		telemetry.KeyAttempt.Int(attempt),
		telemetry.KeySelection.String(selection),
		telemetry.KeyInflight.Int64(inflight),
	}
}

// Circuit is the candidate's circuit state now.
func (c *Candidate) Circuit() CircuitState { return c.upstream.breaker.State() }

// Provider says where the candidate's provider is and what it is: its
// gen_ai.provider.name (openai, anthropic, or a cloud host's:
// azure.ai.openai, aws.bedrock, gcp.vertex_ai) and the host and port of
// its base_url (443 or 80 by scheme when the URL names none), as attempt
// spans carry them in server.address and server.port.
func (c *Candidate) Provider() (kind, host string, port int) {
	return c.upstream.providerName, c.upstream.host, c.upstream.port
}

// Candidates lists every (target, client model) candidate, in declaration
// order: what the aggregator may learn about, and nothing else.
func (g *Gateway) Candidates() []*Candidate { return append([]*Candidate(nil), g.targets...) }
