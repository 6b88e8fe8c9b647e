package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// customerView is what the API shows of a runner's customer side.
type customerView struct {
	CustomerPolicy *struct {
		DebugCommands bool   `json:"debug_commands"`
		Destroy       string `json:"destroy"`
		Digest        string `json:"digest"`
	} `json:"customer_policy"`
	PausedSince *time.Time `json:"paused_since"`
	Consents    []struct {
		Kind string `json:"kind"`
	} `json:"consents"`
}

// runnerOf waits until the install's runner reported its policy and cond
// holds of what the API shows.
func (s *stack) runnerOf(installID, what string, cond func(customerView) bool) customerView {
	s.t.Helper()
	var got customerView
	waitFor(s.t, time.Minute, what, func() bool {
		var list struct {
			Runners []struct {
				ID        string  `json:"id"`
				InstallID *string `json:"install_id"`
			}
		}
		s.do("GET", "/v1/runners", nil, &list)
		for _, r := range list.Runners {
			if r.InstallID != nil && *r.InstallID == installID {
				got = customerView{}
				s.do("GET", "/v1/runners/"+r.ID, nil, &got)
				return got.CustomerPolicy != nil && cond(got)
			}
		}
		return false
	})
	return got
}

// customerCLI runs `outpost-runner <args>` on the runner's state, as the customer would.
func customerCLI(t *testing.T, workDir string, args ...string) string {
	t.Helper()
	out, err := exec.Command(runnerBin, append(args, "--work-dir", workDir)...).CombinedOutput()
	if err != nil {
		t.Fatalf("outpost-runner %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runnerHistory reads the runner's history as JSON lines.
func runnerHistory(t *testing.T, workDir string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(customerCLI(t, workDir, "history", "-o", "json", "--since", "1h")), "\n") {
		if line == "" {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("history line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

// A runner whose customer did not allow debug commands: the API refuses one
// (409, the runner's reason) rather than queueing it; a command job forged
// into the database is refused by the runner itself, runs nothing, and the
// customer's history says so. So is an action its customer did not allow.
func TestDebugCommandRefusedByTheCustomersPolicy(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.runnerWorkDir = t.TempDir()
	s.startRunner("OUTPOST_ALLOW_DEBUG_COMMANDS=false", "OUTPOST_ACTIONS=check")
	r := s.runnerOf(s.install.ID, "the runner's policy", func(customerView) bool { return true })
	if r.CustomerPolicy.DebugCommands || !strings.HasPrefix(r.CustomerPolicy.Digest, "sha256:") {
		t.Fatalf("policy shown %+v: want debug commands off, and a digest", r.CustomerPolicy)
	}
	var refused struct{ Message string }
	code := s.do("POST", "/v1/installs/"+s.install.ID+"/commands", map[string]any{"command": []string{"id"}}, &refused)
	if code != http.StatusConflict || !strings.Contains(refused.Message, "the customer's runner does not allow debug commands") {
		t.Fatalf("POST commands: %d %q; want 409 naming the customer's policy", code, refused.Message)
	}

	marker := filepath.Join(t.TempDir(), "forged-ran")
	command, _ := json.Marshal(protocol.CommandManifest{Args: []string{"touch", marker}})
	action, _ := json.Marshal(protocol.ActionManifest{Action: "migrate", Step: "one", Command: []string{"touch", marker}, TimeoutMS: 60_000})
	for _, forged := range []struct{ typ, key, want string }{
		{protocol.JobTypeCommand, "command/cmd_forged/job", "the customer's runner does not allow debug commands"},
		{protocol.JobTypeAction, "action/migrate/run_forged/one", `the customer's runner does not allow action "migrate" (allowed: check)`},
	} {
		manifest := map[string][]byte{protocol.JobTypeCommand: command, protocol.JobTypeAction: action}[forged.typ]
		j := s.forgeRefusedJob(forged.typ, forged.key, manifest, forged.want)
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("the forged %s job ran", forged.typ)
		}
		h := runnerHistory(t, s.runnerWorkDir)
		if last := h[len(h)-1]; last["job_id"] != j.ID || last["status"] != "refused" || last["type"] != forged.typ {
			t.Fatalf("history %v: want the forged %s job, refused", h, forged.typ)
		}
	}
	if h := runnerHistory(t, s.runnerWorkDir); len(h) != 2 || h[1]["action"] != "migrate" {
		t.Fatalf("history %v: want both forged jobs, the action's named", h)
	}
}

// forgeRefusedJob puts a job into the database as no API call would, and
// waits for the install's runner to fail it with want.
func (s *stack) forgeRefusedJob(typ, key string, manifest []byte, want string) store.Job {
	s.t.Helper()
	ctx := context.Background()
	j, _, err := s.store.EnqueueJob(ctx, store.JobSpec{Key: "install/" + s.install.ID + "/" + key, OrgID: s.orgID,
		RunnerID: s.runnerID, InstallID: &s.install.ID, Type: typ, Manifest: manifest, TimeoutMS: 60_000})
	if err != nil {
		s.t.Fatal(err)
	}
	var job store.Job
	waitFor(s.t, time.Minute, "the forged job to end", func() bool {
		job, err = s.store.GetJobOutcome(ctx, j.ID)
		return err == nil && status.JobTerminal(job.Status)
	})
	if job.Status != status.JobFailed || !strings.Contains(job.Error, want) {
		s.t.Fatalf("forged %s job %s %q: want failed with %q", typ, job.Status, job.Error, want)
	}
	return j
}

// The customer pauses its runner: a provision waits with the reason and
// goes on once resumed; a deprovision needs the customer's consent (409
// until given); the customer's history records every job with its origin.
func TestPauseResumeAndConsentToDeprovision(t *testing.T) {
	s := newStack(t, stackOptions{})
	dir := t.TempDir()
	copyDir(t, "testdata/release-app", dir)
	s.syncConfig(dir)
	s.runnerWorkDir = t.TempDir() // the install's runner's, not the build runner's
	inst, _ := s.newInstallWithRunner("paused", []string{"OUTPOST_DESTROY=consent"})
	s.runnerOf(inst, "the runner's policy", func(customerView) bool { return true })

	if out := customerCLI(t, s.runnerWorkDir, "pause", "--reason", "change freeze"); !strings.Contains(out, "runner paused by the customer since") {
		t.Fatalf("pause said %q", out)
	}
	s.runnerOf(inst, "the pause shown", func(r customerView) bool { return r.PausedSince != nil })
	op := s.startOp(inst, "/provision", nil)
	waitFor(t, time.Minute, "the provision to wait for the paused runner", func() bool {
		var o struct {
			Status        status.Op `json:"status"`
			WaitingReason string    `json:"waiting_reason"`
		}
		s.do("GET", fmt.Sprintf("/v1/installs/%s/operations/%s", inst, op.ID), nil, &o)
		return o.Status == status.OpWaitingForRunner && strings.HasPrefix(o.WaitingReason, "runner paused by the customer since ")
	})
	var jobs struct{ Jobs []struct{ ID string } }
	s.do("GET", "/v1/installs/"+inst+"/jobs", nil, &jobs)
	if len(jobs.Jobs) != 0 {
		t.Fatalf("jobs %+v queued while the runner is paused", jobs.Jobs)
	}
	customerCLI(t, s.runnerWorkDir, "resume")
	if done := s.waitOp(inst, op.ID, 5*time.Minute); done.Status != status.OpSucceeded {
		t.Fatalf("provision after resume: %s %q", done.Status, done.Error)
	}

	var refused struct{ Message string }
	if code := s.do("POST", "/v1/installs/"+inst+"/deprovision", nil, &refused); code != http.StatusConflict ||
		!strings.Contains(refused.Message, "needs the customer's consent for deprovision") {
		t.Fatalf("deprovision without consent: %d %q; want 409 naming the consent", code, refused.Message)
	}
	customerCLI(t, s.runnerWorkDir, "consent", "deprovision", "--for", "10m")
	s.runnerOf(inst, "the consent shown", func(r customerView) bool { return len(r.Consents) == 1 && r.Consents[0].Kind == "deprovision" })
	if done := s.waitOp(inst, s.startOp(inst, "/deprovision", nil).ID, 5*time.Minute); done.Status != status.OpSucceeded {
		t.Fatalf("deprovision with consent: %s %q", done.Status, done.Error)
	}

	kinds := map[string]int{}
	for _, e := range runnerHistory(t, s.runnerWorkDir) {
		kinds[fmt.Sprint(e["operation_kind"])]++
		if e["install_id"] != inst || e["started_by"] == "" || e["started_by"] == nil || e["status"] != protocol.StatusSucceeded {
			t.Fatalf("history entry %v: want the install, who started it, succeeded", e)
		}
	}
	if kinds["provision"] == 0 || kinds["deprovision"] == 0 {
		t.Fatalf("history by operation %v: want the provision's and the deprovision's jobs", kinds)
	}
}

// A job's log stops at the quota, ending with the truncation marker, and
// the job still ends as it would have; logs for the ended attempt are refused.
func TestLogQuotaTruncatesAndEndedAttemptsTakeNoLogs(t *testing.T) {
	const quota = 64 << 10
	s := newStack(t, stackOptions{logQuota: quota})
	s.startRunner()
	c := s.runCommand("sh", "-c", `i=0; while [ $i -lt 5000 ]; do echo "line $i of a long log, padded to be long enough"; i=$((i+1)); done`)
	done := s.waitCommand(c.ID, 2*time.Minute)
	if done.Status != status.JobSucceeded {
		t.Fatalf("command %+v: want it to succeed despite its log", done)
	}
	logs := s.logs(done.JobID)
	var stored int
	for _, l := range logs[:len(logs)-1] {
		stored += len(l.Data)
	}
	last := logs[len(logs)-1]
	if stored > quota || stored < quota/2 || last.Stream != protocol.StreamSystem || !strings.Contains(last.Data, protocol.LogTruncatedMarker) {
		t.Fatalf("stored %d bytes, last chunk %+v: want at most %d bytes, ended by the marker", stored, last, quota)
	}
	body := fmt.Sprintf(`{"attempt":1,"chunks":[{"seq":%d,"stream":"stdout","data":"late\n","time":"2026-01-01T00:00:00Z"}]}`, 1<<30)
	req, _ := http.NewRequest("POST", s.gateway+strings.Replace(protocol.PathJobLogs, "{id}", done.JobID, 1), strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.runTok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("logs for the ended attempt: %d, want 409", resp.StatusCode)
	}
}
