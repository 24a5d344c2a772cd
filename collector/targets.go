package collector

import "sync/atomic"

// Target is one (target, upstream model) this instance routes to, with what
// a foreign span must match to be taken for it: the host and port of the
// provider's base_url and the provider's wire format.
type Target struct {
	Name  string // virtual key
	Model string // upstream model
	Host  string // server.address of the provider's base_url
	Port  int    // server.port (443/80 by scheme when the URL has none)
	Kind  string // openai | anthropic
}

// targetTable is the routing config as the aggregator reads it: which keys
// exist (peers' and applications' spans may teach nothing else, so no
// payload can crowd out real keys), and how a foreign span maps to one.
type targetTable struct {
	keys    map[seriesKey]bool
	foreign map[foreignKey]string // -> target name
}

type foreignKey struct {
	host  string
	port  int
	model string
}

func newTargetTable(ts []Target) *targetTable {
	tt := &targetTable{keys: map[seriesKey]bool{}, foreign: map[foreignKey]string{}}
	for _, t := range ts {
		tt.keys[seriesKey{t.Name, t.Model}] = true
		tt.foreign[foreignKey{t.Host, t.Port, t.Model}] = t.Name
	}
	return tt
}

// knows reports whether (target, model) is configured; with no table set
// every key is.
func (tt *targetTable) knows(target, model string) bool {
	return tt == nil || tt.keys[seriesKey{target, model}]
}

// targets holds the current table; nil until SetTargets.
type targets struct{ p atomic.Pointer[targetTable] }
