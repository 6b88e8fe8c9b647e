package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// A runner that stops claiming (shutdown, hand-over) names its round in a
// heartbeat; the claim it holds answers at once, and so does any later
// claim of that round, while a new round is served as usual.
func TestEndedRoundAnswersItsHeldClaimAndLaterOnes(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: production}) // a claim waits 25 s
	ctx := context.Background()
	r := e.newRunner("customer-round")
	got := e.heldClaimOfRound(r, "round-1")
	e.endRound(r, "round-1")
	// Were the held claim not answered by the heartbeat, this job's
	// notification would wake it and it would answer with the job.
	queued := e.enqueue(r, "round-1")
	if res := <-got; res.err != nil || res.job != nil {
		t.Fatalf("the held claim answered %+v, %v; want 204", res.job, res.err)
	}
	if j, err := e.claimAs(ctx, r.Token, protocol.ClaimRequest{Round: "round-1"}); err != nil || j != nil {
		t.Fatalf("a later claim of the ended round answered %+v, %v; want 204 at once", j, err)
	}
	j, err := e.claimAs(ctx, r.Token, protocol.ClaimRequest{Round: "round-2"})
	if err != nil || j == nil || j.ID != queued.ID || j.Attempt != 1 {
		t.Fatalf("a claim of the next round answered %+v, %v; want job %s, attempt 1", j, err, queued.ID)
	}
}

// A job claimed just as its runner stopped waiting is queued again as it
// was, not left running until its lease ends: its next claim is attempt 1.
func TestAClaimWhoseRunnerWentAwayIsQueuedAgain(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	r := e.newRunner("customer-gone")
	queued := e.enqueue(r, "gone-1")
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	job, err := gateway.ClaimOne(e.g, gone, r.ID, store.Claimant{})
	if job != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("claimOne for a runner that went away: %+v, %v; want no job, context.Canceled", job, err)
	}
	ctx := context.Background()
	stored, err := e.s.GetJobByID(ctx, queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	attempts, _, err := e.s.JobHistory(ctx, queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Status != status.JobQueued || stored.Attempt != 0 || stored.StartedAt != nil || len(attempts) != 0 {
		t.Fatalf("job %s attempt %d started %v with %d attempts; want queued as before its claim",
			stored.Status, stored.Attempt, stored.StartedAt, len(attempts))
	}
	if j := e.mustClaim(r); j.ID != queued.ID || j.Attempt != 1 {
		t.Fatalf("the next claim: %s attempt %d, want %s attempt 1", j.ID, j.Attempt, queued.ID)
	}
	// Only the claim that was never answered is undone: not a running
	// attempt named wrongly, nor another runner's.
	for _, c := range []struct {
		runner  string
		attempt int
	}{{r.ID, 2}, {"runner-other", 1}} {
		if err := e.s.ReleaseClaim(ctx, c.runner, queued.ID, c.attempt); err != nil {
			t.Fatal(err)
		}
	}
	if stored, _ = e.s.GetJobByID(ctx, queued.ID); stored.Status != status.JobRunning || stored.Attempt != 1 {
		t.Errorf("after releasing other claims: %s attempt %d, want running attempt 1", stored.Status, stored.Attempt)
	}
}

// With replicas, a runner's heartbeat may reach another gateway than the one holding its claim:
// the end of the round reaches that one through the store's bus.
func TestEndedRoundReachesTheReplicaHoldingTheClaim(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: production}) // a claim waits 25 s
	other := e.replica(gateway.Config{Intervals: production})
	r := e.newRunner("customer-replicas")
	got := e.heldClaimOfRound(r, "round-1")
	other.endRound(r, "round-1")
	e.enqueue(r, "replica-1") // would wake the held claim with this job, had the end not reached it
	if res := <-got; res.err != nil || res.job != nil {
		t.Fatalf("the claim held on the other replica answered %+v, %v; want 204", res.job, res.err)
	}
}

// heldClaimOfRound sends a claim of the runner's round and returns once the gateway holds it (it
// asked the database); the answer comes on the channel.
func (e *env) heldClaimOfRound(r runner, round string) <-chan claimResult {
	e.tb.Helper()
	got := make(chan claimResult, 1)
	go func() {
		j, err := e.claimAs(context.Background(), r.Token, protocol.ClaimRequest{Round: round})
		got <- claimResult{j, err}
	}()
	waitFor(e.tb, "the claim's query", func() bool { return e.sql.claims(r.ID) > 0 })
	return got
}

// endRound sends the runner's heartbeat ending round.
func (e *env) endRound(r runner, round string) {
	e.tb.Helper()
	var hb protocol.RunnerHeartbeatResponse
	e.post(context.Background(), r.Token, protocol.PathRunnerHeartbeat, protocol.RunnerHeartbeatRequest{EndRound: round}).
		decode(e.tb, http.StatusOK, &hb)
}

// A heartbeat ending a round (the old pod of a rolling update, shutting down) does not record its
// version over the one the runner's new process reports.
func TestEndingARoundRecordsNoVersion(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	ctx := context.Background()
	r := e.newRunner("customer-versions")
	var hb protocol.RunnerHeartbeatResponse
	e.post(ctx, r.Token, protocol.PathRunnerHeartbeat, protocol.RunnerHeartbeatRequest{Version: "v2"}).decode(t, http.StatusOK, &hb)
	e.post(ctx, r.Token, protocol.PathRunnerHeartbeat, protocol.RunnerHeartbeatRequest{Version: "v1", EndRound: "round-old"}).
		decode(t, http.StatusOK, &hb)
	got, err := e.s.GetRunner(ctx, e.org.ID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != "v2" {
		t.Errorf("the runner's version after the old process ended its round: %q, want v2", got.Version)
	}
}

// A round's name is bounded: the gateway keeps it and publishes its end on
// the store's bus. A longer one is a 400 naming the field.
func TestALongRoundNameIsRefusedNamingTheField(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	ctx := context.Background()
	r := e.newRunner("long-round")
	long := strings.Repeat("r", protocol.MaxRoundLength+1)
	e.post(ctx, r.Token, protocol.PathRunnerHeartbeat, protocol.RunnerHeartbeatRequest{EndRound: long}).
		wantError(t, http.StatusBadRequest, protocol.CodeInvalid, "end_round")
	e.post(ctx, r.Token, protocol.PathClaim, protocol.ClaimRequest{Round: long}).
		wantError(t, http.StatusBadRequest, protocol.CodeInvalid, "round")
	var hb protocol.RunnerHeartbeatResponse
	e.post(ctx, r.Token, protocol.PathRunnerHeartbeat, protocol.RunnerHeartbeatRequest{EndRound: long[1:]}).decode(t, http.StatusOK, &hb)
}
