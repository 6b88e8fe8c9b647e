package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// enqueueTerraform queues a terraform job on workspace ws and returns it with
// its state credential.
func (f fixture) enqueueTerraform(t *testing.T, key, ws string) (store.Job, string) {
	t.Helper()
	tok := store.NewStateToken()
	j, _, err := f.s.EnqueueJob(context.Background(), store.JobSpec{Key: key, OrgID: f.org.ID, RunnerID: f.runner.ID,
		InstallID: &f.inst.ID, Type: protocol.JobTypeTerraform, Manifest: json.RawMessage(`{}`),
		Workspace: ws, StateToken: tok})
	if err != nil {
		t.Fatal(err)
	}
	return j, tok
}

// claim claims the runner's next job, which must be want.
func (f fixture) claim(t *testing.T, want string, lease time.Duration) {
	t.Helper()
	j, err := f.s.ClaimJob(context.Background(), f.runner.ID, lease, store.Claimant{DeferredInputs: true})
	if err != nil || j == nil || j.ID != want {
		t.Fatalf("claim: %+v %v, want job %s", j, err, want)
	}
}

func (f fixture) access(t *testing.T, jobID, tok string) store.StateAccess {
	t.Helper()
	a, err := f.s.AuthenticateState(context.Background(), jobID, tok)
	if err != nil {
		t.Fatalf("authenticate %s: %v", jobID, err)
	}
	return a
}

func lockInfo(id string) []byte {
	return []byte(`{"ID":"` + id + `","Operation":"OperationTypeApply","Who":"runner@host","Version":"1.5.7","Created":"2024-01-01T00:00:00Z","Path":""}`)
}

func state(serial int, lineage string) []byte {
	return []byte(`{"version":4,"terraform_version":"1.5.7","serial":` + strconv.Itoa(serial) + `,"lineage":"` + lineage +
		`","outputs":{"url":{"value":"https://x","type":"string"},"pw":{"value":"s3cret","type":"string","sensitive":true}},"resources":[]}`)
}

func TestStateCredentialIsHashedAndValidOnlyWhileTheJobRuns(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		j, tok := f.enqueueTerraform(t, "wf/plan", "ins.sandbox")
		if !strings.HasPrefix(tok, store.StateTokenPrefix) {
			t.Errorf("state token %q lacks its prefix", tok)
		}
		var stored []string
		if err := f.s.DB().Raw("SELECT token_hash FROM job_state_credentials WHERE job_id = ?", j.ID).Scan(&stored).Error; err != nil {
			t.Fatal(err)
		}
		if len(stored) != 1 || stored[0] != store.HashToken(tok) {
			t.Fatalf("stored credential %v, want only the token's hash", stored)
		}

		if _, err := f.s.AuthenticateState(ctx, j.ID, tok); !errors.Is(err, store.ErrStateCredentialEnded) {
			t.Errorf("queued job: %v, want ErrStateCredentialEnded", err)
		}
		f.claim(t, j.ID, time.Minute)
		a := f.access(t, j.ID, tok)
		if a.Workspace != "ins.sandbox" || a.Attempt != 1 || a.OrgID != f.org.ID {
			t.Errorf("access %+v", a)
		}
		for name, try := range map[string][2]string{
			"wrong token": {j.ID, store.NewStateToken()},
			"unknown job": {"job_nope", tok},
			"empty token": {j.ID, ""},
		} {
			if _, err := f.s.AuthenticateState(ctx, try[0], try[1]); !errors.Is(err, store.ErrUnauthorized) || errors.Is(err, store.ErrStateCredentialEnded) {
				t.Errorf("%s: %v, want ErrUnauthorized", name, err)
			}
		}
		if err := f.s.CompleteJob(ctx, f.runner.ID, j.ID, protocol.CompleteRequest{Attempt: 1, Status: "succeeded"}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.AuthenticateState(ctx, j.ID, tok); !errors.Is(err, store.ErrStateCredentialEnded) {
			t.Errorf("completed job: %v, want ErrStateCredentialEnded", err)
		}
		// A completed attempt's access is refused inside the write too.
		if _, _, err := f.s.PutTerraformState(ctx, a, "", state(1, "l")); !errors.Is(err, store.ErrStateCredentialEnded) {
			t.Errorf("write after completion: %v", err)
		}
	})
}

