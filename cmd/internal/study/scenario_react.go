package study

import (
	"fmt"
	"time"
)

// Scenarios whose providers react to what the gateway sends them: a
// provider with a fixed number of slots queues what it cannot serve at
// once, so sending everything to the fastest makes it the slowest
// ((capacity), and (fleet) with several gateways sharing what they learn);
// a provider that has seen a conversation's prompt answers it sooner, so
// where a conversation went last matters ((cache)).

// Settings of (capacity), (fleet) and (cache).
const (
	// SlotsT20 and SlotsT40 are how many attempts t20 and t40 serve at once
	// in (capacity) and (fleet); t80 has no limit.
	SlotsT20 = 4
	SlotsT40 = 8
	// CapacityClients is how many clients (capacity) and (fleet) have:
	// more than t20 and t40 serve at once.
	CapacityClients = 16
	// FleetReplicas is how many gateway replicas (fleet) has, the clients
	// spread evenly over them.
	FleetReplicas = 4
	// CacheConversations is how many conversations the requests of (cache)
	// belong to; CacheTTL how long a provider keeps a conversation's prefix
	// (the product's affinity uses the same 5 minutes); CacheSpeedup what a
	// cached prefix's time to first byte is, as a share of a cold one's.
	CacheConversations = 20
	CacheTTL           = 5 * time.Minute
	CacheSpeedup       = 0.5
)

// capacityTargets are the base targets with t20's and t40's slots.
func capacityTargets() []Target {
	ts := baseTargets()
	ts[t20].Slots, ts[t40].Slots = SlotsT20, SlotsT40
	return ts
}

// slotsText says what the targets of (capacity) can serve at once.
var slotsText = fmt.Sprintf("t20 serves %d attempts at a time and t40 %d, each queueing the rest first come first "+
	"served (the wait is part of the time to first byte); t80 has no limit.", SlotsT20, SlotsT40)

func capacityScenario() *Scenario {
	ts := capacityTargets()
	return &Scenario{
		Name: "capacity", Title: "the fast targets queue", Targets: ts, FirstByte: DefaultFirstByte,
		Clients: CapacityClients, Oracle: OracleSplit,
		About: slotsText + fmt.Sprintf(" %d clients: more than t20 and t40 serve at once, so the fastest is the "+
			"fastest only while it has a free slot.", CapacityClients),
		Behave: func(i int, _ time.Duration) Behaviour { return normal(ts, i) },
	}
}

func fleetScenario() *Scenario {
	ts := capacityTargets()
	return &Scenario{
		Name: "fleet", Title: "the fast targets queue, four gateways", Targets: ts, FirstByte: DefaultFirstByte,
		Clients: CapacityClients, Replicas: FleetReplicas, Oracle: OracleSplit,
		About: slotsText + fmt.Sprintf(" %d gateway replicas with %d clients each, sharing the providers: each replica "+
			"has its own tracker, which learns from its own spans as they end and from every replica's through the "+
			"collector's fan-out, skipping its own by service.instance.id.", FleetReplicas, CapacityClients/FleetReplicas),
		Behave: func(i int, _ time.Duration) Behaviour { return normal(ts, i) },
	}
}

func cacheScenario() *Scenario {
	ts := baseTargets()
	return &Scenario{
		Name: "cache", Title: "providers cache prompts", Targets: ts, FirstByte: DefaultFirstByte,
		Conversations: CacheConversations,
		About: fmt.Sprintf("The requests belong to %d conversations, in turn; each names its conversation's prompt "+
			"prefix to the gateway (its affinity key, kept %g minutes). A provider that answered a conversation in the "+
			"last %g minutes answers it in %g of the time, and says so (cached tokens): that answer is a success, "+
			"not a latency sample.", CacheConversations, CacheTTL.Minutes(), CacheTTL.Minutes(), CacheSpeedup),
		Behave: func(i int, _ time.Duration) Behaviour { return normal(ts, i) },
	}
}
