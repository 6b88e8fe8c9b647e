package e2e

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/runner"
	"github.com/outpost-dev/outpost/runnerrelease"
	"github.com/outpost-dev/outpost/store"
)

// runnerUpdate is the API's view of a runner update.
type runnerUpdate struct {
	ID          string `json:"id"`
	FromVersion string `json:"from_version"`
	Version     string `json:"version"`
	Status      string `json:"status"`
	Reason      string `json:"reason"`
	WorkflowID  string `json:"workflow_id"`
}

// A real runner process (built as v1, trusting testReleaseKey) is updated
// through the API, its binary travelling vendor registry → install
// registry → runner:
//   - without the customer's consent (no --auto-update), an update waits
//     as available (API, CLI) until the customer accepts it on the runner,
//     which then switches to it;
//   - pinned, it is not updated (409, still v1);
//   - a release that is unsigned, signed with another key, or whose signed
//     record the control plane pointed at another binary is refused with
//     the reason, never run, and jobs go on on v1;
//   - to a binary that exits at start, and to one that never reports
//     healthy, the old runner is back within the deadline (it runs jobs as
//     v1 again) and the failed update is visible with the runner's reason;
//   - to a good v2 (the same code, another version), no job is lost: jobs
//     claimed before the hand-over ran on v1, every one claimed after on v2,
//     and the process (PID) is the same, now running v2, v1 kept as .prev.
func TestRunnerSelfUpdate(t *testing.T) {
	dir := t.TempDir()
	v1 := buildRunnerVersion(t, dir, "v1")
	v2 := buildRunnerVersion(t, dir, "v2")
	exits := writeScript(t, dir, "exits", "#!/bin/sh\necho 'bad runner: exiting' >&2\nexit 3\n")
	hangs := writeScript(t, dir, "hangs", "#!/bin/sh\nexec sleep 600\n")

	s := newStack(t, stackOptions{})
	ctx := context.Background()
	s.giveInstallRegistry(ctx)
	vendor := runnerrelease.Registry{Address: s.registry.Addr(), PlainHTTP: true}
	ran := filepath.Join(dir, "evil-ran")
	evil := writeScript(t, dir, "evil", "#!/bin/sh\ntouch "+ran+"\nexec sleep 600\n")
	_, otherKey, _ := ed25519.GenerateKey(nil)
	for _, rel := range []runnerrelease.Release{
		{Version: "v2", Binary: v2, Key: testReleaseKey}, {Version: "bad-exit", Binary: exits, Key: testReleaseKey},
		{Version: "bad-hang", Binary: hangs, Key: testReleaseKey}, {Version: "v2-copy", Binary: v2, Key: testReleaseKey},
		{Version: "evil-unsigned", Binary: evil}, {Version: "evil-other-key", Binary: evil, Key: otherKey},
	} {
		if _, err := runnerrelease.Publish(ctx, s.store, vendor, rel); err != nil {
			t.Fatalf("publish %s: %v", rel.Version, err)
		}
	}

	runDir := t.TempDir()
	bin := filepath.Join(runDir, "outpost-runner")
	copyFile(t, v1, bin)
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	workDir := t.TempDir()
	cmd := exec.Command(bin, "run", "--gateway-url", s.gateway, "--work-dir", workDir, "--cancel-grace", "2s")
	cmd.Env = []string{runnerPath(), "OUTPOST_TOKEN=" + s.runTok}
	p := startProcess(t, cmd)
	s.waitRunnerVersion("v1")

	t.Run("not-accepted", func(t *testing.T) { s.updateWaitsForTheCustomer(t, p, bin, workDir) })
	// The customer opts in to automatic updates (from v1 again).
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	copyFile(t, v1, bin)
	_ = os.Remove(bin + runner.PrevSuffix)
	cmd = exec.Command(bin, "run", "--gateway-url", s.gateway, "--work-dir", t.TempDir(), "--cancel-grace", "2s")
	cmd.Env = []string{runnerPath(), "OUTPOST_TOKEN=" + s.runTok, "OUTPOST_AUTO_UPDATE=true"}
	p = startProcess(t, cmd)
	s.waitRunnerVersion("v1")

	// A compromised control plane points the signed version v2-copy at the
	// evil binary's artifact: the record changes, the signature cannot.
	evilRow, err := s.store.GetRunnerVersion(ctx, "evil-unsigned")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.DB().Model(&store.RunnerVersion{}).Where("version = ?", "v2-copy").
		Updates(&store.RunnerVersion{Digest: evilRow.Digest, BinaryDigest: evilRow.BinaryDigest}).Error; err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ version, reason string }{
		{"evil-unsigned", "refused: runner evil-unsigned is not signed"},
		{"evil-other-key", "refused: the signature of runner evil-other-key (binary " + evilRow.BinaryDigest + ", image none) does not verify with the release keys this runner trusts (" + runner.KeyID(testReleaseKey.Public().(ed25519.PublicKey)) + ")"},
		{"v2-copy", "refused: runner v2-copy is not signed"},
	} {
		t.Run("tampered-"+tc.version, func(t *testing.T) {
			u := s.waitRunnerUpdate(s.startRunnerUpdate(tc.version, 15).ID, 2*time.Minute)
			if u.Status != string(status.RunnerUpdateFailed) || !strings.Contains(u.Reason, tc.reason) {
				t.Fatalf("update to %s: %s %q, want failed with %q", tc.version, u.Status, u.Reason, tc.reason)
			}
			if _, err := os.Stat(ran); !os.IsNotExist(err) {
				t.Errorf("the refused binary ran (%s exists)", ran)
			}
			if _, err := os.Stat(bin + ".new"); !os.IsNotExist(err) {
				t.Errorf("the refused binary is still staged: %v", err)
			}
			if v := s.waitJobVersion(s.enqueueNoop(t, "after-"+tc.version, 0)); v != "v1" {
				t.Errorf("a job after the refused update ran on %q, want v1", v)
			}
			if !sameFile(t, bin, v1) {
				t.Errorf("the runner binary %s is no longer v1", bin)
			}
		})
	}

	t.Run("pinned", func(t *testing.T) {
		s.do("PUT", "/v1/installs/"+s.install.ID+"/runner-policy", map[string]any{"pinned": true}, nil)
		var e protocol.Error
		if code := s.do("POST", "/v1/installs/"+s.install.ID+"/runner-updates", map[string]any{"version": "v2"}, &e); code != http.StatusConflict {
			t.Fatalf("update of a pinned install: %d %+v, want 409", code, e)
		}
		if !strings.Contains(e.Message, "pinned") {
			t.Errorf("message %q does not say the install is pinned", e.Message)
		}
		s.do("PUT", "/v1/installs/"+s.install.ID+"/runner-policy", map[string]any{"pinned": false}, nil)
		if v := s.runnerVersionNow(); v != "v1" {
			t.Errorf("pinned runner runs %q, want v1", v)
		}
	})

	for _, tc := range []struct{ version, reason string }{
		{"bad-exit", "exited before it was healthy: exit status 3"},
		{"bad-hang", "did not report healthy within 15s"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			start := time.Now()
			u := s.startRunnerUpdate(tc.version, 15)
			u = s.waitRunnerUpdate(u.ID, 2*time.Minute)
			if u.Status != string(status.RunnerUpdateFailed) || !strings.Contains(u.Reason, tc.reason) {
				t.Fatalf("update to %s: %s %q, want failed with %q", tc.version, u.Status, u.Reason, tc.reason)
			}
			// Back within the deadline (plus the kill grace and a job's round trip).
			took := time.Since(start)
			if took > 15*time.Second+20*time.Second {
				t.Errorf("the failed update took %s", took)
			}
			t.Logf("update to %s failed after %s: %s", tc.version, took.Round(100*time.Millisecond), u.Reason)
			if _, err := os.Stat(bin + ".new"); !os.IsNotExist(err) {
				t.Errorf("the staged binary is still there: %v", err)
			}
			job := s.enqueueNoop(t, "after-"+tc.version, 0)
			if v := s.waitJobVersion(job); v != "v1" {
				t.Errorf("a job after the rollback ran on %q, want v1", v)
			}
			var r struct{ Updates []runnerUpdate }
			s.do("GET", "/v1/runners/"+s.runnerID, nil, &r)
			if len(r.Updates) == 0 || r.Updates[0].ID != u.ID || r.Updates[0].Status != "failed" {
				t.Errorf("the runner view does not show the failed update first: %+v", r.Updates)
			}
		})
	}

	// A job that outlasts the drain timeout: the update is given up and
	// says why, the job goes on under v1, and nothing was handed over.
	t.Run("drain-timeout", func(t *testing.T) {
		long := s.enqueueNoop(t, "long", 10*60_000) // runs until the test cancels it
		waitFor(t, time.Minute, "the long job to run", func() bool {
			var j jobDetail
			s.do("GET", "/v1/jobs/"+long, nil, &j)
			return j.Status == status.JobRunning
		})
		var u runnerUpdate
		if code := s.do("POST", "/v1/installs/"+s.install.ID+"/runner-updates",
			map[string]any{"version": "v2", "health_deadline_seconds": 60, "drain_timeout_seconds": 5}, &u); code != http.StatusAccepted {
			t.Fatalf("POST runner-updates: %d %+v", code, u)
		}
		u = s.waitRunnerUpdate(u.ID, 2*time.Minute)
		if u.Status != string(status.RunnerUpdateFailed) || !strings.Contains(u.Reason, "did not finish within the drain timeout (5s)") {
			t.Fatalf("update with a job running past the drain timeout: %s %q", u.Status, u.Reason)
		}
		var j jobDetail
		if s.do("GET", "/v1/jobs/"+long, nil, &j); j.Status != status.JobRunning || len(j.Attempts) != 1 || j.Attempts[0].RunnerVersion != "v1" {
			t.Errorf("the long job after the given-up update: %s after %d attempts (%+v), want still running its first attempt on v1",
				j.Status, len(j.Attempts), j.Attempts)
		}
		if _, err := s.store.RequestCancel(context.Background(), long, "test"); err != nil {
			t.Fatal(err)
		}
		if j := s.waitJob(long); j.Status != status.JobCancelled {
			t.Errorf("the long job after its cancel: %s", j.Status)
		}
		if _, err := os.Stat(bin + ".new"); !os.IsNotExist(err) {
			t.Errorf("the staged binary is still there: %v", err)
		}
		if v := s.runnerVersionNow(); v != "v1" {
			t.Errorf("after the given-up update the runner runs %q, want v1", v)
		}
	})

	t.Run("good", func(t *testing.T) {
		pid := p.cmd.Process.Pid
		var jobs []string
		for i := range 4 {
			jobs = append(jobs, s.enqueueNoop(t, fmt.Sprintf("before-%d", i), 1500))
		}
		earlier := s.latestJobOfType(protocol.JobTypeRunnerUpdate) // the failed updates'
		u := s.startRunnerUpdate("v2", 60)
		for i := range 4 {
			jobs = append(jobs, s.enqueueNoop(t, fmt.Sprintf("during-%d", i), 200))
			time.Sleep(300 * time.Millisecond)
		}
		// Queued while the runner stages, drains and hands over: the new runner's.
		waitFor(t, time.Minute, "the staging job", func() bool { return s.latestJobOfType(protocol.JobTypeRunnerUpdate) != earlier })
		for i := range 6 {
			jobs = append(jobs, s.enqueueNoop(t, fmt.Sprintf("handover-%d", i), 200))
		}
		u = s.waitRunnerUpdate(u.ID, 3*time.Minute)
		if u.Status != string(status.RunnerUpdateSucceeded) || u.FromVersion != "v1" {
			t.Fatalf("update to v2: %+v", u)
		}
		s.replay(u.WorkflowID) // deterministic on today's code (and recorded with OUTPOST_RECORD_HISTORIES)
		for i := range 3 {
			jobs = append(jobs, s.enqueueNoop(t, fmt.Sprintf("after-%d", i), 0))
		}
		handover := s.stageFinishedAt(t)
		var before, after int
		for _, id := range jobs {
			j := s.waitJob(id)
			if j.Status != status.JobSucceeded || len(j.Attempts) != 1 {
				t.Errorf("job %s: %s after %d attempts, want succeeded at once", id, j.Status, len(j.Attempts))
				continue
			}
			a := j.Attempts[0]
			want := "v2"
			if a.ClaimedAt.Before(handover) {
				want, before = "v1", before+1
			} else {
				after++
			}
			if a.RunnerVersion != want {
				t.Errorf("job %s claimed at %s (hand-over %s) ran on %q, want %s", id, a.ClaimedAt, handover, a.RunnerVersion, want)
			}
		}
		t.Logf("%d jobs: %d claimed before the hand-over (v1), %d after (v2)", len(jobs), before, after)
		if before == 0 || after == 0 {
			t.Errorf("%d jobs claimed before the hand-over and %d after: want some of each", before, after)
		}
		select {
		case <-p.done:
			t.Fatalf("the runner process exited:\n%s", p.out.String())
		default:
		}
		if p.cmd.Process.Pid != pid || s.runnerVersionNow() != "v2" {
			t.Errorf("after the update: pid %d (was %d), version %q", p.cmd.Process.Pid, pid, s.runnerVersionNow())
		}
		if sameFile(t, bin, v2) != true || sameFile(t, bin+".prev", v1) != true {
			t.Errorf("want %s to be v2 and %s.prev v1", bin, bin)
		}
	})
}

