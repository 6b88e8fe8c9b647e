package gateway_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// stateJob is a claimed terraform job and its state credential.
type stateJob struct {
	job   protocol.Job
	token string
	ws    string
}

// enqueueState queues a terraform job on workspace ws for r, with a fresh
// state credential.
func (e *env) enqueueState(r runner, key, ws string) (store.Job, string) {
	e.tb.Helper()
	spec := e.spec(r, key)
	spec.Type = protocol.JobTypeTerraform
	spec.Workspace, spec.StateToken = ws, store.NewStateToken()
	j, _, err := e.s.EnqueueJob(context.Background(), spec)
	if err != nil {
		e.tb.Fatal(err)
	}
	return j, spec.StateToken
}

// runState queues and claims (over HTTP) a terraform job on ws.
func (e *env) runState(r runner, key, ws string) stateJob {
	e.tb.Helper()
	queued, tok := e.enqueueState(r, key, ws)
	job := e.mustClaim(r)
	if job.ID != queued.ID {
		e.tb.Fatalf("claimed %s, want %s", job.ID, queued.ID)
	}
	return stateJob{job: job, token: tok, ws: ws}
}

// stateReply is an answer of the state backend.
type stateReply struct {
	status int
	body   []byte
	header http.Header
}

// state sends what terraform's http backend sends: method on the workspace's
// state (or lock, when path ends in "/lock"), basic auth with the job ID and
// token.
func (e *env) state(method, ws, suffix, user, pass string, body []byte, header ...string) stateReply {
	e.tb.Helper()
	path := strings.Replace(protocol.PathState, "{workspace}", ws, 1)
	if suffix == "/lock" {
		path = strings.Replace(protocol.PathLock, "{workspace}", ws, 1)
	} else {
		path += suffix
	}
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		e.tb.Fatal(err)
	}
	if user != "" || pass != "" {
		req.SetBasicAuth(user, pass)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return e.do(req)
}

// do sends req and reads the answer whole.
func (e *env) do(req *http.Request) stateReply {
	e.tb.Helper()
	resp, err := e.client.Do(req)
	if err != nil {
		e.tb.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.tb.Fatal(err)
	}
	return stateReply{status: resp.StatusCode, body: data, header: resp.Header}
}

func (j stateJob) do(e *env, method, suffix string, body []byte, header ...string) stateReply {
	e.tb.Helper()
	return e.state(method, j.ws, suffix, j.job.ID, j.token, body, header...)
}

func (r stateReply) want(tb testing.TB, status int, what string) stateReply {
	tb.Helper()
	if r.status != status {
		tb.Fatalf("%s: status %d, want %d; body %s", what, r.status, status, r.body)
	}
	return r
}

// tfLockInfo is a lock info as terraform (statemgr.LockInfo) sends it.
func tfLockInfo(id, who string) []byte {
	b, _ := json.Marshal(map[string]string{"ID": id, "Operation": "OperationTypeApply", "Info": "", "Who": who,
		"Version": "1.5.7", "Created": time.Now().UTC().Format(time.RFC3339Nano), "Path": ""})
	return b
}

func tfState(serial int) []byte {
	b, _ := json.Marshal(map[string]any{"version": 4, "terraform_version": "1.5.7", "serial": serial,
		"lineage": "9b0c6f6e-1111-2222-3333-444455556666", "outputs": map[string]any{}, "resources": []any{}})
	return b
}

func TestStateBackendKeepsVersionsAndAnswersAsTerraformExpects(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	r := e.newRunner("customer-1")
	j := e.runState(r, "plan-1", r.InstallID+".sandbox")

	j.do(e, http.MethodGet, "", nil).want(t, http.StatusNoContent, "GET before any state")
	j.do(e, "LOCK", "/lock", tfLockInfo("lock-1", "runner@a")).want(t, http.StatusOK, "LOCK")
	j.do(e, http.MethodPost, "?ID=lock-1", tfState(1)).want(t, http.StatusOK, "POST serial 1")
	body := tfState(2)
	sum := md5.Sum(body)
	j.do(e, http.MethodPost, "?ID=lock-1", body, "Content-MD5", base64.StdEncoding.EncodeToString(sum[:])).want(t, http.StatusOK, "POST serial 2")
	j.do(e, http.MethodPost, "?ID=lock-1", tfState(3), "Content-MD5", base64.StdEncoding.EncodeToString(sum[:])).
		want(t, http.StatusBadRequest, "POST with a wrong Content-MD5")
	j.do(e, "UNLOCK", "/lock", tfLockInfo("lock-1", "runner@a")).want(t, http.StatusOK, "UNLOCK")

	got := j.do(e, http.MethodGet, "", nil).want(t, http.StatusOK, "GET")
	if !bytes.Equal(got.body, body) {
		t.Fatalf("GET returned %s, want the latest state %s", got.body, body)
	}
	if md := got.header.Get("Content-MD5"); md != base64.StdEncoding.EncodeToString(sum[:]) {
		t.Errorf("Content-MD5 %q", md)
	}
	versions, err := e.s.ListTerraformStateVersions(context.Background(), e.org.ID, j.ws)
	if err != nil || len(versions) != 2 || versions[0].Serial != 2 || versions[1].Serial != 1 || versions[0].JobID != j.job.ID {
		t.Fatalf("versions %+v %v; want serials 2 and 1, written by the job", versions, err)
	}

	// A write under a lock that is not held is refused: the writer is fenced.
	j.do(e, http.MethodPost, "?ID=lock-1", tfState(4)).want(t, http.StatusConflict, "POST under a released lock")
	// DELETE discards the state; the versions stay.
	j.do(e, http.MethodDelete, "", nil).want(t, http.StatusOK, "DELETE")
	j.do(e, http.MethodGet, "", nil).want(t, http.StatusNoContent, "GET after DELETE")
	if versions, _ := e.s.ListTerraformStateVersions(context.Background(), e.org.ID, j.ws); len(versions) != 2 {
		t.Errorf("versions after DELETE: %d, want the 2 kept", len(versions))
	}
}

