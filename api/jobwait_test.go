package api

import (
	"context"
	"github.com/outpost-dev/outpost/api/wire"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// A queued job says why it has not been claimed: its runner never
// connected, then its place in the online runner's queue behind a running
// job, then inputs it waits for, then the runner offline since it was last
// seen; a running job says nothing of it.
func TestQueuedJobSaysWhy(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	_, inst := e.fixture()
	enqueue := func(key string, deferred bool) store.Job {
		j, _, err := e.store.EnqueueJob(ctx, store.JobSpec{Key: key, OrgID: inst.OrgID, RunnerID: inst.Runner.ID,
			Type: protocol.JobTypeNoop, InputsDeferred: deferred})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	why := func(j store.Job) *wire.JobWaiting {
		var d wire.JobDetail
		e.call("GET", "/v1/jobs/"+j.ID, nil, 200, &d)
		return d.Waiting
	}
	want := func(j store.Job, reason string, position int, words string) {
		t.Helper()
		w := why(j)
		if w == nil || w.Reason != reason || w.Position != position || !strings.Contains(w.Message, words) {
			t.Fatalf("job %s waiting %+v; want %s at %d saying %q", j.ID, w, reason, position, words)
		}
	}
	first, second := enqueue("k1", false), enqueue("k2", false)
	want(first, waitRunnerOffline, 1, "has never connected")
	want(second, waitRunnerOffline, 2, "has never connected")

	if _, _, err := e.store.RegisterRunner(ctx, inst.Runner.RegistrationToken, store.RunnerInfo{Name: "host-1", Version: "1.2.3"}); err != nil {
		t.Fatal(err)
	}
	want(second, waitQueue, 2, "online with 0 job(s) running; this job is number 2")
	if _, err := e.store.ClaimJob(ctx, inst.Runner.ID, time.Minute, store.Claimant{}); err != nil {
		t.Fatal(err)
	}
	if w := why(first); w != nil {
		t.Fatalf("a running job says it waits: %+v", w)
	}
	want(second, waitQueue, 1, "online with 1 job(s) running; this job is number 1")
	want(enqueue("k3", true), waitInputs, 2, "inputs are not known yet")

	if err := e.store.TouchRunners(ctx, []string{inst.Runner.ID}, time.Now().Add(-2*DefaultOnlineWindow)); err != nil {
		t.Fatal(err)
	}
	want(second, waitRunnerOffline, 1, "offline since ")
}