// testReleaseKey signs the runner releases the tests publish; the runners
// they build trust its public half (buildRunnerVersion).
var testReleaseKey = func() ed25519.PrivateKey {
	_, k, err := ed25519.GenerateKey(nil)
	if err != nil {
		panic(err)
	}
	return k
}()

// buildRunnerVersion builds outpost-runner as version, trusting
// testReleaseKey's signatures.
func buildRunnerVersion(t *testing.T, dir, version string) string {
	t.Helper()
	out := filepath.Join(dir, "outpost-runner-"+version)
	build := exec.Command("go", "build", "-o", out, "-ldflags", "-X github.com/outpost-dev/outpost/runner.Version="+version+
		" -X github.com/outpost-dev/outpost/runner.ReleaseKeys="+runnerrelease.PublicKey(testReleaseKey), "../cmd/outpost-runner")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build runner %s: %v\n%s", version, err, b)
	}
	return out
}

func writeScript(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// giveInstallRegistry starts a registry for the install and records it as
// its sandbox's output, as a provisioned sandbox would.
func (s *stack) giveInstallRegistry(ctx context.Context) *registry.Server {
	s.t.Helper()
	reg, err := registry.Start(ctx, registry.Config{})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { reg.Close() })
	s.setInstallRegistry(ctx, reg.Addr())
	return reg
}

