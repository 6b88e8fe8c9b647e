package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// A job claimed for a runner by a gateway that died before answering is
// queued again as it was when the runner's next claim tells of its claim
// that got no answer: that claim gets it, as attempt 1. The runner's other
// attempts keep running: one it holds, one its other version claimed, one
// whose lease was renewed (another process of the runner got it).
func TestAClaimThatGotNoAnswerIsQueuedAgain(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	r := e.newRunner("customer-unanswered")
	ctx := context.Background()
	claim := func(key, version string) store.Job {
		t.Helper()
		queued := e.enqueue(r, key)
		j, err := e.s.ClaimJob(ctx, r.ID, short.Lease(), store.Claimant{Version: version})
		if err != nil || j == nil || j.ID != queued.ID {
			t.Fatalf("claim %s: %+v, %v", key, j, err)
		}
		return *j
	}
	held, other, renewed, lost := claim("held", "v1"), claim("other", "v0"), claim("renewed", "v1"), claim("lost", "v1")
	if _, _, err := e.s.HeartbeatJob(ctx, r.ID, renewed.ID, 1, short.Lease()); err != nil {
		t.Fatal(err)
	}
	j, err := e.claimAs(ctx, r.Token, protocol.ClaimRequest{Version: "v1", Unanswered: &protocol.UnansweredClaims{
		SentMSAgo: 3000, FailedMSAgo: 1000, Held: map[string]int{held.ID: 1}}})
	if err != nil || j == nil || j.ID != lost.ID || j.Attempt != 1 {
		t.Fatalf("the claim telling of an unanswered one: %+v, %v; want job %s, attempt 1", j, err, lost.ID)
	}
	if attempts, _, err := e.s.JobHistory(ctx, lost.ID); err != nil || len(attempts) != 1 {
		t.Fatalf("job %s has attempts %+v (%v); want the one answered", lost.ID, attempts, err)
	}
	for _, id := range []string{held.ID, other.ID, renewed.ID} {
		if stored, err := e.s.GetJobByID(ctx, id); err != nil || stored.Status != status.JobRunning || stored.Attempt != 1 {
			t.Errorf("job %s: %s attempt %d (%v); want running attempt 1", id, stored.Status, stored.Attempt, err)
		}
	}
}

// Times of unanswered claims that cannot be are refused, naming the field.
func TestUnansweredClaimsWithImpossibleTimesAreRefused(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	r := e.newRunner("customer-unanswered-bad")
	for field, u := range map[string]protocol.UnansweredClaims{
		"unanswered.sent_ms_ago":   {SentMSAgo: -1},
		"unanswered.failed_ms_ago": {SentMSAgo: 1000, FailedMSAgo: 2000},
	} {
		rep, err := e.tryPost(context.Background(), r.Token, protocol.PathClaim, protocol.ClaimRequest{Unanswered: &u})
		if err != nil {
			t.Fatal(err)
		}
		if rep.status != http.StatusBadRequest || !strings.Contains(string(rep.body), field) {
			t.Errorf("%+v answered %d %s; want 400 naming %s", u, rep.status, rep.body, field)
		}
	}
}
