// Package homes remembers where state a provider keeps lives: which target
// stored each response, by the response's id, so a request that continues
// it (previous_response_id) goes to the one account that can answer it.
//
// It is a bounded memory with an expiry and nothing else: it must not know
// how requests are routed nor where the ids come from (the router records
// the ids its own attempts stored; the collector those its peers' spans
// carry).
package homes

import (
	"container/list"
	"sync"
	"time"
)

const (
	// Retention is how long a provider keeps a stored response: OpenAI
	// keeps Responses API objects stored with store: true for 30 days.
	Retention = 30 * 24 * time.Hour
	// DefaultMax is how many ids a Map holds at most (the least recently
	// used goes first): about 10 MB of ids and names.
	DefaultMax = 1 << 16
	// MaxIDLen is the longest id remembered (OpenAI's are about 55 bytes):
	// a longer one is no provider's, and is not kept.
	MaxIDLen = 256
)

// Map remembers the target that stored each id, for ttl after it was
// stored, at most max ids at once. It is safe for concurrent use.
type Map struct {
	// immutable after New
	max int
	ttl time.Duration

	mu   sync.Mutex               // guards byID and lru
	byID map[string]*list.Element // id -> its element in lru
	lru  list.List                // *entry, most recently used first
}

type entry struct {
	id, target string
	until      time.Time // forgotten from then on
}

// New is an empty Map of at most max ids (0: DefaultMax), each kept for
// ttl (0: Retention).
func New(max int, ttl time.Duration) *Map {
	if max <= 0 {
		max = DefaultMax
	}
	if ttl <= 0 {
		ttl = Retention
	}
	return &Map{max: max, ttl: ttl, byID: map[string]*list.Element{}}
}

// Put records that target stored id at storedAt. An empty or overlong id
// or target is not kept.
func (m *Map) Put(id, target string, storedAt time.Time) {
	if id == "" || target == "" || len(id) > MaxIDLen || len(target) > MaxIDLen {
		return
	}
	until := storedAt.Add(m.ttl)
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.byID[id]; ok {
		e := el.Value.(*entry)
		e.target, e.until = target, until
		m.lru.MoveToFront(el)
		return
	}
	for m.lru.Len() >= m.max {
		m.drop(m.lru.Back())
	}
	m.byID[id] = m.lru.PushFront(&entry{id: id, target: target, until: until})
}

// Get is the target that stored id, if it is remembered and its retention
// has not ended by now.
func (m *Map) Get(id string, now time.Time) (target string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.byID[id]
	if !ok {
		return "", false
	}
	e := el.Value.(*entry)
	if !now.Before(e.until) {
		m.drop(el)
		return "", false
	}
	m.lru.MoveToFront(el)
	return e.target, true
}

// Len is how many ids are held (the expired ones not yet dropped
// included).
func (m *Map) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lru.Len()
}

// drop forgets el's id; m.mu is held.
func (m *Map) drop(el *list.Element) {
	delete(m.byID, el.Value.(*entry).id)
	m.lru.Remove(el)
}