// setInstallRegistry records addr as the install's registry (its sandbox's outputs).
func (s *stack) setInstallRegistry(ctx context.Context, addr string) {
	s.t.Helper()
	out, _ := json.Marshal(protocol.TerraformApplyOutputs{Outputs: map[string]protocol.TerraformOutput{
		activities.OutputRegistryAddress:   {Value: json.RawMessage(fmt.Sprintf("%q", addr))},
		activities.OutputRegistryPlainHTTP: {Value: json.RawMessage("true")},
	}})
	if err := s.store.SaveOutputs(ctx, s.install.ID, status.SandboxStep, string(out)); err != nil {
		s.t.Fatal(err)
	}
}

func (s *stack) runnerVersionNow() string {
	var r struct{ Version string }
	s.do("GET", "/v1/runners/"+s.runnerID, nil, &r)
	return r.Version
}

func (s *stack) waitRunnerVersion(v string) {
	s.t.Helper()
	waitFor(s.t, time.Minute, "the runner reporting "+v, func() bool { return s.runnerVersionNow() == v })
}

func (s *stack) startRunnerUpdate(version string, deadline int) runnerUpdate {
	s.t.Helper()
	var u runnerUpdate
	if code := s.do("POST", "/v1/installs/"+s.install.ID+"/runner-updates",
		map[string]any{"version": version, "health_deadline_seconds": deadline}, &u); code != http.StatusAccepted {
		s.t.Fatalf("POST runner-updates %s: %d %+v", version, code, u)
	}
	return u
}

