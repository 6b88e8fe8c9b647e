package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// short are intervals that keep the tests quick.
var short = protocol.Intervals{ClaimWaitMS: 1500, JobHeartbeatMS: 5000, LeaseMS: 60_000, RunnerHeartbeatMS: 30_000, LogBatchMS: 100}

func TestRegisterExchangesTheRegistrationTokenOnce(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	ctx := context.Background()
	_, installRunner, reg := e.newInstall("customer-1")

	var out protocol.RegisterResponse
	e.post(ctx, "", protocol.PathRegister, protocol.RegisterRequest{RegistrationToken: reg, Name: "host-1", Version: "1.2.3",
		Capabilities: []string{"noop"}}).decode(t, http.StatusOK, &out)
	if out.RunnerID != installRunner.ID {
		t.Errorf("runner_id %q, want the install's runner %q", out.RunnerID, installRunner.ID)
	}
	first := out.Token
	if !strings.HasPrefix(out.Token, protocol.RunnerTokenPrefix) {
		t.Errorf("token %q lacks the %s prefix", out.Token, protocol.RunnerTokenPrefix)
	}
	if out.Intervals != short {
		t.Errorf("intervals %+v, want the configured %+v", out.Intervals, short)
	}
	// The token works.
	var hb protocol.RunnerHeartbeatResponse
	e.post(ctx, out.Token, protocol.PathRunnerHeartbeat, protocol.RunnerHeartbeatRequest{Version: "1.2.3"}).
		decode(t, http.StatusOK, &hb)
	if hb.RunnerID != installRunner.ID || hb.Intervals != short {
		t.Errorf("runner heartbeat answered %+v", hb)
	}

	// A registration token works once.
	e.post(ctx, "", protocol.PathRegister, protocol.RegisterRequest{RegistrationToken: reg}).
		wantError(t, http.StatusUnauthorized, protocol.CodeUnauthorized, "")
	e.post(ctx, "", protocol.PathRegister, protocol.RegisterRequest{RegistrationToken: protocol.RegistrationTokenPrefix + "never-issued"}).
		wantError(t, http.StatusUnauthorized, protocol.CodeUnauthorized, "")

	// Bad requests name the field and consume nothing.
	_, _, reg2 := e.newInstall("customer-2")
	for _, c := range []struct {
		name, body, field string
	}{
		{"empty body", ``, "registration_token"},
		{"missing token", `{"name":"host-2"}`, "registration_token"},
		{"empty token", `{"registration_token":""}`, "registration_token"},
		{"token of wrong type", `{"registration_token":42}`, "registration_token"},
		{"name of wrong type", fmt.Sprintf(`{"registration_token":%q,"name":["a"]}`, reg2), "name"},
		{"capabilities of wrong type", fmt.Sprintf(`{"registration_token":%q,"capabilities":"noop"}`, reg2), "capabilities"},
		{"unknown field", fmt.Sprintf(`{"registration_token":%q,"hostname":"x"}`, reg2), "hostname"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.post(ctx, "", protocol.PathRegister, c.body).wantError(t, http.StatusBadRequest, protocol.CodeInvalid, c.field)
		})
	}
	e.post(ctx, "", protocol.PathRegister, `{"registration_token":`).wantError(t, http.StatusBadRequest, protocol.CodeInvalid, "")
	// reg2 survived every bad request.
	e.post(ctx, "", protocol.PathRegister, protocol.RegisterRequest{RegistrationToken: reg2}).decode(t, http.StatusOK, &out)
	// And the first runner's token still works.
	e.post(ctx, first, protocol.PathRunnerHeartbeat, protocol.RunnerHeartbeatRequest{}).decode(t, http.StatusOK, &hb)
}