func TestEnqueueChecksTheStateFields(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		base := store.JobSpec{Key: "k", OrgID: f.org.ID, RunnerID: f.runner.ID, Type: protocol.JobTypeTerraform}
		for name, tc := range map[string]struct {
			ws, tok, field string
		}{
			"token without workspace":      {"", store.NewStateToken(), "workspace"},
			"no token, slash in workspace": {"ins/sandbox", "", "workspace"}, // a credential per attempt
			"short token":                  {"ins.sandbox", "opst_x", "state_token"},
			"slash in workspace":           {"ins/sandbox", store.NewStateToken(), "workspace"},
			"too long workspace":           {strings.Repeat("w", 201), store.NewStateToken(), "workspace"},
		} {
			spec := base
			spec.Workspace, spec.StateToken = tc.ws, tc.tok
			_, _, err := f.s.EnqueueJob(ctx, spec)
			var fe *store.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("%s: %v, want an error about %s", name, err, tc.field)
			}
		}
	})
}

func TestStateVersionsAreKept(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		if _, err := f.s.GetTerraformState(ctx, f.org.ID, "ins.db"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("state before any write: %v", err)
		}
		j, tok := f.enqueueTerraform(t, "wf/apply", "ins.db")
		f.claim(t, j.ID, time.Minute)
		a := f.access(t, j.ID, tok)
		for i, tc := range []struct {
			serial  int
			created bool
			version int
		}{{1, true, 1}, {2, true, 2}, {2, false, 2}, {3, true, 3}} {
			v, created, err := f.s.PutTerraformState(ctx, a, "", state(tc.serial, "lin"))
			if err != nil || created != tc.created || v.Version != tc.version {
				t.Fatalf("write %d: version %d created %v err %v; want version %d created %v", i, v.Version, created, err, tc.version, tc.created)
			}
		}
		if _, _, err := f.s.PutTerraformState(ctx, a, "", []byte("not json")); err == nil {
			t.Error("a state that is not JSON was stored")
		}
		latest, err := f.s.GetTerraformState(ctx, f.org.ID, "ins.db")
		if err != nil || latest.Version != 3 || latest.Serial != 3 || latest.Lineage != "lin" || latest.JobID != j.ID || latest.State != string(state(3, "lin")) {
			t.Fatalf("latest %+v %v", latest, err)
		}
		versions, err := f.s.ListTerraformStateVersions(ctx, f.org.ID, "ins.db")
		if err != nil || len(versions) != 3 || versions[0].Version != 3 || versions[2].Serial != 1 || versions[0].State != "" {
			t.Fatalf("versions %+v %v", versions, err)
		}
		outs, err := f.s.TerraformStateOutputs(ctx, f.org.ID, "ins.db")
		if err != nil || string(outs["url"].Value) != `"https://x"` || outs["url"].Sensitive || !outs["pw"].Sensitive {
			t.Fatalf("outputs %+v %v", outs, err)
		}
		// Another org never sees it.
		other, _, err := f.s.CreateOrg(ctx, "other")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.GetTerraformState(ctx, other.ID, "ins.db"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another org read the state: %v", err)
		}

		// Discarded (after a destroy): no longer read, still kept; a later
		// write goes on counting.
		if err := f.s.DiscardTerraformState(ctx, f.org.ID, "ins.db"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.GetTerraformState(ctx, f.org.ID, "ins.db"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("state after discard: %v", err)
		}
		if v, created, err := f.s.PutTerraformState(ctx, a, "", state(3, "lin")); err != nil || !created || v.Version != 4 {
			t.Fatalf("write after discard: %+v %v %v", v, created, err)
		}
		versions, _ = f.s.ListTerraformStateVersions(ctx, f.org.ID, "ins.db")
		if len(versions) != 4 || versions[1].DiscardedAt == nil || versions[0].DiscardedAt != nil {
			t.Fatalf("versions after discard %+v", versions)
		}
	})
}

