package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
)

// attemptManifest is what the test's job carries: a state backend and a
// vendor-registry access, with the placeholders the activities render.
type attemptManifest struct {
	Backend  protocol.TerraformBackend `json:"backend"`
	Registry protocol.RegistryAccess   `json:"registry"`
}

// attemptCreds is what one claimed attempt was given.
type attemptCreds struct {
	job      protocol.Job
	state    string
	registry protocol.RegistryAccess
}

// registryAnswer is the vendor registry's status for a pull of repo with the
// attempt's credential (404: allowed, the repository is empty).
func registryAnswer(t *testing.T, addr, repo string, a attemptCreds) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v2/"+repo+"/tags/list", nil)
	req.SetBasicAuth(a.registry.Username, a.registry.Password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (e *env) claimCreds(r runner) attemptCreds {
	e.tb.Helper()
	job := e.mustClaim(r)
	var m attemptManifest
	if err := json.Unmarshal(job.Manifest, &m); err != nil {
		e.tb.Fatal(err)
	}
	if strings.Contains(string(job.Manifest), "outpost-attempt-credential") {
		e.tb.Fatalf("attempt %d was handed placeholders: %s", job.Attempt, job.Manifest)
	}
	return attemptCreds{job: job, state: m.Backend.Password, registry: m.Registry}
}

// The registry and state credentials of an attempt work while it holds its
// lease, and are refused once it has passed (before the reaper even marks it
// lost), once it is lost, completed or cancelled; a retry gets new ones.
func TestAttemptCredentialsEndWithTheLease(t *testing.T) {
	iv := short
	iv.LeaseMS = 1500
	e := newEnv(t, gateway.Config{Intervals: iv, ReapInterval: time.Hour}) // leases are expired by the test
	ctx := context.Background()
	key, err := e.s.SigningKey(ctx, e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Start(ctx, registry.Config{Auth: registry.Tokens{Keys: attemptcred.RegistryKeys(e.s), Leases: e.s}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })

	r := e.newRunner("customer-1")
	repo := e.org.ID + "/app/db"
	manifest, _ := json.Marshal(attemptManifest{
		Backend: protocol.TerraformBackend{Password: attemptcred.State(key, e.org.ID)},
		Registry: protocol.RegistryAccess{Address: reg.Addr(), Username: "install/x",
			Password: attemptcred.Registry(key, e.org.ID, "install/x", registry.Scope{Repository: repo, Actions: []string{"pull"}})},
	})
	queue := func(key string) {
		spec := e.spec(r, key)
		spec.Type, spec.Workspace, spec.Manifest = protocol.JobTypeTerraform, r.InstallID+"."+key, manifest
		if _, _, err := e.s.EnqueueJob(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	works := func(a attemptCreds, what string) {
		t.Helper()
		e.state(http.MethodGet, r.InstallID+".apply", "", a.job.ID, a.state, nil).want(t, http.StatusNoContent, what+": state GET")
		if got := registryAnswer(t, reg.Addr(), repo, a); got != http.StatusNotFound {
			t.Fatalf("%s: registry pull answered %d, want 404 (allowed, no such repository yet)", what, got)
		}
	}
	refused := func(a attemptCreds, ws, what string) {
		t.Helper()
		e.state(http.MethodGet, ws, "", a.job.ID, a.state, nil).want(t, http.StatusUnauthorized, what+": state GET")
		if got := registryAnswer(t, reg.Addr(), repo, a); got != http.StatusUnauthorized {
			t.Fatalf("%s: registry pull answered %d, want 401", what, got)
		}
	}

	queue("apply")
	first := e.claimCreds(r)
	works(first, "attempt 1 while it runs")

	// Attempt 1 dies without a word. Its lease passes: refused at once,
	// before anything marked it lost.
	time.Sleep(time.Until(first.job.LeaseExpiresAt) + 100*time.Millisecond)
	refused(first, r.InstallID+".apply", "attempt 1 after its lease passed")
	if _, err := e.s.ExpireLeases(ctx); err != nil {
		t.Fatal(err)
	}
	refused(first, r.InstallID+".apply", "attempt 1, lost")

	// The retry gets credentials of its own; the lost attempt's stay refused.
	if _, err := e.s.RetryJob(ctx, first.job.ID, 1); err != nil {
		t.Fatal(err)
	}
	second := e.claimCreds(r)
	if second.job.ID != first.job.ID || second.job.Attempt != 2 {
		t.Fatalf("claimed %s attempt %d, want %s attempt 2", second.job.ID, second.job.Attempt, first.job.ID)
	}
	if second.state == first.state || second.registry.Password == first.registry.Password {
		t.Fatal("the retried attempt was given the lost attempt's credentials")
	}
	works(second, "attempt 2 while it runs")
	refused(first, r.InstallID+".apply", "attempt 1 while attempt 2 runs")

	// Completion ends attempt 2's.
	e.post(ctx, r.Token, jobPath(protocol.PathJobComplete, second.job.ID), protocol.CompleteRequest{Attempt: 2, Status: protocol.StatusSucceeded}).
		decode(t, http.StatusOK, &map[string]string{})
	refused(second, r.InstallID+".apply", "attempt 2, completed")

	// A cancelled attempt's end when the runner reports the cancel.
	queue("plan")
	third := e.claimCreds(r)
	if _, err := e.s.RequestCancel(ctx, third.job.ID, "test"); err != nil {
		t.Fatal(err)
	}
	e.post(ctx, r.Token, jobPath(protocol.PathJobComplete, third.job.ID), protocol.CompleteRequest{Attempt: 1, Status: protocol.StatusCancelled}).
		decode(t, http.StatusOK, &map[string]string{})
	refused(third, r.InstallID+".plan", "a cancelled attempt")
	if j, err := e.s.GetJobByID(ctx, third.job.ID); err != nil || j.Status != status.JobCancelled {
		t.Fatalf("job %+v %v, want cancelled", j.Status, err)
	}

	// The org's key rotated: a job whose placeholders the new key signed
	// gets working credentials at once (the gateway had the old keys).
	rotated, err := e.s.RotateSigningKey(ctx, e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ = json.Marshal(attemptManifest{
		Backend: protocol.TerraformBackend{Password: attemptcred.State(rotated, e.org.ID)},
		Registry: protocol.RegistryAccess{Address: reg.Addr(), Username: "install/x",
			Password: attemptcred.Registry(rotated, e.org.ID, "install/x", registry.Scope{Repository: repo, Actions: []string{"pull"}})},
	})
	queue("rotated")
	fourth := e.claimCreds(r)
	e.state(http.MethodGet, r.InstallID+".rotated", "", fourth.job.ID, fourth.state, nil).want(t, http.StatusNoContent, "rotated key: state GET")
	if got := registryAnswer(t, reg.Addr(), repo, fourth); got != http.StatusNotFound {
		t.Fatalf("rotated key: registry pull answered %d, want 404 (allowed, no such repository yet)", got)
	}
}