func TestClaimLongPoll(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	ctx := context.Background()
	r := e.newRunner("customer-1")

	t.Run("an idle claim answers 204 when the wait ends", func(t *testing.T) {
		j, err := e.claim(ctx, r.Token)
		if err != nil || j != nil {
			t.Fatalf("claim = %+v, %v; want 204", j, err)
		}
	})

	t.Run("a waiting claim answers with a job enqueued meanwhile", func(t *testing.T) {
		// A runner's first poll asks the database; once it has, the poll
		// waits (a later poll would wait without asking, leaving no trace).
		r := e.newRunner("customer-wait")
		before := e.sql.claims(r.ID)
		got := e.claimInBackground(ctx, r.Token, true)
		// The poll has asked the database, found nothing and now waits.
		waitFor(t, "the claim's query", func() bool { return e.sql.claims(r.ID) > before })
		queued := e.enqueue(r, "wait-1")
		res := <-got
		if res.err != nil {
			t.Fatal(res.err)
		}
		// Had the poll not been woken, it would have ended with 204: the
		// gateway does not ask again when the wait ends.
		if res.job == nil {
			t.Fatal("the waiting claim answered 204; want the job enqueued during the wait")
		}
		if res.job.ID != queued.ID || res.job.Type != protocol.JobTypeNoop || res.job.Attempt != 1 || res.job.TimeoutMS != 60_000 {
			t.Errorf("claimed %+v, want job %s attempt 1", res.job, queued.ID)
		}
		var m protocol.NoopManifest
		if err := json.Unmarshal(res.job.Manifest, &m); err != nil || m.SleepMS != 1 || !slices.Equal(m.Lines, []string{"hello"}) {
			t.Errorf("manifest %s (%v), want the enqueued one", res.job.Manifest, err)
		}
		stored, err := e.s.GetJobByID(ctx, queued.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Status != status.JobRunning || stored.LeaseExpiresAt == nil || !stored.LeaseExpiresAt.Equal(res.job.LeaseExpiresAt.Truncate(time.Microsecond)) {
			t.Errorf("stored job %s lease %v, want running with the lease handed out (%v)", stored.Status, stored.LeaseExpiresAt, res.job.LeaseExpiresAt)
		}
	})

	t.Run("a queued job another transaction holds is claimed once it is let go", func(t *testing.T) {
		// ProvideJobInputs locks a queued row without notifying the runner: the skipped job
		// is not "no work", and the claim must not ask 50 times a second while it is locked.
		r := e.newRunner("customer-locked")
		queued := e.enqueue(r, "locked-1")
		tx := e.s.DB().Begin()
		defer tx.Rollback()
		var held []string
		if err := tx.Raw("SELECT id FROM jobs WHERE id = ? FOR UPDATE", queued.ID).Scan(&held).Error; err != nil || len(held) != 1 {
			t.Fatalf("locking the job: %v %v", held, err)
		}
		before := e.sql.claims(r.ID)
		got := e.claimInBackground(ctx, r.Token, false)
		waitFor(t, "the claim's query", func() bool { return e.sql.claims(r.ID) > before })
		time.Sleep(time.Second) // the row stays locked a while
		whileLocked := e.sql.claims(r.ID) - before
		if err := tx.Commit().Error; err != nil {
			t.Fatal(err)
		}
		select {
		case res := <-got:
			if res.err != nil {
				t.Fatal(res.err)
			}
			if res.job.ID != queued.ID {
				t.Fatalf("the claim got %+v; want job %s once its row was let go", res.job, queued.ID)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("job %s was not claimed after its row was let go: the gateway took it for no work", queued.ID)
		}
		// Backing off from 20 ms, doubling: 6 queries in the first second.
		if whileLocked > 12 {
			t.Errorf("%d claim queries while the job was locked for a second; want the gateway to back off", whileLocked)
		}
	})

	t.Run("two runners with the same token: a job goes to exactly one", func(t *testing.T) {
		r2 := e.newRunner("customer-2")
		before := e.sql.claims(r2.ID)
		results := make(chan *protocol.Job, 2)
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				j, err := e.claim(ctx, r2.Token)
				if err != nil {
					errs <- err
					return
				}
				results <- j
			}()
		}
		// The first poll asks the database, the other may wait on "no work" known:
		// give both a moment to be waiting, so one notification wakes both.
		waitFor(t, "a claim query", func() bool { return e.sql.claims(r2.ID) > before })
		time.Sleep(200 * time.Millisecond)
		queued := e.enqueue(r2, "shared-1")
		var jobs []*protocol.Job
		for range 2 {
			select {
			case j := <-results:
				if j != nil {
					jobs = append(jobs, j)
				}
			case err := <-errs:
				t.Fatal(err)
			}
		}
		if len(jobs) != 1 || jobs[0].ID != queued.ID {
			t.Fatalf("the two polls got %d jobs (%+v); want job %s exactly once", len(jobs), jobs, queued.ID)
		}
		attempts, _, err := e.s.JobHistory(ctx, queued.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(attempts) != 1 || attempts[0].Attempt != 1 {
			t.Errorf("attempts %+v, want exactly one", attempts)
		}
	})
}

// withRunningJob starts a gateway, registers a runner, and enqueues a job
// for it that the runner then claims.
func withRunningJob(t *testing.T, cfg gateway.Config) (*env, runner, store.Job, protocol.Job) {
	t.Helper()
	e := newEnv(t, cfg)
	r := e.newRunner("customer-1")
	queued := e.enqueue(r, "job-1")
	return e, r, queued, e.mustClaim(r)
}

// A gateway shutting down (Drain, run by http.Server.Shutdown) answers its
// waiting claims at once and claims nothing more, so the shutdown does not
// wait for long polls while runners cannot reach it.
func TestDrainAnswersWaitingClaimsAndClaimsNothing(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: production}) // a claim waits 25 s
	ctx := context.Background()
	r := e.newRunner("customer-drain")
	got := e.claimInBackground(ctx, r.Token, true)
	waitFor(t, "the claim's query", func() bool { return e.sql.claims(r.ID) > 0 })
	e.g.Drain()
	// Were the waiting claim not answered by Drain, this job's notification
	// would wake it and it would answer with the job.
	queued := e.enqueue(r, "drain-1")
	if res := <-got; res.err != nil || res.job != nil {
		t.Fatalf("the waiting claim answered %+v, %v; want 204", res.job, res.err)
	}
	if j, err := e.claim(ctx, r.Token); err != nil || j != nil {
		t.Fatalf("a claim after Drain answered %+v, %v; want 204 at once", j, err)
	}
	stored, err := e.s.GetJobByID(ctx, queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Status != status.JobQueued || stored.Attempt != 0 {
		t.Errorf("job %s attempt %d, want still queued for the next gateway", stored.Status, stored.Attempt)
	}
}