func TestStateLockConflictAnswersWithTheHoldersLockInfo(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	r := e.newRunner("customer-1")
	ws := r.InstallID + ".component.db"
	a := e.runState(r, "apply-a", ws)
	b := e.runState(r, "apply-b", ws)

	held := tfLockInfo("lock-a", "runner@a")
	a.do(e, "LOCK", "/lock", held).want(t, http.StatusOK, "LOCK by a")
	for _, c := range []struct {
		method, suffix string
		body           []byte
	}{
		{"LOCK", "/lock", tfLockInfo("lock-b", "runner@b")},
		{http.MethodPost, "?ID=lock-b", tfState(1)},
		{http.MethodPost, "", tfState(1)},
		{"UNLOCK", "/lock", tfLockInfo("lock-b", "runner@b")},
		{http.MethodDelete, "", nil},
	} {
		rep := b.do(e, c.method, c.suffix, c.body).want(t, http.StatusLocked, c.method+c.suffix+" by b")
		var info struct{ ID, Who, Operation string }
		if err := json.Unmarshal(rep.body, &info); err != nil || info.ID != "lock-a" || info.Who != "runner@a" {
			t.Errorf("%s by b: body %s, want the holder's lock info", c.method, rep.body)
		}
	}
	// The holder's wrong ID is refused the same way; its own works.
	a.do(e, http.MethodPost, "?ID=lock-x", tfState(1)).want(t, http.StatusLocked, "POST by a with a wrong ID")
	a.do(e, http.MethodPost, "?ID=lock-a", tfState(1)).want(t, http.StatusOK, "POST by a")
	a.do(e, "UNLOCK", "/lock", nil).want(t, http.StatusBadRequest, "UNLOCK without an ID")
	a.do(e, "UNLOCK", "/lock?ID=lock-a", nil).want(t, http.StatusOK, "UNLOCK by ?ID=")
	b.do(e, "LOCK", "/lock", tfLockInfo("lock-b", "runner@b")).want(t, http.StatusOK, "LOCK by b once a unlocked")
}

// withTwoStateJobs starts a gateway with two installs' runners, each running a
// terraform job on its install's sandbox workspace; the first job has stored
// a state (serial 7).
func withTwoStateJobs(t *testing.T) (e *env, r1, r2 runner, j1, j2 stateJob) {
	t.Helper()
	e = newEnv(t, gateway.Config{Intervals: short})
	r1, r2 = e.newRunner("customer-1"), e.newRunner("customer-2")
	j1 = e.runState(r1, "apply-1", r1.InstallID+".sandbox")
	j2 = e.runState(r2, "apply-2", r2.InstallID+".sandbox")
	j1.do(e, http.MethodPost, "", tfState(7)).want(t, http.StatusOK, "POST")
	return e, r1, r2, j1, j2
}

