package authlimit

import (
	"log/slog"
	"math"
	"net"
	"sync"
	"time"
)

// Defaults of Config.
const (
	DefaultBurst = 20
	DefaultEvery = 3 * time.Second
	// DefaultMaxKeys bounds the keys remembered per kind (source, prefix).
	DefaultMaxKeys = 100_000
)

// PrefixLen is how many characters of a token, after its type prefix
// (opat_, oprn_…), name it for the per-prefix limit. They are never logged.
const PrefixLen = 8

// Config sets the limits; zero fields take the defaults.
type Config struct {
	// Burst is how many failures a source or prefix may have in a row.
	Burst int
	// Every is how long it takes to be allowed one more failure.
	Every time.Duration
	// MaxKeys bounds how many sources and how many prefixes are remembered.
	MaxKeys int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed (see Source); empty: the peer address is the source.
	TrustedProxies []*net.IPNet
	// Log, when set, is told of each source and prefix that reaches the
	// limit: the source's address, never the prefix.
	Log *slog.Logger
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Limiter counts failed authentications; safe for concurrent use.
type Limiter struct {
	cfg      Config
	mu       sync.Mutex
	sources  map[string]*bucket
	prefixes map[string]*bucket
}

// bucket holds tokens failures it may still have, as of at.
type bucket struct {
	tokens float64
	at     time.Time
}

// New returns a limiter.
func New(cfg Config) *Limiter {
	if cfg.Burst <= 0 {
		cfg.Burst = DefaultBurst
	}
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.MaxKeys <= 0 {
		cfg.MaxKeys = DefaultMaxKeys
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Limiter{cfg: cfg, sources: map[string]*bucket{}, prefixes: map[string]*bucket{}}
}

// Prefix is the part of token that names it for the limit: its type prefix
// and PrefixLen characters more (or all of a shorter token).
func Prefix(typePrefix, token string) string {
	n := len(typePrefix) + PrefixLen
	if len(token) <= n {
		return token
	}
	return token[:n]
}

// Wait says how long source or prefix must wait before it may try again;
// 0 means now.
func (l *Limiter) Wait(source, prefix string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.cfg.Now()
	return max(l.wait(l.sources, source, now), l.wait(l.prefixes, prefix, now))
}

func (l *Limiter) wait(m map[string]*bucket, key string, now time.Time) time.Duration {
	b := m[key]
	if b == nil {
		return 0
	}
	l.refill(b, now)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration(math.Ceil((1 - b.tokens) * float64(l.cfg.Every)))
}

// Fail counts a failed authentication of prefix from source.
func (l *Limiter) Fail(source, prefix string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.cfg.Now()
	over := l.take(l.sources, source, now)
	if l.take(l.prefixes, prefix, now) && l.cfg.Log != nil {
		l.cfg.Log.Warn("failed authentications over the limit with one token prefix", "source", source)
	}
	if over && l.cfg.Log != nil {
		l.cfg.Log.Warn("failed authentications over the limit from one source", "source", source)
	}
}

// take takes a failure from key's bucket; true when that empties it.
func (l *Limiter) take(m map[string]*bucket, key string, now time.Time) bool {
	b := m[key]
	if b == nil {
		if len(m) >= l.cfg.MaxKeys {
			l.forget(m, now)
		}
		b = &bucket{tokens: float64(l.cfg.Burst), at: now}
		m[key] = b
	}
	l.refill(b, now)
	full := b.tokens >= 1
	b.tokens = max(b.tokens-1, 0)
	return full && b.tokens < 1
}

func (l *Limiter) refill(b *bucket, now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(b.tokens+float64(d)/float64(l.cfg.Every), float64(l.cfg.Burst))
		b.at = now
	}
}

// forget drops the keys whose bucket is full again (a new one starts full
// anyway), then any keys until at most half of MaxKeys remain: an attacker
// who spreads over that many prefixes is still held by its sources, and the
// other way round.
func (l *Limiter) forget(m map[string]*bucket, now time.Time) {
	for k, b := range m {
		if l.refill(b, now); b.tokens >= float64(l.cfg.Burst) {
			delete(m, k)
		}
	}
	for k := range m {
		if len(m) < l.cfg.MaxKeys/2 {
			break
		}
		delete(m, k)
	}
}

// RetryAfter is the value of a Retry-After header for wait: whole seconds,
// at least 1.
func RetryAfter(wait time.Duration) int {
	return max(int(math.Ceil(wait.Seconds())), 1)
}
