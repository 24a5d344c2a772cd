package collector

import (
	"sync/atomic"
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Target is one (target, upstream model) this instance routes to, with what
// a foreign span must match to be taken for it: the host and port of the
// provider's base_url and the provider's wire format.
type Target struct {
	Name  string // virtual key
	Model string // upstream model
	Host  string // server.address of the provider's base_url
	Port  int    // server.port (443/80 by scheme when the URL has none)
	Kind  string // its gen_ai.provider.name: openai, anthropic, azure.ai.openai, aws.bedrock, gcp.vertex_ai
	// LongestSample is the longest time to first byte an attempt of this
	// key can have: the provider's timeout.total (a unary answer's sample
	// is its whole answer, whose body total bounds). A peer's or an
	// application's span claiming longer is implausible (see
	// plausible.go). Zero: none known, an hour at most.
	LongestSample time.Duration
	// Price is the provider's rate card for Model, USD per million tokens
	// (firstbyte_cost_usd_total); Priced is false when it has none.
	Price  TokenPrice
	Priced bool
}

// TokenPrice is a rate card entry: USD per million input and output tokens.
type TokenPrice struct{ Input, Output float64 }

// targetTable is the routing config as the aggregator reads it: which keys
// exist (peers' and applications' spans may teach nothing else, so no
// payload can crowd out real keys), and how a foreign span maps to one.
type targetTable struct {
	keys          map[seriesKey]time.Duration  // every configured key, with its LongestSample
	foreign       map[foreignKey]foreignTarget // (host, port, model)
	foreignNoPort map[foreignKey]foreignTarget // (host, model): target "" when several ports serve it
	// hosts is every host of foreign and foreignNoPort: a server.address
	// whose canonical host is not in it maps to nothing (the ingest
	// prefilter's test).
	hosts map[string]bool
}

type foreignTarget struct{ target, kind string }

type foreignKey struct {
	host  string
	port  int
	model string
}

func newTargetTable(ts []Target) *targetTable {
	tt := &targetTable{keys: map[seriesKey]time.Duration{}, foreign: map[foreignKey]foreignTarget{}, foreignNoPort: map[foreignKey]foreignTarget{}, hosts: map[string]bool{}}
	for _, t := range ts {
		t.Host = telemetry.CanonicalHost(t.Host)
		tt.keys[seriesKey{t.Name, t.Model}] = t.LongestSample
		tt.hosts[t.Host] = true
		ft := foreignTarget{t.Name, t.Kind}
		if _, dup := tt.foreign[foreignKey{t.Host, t.Port, t.Model}]; !dup {
			tt.foreign[foreignKey{t.Host, t.Port, t.Model}] = ft // two targets of one provider: the first declared
		}
		noPort := foreignKey{host: t.Host, model: t.Model}
		if prev, seen := tt.foreignNoPort[noPort]; seen && prev.target != t.Name {
			ft = foreignTarget{} // ambiguous without a port
		}
		tt.foreignNoPort[noPort] = ft
	}
	return tt
}

// knows reports whether (target, model) is configured; with no table set
// every key is.
func (tt *targetTable) knows(target, model string) bool {
	if tt == nil {
		return true
	}
	_, ok := tt.keys[seriesKey{target, model}]
	return ok
}

// targets holds the current table; nil until SetTargets.
type targets struct{ p atomic.Pointer[targetTable] }
