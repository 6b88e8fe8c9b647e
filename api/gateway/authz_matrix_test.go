package gateway_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// runnerCred is a credential sent to every /runner/v1 route, and what it
// must get: on the routes that take a runner token (bearer; onJob for those
// naming B's job) and on the terraform state backend's (state).
type runnerCred struct {
	name, header         string
	bearer, onJob, state int
}

// runnerMatrixBodies are the bodies by route; a route not listed is sent {}.
// register reads no header: its credential is the registration token in
// its body, here a wrong one.
var runnerMatrixBodies = map[string]string{
	"POST /runner/v1/register":                `{"registration_token":"nope"}`,
	"POST /runner/v1/jobs/:id/heartbeat":      `{"attempt":1}`,
	"POST /runner/v1/jobs/:id/logs":           `{"attempt":1,"chunks":[{"seq":1,"stream":"stdout","data":"not yours","time":"2024-01-01T00:00:00Z"}]}`,
	"POST /runner/v1/jobs/:id/complete":       `{"attempt":1,"status":"failed","error":"not yours"}`,
	"POST /runner/v1/state/:workspace":        string(tfState(99)),
	"LOCK /runner/v1/state/:workspace/lock":   string(tfLockInfo("intruder", "intruder")),
	"UNLOCK /runner/v1/state/:workspace/lock": string(tfLockInfo("intruder", "intruder")),
	"GET /runner/v1/state/:workspace":         "",
	"DELETE /runner/v1/state/:workspace":      "",
}

// runnerMatrixExceptions are the answers that differ from the credential's
// rule, by route and credential, each with why.
var runnerMatrixExceptions = map[[2]string]struct {
	status int
	why    string
}{
	{"POST /runner/v1/jobs/claim", "A's runner token"}: {204, "A claims only its own jobs: none, and B's queued job stays queued"},
	{"POST /runner/v1/heartbeat", "A's runner token"}:  {200, "A's own runner heartbeat: it names no job"},
}

