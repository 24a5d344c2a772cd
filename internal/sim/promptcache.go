package sim

import (
	"encoding/json"
	"hash/maphash"
	"sync"
	"time"
)

// Defaults of a PromptCache.
const (
	// DefaultCacheTTL is how long a provider keeps a prefix after it last
	// answered it: providers' default, and the gateway's affinity's.
	DefaultCacheTTL = 5 * time.Minute
	// DefaultCacheSpeedup is a cached prefix's time to first byte, as a
	// share of the draw.
	DefaultCacheSpeedup = 0.5
	// CacheMinBytes is the shortest prefix a provider caches: about the
	// 1,024 tokens OpenAI starts caching at (and the gateway's affinity
	// keys on).
	CacheMinBytes = 4 << 10
)

// PromptCache makes a provider answer a prompt prefix it answered lately
// sooner, as real providers' prompt caches do. A prefix is what leads the
// prompt: the system prompt (Anthropic's system, the Responses API's
// instructions), the tools, and every message but the last, as the gateway
// names it for its affinity; one shorter than CacheMinBytes is not cached.
// A request whose prefix the provider answered within TTL waits Speedup of
// its TTFB draw and reports the prefix's tokens (its length / 4) as cached:
// prompt_tokens_details.cached_tokens (chat completions),
// input_tokens_details.cached_tokens (responses), cache_read_input_tokens
// (messages). A prefix is remembered when an answer to it is sent.
type PromptCache struct {
	// TTL is how long a prefix stays cached after its last answer; zero
	// means DefaultCacheTTL.
	TTL time.Duration `yaml:"ttl,omitempty"`
	// Speedup is a cached request's share of its TTFB draw, above 0 and at
	// most 1; zero means DefaultCacheSpeedup.
	Speedup float64 `yaml:"speedup,omitempty"`
}

func (c *PromptCache) ttl() time.Duration {
	if c.TTL == 0 {
		return DefaultCacheTTL
	}
	return c.TTL
}

func (c *PromptCache) speedup() float64 {
	if c.Speedup == 0 {
		return DefaultCacheSpeedup
	}
	return c.Speedup
}

func (c *PromptCache) validate(prefix string, fe *fieldErrors) {
	if c.TTL < 0 {
		fe.add(prefix+"ttl", "must be >= 0 (0: %v)", DefaultCacheTTL)
	}
	if !(c.Speedup >= 0 && c.Speedup <= 1) {
		fe.add(prefix+"speedup", "%v: must be above 0 and at most 1 (0: %v)", c.Speedup, DefaultCacheSpeedup)
	}
}

// CacheStats is what a provider with a PromptCache reports.
type CacheStats struct {
	// Hits counts requests answered from a cached prefix; Misses those
	// with a prefix long enough to cache that was not.
	Hits, Misses int64
}

// promptCache is a provider's cache: when it last answered each prefix.
type promptCache struct {
	cfg  PromptCache // immutable
	seed maphash.Seed

	mu           sync.Mutex // guards the fields below
	seen         map[uint64]time.Time
	hits, misses int64
}

func newPromptCache(c *PromptCache) *promptCache {
	if c == nil {
		return nil
	}
	return &promptCache{cfg: *c, seed: maphash.MakeSeed(), seen: map[uint64]time.Time{}}
}

// cachePrefix is a request's prompt prefix: its hash and size in tokens
// (tokens 0: none worth caching).
type cachePrefix struct {
	key    uint64
	tokens int
}

// prefixOf names body's prompt prefix.
func (c *promptCache) prefixOf(body []byte) cachePrefix {
	var lead struct {
		System       json.RawMessage   `json:"system"`
		Instructions json.RawMessage   `json:"instructions"`
		Tools        json.RawMessage   `json:"tools"`
		Messages     []json.RawMessage `json:"messages"`
		Input        json.RawMessage   `json:"input"`
	}
	if json.Unmarshal(body, &lead) != nil {
		return cachePrefix{}
	}
	msgs := lead.Messages
	if len(msgs) == 0 && len(lead.Input) > 0 && lead.Input[0] == '[' {
		_ = json.Unmarshal(lead.Input, &msgs)
	}
	if len(msgs) > 0 {
		msgs = msgs[:len(msgs)-1] // the new turn is not part of the prefix
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	n := 0
	for _, part := range [][]byte{lead.System, lead.Instructions, lead.Tools} {
		h.Write(part)
		h.WriteByte(0)
		n += len(part)
	}
	for _, m := range msgs {
		h.Write(m)
		h.WriteByte(0)
		n += len(m)
	}
	if n < CacheMinBytes {
		return cachePrefix{}
	}
	return cachePrefix{key: h.Sum64(), tokens: n / 4}
}

// lookup reports whether p was answered within the TTL before now, and
// counts the hit or miss.
func (c *promptCache) lookup(p cachePrefix, now time.Time) bool {
	if p.tokens == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.seen[p.key]
	hit := ok && now.Sub(at) < c.cfg.ttl()
	if hit {
		c.hits++
	} else {
		c.misses++
	}
	return hit
}

// answered notes that p was answered at now; the expired go first once
// the table is large.
func (c *promptCache) answered(p cachePrefix, now time.Time) {
	if p.tokens == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.seen) >= 1<<16 {
		for k, at := range c.seen {
			if now.Sub(at) >= c.cfg.ttl() {
				delete(c.seen, k)
			}
		}
	}
	c.seen[p.key] = now
}

func (c *promptCache) stats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Misses: c.misses}
}
