package mode

import (
	"sync/atomic"

	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// Candidate is one eligible way to serve a client model: a target (virtual
// key) and the upstream model it is asked for. Candidates are built once
// from the config (by package router); requests share them. Every field
// but lastProbe is immutable once built.
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

	// Upstream is the runtime state of its provider (breaker, limiter),
	// Guard that of (provider, upstream model): cooldown, disabled. Modes
	// read the provider's load from Upstream.
	Upstream *upstream.Provider
	Guard    *upstream.Model
	// AnswerModel is the model name its answers report: the client's
	// (response_model: requested), or "" for the upstream's own. The
	// request path reads it; no mode does.
	AnswerModel string
	// SpanNames are its attempt span names by operation, "{operation}
	// {upstream model}", built once so a request allocates none.
	SpanNames map[string]string

	// lastProbe is when a mode last sent this candidate a re-measuring
	// probe (unix ns): shared by every request, so probes stay bounded.
	lastProbe atomic.Int64
	// lastLoaded is when a latency mode last found it loaded as the leader
	// (unix ns; see spreadNearTie).
	lastLoaded atomic.Int64
}

// Circuit is the candidate's circuit state now.
func (c *Candidate) Circuit() upstream.CircuitState { return c.Upstream.Breaker.State() }

// Provider says where the candidate's provider is and what it is: its
// gen_ai.provider.name (openai, anthropic, or a cloud host's:
// azure.ai.openai, aws.bedrock, gcp.vertex_ai) and the host and port of
// its base_url (443 or 80 by scheme when the URL names none), as attempt
// spans carry them in server.address and server.port.
func (c *Candidate) Provider() (kind, host string, port int) {
	return c.Upstream.ProviderName, c.Upstream.Host, c.Upstream.Port
}
