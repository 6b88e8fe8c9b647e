package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/runner"
)

// updateWaitsForTheCustomer: a runner (p, the binary bin, v1) run without
// --auto-update holds a signed update to v2 as available: the API shows it
// waiting for the customer, jobs go on on v1; `outpost-runner
// update accept` with another version is refused; with v2 the running
// runner switches (same process), and the update is succeeded.
func (s *stack) updateWaitsForTheCustomer(t *testing.T, p *process, bin, workDir string) {
	u := s.waitRunnerUpdate(s.startRunnerUpdate("v2", 15).ID, 2*time.Minute)
	if want := "runner v2 is available, but the customer has not accepted it"; u.Status != string(status.RunnerUpdateAvailable) || !strings.Contains(u.Reason, want) {
		t.Fatalf("update without consent: %s %q, want available with %q", u.Status, u.Reason, want)
	}
	if v := s.waitJobVersion(s.enqueueNoop(t, "after-not-accepted", 0)); v != "v1" {
		t.Errorf("a job after the held update ran on %q, want v1", v)
	}
	var r struct {
		UpdateAvailable *runnerUpdate `json:"update_available"`
	}
	if s.do("GET", "/v1/runners/"+s.runnerID, nil, &r); r.UpdateAvailable == nil || r.UpdateAvailable.ID != u.ID {
		t.Errorf("the runner view's update_available: %+v, want update %s", r.UpdateAvailable, u.ID)
	}
	if _, err := os.Stat(bin + runner.HeldSuffix); err != nil {
		t.Errorf("the held binary: %v", err)
	}

	customer := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := exec.Command(bin, append(args, "--work-dir", workDir)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	if out, err := customer("update"); err != nil || !strings.Contains(out, "runner v2 is available since") {
		t.Errorf("outpost-runner update: %v\n%s", err, out)
	}
	if out, err := customer("update", "accept", "v3"); err == nil || !strings.Contains(out, "runner v3 is not the update waiting for the customer: v2 is") {
		t.Errorf("outpost-runner update accept v3: %v\n%s, want refused naming v2", err, out)
	}
	if v := s.runnerVersionNow(); v != "v1" {
		t.Errorf("before the customer accepted, the runner runs %q", v)
	}
	pid := p.cmd.Process.Pid
	if out, err := customer("update", "accept", "v2"); err != nil {
		t.Fatalf("outpost-runner update accept v2: %v\n%s", err, out)
	}
	s.waitRunnerVersion("v2")
	waitFor(t, time.Minute, "the accepted update to be succeeded", func() bool {
		s.do("GET", "/v1/installs/"+s.install.ID+"/runner-updates/"+u.ID, nil, &u)
		return u.Status == string(status.RunnerUpdateSucceeded)
	})
	if !strings.Contains(u.Reason, "the customer accepted runner v2") {
		t.Errorf("the accepted update's reason: %q", u.Reason)
	}
	if v := s.waitJobVersion(s.enqueueNoop(t, "after-accepted", 0)); v != "v2" {
		t.Errorf("a job after the customer accepted ran on %q, want v2", v)
	}
	select {
	case <-p.done:
		t.Errorf("the runner process %d exited: it should have become v2\n%s", pid, p.out.String())
	default:
	}
	r.UpdateAvailable = nil // the answer omits the field when none is available: decode into a clean value
	if s.do("GET", "/v1/runners/"+s.runnerID, nil, &r); r.UpdateAvailable != nil {
		t.Errorf("after accepting, the runner view still shows an update available: %+v", r.UpdateAvailable)
	}
	if _, err := os.Stat(bin + runner.HeldSuffix); !os.IsNotExist(err) {
		t.Errorf("the held binary is still there: %v", err)
	}
}
