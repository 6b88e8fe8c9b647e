package e2e

import (
	"bytes"
	"cmp"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// syncGatedApp syncs testdata/gated-app, whose component "gated" waits in
// its apply until the returned file exists (in its destroy, that file
// with ".down").
func (s *stack) syncGatedApp() string {
	s.t.Helper()
	return s.syncAppWithFile("testdata/gated-app", "gated", "GATE_FILE")
}

// syncAppWithFile syncs a copy of the app config in src whose component
// comp names, as placeholder, a file of the test's: the file's path is
// returned (nothing is created there).
func (s *stack) syncAppWithFile(src, comp, placeholder string) string {
	s.t.Helper()
	file := filepath.Join(s.t.TempDir(), strings.ToLower(strings.TrimSuffix(placeholder, "_FILE")))
	dir := s.t.TempDir()
	copyDir(s.t, src, dir)
	cfg := filepath.Join(dir, "components", comp+".toml")
	b, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, bytes.ReplaceAll(b, []byte(placeholder), []byte(file)), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.syncConfig(dir)
	return file
}

// waitAtGate waits until the operation's gated step runs its job and the
// job has logged text (the step waits at its gate), and returns the job.
func (s *stack) waitAtGate(inst, opID, text string) string {
	s.t.Helper()
	var job string
	waitFor(s.t, 3*time.Minute, "the gated step to wait at its gate", func() bool {
		for _, st := range s.getOp(inst, opID, 0).Steps { // none until the workflow has begun
			if st.Name == "gated" {
				job = cmp.Or(st.ApplyJobID, st.PlanJobID)
			}
		}
		return job != "" && s.logsContain(job, text)
	})
	return job
}

// Cancelling an operation through the API: its running job is cancelled
// (the process stopped before its gate opened), nothing after it starts,
// it ends cancelled, the install is free again, and a second cancel is 409.
func TestCancelOperation(t *testing.T) {
	s := newStack(t, stackOptions{})
	gate := s.syncGatedApp()
	inst, _ := s.newInstall("cust-cancel")
	op := s.startOp(inst, "/provision", nil)
	job := s.waitAtGate(inst, op.ID, "waiting for the gate")

	path := "/v1/installs/" + inst + "/operations/" + op.ID + "/cancel"
	var asked operation
	if code := s.do("POST", path, nil, &asked); code != http.StatusAccepted || asked.ID != op.ID {
		t.Fatalf("cancel: %d %+v", code, asked)
	}
	done := s.waitOp(inst, op.ID, 2*time.Minute)
	if done.Status != status.OpCancelled {
		t.Fatalf("operation %s %q, want cancelled: %+v", done.Status, done.Error, done.Steps)
	}
	if g := done.step(t, "gated"); g.Status != status.StepCancelled {
		t.Fatalf("gated step %+v, want cancelled", g)
	}
	if a := done.step(t, "after"); a.Status == status.StepSucceeded {
		t.Fatalf("the step after the cancelled one ran: %+v", a)
	}
	var j struct{ Status status.Job }
	waitFor(t, 30*time.Second, "the gated job to be recorded cancelled", func() bool {
		s.do("GET", "/v1/jobs/"+job, nil, &j)
		return j.Status == status.JobCancelled
	})
	if s.logsContain(job, "through the gate") {
		t.Fatal("the cancelled job went on past its gate")
	}

	var e struct{ Message string }
	if code := s.do("POST", path, nil, &e); code != http.StatusConflict || !strings.Contains(e.Message, "already finished (cancelled)") {
		t.Fatalf("a second cancel: %d %+v, want 409", code, e)
	}
	// The install is free: a new provision runs to the end.
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.provisioned(inst, 3*time.Minute)
}
