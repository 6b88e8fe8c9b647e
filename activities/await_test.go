package activities

import (
	"context"
	"errors"
	"testing"
	"time"
)

// awaitEnd reads again when woken and on each tick, heartbeats as asked,
// answers the row that ended, and stops with its context.
func TestAwaitEndReadsUntilTheRowEnds(t *testing.T) {
	woke := make(chan struct{}, 1)
	reads, checks, ticks := 0, 0, 0
	read := func(context.Context) (int, bool, error) {
		reads++
		if reads == 1 {
			woke <- struct{}{} // the notification: read again at once
		}
		return reads, reads == 4, nil
	}
	got, err := awaitEnd(context.Background(), woke, 10*time.Millisecond, read,
		func(int) { checks++ }, func(int) { ticks++ })
	if err != nil || got != 4 || checks != 3 || ticks != 2 {
		t.Errorf("got %d, %v after %d checks and %d ticks; want 4 after 3 checks, 2 of them ended by the tick", got, err, checks, ticks)
	}

	ctx, cancel := context.WithCancel(context.Background())
	_, err = awaitEnd(ctx, nil, time.Hour, func(context.Context) (int, bool, error) {
		cancel()
		return 1, false, nil
	}, nil, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait: %v, want context.Canceled", err)
	}
	boom := errors.New("database away")
	if _, err := awaitEnd(context.Background(), nil, time.Hour, func(context.Context) (int, bool, error) {
		return 0, false, boom
	}, nil, nil); !errors.Is(err, boom) {
		t.Errorf("a failed read: %v, want it", err)
	}
}
