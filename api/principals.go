package api

import (
	"sync"
	"time"

	"github.com/outpost-dev/outpost/store"
)

// principalCache keeps the principals of recent credentials, by the
// credential's hash, so that a request with a warm one costs no database
// read. An entry lives ttl: a revocation, a role change or a disabled user
// made through this process empties the cache at once; one made through
// another replica is seen within ttl.
type principalCache struct {
	ttl time.Duration
	mu  sync.RWMutex
	m   map[string]cachedPrincipal
}

type cachedPrincipal struct {
	p       principal
	session store.Session // for a session: its expiry and last use
	at      time.Time     // when it was read from the store
}

// maxCached bounds the cache; when full it is emptied (simple, and a
// cold read is one query).
const maxCached = 10000

func newPrincipalCache(ttl time.Duration) *principalCache {
	return &principalCache{ttl: ttl, m: map[string]cachedPrincipal{}}
}

func (pc *principalCache) get(hash string, now time.Time) (cachedPrincipal, bool) {
	pc.mu.RLock()
	e, ok := pc.m[hash]
	pc.mu.RUnlock()
	if !ok || now.Sub(e.at) > pc.ttl {
		return cachedPrincipal{}, false
	}
	return e, true
}

func (pc *principalCache) put(hash string, e cachedPrincipal) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.m) >= maxCached {
		clear(pc.m)
	}
	pc.m[hash] = e
}

// touched records a later last use of a cached session or token.
func (pc *principalCache) touched(hash string, at time.Time) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if e, ok := pc.m[hash]; ok {
		e.session.LastSeenAt = at
		e.p.token.LastUsedAt = &at
		pc.m[hash] = e
	}
}

// forget empties the cache: something it may hold changed.
func (pc *principalCache) forget() {
	pc.mu.Lock()
	clear(pc.m)
	pc.mu.Unlock()
}
