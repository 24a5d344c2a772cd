package routinge2e

import (
	"fmt"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// Scenarios of slow moments, (tail) and (tail-spikes), and of providers that
// react to what they are sent, (capacity), (fleet) and (cache): the routing
// study's (cmd/internal/study, scenario.go and scenario_react.go; a test holds
// the settings equal), through the real binary.

// Settings of (tail) and (tail-spikes).
const (
	// TailSpread is sigma of ln(TTFB) of every target in (tail): its p99 is
	// eight times its median.
	TailSpread = 0.9
	// SpikeRate of the answers of every target take SpikeFactor times as
	// long in (tail-spikes).
	SpikeRate   = 0.05
	SpikeFactor = 10.0
	// HedgeSuffix names an arm run with hedging on: "least-latency+hedge",
	// with the study's HedgeAfter, HedgeBudget and HedgeMax.
	HedgeSuffix = "+hedge"
	HedgeAfter  = "adaptive"
	HedgeBudget = 0.1
	HedgeMax    = 1
)

// Settings of (capacity), (fleet) and (cache).
const (
	// SlotsFast and SlotsMid are how many requests fast and mid serve at
	// once in (capacity) and (fleet), queueing the rest; slow has no limit.
	SlotsFast = 4
	SlotsMid  = 8
	// CapacityClients is how many clients (capacity) and (fleet) have.
	CapacityClients = 16
	// FleetReplicas is how many gateways (fleet) has, the clients spread
	// evenly over them.
	FleetReplicas = 4
	// CacheConversations, CacheTTL and CacheSpeedup are (cache)'s: how many
	// conversations the requests belong to, how long a provider keeps a
	// prefix, and a cached prefix's share of the TTFB.
	CacheConversations = 20
	CacheTTL           = 5 * time.Minute
	CacheSpeedup       = 0.5
	// ConversationBytes is the length of a conversation's system prompt:
	// above the 4 KiB from which the gateway keys its affinity.
	ConversationBytes = 5 << 10
)

// StudySplit is the best static split of (capacity) the routing study
// found (docs/routing-study.md: t20 45 %, t40 45 %, t80 10 %), as shares of
// fast, mid and slow: where the split oracle's search starts.
var StudySplit = []float64{0.45, 0.45, 0.10}

// Tail is scenario (tail): every target's TTFB has sigma TailSpread.
func Tail(d time.Duration) Scenario {
	ts := targets()
	for i := range ts {
		ts[i].TTFB.Spread = TailSpread
	}
	return Scenario{Name: "tail", Duration: d, Targets: ts, Hedged: true,
		Title: fmt.Sprintf("a heavy tail: every target's TTFB log-normal with sigma %g", TailSpread)}
}

// TailSpikes is scenario (tail-spikes): SpikeRate of every target's
// answers take SpikeFactor times as long.
func TailSpikes(d time.Duration) Scenario {
	ts := targets()
	for i := range ts {
		ts[i].Spikes = sim.Spikes{Rate: SpikeRate, Factor: SpikeFactor}
	}
	return Scenario{Name: "tail-spikes", Duration: d, Targets: ts, Hedged: true,
		Title: fmt.Sprintf("slow moments: %g %% of every target's answers take %gx as long", 100*SpikeRate, SpikeFactor)}
}

func capacityTargets() []sim.Provider {
	ts := targets()
	ts[0].MaxConcurrency, ts[1].MaxConcurrency = SlotsFast, SlotsMid
	return ts
}

// Capacity is scenario (capacity): fast serves SlotsFast requests at once
// and mid SlotsMid, each queueing the rest; CapacityClients clients.
func Capacity(d time.Duration) Scenario {
	return Scenario{Name: "capacity", Duration: d, Targets: capacityTargets(), Clients: CapacityClients, Split: StudySplit,
		Title: fmt.Sprintf("fast serves %d at a time and mid %d, each queueing the rest; slow has no limit; %d clients",
			SlotsFast, SlotsMid, CapacityClients)}
}

// Fleet is scenario (fleet): (capacity)'s providers behind FleetReplicas
// gateways that share their spans through a collector.
func Fleet(d time.Duration) Scenario {
	s := Capacity(d)
	s.Name, s.Replicas = "fleet", FleetReplicas
	s.Title = fmt.Sprintf("(capacity)'s providers, %d gateways sharing spans through a collector, %d clients each",
		FleetReplicas, CapacityClients/FleetReplicas)
	return s
}

// Cache is scenario (cache): the requests belong to CacheConversations
// conversations, in turn; a provider answers a prefix it answered in the
// last CacheTTL in CacheSpeedup of the time.
func Cache(d time.Duration) Scenario {
	ts := targets()
	for i := range ts {
		ts[i].PromptCache = &sim.PromptCache{TTL: CacheTTL, Speedup: CacheSpeedup}
	}
	return Scenario{Name: "cache", Duration: d, Targets: ts, Conversations: CacheConversations,
		Title: fmt.Sprintf("%d conversations with %d KiB system prompts; a provider answers a prompt it answered in the last %v in %g of the time",
			CacheConversations, ConversationBytes>>10, CacheTTL, CacheSpeedup)}
}

// Reacting is the full-length set of these scenarios, in report order.
func Reacting() []Scenario {
	return []Scenario{Tail(12 * time.Second), TailSpikes(12 * time.Second), Capacity(12 * time.Second),
		Fleet(12 * time.Second), Cache(12 * time.Second)}
}

// conversationPrompts are the conversations' system prompts: each its own
// (its number leads it), ConversationBytes long.
var conversationPrompts = func() []string {
	filler := strings.Repeat("You are a careful assistant; answer briefly. ", ConversationBytes/45+1)[:ConversationBytes]
	out := make([]string, CacheConversations)
	for i := range out {
		out[i] = fmt.Sprintf("Conversation %d. %s", i, filler)
	}
	return out
}()

// ConversationBody is the request body of turn of conversation conv: its
// system prompt, then a user turn that names the turn.
func ConversationBody(conv int, turn int64) []byte {
	prompt := conversationPrompts[conv%len(conversationPrompts)]
	return fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"system","content":%q},{"role":"user","content":"Turn %d: say hello."}],"max_tokens":16}`,
		Model, prompt, turn)
}

// ClientsOr is how many clients s has.
func (s Scenario) ClientsOr() int {
	if s.Clients > 0 {
		return s.Clients
	}
	return Clients
}

// Gateways is how many gateways s runs behind.
func (s Scenario) Gateways() int { return max(s.Replicas, 1) }

// BaseMode is the gateway mode of arm, and whether it hedges.
func BaseMode(arm string) (string, bool) { return strings.CutSuffix(arm, HedgeSuffix) }