func TestStateIsOnlyForTheJobsWorkspaceWithTheRightCredential(t *testing.T) {
	e, r1, _, mine, theirs := withTwoStateJobs(t)
	ctx := context.Background()

	for name, c := range map[string]struct {
		ws, user, pass string
		status         int
	}{
		"no credential":                   {mine.ws, "", "", http.StatusUnauthorized},
		"a wrong credential":              {mine.ws, mine.job.ID, store.NewStateToken(), http.StatusUnauthorized},
		"the runner token":                {mine.ws, mine.job.ID, r1.Token, http.StatusUnauthorized},
		"another job's credential":        {mine.ws, mine.job.ID, theirs.token, http.StatusUnauthorized},
		"another install's job":           {mine.ws, theirs.job.ID, theirs.token, http.StatusForbidden},
		"another workspace of the same":   {r1.InstallID + ".component.db", mine.job.ID, mine.token, http.StatusForbidden},
		"a workspace that does not exist": {"nope", mine.job.ID, mine.token, http.StatusForbidden},
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost, "LOCK"} {
			suffix, body := "", tfState(8)
			if method == "LOCK" {
				suffix, body = "/lock", tfLockInfo("x", "intruder")
			}
			rep := e.state(method, c.ws, suffix, c.user, c.pass, body)
			if rep.status != c.status {
				t.Errorf("%s, %s: status %d, want %d (%s)", name, method, rep.status, c.status, rep.body)
			}
			if bytes.Contains(rep.body, []byte(`"serial"`)) {
				t.Errorf("%s, %s: the answer holds a state: %s", name, method, rep.body)
			}
			if rep.status == http.StatusUnauthorized && rep.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: 401 without WWW-Authenticate", name)
			}
		}
	}
	v, err := e.s.GetTerraformState(ctx, e.org.ID, mine.ws)
	if err != nil || v.Serial != 7 || v.Version != 1 {
		t.Errorf("the state changed: %+v %v", v, err)
	}
	if l, _ := e.s.GetTerraformStateLock(ctx, e.org.ID, mine.ws); l != nil {
		t.Errorf("someone locked it: %+v", l)
	}
}

func TestLostAttemptsLockIsReleasedAndTheRetryApplies(t *testing.T) {
	iv := short
	iv.LeaseMS = 1500
	e := newEnv(t, gateway.Config{Intervals: iv, ReapInterval: 200 * time.Millisecond})
	ctx := context.Background()
	r := e.newRunner("customer-1")
	first := e.runState(r, "apply-1", r.InstallID+".sandbox")
	first.do(e, "LOCK", "/lock", tfLockInfo("lock-1", "runner@dead")).want(t, http.StatusOK, "LOCK by attempt 1")
	first.do(e, http.MethodPost, "?ID=lock-1", tfState(1)).want(t, http.StatusOK, "POST by attempt 1")

	// Attempt 1 dies without a word: no heartbeat, no unlock. The gateway's
	// reaper marks it lost once the lease passed.
	waitFor(t, "the attempt to be marked lost", func() bool {
		j, err := e.s.GetJobByID(ctx, first.job.ID)
		return err == nil && j.Status == status.JobLost
	})
	if l, err := e.s.GetTerraformStateLock(ctx, e.org.ID, first.ws); err != nil || l != nil {
		t.Fatalf("the lost attempt's lock is still held: %+v %v", l, err)
	}
	first.do(e, http.MethodGet, "", nil).want(t, http.StatusUnauthorized, "GET by the lost attempt")

	// The workflow retries; attempt 2 locks, writes and unlocks.
	if _, err := e.s.RetryJob(ctx, first.job.ID, 1); err != nil {
		t.Fatal(err)
	}
	retry := e.mustClaim(r)
	if retry.ID != first.job.ID || retry.Attempt != 2 {
		t.Fatalf("claimed %s attempt %d, want %s attempt 2", retry.ID, retry.Attempt, first.job.ID)
	}
	second := stateJob{job: retry, token: first.token, ws: first.ws}
	second.do(e, "LOCK", "/lock", tfLockInfo("lock-2", "runner@alive")).want(t, http.StatusOK, "LOCK by attempt 2")
	if got := second.do(e, http.MethodGet, "", nil).want(t, http.StatusOK, "GET by attempt 2"); !bytes.Equal(got.body, tfState(1)) {
		t.Errorf("attempt 2 read %s, want attempt 1's state", got.body)
	}
	// A write under attempt 1's lock ID is refused now.
	second.do(e, http.MethodPost, "?ID=lock-1", tfState(2)).want(t, http.StatusLocked, "POST under the lost attempt's lock")
	second.do(e, http.MethodPost, "?ID=lock-2", tfState(2)).want(t, http.StatusOK, "POST by attempt 2")

	// Completion ends the credential and releases what it still held.
	e.post(ctx, r.Token, jobPath(protocol.PathJobComplete, retry.ID), protocol.CompleteRequest{Attempt: 2, Status: protocol.StatusSucceeded}).
		decode(t, http.StatusOK, &map[string]string{})
	if l, err := e.s.GetTerraformStateLock(ctx, e.org.ID, first.ws); err != nil || l != nil {
		t.Fatalf("the completed attempt's lock is still held: %+v %v", l, err)
	}
	second.do(e, http.MethodGet, "", nil).want(t, http.StatusUnauthorized, "GET once the job completed")
	second.do(e, "LOCK", "/lock", tfLockInfo("lock-3", "runner@alive")).want(t, http.StatusUnauthorized, "LOCK once the job completed")
	versions, err := e.s.ListTerraformStateVersions(ctx, e.org.ID, first.ws)
	if err != nil || len(versions) != 2 || versions[0].Attempt != 2 || versions[1].Attempt != 1 {
		t.Fatalf("versions %+v %v; want attempt 2's over attempt 1's", versions, err)
	}
}