func TestStateLockIsExclusiveAndHonoursItsID(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		ja, toka := f.enqueueTerraform(t, "wf/a", "ins.app")
		jb, tokb := f.enqueueTerraform(t, "wf/b", "ins.app")
		f.claim(t, ja.ID, time.Minute)
		f.claim(t, jb.ID, time.Minute)
		a, b := f.access(t, ja.ID, toka), f.access(t, jb.ID, tokb)

		if _, err := f.s.LockTerraformState(ctx, a, []byte(`{"Who":"x"}`)); err == nil {
			t.Error("a lock without an ID was taken")
		}
		if _, err := f.s.LockTerraformState(ctx, a, lockInfo("lock-a")); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.LockTerraformState(ctx, a, lockInfo("lock-a")); err != nil {
			t.Errorf("the same lock again: %v", err)
		}
		var le *store.StateLockError
		if _, err := f.s.LockTerraformState(ctx, b, lockInfo("lock-b")); !errors.As(err, &le) || le.Holder.LockID != "lock-a" ||
			le.Holder.JobID != ja.ID || le.Holder.Info != string(lockInfo("lock-a")) {
			t.Fatalf("second lock: %v, want the holder lock-a", err)
		}
		if _, _, err := f.s.PutTerraformState(ctx, b, "lock-b", state(1, "l")); !errors.Is(err, store.ErrStateLocked) {
			t.Errorf("write by another job: %v", err)
		}
		if _, _, err := f.s.PutTerraformState(ctx, b, "", state(1, "l")); !errors.Is(err, store.ErrStateLocked) {
			t.Errorf("write without the lock ID: %v", err)
		}
		if _, _, err := f.s.PutTerraformState(ctx, a, "lock-x", state(1, "l")); !errors.Is(err, store.ErrStateLocked) {
			t.Errorf("write with a wrong lock ID: %v", err)
		}
		if _, _, err := f.s.PutTerraformState(ctx, a, "lock-a", state(1, "l")); err != nil {
			t.Errorf("write by the holder: %v", err)
		}
		if err := f.s.UnlockTerraformState(ctx, b, "lock-a"); !errors.Is(err, store.ErrStateLocked) {
			t.Errorf("unlock by another job: %v", err)
		}
		if err := f.s.DiscardTerraformState(ctx, f.org.ID, "ins.app"); !errors.Is(err, store.ErrStateLocked) {
			t.Errorf("discard of a locked workspace: %v", err)
		}
		if err := f.s.UnlockTerraformState(ctx, a, "lock-a"); err != nil {
			t.Fatal(err)
		}
		if l, err := f.s.GetTerraformStateLock(ctx, f.org.ID, "ins.app"); err != nil || l != nil {
			t.Fatalf("lock after unlock: %+v %v", l, err)
		}
		if err := f.s.UnlockTerraformState(ctx, a, "lock-a"); err != nil {
			t.Errorf("unlock of an unlocked workspace: %v", err)
		}
		// A writer whose lock is gone is fenced off.
		if _, _, err := f.s.PutTerraformState(ctx, a, "lock-a", state(2, "l")); !errors.Is(err, store.ErrConflict) {
			t.Errorf("write under a released lock: %v", err)
		}
		if _, err := f.s.LockTerraformState(ctx, b, lockInfo("lock-b")); err != nil {
			t.Errorf("lock after unlock: %v", err)
		}
	})
}

