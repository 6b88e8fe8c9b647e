package gateway

import (
	"sync"
	"time"
)

// claimClock ends held claims on a coarse tick instead of a timer each: the
// claims due within one tick end together, so an idle fleet wakes the
// gateway about once a tick rather than once a claim, and the runners' next
// polls arrive together too (docs/architecture/jobs.md, "Gateway: cheap idle runners"). A
// claim lasts its wait and less than one tick more.
type claimClock struct {
	tick time.Duration
	mu   sync.Mutex
	due  map[int64]chan struct{} // closed at the tick, by its time in ns
}

// newClaimClock ticks every twentieth of the claim wait, between 10 ms and
// a second.
func newClaimClock(wait time.Duration) *claimClock {
	return &claimClock{tick: min(max(wait/20, 10*time.Millisecond), time.Second), due: map[int64]chan struct{}{}}
}

// after answers a channel closed at the first tick after d from now.
func (c *claimClock) after(d time.Duration) <-chan struct{} {
	at := time.Now().Add(d).Truncate(c.tick).Add(c.tick)
	key := at.UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.due[key]
	if !ok {
		ch = make(chan struct{})
		c.due[key] = ch
		time.AfterFunc(time.Until(at), func() {
			c.mu.Lock()
			delete(c.due, key)
			c.mu.Unlock()
			close(ch)
		})
	}
	return ch
}
