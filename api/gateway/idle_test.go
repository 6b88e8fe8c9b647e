package gateway_test

// Idle runners: what their long polls cost the database.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/protocol"
)

// busBarrier returns once everything published on the bus before it has
// been delivered to this process's watchers (notifications keep commit order).
func (e *env) busBarrier(t testing.TB) {
	t.Helper()
	topic := fmt.Sprintf("test-barrier:%d", time.Now().UnixNano())
	ch, unsub := e.s.Bus().Subscribe(topic)
	defer unsub()
	if err := e.s.Bus().Publish(context.Background(), topic); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal("the bus did not deliver a marker")
	}
}

func TestIdleRunnersCostNoJobQueries(t *testing.T) {
	iv := short
	iv.ClaimWaitMS = 1000
	e := newEnv(t, gateway.Config{Intervals: iv})
	const n = 20
	runners := make([]runner, n)
	for i := range runners {
		runners[i] = e.newRunner(fmt.Sprintf("customer-%d", i))
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	polls := make([]atomic.Int64, n) // answered polls per runner
	type claimed struct {
		runner int
		job    protocol.Job
	}
	got := make(chan claimed, n)
	failed := make(chan error, n)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i, r := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				j, err := e.claim(ctx, r.Token)
				if err != nil {
					if ctx.Err() == nil {
						failed <- err
					}
					return
				}
				polls[i].Add(1)
				if j != nil {
					got <- claimed{i, *j}
				}
			}
		}()
	}
	allPolled := func(k int64) func() bool {
		return func() bool {
			for i := range polls {
				if polls[i].Load() < k {
					return false
				}
			}
			return true
		}
	}

	// Round 1 asks the database once per runner. From then on, rounds cost
	// nothing per runner.
	waitFor(t, "every runner's first poll", allPolled(1))
	start := e.sql.snapshot()
	waitFor(t, "three more rounds", allPolled(4))
	idle := e.sql.snapshot().since(start)
	select {
	case err := <-failed:
		t.Fatal(err)
	default:
	}
	t.Logf("statements while %d runners polled three rounds idle: %v", n, idle.byKind)
	if idle.byKind[kindClaim] != 0 || idle.byKind[kindAuth] != 0 || idle.byKind[kindOther] != 0 || idle.byKind[kindFailed] != 0 {
		t.Fatalf("idle rounds ran %v (claim queries by runner %v); want none but the periodic reaper scan and last-seen flush",
			idle.byKind, idle.byRunner)
	}

	// One job, for one runner: only that runner asks the database, and gets it.
	const target = 7
	before := e.sql.snapshot()
	queued := e.enqueue(runners[target], "idle-1")
	select {
	case c := <-got:
		if c.runner != target || c.job.ID != queued.ID {
			t.Fatalf("runner %d claimed %s; want runner %d to claim %s", c.runner, c.job.ID, target, queued.ID)
		}
	case err := <-failed:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the job was not claimed")
	}
	woke := e.sql.snapshot().since(before)
	for id, k := range woke.byRunner {
		if id != runners[target].ID {
			t.Errorf("runner %s ran %d claim queries for another runner's job", id, k)
		}
	}
	select {
	case c := <-got:
		t.Fatalf("runner %d also claimed %s", c.runner, c.job.ID)
	default:
	}
}
