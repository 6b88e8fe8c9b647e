package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// API call → workflow → job → runner process → exit code and output via the
// API and in the workflow's Temporal history.
func TestDebugCommandEndToEnd(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.startRunner("RUNNER_SECRET=do-not-leak")
	c := s.runCommand("sh", "-c", `echo "hello from $$"; echo oops >&2; env | sort; exit 3`)
	if want := contract.InstallCommandWorkflowID(s.install.ID, c.ID); c.WorkflowID != want {
		t.Fatalf("workflow ID = %q, want %q", c.WorkflowID, want)
	}
	done := s.waitCommand(c.ID, time.Minute)
	if done.Status != status.JobFailed || done.ExitCode == nil || *done.ExitCode != 3 {
		t.Fatalf("command = %+v, want failed with exit code 3", done)
	}
	if !strings.Contains(done.Output, "hello from") || !strings.Contains(done.Output, "oops") {
		t.Fatalf("output %q lacks the command's stdout and stderr", done.Output)
	}
	// The job ran in a clean environment: nothing of the runner's leaks in.
	for _, leak := range []string{"do-not-leak", "OUTPOST_TOKEN", s.runTok} {
		if strings.Contains(done.Output, leak) {
			t.Fatalf("the job's environment contains %q:\n%s", leak, done.Output)
		}
	}
	// Logs through the API: both streams, seqs 1..n in order.
	logs := s.logs(done.JobID)
	var text strings.Builder
	streams := map[string]bool{}
	for i, l := range logs {
		if l.Seq != int64(i+1) || l.Attempt != 1 {
			t.Fatalf("log chunk %d has attempt %d seq %d", i, l.Attempt, l.Seq)
		}
		streams[l.Stream] = true
		text.WriteString(l.Data)
	}
	if !streams["stdout"] || !streams["stderr"] || !strings.Contains(text.String(), "oops") {
		t.Fatalf("logs = %+v", logs)
	}
	// The workflow's result in Temporal history carries exit code and output.
	var res contract.InstallCommandResult
	if err := s.client.GetWorkflow(context.Background(), c.WorkflowID, "").Get(context.Background(), &res); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if res.ExitCode == nil || *res.ExitCode != 3 || !strings.Contains(res.Output, "hello from") || res.JobID != done.JobID {
		t.Fatalf("workflow result = %+v", res)
	}
	desc, err := s.client.DescribeWorkflowExecution(context.Background(), c.WorkflowID, "")
	if err != nil || desc.WorkflowExecutionInfo.Status != enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("describe %s: %v %v", c.WorkflowID, err, desc)
	}
}

// A runner killed with SIGKILL mid-job: the lease expires, the attempt is
// marked lost, a restarted runner runs the retry, and the two attempts never
// run at the same time.
func TestRunnerKilledMidJobIsRetried(t *testing.T) {
	s := newStack(t, stackOptions{})
	trace := filepath.Join(t.TempDir(), "trace")
	first := s.startRunner()
	// Each attempt appends "start PID", then "tick PID" every 100ms, then "end PID".
	script := fmt.Sprintf(`echo "start $$" >> %[1]s; i=0; while [ $i -lt 30 ]; do echo "tick $$" >> %[1]s; sleep 0.1; i=$((i+1)); done; echo "end $$" >> %[1]s; echo finished`, trace)
	c := s.runCommand("sh", "-c", script)
	jobID := s.commandJobID(c.ID)
	waitFor(t, 30*time.Second, "the first attempt to start", func() bool {
		b, _ := os.ReadFile(trace)
		return strings.Count(string(b), "tick") >= 3
	})
	first.kill()
	s.startRunner()
	done := s.waitCommand(c.ID, 2*time.Minute)
	if done.Status != status.JobSucceeded || !strings.Contains(done.Output, "finished") {
		t.Fatalf("command after retry = %+v", done)
	}
	var job struct {
		Attempt  int `json:"attempt"`
		Attempts []struct {
			Attempt int        `json:"attempt"`
			Status  status.Job `json:"status"`
		} `json:"attempts"`
	}
	if code := s.do("GET", "/v1/jobs/"+jobID, nil, &job); code != http.StatusOK {
		t.Fatalf("GET job: %d", code)
	}
	if len(job.Attempts) != 2 || job.Attempts[0].Status != status.JobLost || job.Attempts[1].Status != status.JobSucceeded {
		t.Fatalf("attempts = %+v, want [lost, succeeded]", job.Attempts)
	}
	// No line of the first attempt after the second started.
	raw, _ := os.ReadFile(trace)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var pids []string
	secondStarted := false
	for _, l := range lines {
		f := strings.Fields(l)
		if f[0] == "start" {
			pids = append(pids, f[1])
			secondStarted = len(pids) == 2
			continue
		}
		if secondStarted && f[1] == pids[0] {
			t.Fatalf("attempt 1 (pid %s) still ran after attempt 2 started:\n%s", pids[0], raw)
		}
	}
	if len(pids) != 2 || !strings.Contains(string(raw), "end "+pids[1]) || strings.Contains(string(raw), "end "+pids[0]) {
		t.Fatalf("want two attempts, only the second finishing:\n%s", raw)
	}
}

