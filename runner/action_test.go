package runner

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/customer"
)

func actionJob(id, action, script string, timeoutMS int64) protocol.Job {
	m, _ := json.Marshal(protocol.ActionManifest{Action: action, Step: "one", Script: script,
		SensitiveOutputs: []string{"token"}, TimeoutMS: timeoutMS})
	return protocol.Job{ID: id, Type: protocol.JobTypeAction, Attempt: 1, Manifest: m}
}

// A step's own timeout stops it as any job's: SIGTERM to the job's
// processes, SIGKILL after the grace for a script that ignores it.
func TestActionStepTimeoutKillsAScriptThatIgnoresSIGTERM(t *testing.T) {
	g := newTestGateway(t)
	pid := pidFile(t)
	job := actionJob("job-action-timeout", "slow", `trap 'echo got TERM' TERM
echo $$ >`+pid+`
echo ready
while :; do sleep 0.1; done
`, 500)
	job.TimeoutMS = 60_000 // the job's own is longer: the step's holds
	supervise(t, g, job, func(s *supervisor) { s.grace = 300 * time.Millisecond })

	done := g.completion(job.ID)
	if done.Status != protocol.StatusFailed || done.Error != "timed out after 500ms (killed: still running 300ms after SIGTERM)" {
		t.Errorf("completion: status %q error %q, want failed, timed out, killed", done.Status, done.Error)
	}
	if !g.logged(job.ID, protocol.StreamStdout, "got TERM") || !g.logged(job.ID, protocol.StreamSystem, "sending SIGKILL") {
		t.Errorf("log %q: want the script to see SIGTERM, then the runner's SIGKILL", g.lines(job.ID, protocol.StreamSystem))
	}
	assertGone(t, pid)
}

// A runner claims an action job from the gateway and runs it end to end:
// it reports the capability and its allow-list, delivers the step's log
// (its sensitive output masked) and outputs, and refuses an action its
// customer did not allow, running nothing.
func TestRunnerRunsTheActionsItsCustomerAllows(t *testing.T) {
	g := newTestGateway(t)
	policy := customer.Policy{Actions: []string{"migrate", "check"}}
	stop, _, _ := startRunner(t, g, Config{Token: g.runnerToken, Policy: policy})
	defer stop()

	ran := runOneJob(g, actionJob("job-migrate", "migrate", `echo "token=tok-9876543" >"$OUTPOST_OUTPUTS"
echo "version=7" >>"$OUTPOST_OUTPUTS"
echo "migrated with tok-9876543"
`, 10_000))
	var out protocol.ActionOutputs
	if err := json.Unmarshal(ran.Outputs, &out); err != nil || ran.Status != protocol.StatusSucceeded ||
		out.Outputs["version"] != "7" || out.Outputs["token"] != "tok-9876543" {
		t.Fatalf("completion %+v (outputs %s): want succeeded with both outputs", ran, ran.Outputs)
	}
	if log := strings.Join(g.lines("job-migrate", protocol.StreamStdout), ""); log != "migrated with (sensitive value)\n" {
		t.Errorf("the step's log %q: want the token masked", log)
	}

	pidDir := t.TempDir()
	refused := runOneJob(g, actionJob("job-drop", "drop_tables", "touch "+pidDir+"/ran", 10_000))
	want := `the customer's runner does not allow action "drop_tables" (allowed: check, migrate)`
	if refused.Status != protocol.StatusFailed || refused.Error != want {
		t.Errorf("completion %+v: want failed with %q", refused, want)
	}
	if entries, _ := filepath.Glob(pidDir + "/*"); len(entries) != 0 {
		t.Errorf("the refused action ran: %v", entries)
	}

	g.mu.Lock()
	hb := g.heartbeat
	g.mu.Unlock()
	if !slices.Contains(hb.Capabilities, protocol.JobTypeAction) || hb.Policy == nil ||
		!slices.Equal(hb.Policy.Actions, []string{"check", "migrate"}) || hb.Policy.AllowsAction("migrate") != nil {
		t.Errorf("heartbeat capabilities %v, policy %+v: want action, and the allow-list", hb.Capabilities, hb.Policy)
	}
}