func TestHeldHeartbeatAnswersWhenCancelIsRequested(t *testing.T) {
	e, r, queued, job := withRunningJob(t, gateway.Config{Intervals: short})
	ctx := context.Background()

	// Without a cancel request, a heartbeat says so.
	var hb protocol.JobHeartbeatResponse
	e.post(ctx, r.Token, jobPath(protocol.PathJobHeartbeat, job.ID), protocol.JobHeartbeatRequest{Attempt: 1}).
		decode(t, http.StatusOK, &hb)
	if hb.CancelRequested {
		t.Fatal("cancel_requested before any cancel")
	}
	renewed := hb.LeaseExpiresAt

	// Held: it read the job, saw no cancel, and now waits.
	got := e.heldHeartbeat(r.Token, queued.ID, protocol.JobHeartbeatRequest{Attempt: 1, WaitMS: short.JobHeartbeatMS}, renewed)
	if _, err := e.s.RequestCancel(ctx, queued.ID, "test"); err != nil {
		t.Fatal(err)
	}
	// Had the wait not been cut short, it would end with cancel_requested
	// false: the gateway does not look again when the wait ends.
	(<-got).decode(t, http.StatusOK, &hb)
	if !hb.CancelRequested {
		t.Fatal("the held heartbeat answered cancel_requested=false; want true, after the cancel during its wait")
	}
	if !hb.LeaseExpiresAt.After(renewed) {
		t.Errorf("lease %v not renewed past %v", hb.LeaseExpiresAt, renewed)
	}
}

// heldHeartbeat sends req for the job as a held heartbeat and returns once
// the gateway holds it (it renewed the lease past renewed, so it read the
// job and now waits); the answer comes on the channel.
func (e *env) heldHeartbeat(tok, jobID string, req protocol.JobHeartbeatRequest, renewed time.Time) <-chan reply {
	e.tb.Helper()
	got := make(chan reply, 1)
	go func() {
		rep, err := e.tryPost(context.Background(), tok, jobPath(protocol.PathJobHeartbeat, jobID), req)
		if err != nil {
			rep = reply{status: -1, body: []byte(err.Error())}
		}
		got <- rep
	}()
	waitFor(e.tb, "the held heartbeat to renew the lease", func() bool {
		j, err := e.s.GetJobByID(context.Background(), jobID)
		return err == nil && j.LeaseExpiresAt != nil && j.LeaseExpiresAt.After(renewed)
	})
	return got
}