func (s *stack) waitRunnerUpdate(id string, within time.Duration) runnerUpdate {
	s.t.Helper()
	var u runnerUpdate
	waitFor(s.t, within, "runner update "+id+" to end", func() bool {
		s.do("GET", "/v1/installs/"+s.install.ID+"/runner-updates/"+id, nil, &u)
		return u.Status != "" && u.Status != string(status.RunnerUpdateRunning)
	})
	return u
}

// enqueueNoop queues a noop job on the install's runner, as a workflow would.
func (s *stack) enqueueNoop(t *testing.T, name string, sleepMS int64) string {
	t.Helper()
	m, _ := json.Marshal(protocol.NoopManifest{SleepMS: sleepMS, Lines: []string{name}})
	j, _, err := s.store.EnqueueJob(context.Background(), store.JobSpec{Key: t.Name() + "/" + name, OrgID: s.orgID,
		RunnerID: s.runnerID, InstallID: &s.install.ID, Type: protocol.JobTypeNoop, Manifest: m, TimeoutMS: sleepMS + 60_000})
	if err != nil {
		t.Fatal(err)
	}
	return j.ID
}

type jobDetail struct {
	Status     status.Job `json:"status"`
	FinishedAt *time.Time `json:"finished_at"`
	Attempts   []struct {
		RunnerVersion string    `json:"runner_version"`
		ClaimedAt     time.Time `json:"claimed_at"`
	} `json:"attempts"`
}

