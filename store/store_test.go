package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// fixture is an org with an app, an install and its runner.
type fixture struct {
	s       *store.Store
	org     store.Org
	inst    store.Install
	runner  store.Runner
	regTok  string
	adminTk string
}

func newFixture(t *testing.T, dialect string) fixture {
	t.Helper()
	s := storetest.Open(t, dialect)
	tn := storetest.NewTenant(t, s, store.InstallInput{Name: "region", Value: "eu"})
	return fixture{s: s, org: tn.Org, inst: tn.Install, runner: tn.Runner, regTok: tn.RegistrationToken, adminTk: tn.OrgToken}
}

func forEachDialect(t *testing.T, f func(t *testing.T, dialect string)) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) { t.Parallel(); f(t, d) })
	}
}

// forEachFixture runs test on a fresh fixture of each dialect.
func forEachFixture(t *testing.T, test func(t *testing.T, ctx context.Context, f fixture)) {
	forEachDialect(t, func(t *testing.T, d string) { test(t, context.Background(), newFixture(t, d)) })
}

func (f fixture) enqueue(t *testing.T, key string) store.Job {
	t.Helper()
	j, _, err := f.s.EnqueueJob(context.Background(), store.JobSpec{Key: key, OrgID: f.org.ID, RunnerID: f.runner.ID,
		InstallID: &f.inst.ID, Type: protocol.JobTypeNoop, Manifest: json.RawMessage(`{"sleep_ms":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestMigrateIsIdempotent(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		s := storetest.Open(t, d)
		ctx := context.Background()
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("second migrate: %v", err)
		}
		v, err := s.SchemaVersion(ctx)
		if err != nil || v != store.LatestSchemaVersion() {
			t.Fatalf("schema version = %d, %v; want %d", v, err, store.LatestSchemaVersion())
		}
	})
}

func TestTokensAreHashedAndRevocable(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		tok, err := f.s.AuthenticateAPIToken(ctx, f.adminTk)
		if err != nil || tok.OrgID != f.org.ID {
			t.Fatalf("authenticate admin token: %+v %v", tok, err)
		}
		if tok.TokenHash == f.adminTk || tok.TokenHash != store.HashToken(f.adminTk) {
			t.Fatalf("token stored as %q, want its SHA-256", tok.TokenHash)
		}
		if err := f.s.RevokeAPIToken(ctx, f.org.ID, tok.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.AuthenticateAPIToken(ctx, f.adminTk); !errors.Is(err, store.ErrUnauthorized) {
			t.Fatalf("revoked token authenticated: %v", err)
		}
		// Registration is one-time.
		r, runTok, err := f.s.RegisterRunner(ctx, f.regTok, store.RunnerInfo{Name: "host", Version: "v1", Capabilities: []string{"noop"}})
		if err != nil || r.ID != f.runner.ID {
			t.Fatalf("register: %v", err)
		}
		if _, _, err := f.s.RegisterRunner(ctx, f.regTok, store.RunnerInfo{Name: "host", Version: "v1"}); !errors.Is(err, store.ErrUnauthorized) {
			t.Fatalf("second registration with the same token: %v, want unauthorized", err)
		}
		got, err := f.s.AuthenticateRunner(ctx, runTok)
		if err != nil || got.ID != f.runner.ID {
			t.Fatalf("authenticate runner: %v", err)
		}
		if err := f.s.RevokeRunnerTokens(ctx, f.org.ID, f.runner.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.AuthenticateRunner(ctx, runTok); !errors.Is(err, store.ErrUnauthorized) {
			t.Fatalf("revoked runner token authenticated: %v", err)
		}
	})
}

func TestJobLifecycle(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		j := f.enqueue(t, "wf/step-1")
		again, created, err := f.s.EnqueueJob(ctx, store.JobSpec{Key: "wf/step-1", OrgID: f.org.ID, RunnerID: f.runner.ID, Type: protocol.JobTypeNoop})
		if err != nil || created || again.ID != j.ID {
			t.Fatalf("second enqueue with the same key: job %s created=%v err=%v; want the first job %s", again.ID, created, err, j.ID)
		}
		claimed, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{DeferredInputs: true})
		if err != nil || claimed == nil || claimed.ID != j.ID || claimed.Attempt != 1 {
			t.Fatalf("claim: %+v %v", claimed, err)
		}
		if next, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{DeferredInputs: true}); err != nil || next != nil {
			t.Fatalf("second claim got %+v, %v; want nothing", next, err)
		}
		chunks := []protocol.LogChunk{{Seq: 1, Stream: "stdout", Data: "a\n"}, {Seq: 2, Stream: "stderr", Data: "b\n"}}
		for range 2 { // a retried batch is stored once
			if acked, err := f.s.AppendLogs(ctx, f.runner.ID, j.ID, 1, chunks, 0); err != nil || acked != 2 {
				t.Fatalf("append logs: acked %d, %v", acked, err)
			}
		}
		logs, err := f.s.ListLogs(ctx, j.ID, store.LogCursor{}, 100)
		if err != nil || len(logs) != 2 || logs[0].Data != "a\n" || logs[1].Data != "b\n" {
			t.Fatalf("logs = %+v, %v", logs, err)
		}
		exit := 0
		done := protocol.CompleteRequest{Attempt: 1, Status: "succeeded", ExitCode: &exit, Outputs: json.RawMessage(`{"x":"1"}`), LastSeq: 2}
		for range 2 { // idempotent
			if err := f.s.CompleteJob(ctx, f.runner.ID, j.ID, done); err != nil {
				t.Fatalf("complete: %v", err)
			}
		}
		got, _ := f.s.GetJob(ctx, f.org.ID, j.ID)
		if got.Status != status.JobSucceeded || got.Outputs != `{"x":"1"}` || *got.ExitCode != 0 {
			t.Fatalf("job after completion: %+v", got)
		}
		// What an activity awaiting the job reads: how it ended, not its manifest.
		outcome, err := f.s.GetJobOutcome(ctx, j.ID)
		if err != nil || outcome.ID != j.ID || outcome.Status != status.JobSucceeded || outcome.Attempt != 1 ||
			outcome.Outputs != `{"x":"1"}` || outcome.ExitCode == nil || *outcome.ExitCode != 0 || outcome.Manifest != "" {
			t.Fatalf("job outcome: %+v, %v", outcome, err)
		}
		if _, err := f.s.GetJobOutcome(ctx, "job_none"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("outcome of a job that does not exist: %v, want not found", err)
		}
		// A different completion of the same attempt is refused.
		bad := done
		bad.Status = "failed"
		if err := f.s.CompleteJob(ctx, f.runner.ID, j.ID, bad); !errors.Is(err, store.ErrStaleAttempt) {
			t.Fatalf("conflicting completion: %v, want stale attempt", err)
		}
	})
}

func TestLostAttemptIsFencedAndRetried(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		j := f.enqueue(t, "wf/lost")
		if _, err := f.s.ClaimJob(ctx, f.runner.ID, -time.Second, store.Claimant{DeferredInputs: true}); err != nil { // already expired
			t.Fatal(err)
		}
		ids, err := f.s.ExpireLeases(ctx)
		if err != nil || len(ids) != 1 || ids[0] != j.ID {
			t.Fatalf("expire: %v %v", ids, err)
		}
		if _, _, err := f.s.HeartbeatJob(ctx, f.runner.ID, j.ID, 1, time.Minute); !errors.Is(err, store.ErrStaleAttempt) {
			t.Fatalf("heartbeat of lost attempt: %v", err)
		}
		if err := f.s.CompleteJob(ctx, f.runner.ID, j.ID, protocol.CompleteRequest{Attempt: 1, Status: "succeeded"}); !errors.Is(err, store.ErrStaleAttempt) {
			t.Fatalf("completion of lost attempt: %v", err)
		}
		for range 2 { // the retry activity may run twice
			if got, err := f.s.RetryJob(ctx, j.ID, 1); err != nil || got.Status != status.JobQueued {
				t.Fatalf("retry: %+v %v", got, err)
			}
		}
		c, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{DeferredInputs: true})
		if err != nil || c == nil || c.Attempt != 2 {
			t.Fatalf("claim after retry: %+v %v", c, err)
		}
		if next, _ := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{DeferredInputs: true}); next != nil {
			t.Fatalf("the job was handed out twice")
		}
		if err := f.s.CompleteJob(ctx, f.runner.ID, j.ID, protocol.CompleteRequest{Attempt: 1, Status: "succeeded"}); !errors.Is(err, store.ErrStaleAttempt) {
			t.Fatalf("attempt 1 completed attempt 2's job: %v", err)
		}
		attempts, events, err := f.s.JobHistory(ctx, j.ID)
		if err != nil || len(attempts) != 2 || attempts[0].Status != status.JobLost || attempts[1].Status != status.JobRunning {
			t.Fatalf("attempts = %+v %v", attempts, err)
		}
		if len(events) < 4 {
			t.Fatalf("status history too short: %+v", events)
		}
	})
}

func TestRunnerIsolation(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		other, r2, _, err := f.s.CreateInstall(ctx, f.org.ID, f.inst.AppID, "customer-2", nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = other
		j := f.enqueue(t, "wf/iso")
		if c, _ := f.s.ClaimJob(ctx, r2.ID, time.Minute, store.Claimant{DeferredInputs: true}); c != nil {
			t.Fatalf("runner of another install claimed %s", c.ID)
		}
		if _, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{DeferredInputs: true}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.s.HeartbeatJob(ctx, r2.ID, j.ID, 1, time.Minute); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("foreign heartbeat: %v", err)
		}
		if _, err := f.s.AppendLogs(ctx, r2.ID, j.ID, 1, []protocol.LogChunk{{Seq: 1, Stream: "stdout", Data: "x"}}, 0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("foreign logs: %v", err)
		}
		if err := f.s.CompleteJob(ctx, r2.ID, j.ID, protocol.CompleteRequest{Attempt: 1, Status: "failed"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("foreign complete: %v", err)
		}
		org2, _, _ := f.s.CreateOrg(ctx, "globex")
		if _, err := f.s.GetJob(ctx, org2.ID, j.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another org read the job: %v", err)
		}
	})
}

// TestConcurrentClaimsNeverShareAJob claims from many goroutines at once.
func TestConcurrentClaimsNeverShareAJob(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		const jobs = 40
		for i := range jobs {
			f.enqueue(t, fmt.Sprintf("wf/c-%d", i))
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					j, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{DeferredInputs: true})
					if errors.Is(err, store.ErrJobsBusy) {
						continue // the jobs left are being claimed by the others: ask again, as the gateway does
					}
					if err != nil {
						t.Error(err)
						return
					}
					if j == nil {
						return
					}
					mu.Lock()
					seen[j.ID]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(seen) != jobs {
			t.Fatalf("claimed %d distinct jobs, want %d", len(seen), jobs)
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("job %s claimed %d times", id, n)
			}
		}
	})
}

func TestBadLogChunksAreRefusedWhole(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		j := f.enqueue(t, "wf/bad")
		f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{DeferredInputs: true})
		big := make([]byte, protocol.MaxLogChunkBytes+1)
		_, err := f.s.AppendLogs(ctx, f.runner.ID, j.ID, 1, []protocol.LogChunk{{Seq: 1, Stream: "stdout", Data: "ok"}, {Seq: 2, Stream: "stdout", Data: string(big)}}, 0)
		var fe *store.FieldError
		if !errors.As(err, &fe) || fe.Field != "chunks[1].data" {
			t.Fatalf("oversized chunk: %v, want a field error on chunks[1].data", err)
		}
		if logs, _ := f.s.ListLogs(ctx, j.ID, store.LogCursor{}, 10); len(logs) != 0 {
			t.Fatalf("a refused batch stored %d chunks", len(logs))
		}
	})
}

// A cancel that races a claim: the job was read queued, but the claim
// commits first. The cancel must become a request to the running attempt,
// not overwrite it as cancelled (its runner would never hear of it).
func TestCancelRacingAClaimAsksTheRunningAttempt(t *testing.T) {
	f := newFixture(t, store.Postgres)
	ctx := context.Background()
	j := f.enqueue(t, "wf/race")
	// What a claim does, held open in its transaction.
	tx := f.s.DB().Begin()
	defer tx.Rollback()
	if err := tx.Exec("UPDATE jobs SET status = ?, attempt = attempt + 1, lease_expires_at = ? WHERE id = ?",
		status.JobRunning, time.Now().Add(time.Minute), j.ID).Error; err != nil {
		t.Fatal(err)
	}
	type result struct {
		job store.Job
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := f.s.RequestCancel(ctx, j.ID, "operation cancelled")
		done <- result{c, err}
	}()
	// The cancel has read the job queued and waits for the claim's row lock.
	var waiting bool
	for deadline := time.Now().Add(30 * time.Second); !waiting; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cancel never waited for the claim's lock")
		}
		if err := f.s.DB().Raw("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database())").
			Scan(&waiting).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit().Error; err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	stored, err := f.s.GetJobByID(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.job.Status != status.JobRunning || stored.Status != status.JobRunning || stored.CancelRequestedAt == nil || stored.Attempt != 1 {
		t.Errorf("after a cancel racing the claim: answered %s, stored %s attempt %d, cancel requested %v; want running attempt 1 with a cancel request",
			res.job.Status, stored.Status, stored.Attempt, stored.CancelRequestedAt)
	}
}

// A runner on trial (a self-update's candidate) asks for noop jobs only: an
// older job of another type stays queued for the runner that will keep it.
func TestClaimOnlyOfAType(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		older, _, err := f.s.EnqueueJob(ctx, store.JobSpec{Key: "apply", OrgID: f.org.ID, RunnerID: f.runner.ID,
			InstallID: &f.inst.ID, Type: protocol.JobTypeCommand, Manifest: json.RawMessage(`{"command":["true"]}`)})
		if err != nil {
			t.Fatal(err)
		}
		health := f.enqueue(t, "health")
		got, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{OnlyType: protocol.JobTypeNoop})
		if err != nil || got == nil || got.ID != health.ID {
			t.Fatalf("claim of noop jobs only: %+v %v, want the health job %s", got, err, health.ID)
		}
		if got, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{OnlyType: protocol.JobTypeNoop}); err != nil || got != nil {
			t.Fatalf("a second claim of noop jobs only: %+v %v, want none", got, err)
		}
		if got, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{}); err != nil || got == nil || got.ID != older.ID {
			t.Fatalf("a claim of any job: %+v %v, want %s", got, err, older.ID)
		}
	})
}