func TestExpiredLeaseMakesTheAttemptStale(t *testing.T) {
	iv := short
	iv.LeaseMS = 1500
	e, r, queued, job := withRunningJob(t, gateway.Config{Intervals: iv, ReapInterval: 200 * time.Millisecond})
	ctx := context.Background()

	// No heartbeat: the reaper marks the attempt lost.
	waitFor(t, "the job to be marked lost", func() bool {
		j, err := e.s.GetJobByID(ctx, queued.ID)
		return err == nil && j.Status == status.JobLost
	})

	e.post(ctx, r.Token, jobPath(protocol.PathJobHeartbeat, job.ID), protocol.JobHeartbeatRequest{Attempt: job.Attempt}).
		wantError(t, http.StatusConflict, protocol.CodeStaleAttempt, "attempt")
	e.post(ctx, r.Token, jobPath(protocol.PathJobComplete, job.ID), protocol.CompleteRequest{Attempt: job.Attempt, Status: protocol.StatusSucceeded}).
		wantError(t, http.StatusConflict, protocol.CodeStaleAttempt, "attempt")

	// Its logs still explain what happened.
	var ack protocol.LogsResponse
	e.post(ctx, r.Token, jobPath(protocol.PathJobLogs, job.ID), protocol.LogsRequest{Attempt: job.Attempt, Chunks: []protocol.LogChunk{
		{Seq: 1, Stream: protocol.StreamStdout, Data: "still here\n", Time: time.Now()},
	}}).decode(t, http.StatusOK, &ack)
	if ack.AckedSeq != 1 {
		t.Errorf("acked_seq %d, want 1", ack.AckedSeq)
	}
	logs, err := e.s.ListLogs(ctx, queued.ID, store.LogCursor{}, 10)
	if err != nil || len(logs) != 1 || logs[0].Data != "still here\n" {
		t.Errorf("stored logs %+v, %v", logs, err)
	}
	j, err := e.s.GetJobByID(ctx, queued.ID)
	if err != nil || j.Status != status.JobLost || j.Attempt != 1 {
		t.Errorf("job after the stale calls: %s attempt %d (%v); want lost attempt 1", j.Status, j.Attempt, err)
	}
	attempts, _, err := e.s.JobHistory(ctx, queued.ID)
	if err != nil || len(attempts) != 1 || attempts[0].Status != status.JobLost {
		t.Errorf("attempts %+v, %v; want one, lost", attempts, err)
	}
}

func TestRunnerSeesOnlyItsOwnJobs(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	ctx := context.Background()
	a, b := e.newRunner("customer-a"), e.newRunner("customer-b")
	queued := e.enqueue(b, "b-1")
	before := e.snapshot(queued.ID)

	if j, err := e.claim(ctx, a.Token); err != nil || j != nil {
		t.Fatalf("A's claim = %+v, %v; want 204", j, err)
	}
	if after := e.snapshot(queued.ID); after != before {
		t.Fatalf("B's job changed by A's claim:\n%s\n---\n%s", before, after)
	}

	// B runs its job; A may not touch it.
	job := e.mustClaim(b)
	if job.ID != queued.ID {
		t.Fatalf("B claimed %s, want %s", job.ID, queued.ID)
	}
	before = e.snapshot(queued.ID)
	for _, c := range []struct {
		path string
		body any
	}{
		{protocol.PathJobHeartbeat, protocol.JobHeartbeatRequest{Attempt: 1}},
		{protocol.PathJobHeartbeat, protocol.JobHeartbeatRequest{Attempt: 1, WaitMS: 1000}},
		{protocol.PathJobLogs, protocol.LogsRequest{Attempt: 1, Chunks: []protocol.LogChunk{{Seq: 1, Stream: protocol.StreamStdout, Data: "x"}}}},
		{protocol.PathJobComplete, protocol.CompleteRequest{Attempt: 1, Status: protocol.StatusFailed, Error: "not yours"}},
	} {
		pe := e.post(ctx, a.Token, jobPath(c.path, job.ID), c.body).wantError(t, http.StatusNotFound, protocol.CodeNotFound, "")
		if strings.Contains(pe.Message, b.ID) || strings.Contains(pe.Message, b.InstallID) {
			t.Errorf("404 message %q tells A about B", pe.Message)
		}
	}
	if after := e.snapshot(queued.ID); after != before {
		t.Fatalf("B's job changed by A's calls:\n%s\n---\n%s", before, after)
	}
	// B's own heartbeat still works.
	var hb protocol.JobHeartbeatResponse
	e.post(ctx, b.Token, jobPath(protocol.PathJobHeartbeat, job.ID), protocol.JobHeartbeatRequest{Attempt: 1}).decode(t, http.StatusOK, &hb)
}