// TestAuthzMatrixRunner sends every /runner/v1 route the gateway mounts, on
// install B's running job and terraform workspace, with each credential but
// B's own: none, a malformed one, a revoked runner token, the token of a
// deleted install's runner (both cached by the gateway first) and an API
// token are 401; install
// A's runner token finds B's job exactly as a missing one, and A's state
// credential is refused on B's workspace. B's jobs and state do not change,
// and no answer names what the request did not.
func TestAuthzMatrixRunner(t *testing.T) {
	e, b, a, theirs, mine := withTwoStateJobs(t)
	ctx := context.Background()
	queued := e.enqueue(b, "b-queued")
	revoked, deleted := e.newRunner("customer-revoked"), e.newRunner("customer-deleted")
	for _, r := range []runner{revoked, deleted} { // now in the gateway's token cache
		e.post(ctx, r.Token, protocol.PathRunnerHeartbeat, protocol.RunnerHeartbeatRequest{}).decode(t, http.StatusOK, &protocol.RunnerHeartbeatResponse{})
	}
	if err := e.s.RevokeRunnerTokens(ctx, e.org.ID, revoked.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.s.DeleteInstall(ctx, e.org.ID, deleted.InstallID); err != nil {
		t.Fatal(err)
	}
	e.busBarrier(t)
	_, apiToken, err := e.s.CreateAPIToken(ctx, store.NewAPIToken{OrgID: e.org.ID, Name: "admin", Scopes: []string{store.ScopeAdmin}})
	if err != nil {
		t.Fatal(err)
	}
	creds := []runnerCred{
		{"no credential", "", 401, 401, 401},
		{"malformed token", "Bearer nope", 401, 401, 401},
		{"revoked runner token", "Bearer " + revoked.Token, 401, 401, 401},
		{"a deleted install's runner token", "Bearer " + deleted.Token, 401, 401, 401},
		{"the org's API token", "Bearer " + apiToken, 401, 401, 401},
		{"the org's API token as B's job's state credential", basic(theirs.job.ID, apiToken), 401, 401, 401},
		{"A's runner token", "Bearer " + a.Token, 401, 404, 401},
		{"A's runner token as B's job's state credential", basic(theirs.job.ID, a.Token), 401, 401, 401},
		{"A's job's state credential", basic(mine.job.ID, mine.token), 401, 401, 403},
	}
	secrets := []string{b.ID, b.InstallID, queued.ID, theirs.job.ID, theirs.token, `"serial"`}
	beforeJob, beforeQueued := e.snapshot(theirs.job.ID), e.snapshot(queued.ID)

	ec := echo.New()
	e.g.Register(ec)
	routes, calls := 0, 0
	for _, r := range ec.Routes() {
		if r.Method == echo.RouteNotFound || !strings.HasPrefix(r.Path, "/runner/v1/") {
			continue
		}
		routes++
		key := r.Method + " " + r.Path
		path := fillRunnerPath(t, r.Path, theirs.job.ID, theirs.ws)
		for _, c := range creds {
			want := c.bearer
			if strings.Contains(r.Path, ":workspace") {
				want = c.state
			} else if strings.Contains(r.Path, ":id") {
				want = c.onJob
			}
			if x, ok := runnerMatrixExceptions[[2]string{key, c.name}]; ok {
				want = x.status
			}
			got := e.send(r.Method, path, c.header, runnerMatrixBody(key))
			calls++
			if got.status != want {
				t.Errorf("%s with %s: %d %s, want %d", key, c.name, got.status, got.body, want)
			}
			for _, s := range secrets {
				if bytes.Contains(got.body, []byte(s)) && !strings.Contains(path, s) {
					t.Errorf("%s with %s: the answer names %s: %s", key, c.name, s, got.body)
				}
			}
			if want == 404 { // exactly as for a job that does not exist
				absent := e.send(r.Method, strings.Replace(path, theirs.job.ID, "job_0000000000000000", 1), c.header, runnerMatrixBody(key))
				calls++
				norm := strings.ReplaceAll(string(got.body), theirs.job.ID, "ID")
				if absent.status != got.status || norm != strings.ReplaceAll(string(absent.body), "job_0000000000000000", "ID") {
					t.Errorf("%s with %s: B's job answers %s, a missing one %d %s", key, c.name, norm, absent.status, absent.body)
				}
			}
		}
	}
	if routes < 10 {
		t.Fatalf("only %d /runner/v1 routes mounted", routes)
	}
	if after := e.snapshot(theirs.job.ID); after != beforeJob {
		t.Errorf("B's running job changed:\n%s\n---\n%s", beforeJob, after)
	}
	if after := e.snapshot(queued.ID); after != beforeQueued {
		t.Errorf("B's queued job changed:\n%s\n---\n%s", beforeQueued, after)
	}
	if v, err := e.s.GetTerraformState(ctx, e.org.ID, theirs.ws); err != nil || v.Serial != 7 || v.Version != 1 {
		t.Errorf("B's state changed: %+v %v", v, err)
	}
	if l, _ := e.s.GetTerraformStateLock(ctx, e.org.ID, theirs.ws); l != nil {
		t.Errorf("B's state was locked: %+v", l)
	}
	t.Logf("%d routes × %d credentials: %d requests", routes, len(creds), calls)
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// fillRunnerPath fills a gateway route's parameters with B's job and
// workspace.
func fillRunnerPath(t *testing.T, path, jobID, ws string) string {
	t.Helper()
	path = strings.Replace(strings.Replace(path, ":id", jobID, 1), ":workspace", ws, 1)
	if strings.Contains(path, ":") {
		t.Fatalf("%s: a parameter the matrix does not fill: add it to fillRunnerPath", path)
	}
	return path
}

func runnerMatrixBody(key string) []byte {
	if b, ok := runnerMatrixBodies[key]; ok {
		return []byte(b)
	}
	return []byte("{}")
}

// send sends body with the Authorization header auth ("" for none).
func (e *env) send(method, path, auth string, body []byte) stateReply {
	e.tb.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		e.tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return e.do(req)
}