func (s *stack) waitJob(id string) jobDetail {
	s.t.Helper()
	var j jobDetail
	waitFor(s.t, 2*time.Minute, "job "+id, func() bool {
		s.do("GET", "/v1/jobs/"+id, nil, &j)
		return status.JobTerminal(j.Status)
	})
	return j
}

func (s *stack) waitJobVersion(id string) string {
	j := s.waitJob(id)
	if len(j.Attempts) == 0 {
		return ""
	}
	return j.Attempts[len(j.Attempts)-1].RunnerVersion
}

// latestJobOfType is the install's newest job of type typ ("" when none).
func (s *stack) latestJobOfType(typ string) string {
	var list struct {
		Jobs []struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"jobs"`
	}
	s.do("GET", "/v1/installs/"+s.install.ID+"/jobs?limit=200", nil, &list)
	for _, j := range list.Jobs { // newest first
		if j.Type == typ {
			return j.ID
		}
	}
	return ""
}

// stageFinishedAt is when the latest update's staging job finished: the
// runner stopped claiming just before.
func (s *stack) stageFinishedAt(t *testing.T) time.Time {
	t.Helper()
	if id := s.latestJobOfType(protocol.JobTypeRunnerUpdate); id != "" {
		if d := s.waitJob(id); d.FinishedAt != nil {
			return *d.FinishedAt
		}
	}
	t.Fatal("no finished runner_update job")
	return time.Time{}
}
