package gateway

import (
	"testing"
	"time"
)

// Claims asked for within one tick end together, after their wait and less
// than a tick later.
func TestClaimClockEndsClaimsTogetherOnItsTick(t *testing.T) {
	c := newClaimClock(2 * time.Second) // a 100 ms tick
	if c.tick != 100*time.Millisecond {
		t.Fatalf("tick %s for a 2 s wait, want 100ms", c.tick)
	}
	for time.Now().Sub(time.Now().Truncate(c.tick)) > 10*time.Millisecond {
		time.Sleep(time.Millisecond) // start just after a tick
	}
	start := time.Now()
	first := c.after(300 * time.Millisecond)
	time.Sleep(30 * time.Millisecond)
	second := c.after(300 * time.Millisecond)
	if first != second {
		t.Fatal("two claims due within one tick have channels of their own")
	}
	<-first
	if took := time.Since(start); took < 300*time.Millisecond || took > 300*time.Millisecond+c.tick+50*time.Millisecond {
		t.Errorf("a 300 ms claim ended after %s, want between 300 ms and a tick more", took)
	}
	if got := c.after(time.Second); got == first {
		t.Error("a later claim got the channel of a tick that passed")
	}
	if slow, fast := newClaimClock(50*time.Second).tick, newClaimClock(100*time.Millisecond).tick; slow != time.Second || fast != 10*time.Millisecond {
		t.Errorf("ticks %s and %s, want 1s for 50 s and 10ms for 100 ms", slow, fast)
	}
}
