package affinity

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/reqbody"
)

// Prompt-cache affinity. Providers cache prompt prefixes (OpenAI on its own
// above 1,024 tokens, Anthropic where cache_control marks them), and a
// cached prefix is answered sooner and billed less; spreading a
// conversation over targets throws that away. So a request whose prompt
// shares its prefix with an earlier one goes to the target that served
// that prefix last, while that target's expected time, and the time its
// recent attempts took, stay within affinityBound of the leader's expected
// time, for as long as the provider keeps it cached (5 minutes; an hour
// when cache_control asks for "1h").
//
// A prefix is named by the client's prompt_cache_key when it sends one;
// else by a hash of what leads its prompt: the system prompt (or
// instructions), the tools and every message but the last, once that is
// long enough to be cached (affinityMinBytes), or marked with
// cache_control.

const (
	// affinityBound is how much slower than the leader's expected time the
	// target that served a prefix may be, by its own expected time and by
	// its recent attempts, and still get it.
	affinityBound = 1.5
	// affinityMinBytes is the least prompt prefix worth keeping together
	// without a mark: about the 1,024 tokens OpenAI starts caching at.
	affinityMinBytes = 4 << 10
	// Cache lifetimes: providers' default, and cache_control's "1h".
	affinityTTL     = 5 * time.Minute
	affinityLongTTL = time.Hour
	// affinityMax bounds the prefixes remembered at once.
	affinityMax = 1 << 16
)

// Affinity results (the request span's firstbyte.affinity,
// firstbyte_affinity_total{model,result}).
const (
	Hit    = "hit"    // the target that served the prefix served it again
	Broken = "broken" // it had served it, but was unavailable or too slow now
	None   = "none"   // a prefix no target has served (lately)
)

// Prefix is a request's prompt prefix, as the affinity names it.
type Prefix struct {
	Key uint64        // 0: none
	TTL time.Duration // how long the provider keeps it cached
}

var prefixSeed = maphash.MakeSeed()

// Of names f's prompt prefix (Key 0: none worth keeping together).
func Of(f *reqbody.Fields, body []byte) Prefix {
	ttl := affinityTTL
	marked := bytes.Contains(body, []byte(`"cache_control"`)) // one scan of the body for both questions below
	if marked && bytes.Contains(body, []byte(`"1h"`)) {
		ttl = affinityLongTTL
	}
	if len(f.CacheKey) > 2 {
		return Prefix{Key: maphash.Bytes(prefixSeed, f.CacheKey) | 1, TTL: ttl}
	}
	lead := f.Messages
	if len(lead) > 0 && lead[0] == '[' {
		last := -1 // where the last message starts: the new turn, not the prefix
		for _, el := range jsonscan.Each(lead) {
			last = jsonscan.Offset(lead, el)
		}
		if last < 0 {
			lead = nil
		} else {
			lead = lead[:last]
		}
	} else {
		lead = nil // a bare string input: no turns to share
	}
	if len(f.System)+len(f.Tools)+len(lead) < affinityMinBytes && !marked {
		return Prefix{}
	}
	var h maphash.Hash
	h.SetSeed(prefixSeed)
	h.Write(f.System)
	h.WriteByte(0)
	h.Write(f.Tools)
	h.WriteByte(0)
	h.Write(lead)
	return Prefix{Key: h.Sum64() | 1, TTL: ttl}
}

// Table remembers which target served each prefix last, per model, and
// reads the statistics that say whether it is still fast enough.
type Table struct {
	stats  mode.StatsSource // nil: no figures, every target within the bound
	mu     sync.Mutex       // guards served
	served map[affinityKey]affinityEntry
}

type affinityKey struct {
	model  string
	prefix uint64
}

type affinityEntry struct {
	target string
	until  time.Time
}

// New is an empty table reading stats (nil: none).
func New(stats mode.StatsSource) *Table {
	return &Table{stats: stats, served: map[affinityKey]affinityEntry{}}
}

// lookup is the target that served prefix for model last, "" when none
// has, or its cache has expired by now.
func (a *Table) lookup(model string, p Prefix, now time.Time) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.served[affinityKey{model, p.Key}]
	if !ok || !now.Before(e.until) {
		return ""
	}
	return e.target
}

// Record notes that target served prefix for model at now.
func (a *Table) Record(model string, p Prefix, target string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.served) >= affinityMax {
		for k, e := range a.served { // what has expired goes first
			if !now.Before(e.until) {
				delete(a.served, k)
			}
		}
		for k := range a.served { // then half of the rest, at random (map order)
			if len(a.served) <= affinityMax/2 {
				break
			}
			delete(a.served, k)
		}
	}
	a.served[affinityKey{model, p.Key}] = affinityEntry{target: target, until: now.Add(p.TTL)}
}

// Lead says how order can use prefix p of model at now: the index
// of the target that served p last, to lead the order, when it is
// available and its expected time is within affinityBound of the best
// available target's (-1: none), and the affinity result (Hit, Broken,
// None; "" : p names nothing). The request then
// leads with the best estimate for it, its cache counted: its selection is
// leader, whatever the mode's order had put first (a runner-up to explore,
// an unmeasured target), since a conversation moved for a measurement
// would lose its cache. A disabled target's probe (probe) keeps its lead.
func (a *Table) Lead(order []*mode.Candidate, probe *mode.Candidate, model string, p Prefix, now time.Time) (lead int, result string) {
	if p.Key == 0 || a == nil {
		return -1, ""
	}
	target := a.lookup(model, p, now)
	if target == "" {
		return -1, None
	}
	if probe != nil {
		return -1, Broken
	}
	i := slices.IndexFunc(order, func(c *mode.Candidate) bool { return c.Target == target })
	if i < 0 || order[i].Guard.AwayFor(now) != "" || !a.within(order[i], order, now) {
		return -1, Broken
	}
	return i, Hit
}

// within reports whether c's expected time (its p50 under the load it
// would meet) and its recent time (the EWMA of its latest attempts,
// timeouts counted) are both within affinityBound of the best of the
// available measured targets in order; true without the figures to say.
// The p50 of 100 samples moves only once half of them are slow: a target
// that turned 50x slower would keep its conversations for 50 requests.
// The EWMA (alpha 0.3) passes the bound after one such attempt, or a few
// less slow ones.
func (a *Table) within(c *mode.Candidate, order []*mode.Candidate, now time.Time) bool {
	if a.stats == nil {
		return true
	}
	cs := a.stats.StatsAt(c.Target, c.Model, now)
	if cs.Samples == 0 && cs.EWMA == 0 {
		return true
	}
	mine := max(float64(cs.P50)*mode.LoadFactor(c, &cs), float64(cs.EWMA))
	for _, o := range order {
		if o == c || o.Guard.AwayFor(now) != "" {
			continue
		}
		if os := a.stats.StatsAt(o.Target, o.Model, now); os.Samples > 0 && mine > affinityBound*float64(os.P50)*mode.LoadFactor(o, &os) {
			return false
		}
	}
	return true
}