func TestBadInputIsRefusedAndChangesNothing(t *testing.T) {
	e, r, queued, job := withRunningJob(t, gateway.Config{Intervals: short})
	ctx := context.Background()
	// One chunk stored, so a later bad batch could (wrongly) disturb it.
	var ack protocol.LogsResponse
	e.post(ctx, r.Token, jobPath(protocol.PathJobLogs, job.ID), protocol.LogsRequest{Attempt: 1, Chunks: []protocol.LogChunk{
		{Seq: 1, Stream: protocol.StreamStdout, Data: "line 1\n", Time: time.Now()},
	}}).decode(t, http.StatusOK, &ack)

	hbPath := jobPath(protocol.PathJobHeartbeat, job.ID)
	logsPath := jobPath(protocol.PathJobLogs, job.ID)
	donePath := jobPath(protocol.PathJobComplete, job.ID)
	chunk := func(seq int64, stream, data string) string {
		return fmt.Sprintf(`{"seq":%d,"stream":%q,"data":%q,"time":"2024-01-01T00:00:00Z"}`, seq, stream, data)
	}
	big := strings.Repeat("x", protocol.MaxLogChunkBytes+1)
	many := make([]string, protocol.MaxLogBatchChunks+1)
	for i := range many {
		many[i] = chunk(int64(i+2), "stdout", "x")
	}
	cases := []struct {
		name, tok, path, body string
		status                int
		code, field           string
	}{
		{"malformed JSON", r.Token, donePath, `{"attempt":1,"status":"succeeded"`, 400, protocol.CodeInvalid, ""},
		{"not JSON at all", r.Token, hbPath, `attempt=1`, 400, protocol.CodeInvalid, ""},
		{"two objects", r.Token, hbPath, `{"attempt":1}{"attempt":1}`, 400, protocol.CodeInvalid, ""},
		{"unknown field", r.Token, donePath, `{"attempt":1,"status":"succeeded","colour":"red"}`, 400, protocol.CodeInvalid, "colour"},
		{"wrong type", r.Token, hbPath, `{"attempt":"1"}`, 400, protocol.CodeInvalid, "attempt"},
		{"wrong type of status", r.Token, donePath, `{"attempt":1,"status":true}`, 400, protocol.CodeInvalid, "status"},
		{"missing attempt", r.Token, donePath, `{"status":"succeeded"}`, 400, protocol.CodeInvalid, "attempt"},
		{"attempt zero on heartbeat", r.Token, hbPath, `{"attempt":0}`, 400, protocol.CodeInvalid, "attempt"},
		{"oversized log chunk", r.Token, logsPath, `{"attempt":1,"chunks":[` + chunk(2, "stdout", big) + `]}`, 413, protocol.CodeTooLarge, "chunks[0].data"},
		{"non-increasing seq", r.Token, logsPath, `{"attempt":1,"chunks":[` + chunk(2, "stdout", "a") + `,` + chunk(2, "stdout", "b") + `]}`, 400, protocol.CodeInvalid, "chunks[1].seq"},
		{"decreasing seq", r.Token, logsPath, `{"attempt":1,"chunks":[` + chunk(3, "stdout", "a") + `,` + chunk(2, "stdout", "b") + `]}`, 400, protocol.CodeInvalid, "chunks[1].seq"},
		{"seq zero", r.Token, logsPath, `{"attempt":1,"chunks":[` + chunk(0, "stdout", "a") + `]}`, 400, protocol.CodeInvalid, "chunks[0].seq"},
		{"unknown stream", r.Token, logsPath, `{"attempt":1,"chunks":[` + chunk(2, "stdout", "a") + `,` + chunk(3, "journal", "b") + `]}`, 400, protocol.CodeInvalid, "chunks[1].stream"},
		{"too many chunks", r.Token, logsPath, `{"attempt":1,"chunks":[` + strings.Join(many, ",") + `]}`, 400, protocol.CodeInvalid, "chunks"},
		{"logs of a future attempt", r.Token, logsPath, `{"attempt":2,"chunks":[` + chunk(2, "stdout", "a") + `]}`, 409, protocol.CodeStaleAttempt, "attempt"},
		{"completion from a stale attempt", r.Token, donePath, `{"attempt":2,"status":"succeeded"}`, 409, protocol.CodeStaleAttempt, "attempt"},
		{"heartbeat from a stale attempt", r.Token, hbPath, `{"attempt":2}`, 409, protocol.CodeStaleAttempt, "attempt"},
		{"unknown status", r.Token, donePath, `{"attempt":1,"status":"done"}`, 400, protocol.CodeInvalid, "status"},
		{"non-terminal status", r.Token, donePath, `{"attempt":1,"status":"running"}`, 400, protocol.CodeInvalid, "status"},
		{"outputs too large", r.Token, donePath, `{"attempt":1,"status":"succeeded","outputs":{"x":"` + strings.Repeat("y", protocol.MaxOutputsBytes) + `"}}`, 413, protocol.CodeTooLarge, "outputs"},
		{"missing Authorization", "", hbPath, `{"attempt":1}`, 401, protocol.CodeUnauthorized, ""},
		{"unknown runner token", protocol.RunnerTokenPrefix + "not-issued", hbPath, `{"attempt":1}`, 401, protocol.CodeUnauthorized, ""},
		{"registration token as runner token", protocol.RegistrationTokenPrefix + "x", logsPath, `{"attempt":1,"chunks":[]}`, 401, protocol.CodeUnauthorized, ""},
		{"unknown job", r.Token, jobPath(protocol.PathJobComplete, "job_nope"), `{"attempt":1,"status":"succeeded"}`, 404, protocol.CodeNotFound, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := e.snapshot(queued.ID)
			e.post(ctx, c.tok, c.path, c.body).wantError(t, c.status, c.code, c.field)
			if after := e.snapshot(queued.ID); after != before {
				t.Fatalf("the job changed:\n%s\n---\n%s", before, after)
			}
		})
	}
	t.Run("not Bearer", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, e.srv.URL+hbPath, strings.NewReader(`{"attempt":1}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Basic "+r.Token)
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", resp.StatusCode)
		}
	})

	// After all that, the job is intact and completes normally, once.
	e.post(ctx, r.Token, hbPath, protocol.JobHeartbeatRequest{Attempt: 1}).decode(t, http.StatusOK, &protocol.JobHeartbeatResponse{})
	done := protocol.CompleteRequest{Attempt: 1, Status: protocol.StatusSucceeded, Outputs: json.RawMessage(`{"ok":true}`), LastSeq: 1}
	var out map[string]string
	e.post(ctx, r.Token, donePath, done).decode(t, http.StatusOK, &out)
	e.post(ctx, r.Token, donePath, done).decode(t, http.StatusOK, &out) // idempotent
	// A different ending for the same attempt is refused.
	e.post(ctx, r.Token, donePath, protocol.CompleteRequest{Attempt: 1, Status: protocol.StatusFailed}).
		wantError(t, http.StatusConflict, protocol.CodeStaleAttempt, "attempt")
	j, err := e.s.GetJobByID(ctx, queued.ID)
	if err != nil || j.Status != status.JobSucceeded || j.Outputs != `{"ok":true}` {
		t.Errorf("job %s outputs %q (%v); want succeeded with the outputs sent", j.Status, j.Outputs, err)
	}
	_, events, err := e.s.JobHistory(ctx, queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events {
		if ev.Status == status.JobSucceeded {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d succeeded events, want 1: %+v", n, events)
	}
}

func TestRevokedRunnerTokenIsRefusedAtOnce(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	ctx := context.Background()
	r, other := e.newRunner("customer-1"), e.newRunner("customer-2")
	hb := protocol.RunnerHeartbeatRequest{Version: "1"}
	// Both tokens are now in the gateway's auth cache.
	e.post(ctx, r.Token, protocol.PathRunnerHeartbeat, hb).decode(t, http.StatusOK, &protocol.RunnerHeartbeatResponse{})
	e.post(ctx, other.Token, protocol.PathRunnerHeartbeat, hb).decode(t, http.StatusOK, &protocol.RunnerHeartbeatResponse{})

	if err := e.s.RevokeRunnerTokens(ctx, e.org.ID, r.ID); err != nil {
		t.Fatal(err)
	}
	// The revocation reaches the gateway over the bus, as from another API process.
	e.busBarrier(t)

	e.post(ctx, r.Token, protocol.PathRunnerHeartbeat, hb).wantError(t, http.StatusUnauthorized, protocol.CodeUnauthorized, "")
	e.post(ctx, r.Token, protocol.PathClaim, protocol.ClaimRequest{}).wantError(t, http.StatusUnauthorized, protocol.CodeUnauthorized, "")
	// Other runners are unaffected.
	e.post(ctx, other.Token, protocol.PathRunnerHeartbeat, hb).decode(t, http.StatusOK, &protocol.RunnerHeartbeatResponse{})
}