func TestLostAttemptReleasesItsStateLock(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		j, tok := f.enqueueTerraform(t, "wf/apply", "ins.sandbox")
		f.claim(t, j.ID, 300*time.Millisecond)
		a1 := f.access(t, j.ID, tok)
		if _, err := f.s.LockTerraformState(ctx, a1, lockInfo("lock-1")); err != nil {
			t.Fatal(err)
		}
		if ids, err := f.s.ExpireLeases(ctx); err != nil || len(ids) != 0 {
			t.Fatalf("expire before the lease passed: %v %v", ids, err)
		}
		if l, _ := f.s.GetTerraformStateLock(ctx, f.org.ID, "ins.sandbox"); l == nil {
			t.Fatal("the lock went while the lease held")
		}
		time.Sleep(400 * time.Millisecond)
		if ids, err := f.s.ExpireLeases(ctx); err != nil || len(ids) != 1 {
			t.Fatalf("expire: %v %v", ids, err)
		}
		if l, err := f.s.GetTerraformStateLock(ctx, f.org.ID, "ins.sandbox"); err != nil || l != nil {
			t.Fatalf("the lost attempt's lock is still held: %+v %v", l, err)
		}
		if _, err := f.s.AuthenticateState(ctx, j.ID, tok); !errors.Is(err, store.ErrStateCredentialEnded) {
			t.Errorf("credential of a lost job: %v", err)
		}
		if events, ok := storetest.StateUnlocked(t, f.s, j.ID, 1, "lock-1"); !ok {
			t.Errorf("no state_unlocked event in %+v", events)
		}

		if _, err := f.s.RetryJob(ctx, j.ID, 1); err != nil {
			t.Fatal(err)
		}
		f.claim(t, j.ID, time.Minute)
		a2 := f.access(t, j.ID, tok)
		if a2.Attempt != 2 {
			t.Fatalf("attempt %d", a2.Attempt)
		}
		if _, err := f.s.LockTerraformState(ctx, a2, lockInfo("lock-2")); err != nil {
			t.Fatalf("the retry could not lock: %v", err)
		}
		// Attempt 1, were it still alive, is fenced off.
		if _, _, err := f.s.PutTerraformState(ctx, a1, "lock-1", state(1, "l")); !errors.Is(err, store.ErrStateCredentialEnded) {
			t.Errorf("write by the lost attempt: %v", err)
		}
		if _, _, err := f.s.PutTerraformState(ctx, a2, "lock-2", state(1, "l")); err != nil {
			t.Fatal(err)
		}
		// Completion releases the lock too.
		if err := f.s.CompleteJob(ctx, f.runner.ID, j.ID, protocol.CompleteRequest{Attempt: 2, Status: "failed", Error: "x"}); err != nil {
			t.Fatal(err)
		}
		if l, err := f.s.GetTerraformStateLock(ctx, f.org.ID, "ins.sandbox"); err != nil || l != nil {
			t.Fatalf("the completed attempt's lock is still held: %+v %v", l, err)
		}
	})
}

// A workspace keeps its last store.DefaultStateVersionsKept state versions:
// each write past them deletes the oldest.
func TestStateVersionsArePrunedToTheLastN(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		j, tok := f.enqueueTerraform(t, "wf/apply", "ins.pruned")
		f.claim(t, j.ID, time.Minute)
		a := f.access(t, j.ID, tok)
		n := store.DefaultStateVersionsKept + 3
		for serial := 1; serial <= n; serial++ {
			if _, _, err := f.s.PutTerraformState(ctx, a, "", state(serial, "lin")); err != nil {
				t.Fatalf("write %d: %v", serial, err)
			}
		}
		versions, err := f.s.ListTerraformStateVersions(ctx, f.org.ID, "ins.pruned")
		if err != nil || len(versions) != store.DefaultStateVersionsKept || versions[0].Version != n || versions[len(versions)-1].Version != 4 {
			t.Fatalf("%d versions, newest %d, oldest %d (%v); want %d, from 4 to %d", len(versions), versions[0].Version,
				versions[len(versions)-1].Version, err, store.DefaultStateVersionsKept, n)
		}
		if latest, err := f.s.GetTerraformState(ctx, f.org.ID, "ins.pruned"); err != nil || latest.Serial != int64(n) {
			t.Fatalf("latest %+v %v", latest.Serial, err)
		}
	})
}