// The worker stopped and restarted while the workflow awaits its job: the
// workflow completes and no second job is enqueued.
func TestWorkerRestartMidAwait(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.startRunner()
	c := s.runCommand("sh", "-c", "sleep 3; echo survived")
	jobID := s.commandJobID(c.ID)
	waitFor(t, 30*time.Second, "the job to run", func() bool {
		j, err := s.store.GetJobByID(context.Background(), jobID)
		return err == nil && j.Status == status.JobRunning
	})
	s.worker.Stop()
	time.Sleep(time.Second)
	s.startWorker()
	done := s.waitCommand(c.ID, 2*time.Minute)
	if done.Status != status.JobSucceeded || !strings.Contains(done.Output, "survived") || done.JobID != jobID {
		t.Fatalf("command = %+v (job %s)", done, jobID)
	}
	var list struct {
		Jobs []struct {
			ID string `json:"id"`
		} `json:"jobs"`
	}
	s.do("GET", "/v1/installs/"+s.install.ID+"/jobs", nil, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].ID != jobID {
		t.Fatalf("install has jobs %+v, want exactly job %s", list.Jobs, jobID)
	}
}

// The gateway unreachable for a while mid-job: the job completes and every
// log line arrives exactly once, in order.
func TestGatewayOutageMidJob(t *testing.T) {
	s := newStack(t, stackOptions{intervals: protocol.Intervals{ClaimWaitMS: 2000, JobHeartbeatMS: 500, LeaseMS: 10000, RunnerHeartbeatMS: 2000}})
	proxy := newFaultProxy(t, strings.TrimPrefix(s.gw.URL, "http://"))
	s.gateway = "http://" + proxy.addr
	s.startRunner()
	const n = 60
	c := s.runCommand("sh", "-c", fmt.Sprintf(`i=1; while [ $i -le %d ]; do echo "line $i"; sleep 0.05; i=$((i+1)); done`, n))
	jobID := s.commandJobID(c.ID)
	waitFor(t, 30*time.Second, "the first lines", func() bool { return s.logsContain(jobID, "line 3\n") })
	proxy.down()
	time.Sleep(3 * time.Second) // the job finishes while the gateway is away
	proxy.up()
	done := s.waitCommand(c.ID, time.Minute)
	if done.Status != status.JobSucceeded {
		t.Fatalf("command = %+v", done)
	}
	var got []string
	for _, l := range s.logs(jobID) {
		if l.Stream == protocol.StreamStdout {
			got = append(got, strings.Split(strings.TrimSuffix(l.Data, "\n"), "\n")...)
		}
	}
	if len(got) != n {
		t.Fatalf("got %d stdout lines, want %d: %q", len(got), n, got)
	}
	for i, l := range got {
		if l != "line "+strconv.Itoa(i+1) {
			t.Fatalf("line %d = %q, want %q (lost, duplicated or out of order)", i+1, l, "line "+strconv.Itoa(i+1))
		}
	}
}

// A cancelled workflow: the job's process gets SIGTERM within a second.
func TestCancelReachesTheJobProcess(t *testing.T) {
	s := newStack(t, stackOptions{intervals: protocol.Intervals{ClaimWaitMS: 2000, JobHeartbeatMS: 5000, LeaseMS: 20000, RunnerHeartbeatMS: 2000}})
	s.startRunner()
	c := s.runCommand("sh", "-c", `trap 'echo "got TERM"; exit 143' TERM; echo ready; while true; do sleep 0.05; done`)
	jobID := s.commandJobID(c.ID)
	waitFor(t, 30*time.Second, "the command to be ready", func() bool { return s.logsContain(jobID, "ready") })
	cancelAt := time.Now()
	if code := s.do("POST", "/v1/installs/"+s.install.ID+"/commands/"+c.ID+"/cancel", nil, nil); code != http.StatusAccepted {
		t.Fatalf("cancel: %d", code)
	}
	done := s.waitCommand(c.ID, time.Minute)
	if done.Status != status.JobCancelled {
		t.Fatalf("command = %+v, want cancelled", done)
	}
	// The command ends when the workflow does; the job when the runner
	// reports the process's end, a moment later, once its last log lines
	// are delivered: read them after that.
	waitFor(t, 10*time.Second, "the job to be recorded cancelled", func() bool {
		j, err := s.store.GetJobByID(context.Background(), jobID)
		return err == nil && j.Status == status.JobCancelled
	})
	var termAt time.Time
	for _, l := range s.logs(jobID) {
		if strings.Contains(l.Data, "got TERM") {
			termAt = l.Time
		}
	}
	if termAt.IsZero() {
		t.Fatalf("the job never logged receiving SIGTERM")
	}
	// The held heartbeat (5s here) must not delay it: the gateway answers at once.
	if lag := termAt.Sub(cancelAt); lag > time.Second {
		t.Fatalf("SIGTERM reached the job %s after the cancel request, want under a second", lag)
	}
}
