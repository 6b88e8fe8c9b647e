package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
)

var fastRetry = retryPolicy{base: 5 * time.Millisecond, max: 50 * time.Millisecond}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func commandJob(id string, script string) protocol.Job {
	m, _ := json.Marshal(protocol.CommandManifest{Args: []string{"sh", "-c", script}})
	return protocol.Job{ID: id, Type: protocol.JobTypeCommand, Attempt: 1, Manifest: m}
}

// supervise runs job under a supervisor, with the test binary as the job
// process, against g, and returns once the supervisor is done.
func supervise(t *testing.T, g *testGateway, job protocol.Job, configure ...func(*supervisor)) *supervisor {
	t.Helper()
	c := newClient(g.start(), http.DefaultTransport)
	c.setToken(g.runnerToken)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &supervisor{
		job:       job,
		claimedAt: time.Now(),
		gw:        c,
		exe:       exe,
		dir:       filepath.Join(t.TempDir(), "jobs", jobDirName(job)),
		intervals: g.intervals,
		grace:     10 * time.Second,
		retry:     fastRetry,
		log:       testLogger(t),
		prio:      newPriorities(), // as Runner.newSupervisor gives it
	}
	for _, f := range configure {
		f(s)
	}
	done := make(chan struct{})
	go func() {
		s.run(context.Background())
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second): // only a hang guard
		t.Fatalf("the supervisor of %s did not finish", job.ID)
	}
	if _, err := os.Stat(s.dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("job directory %s still there after the job (stat: %v)", s.dir, err)
	}
	return s
}

// onLine makes g run f (with its lock held) once the job logs a line that
// contains text.
func onLine(g *testGateway, text string, f func(jobID string)) {
	g.onLog = func(id string, c protocol.LogChunk) {
		if c.Stream != protocol.StreamSystem && strings.Contains(c.Data, text) {
			f(id)
		}
	}
}

// pidFile is where a test command writes its shell's PID.
func pidFile(t *testing.T) string { return filepath.Join(t.TempDir(), "pid") }

// assertGone fails unless the process whose PID is in path ends. A process
// killed a moment ago may still be tearing down (its pipes are closed before
// it becomes a zombie), so it gets a while; the test only fails on a process
// that is still there long after.
func assertGone(t *testing.T, path string) {
	t.Helper()
	assertPidGone(t, "the job's command", pidIn(t, path))
}

// pidIn is the pid the command wrote to path.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the command did not write its pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// procStat is /proc/PID/stat's fields after the command name (which is in
// parentheses): state, ppid, …; nil once the process is gone.
func procStat(pid int) []string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	return strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
}

// assertPidGone waits up to ten seconds for pid to end.
func assertPidGone(t *testing.T, what string, pid int) {
	t.Helper()
	var state string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		fields := procStat(pid)
		if fields == nil {
			return // gone
		}
		if state = fields[0]; state == "Z" || state == "X" {
			return // ended; waits for init to reap it
		}
	}
	t.Errorf("%s (pid %d) is still running (state %s) after the job ended", what, pid, state)
}

func TestCommandJobDeliversLogsInOrderAndItsResult(t *testing.T) {
	g := newTestGateway(t)
	job := commandJob("job-logs", `for i in 1 2 3 4 5 6 7 8; do echo out$i; echo err$i >&2; done; exit 3`)
	supervise(t, g, job)

	done := g.completion(job.ID)
	if done.Status != protocol.StatusFailed || done.ExitCode == nil || *done.ExitCode != 3 {
		t.Errorf("completion: status %q exit code %v, want failed with 3", done.Status, deref(done.ExitCode))
	}
	if done.Error != "exited with code 3" {
		t.Errorf("completion error %q", done.Error)
	}

	var want, wantErr []string
	for i := 1; i <= 8; i++ {
		want = append(want, "out"+strconv.Itoa(i)+"\n")
		wantErr = append(wantErr, "err"+strconv.Itoa(i)+"\n")
	}
	if got := g.lines(job.ID, protocol.StreamStdout); !slices.Equal(got, want) {
		t.Errorf("stdout chunks %q, want %q", got, want)
	}
	if got := g.lines(job.ID, protocol.StreamStderr); !slices.Equal(got, wantErr) {
		t.Errorf("stderr chunks %q, want %q", got, wantErr)
	}

	g.mu.Lock()
	logs := g.logs[job.ID]
	g.mu.Unlock()
	for i, c := range logs {
		if c.Seq != int64(i+1) {
			t.Fatalf("chunk %d has seq %d", i, c.Seq)
		}
	}
	if done.LastSeq != int64(len(logs)) {
		t.Errorf("last_seq %d, but %d chunks were logged", done.LastSeq, len(logs))
	}
	if first := logs[0]; first.Stream != protocol.StreamSystem || !strings.Contains(first.Data, "starting job job-logs") {
		t.Errorf("first chunk %+v, want the runner's start line", first)
	}
	if last := logs[len(logs)-1]; last.Stream != protocol.StreamSystem || !strings.Contains(last.Data, "job failed (exit code 3)") {
		t.Errorf("last chunk %+v, want the runner's end line", last)
	}

	var out protocol.CommandOutputs
	if err := json.Unmarshal(done.Outputs, &out); err != nil {
		t.Fatalf("outputs %s: %v", done.Outputs, err)
	}
	if out.ExitCode != 3 || out.OutputTruncated {
		t.Errorf("outputs %+v", out)
	}
	for _, line := range append(want, wantErr...) {
		if !strings.Contains(out.Output, line) {
			t.Errorf("captured output %q lacks %q", out.Output, line)
		}
	}
}

func TestNoopJobSucceedsWithItsOutputs(t *testing.T) {
	g := newTestGateway(t)
	m, _ := json.Marshal(protocol.NoopManifest{Lines: []string{"hello", "world"}, SleepMS: 50, Outputs: map[string]string{"url": "https://example.com"}})
	job := protocol.Job{ID: "job-noop", Type: protocol.JobTypeNoop, Attempt: 2, Manifest: m}
	supervise(t, g, job)

	done := g.completion(job.ID)
	if done.Status != protocol.StatusSucceeded || deref(done.ExitCode) != 0 || done.Attempt != 2 || done.Error != "" {
		t.Errorf("completion %+v", done)
	}
	if string(done.Outputs) != `{"url":"https://example.com"}` {
		t.Errorf("outputs %s", done.Outputs)
	}
	if got := g.lines(job.ID, protocol.StreamStdout); !slices.Equal(got, []string{"hello\n", "world\n"}) {
		t.Errorf("stdout %q", got)
	}
}

func TestCancelSendsSIGTERMToTheCommand(t *testing.T) {
	g := newTestGateway(t)
	job := commandJob("job-cancel", `trap 'echo got TERM; exit 42' TERM; echo ready; while :; do sleep 0.1; done`)
	onLine(g, "ready", func(id string) { g.cancelled[id] = true })
	supervise(t, g, job)

	done := g.completion(job.ID)
	if done.Status != protocol.StatusCancelled || deref(done.ExitCode) != 42 || done.Error != "cancelled" {
		t.Errorf("completion: status %q exit code %v error %q, want cancelled, 42 (from the trap), \"cancelled\"",
			done.Status, deref(done.ExitCode), done.Error)
	}
	if !g.logged(job.ID, protocol.StreamStdout, "got TERM") {
		t.Error("the command's TERM trap did not run")
	}
	if !g.logged(job.ID, protocol.StreamSystem, "cancel requested, sending SIGTERM") {
		t.Error("no system line about the cancel")
	}
	if g.logged(job.ID, protocol.StreamSystem, "SIGKILL") {
		t.Error("the job was killed, though it ended on SIGTERM")
	}
}

func TestCancelKillsACommandThatIgnoresSIGTERM(t *testing.T) {
	g := newTestGateway(t)
	pid := pidFile(t)
	job := commandJob("job-stubborn", `trap '' TERM; echo $$ > `+pid+`; echo ready; while :; do sleep 0.1; done`)
	onLine(g, "ready", func(id string) { g.cancelled[id] = true })
	supervise(t, g, job, func(s *supervisor) { s.grace = 300 * time.Millisecond })

	done := g.completion(job.ID)
	if done.Status != protocol.StatusCancelled || deref(done.ExitCode) != 137 {
		t.Errorf("completion: status %q exit code %v, want cancelled and 137 (SIGKILL)", done.Status, deref(done.ExitCode))
	}
	if !strings.Contains(done.Error, "killed: still running 300ms after SIGTERM") {
		t.Errorf("completion error %q", done.Error)
	}
	if !g.logged(job.ID, protocol.StreamSystem, "sending SIGKILL") {
		t.Error("no system line about SIGKILL")
	}
	assertGone(t, pid)
}

func TestTimeoutStopsTheJob(t *testing.T) {
	g := newTestGateway(t)
	job := commandJob("job-timeout", `echo ready; while :; do sleep 0.1; done`)
	job.TimeoutMS = 500
	supervise(t, g, job)

	done := g.completion(job.ID)
	if done.Status != protocol.StatusFailed || done.Error != "timed out after 500ms" {
		t.Errorf("completion: status %q error %q, want failed, timed out", done.Status, done.Error)
	}
	if deref(done.ExitCode) != 143 {
		t.Errorf("exit code %v, want 143 (the shell ended by SIGTERM)", deref(done.ExitCode))
	}
	if !g.logged(job.ID, protocol.StreamSystem, "timed out after 500ms, sending SIGTERM") {
		t.Error("no system line about the timeout")
	}
}

// A job on a full work disk: once its log cannot be written, the job is
// stopped and fails with an error naming the disk, rather than passing for
// done with its log cut short.
func TestJobWhoseLogCannotBeWrittenFails(t *testing.T) {
	disk := smallDisk(t)
	g := newTestGateway(t)
	pid := pidFile(t)
	job := commandJob("job-disk-full", `echo $$ > `+pid+`; echo ready; head -c 2000000 /dev/zero > "$HOME/fill"; while :; do echo more; sleep 0.05; done`)
	supervise(t, g, job, func(s *supervisor) { s.dir = filepath.Join(disk, "jobs", jobDirName(job)) })

	done := g.completion(job.ID)
	if done.Status != protocol.StatusFailed || !strings.Contains(done.Error, "work disk") || !strings.Contains(done.Error, "no space left on device") {
		t.Errorf("completion: status %q error %q, want failed, naming the full work disk", done.Status, done.Error)
	}
	if !g.logged(job.ID, protocol.StreamStdout, "ready") {
		t.Error("the line written before the disk filled did not arrive")
	}
	assertGone(t, pid)
}

// A job process that ended without a result on a full work disk (it could
// not write one): the error says the disk is full, not only that the
// result is missing.
func TestNoResultOnAFullDiskSaysSo(t *testing.T) {
	disk := smallDisk(t)
	fill, err := os.Create(filepath.Join(disk, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	defer fill.Close()
	for err == nil {
		_, err = fill.Write(make([]byte, 64<<10))
	}
	cmd := exec.Command("false")
	_ = cmd.Run()
	s := &supervisor{job: commandJob("job-no-result", "false"), dir: disk}
	req := s.outcome(cmd.ProcessState, notStopped, false, time.Second)
	if req.Status != protocol.StatusFailed || !strings.Contains(req.Error, "without a result") || !strings.Contains(req.Error, "work disk is full") {
		t.Errorf("completion: status %q error %q, want failed, saying the work disk is full", req.Status, req.Error)
	}
}

// smallDisk is a tmpfs of 1 MiB of the test's own; it skips the test where
// it cannot mount one (not root).
func smallDisk(t *testing.T) string {
	disk := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Skipf("a full disk needs root (mount -t tmpfs): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", disk).Run() })
	return disk
}

func TestStaleAttemptIsKilledAndItsResultDropped(t *testing.T) {
	g := newTestGateway(t)
	g.intervals.LeaseMS = 3_600_000 // the kill must come from the 409, not from the fence
	pid := pidFile(t)
	job := commandJob("job-stale", `trap '' TERM; echo $$ > `+pid+`; echo ready; while :; do sleep 0.1; done`)
	onLine(g, "ready", func(id string) { g.gone[id] = true })
	supervise(t, g, job)

	g.mu.Lock()
	n := len(g.completions[job.ID])
	g.mu.Unlock()
	if n != 0 {
		t.Errorf("a stale attempt sent %d completions", n)
	}
	assertGone(t, pid)
}

func TestJobIsKilledWhenItsLeaseCannotBeRenewed(t *testing.T) {
	g := newTestGateway(t)
	g.intervals.LeaseMS, g.intervals.JobHeartbeatMS = 1000, 200
	g.heartbeatsDown = true
	pid := pidFile(t)
	job := commandJob("job-fenced", `trap '' TERM; echo $$ > `+pid+`; echo ready; while :; do sleep 0.1; done`)
	supervise(t, g, job)

	done := g.completion(job.ID)
	if done.Status != protocol.StatusFailed || !strings.Contains(done.Error, "could not renew the lease for 800ms") {
		t.Errorf("completion: status %q error %q", done.Status, done.Error)
	}
	if deref(done.ExitCode) != 137 {
		t.Errorf("exit code %v, want 137 (SIGKILL)", deref(done.ExitCode))
	}
	if !g.logged(job.ID, protocol.StreamSystem, "could not renew the job's lease") {
		t.Error("no system line about the lost lease")
	}
	assertGone(t, pid)
}

// A job outlives its fence window when renewals go through, and a gateway
// outage shorter than the window neither stops it nor loses a line.
func TestShortGatewayOutageDoesNotDisturbTheJob(t *testing.T) {
	g := newTestGateway(t)
	g.intervals.LeaseMS, g.intervals.JobHeartbeatMS = 1500, 100 // killed after 1.4s without renewal
	g.failNext = 8                                              // heartbeats, logs and completions answer 503 for a while
	var lines []string
	for i := range 50 {
		lines = append(lines, "line "+strconv.Itoa(i))
	}
	m, _ := json.Marshal(protocol.NoopManifest{Lines: lines, SleepMS: 3000})
	job := protocol.Job{ID: "job-outage", Type: protocol.JobTypeNoop, Attempt: 1, Manifest: m}
	supervise(t, g, job)

	if g.failNext != 0 {
		t.Fatalf("the outage was not used up (%d failures left): the test proves nothing", g.failNext)
	}
	done := g.completion(job.ID)
	if done.Status != protocol.StatusSucceeded {
		t.Errorf("completion %+v, want succeeded", done)
	}
	var want []string
	for _, l := range lines {
		want = append(want, l+"\n")
	}
	if got := g.lines(job.ID, protocol.StreamStdout); !slices.Equal(got, want) {
		t.Errorf("stdout %q, want %q", got, want)
	}
}

func TestUnknownJobTypeFails(t *testing.T) {
	g := newTestGateway(t)
	job := protocol.Job{ID: "job-unknown", Type: "teleport", Attempt: 1}
	supervise(t, g, job)

	done := g.completion(job.ID)
	if done.Status != protocol.StatusFailed || done.Error != `unknown job type "teleport": this runner runs action, command, noop, oci, runner_update, terraform, `+jobTypeEchoInputs {
		t.Errorf("completion: status %q error %q", done.Status, done.Error)
	}
	if !g.logged(job.ID, protocol.StreamSystem, `unknown job type "teleport"`) {
		t.Error("the error is not in the job's log")
	}
}

func TestRunnerShutdownCancelsTheJob(t *testing.T) {
	g := newTestGateway(t)
	stop := make(chan struct{})
	job := commandJob("job-shutdown", `echo ready; while :; do sleep 0.1; done`)
	onLine(g, "ready", func(string) { close(stop) })
	supervise(t, g, job, func(s *supervisor) { s.stop = stop })

	done := g.completion(job.ID)
	if done.Status != protocol.StatusCancelled || done.Error != "cancelled: the runner shut down" {
		t.Errorf("completion: status %q error %q", done.Status, done.Error)
	}
}

func TestJobGetsACleanEnvironment(t *testing.T) {
	t.Setenv("OUTPOST_TOKEN", "oprn_must-not-leak")
	g := newTestGateway(t)
	job := commandJob("job/env 1", `env | sort`)
	s := supervise(t, g, job)

	got := strings.Join(g.lines(job.ID, protocol.StreamStdout), "")
	want := strings.Join([]string{
		"HOME=" + s.dir,
		"LANG=C.UTF-8",
		"OUTPOST_JOB_ID=job/env 1",
		"PATH=" + os.Getenv("PATH"),
		"PWD=" + s.dir,
		"TMPDIR=" + filepath.Join(s.dir, "tmp"),
	}, "\n") + "\n"
	if got != want {
		t.Errorf("the job's environment:\n%s\nwant:\n%s", got, want)
	}
	if filepath.Base(s.dir) != "job_env_1-1" {
		t.Errorf("job directory %s, want jobs/job_env_1-1", s.dir)
	}
}

func TestJobDiesWithItsRunner(t *testing.T) {
	dir := t.TempDir()
	pid := pidFile(t)
	job := commandJob("job-orphan", `echo $$ > `+pid+`.tmp && mv `+pid+`.tmp `+pid+`; while :; do sleep 0.1; done`)
	if err := writeJSONFile(filepath.Join(dir, jobFile), job); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	runner := exec.Command(exe, "spawn-job", dir) // a stand-in runner
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(pid); err == nil {
			break
		}
		if time.Now().After(deadline) { // only a hang guard
			runner.Process.Kill()
			t.Fatal("the job's command never started")
		}
	}
	// The job process is the command's parent: it too must end (and stop
	// writing into the job's directory) when its runner dies.
	jobPid := 0
	if fields := procStat(pidIn(t, pid)); len(fields) > 1 {
		jobPid, _ = strconv.Atoi(fields[1])
	}
	if err := runner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = runner.Wait()
	assertGone(t, pid)
	if jobPid > 1 {
		assertPidGone(t, "the job process", jobPid)
	}
}

// The gateway may tell a held heartbeat that the attempt is no longer
// current (it was just completed) before it answers the completion itself:
// the completion must not be cut off by that, nor reported dropped.
func TestCompletionOutlivesTheLeaseEndingWithIt(t *testing.T) {
	g := newTestGateway(t)
	g.goneOnComplete = true
	var log testutil.LockedBuffer
	job := commandJob("job-complete", "echo done")
	supervise(t, g, job, func(s *supervisor) {
		s.log = slog.New(slog.NewTextHandler(&log, nil))
	})
	if done := g.completion(job.ID); done.Status != protocol.StatusSucceeded {
		t.Fatalf("completion %+v", done)
	}
	g.mu.Lock()
	stale := g.staleAnswers[job.ID]
	g.mu.Unlock()
	if stale == 0 {
		t.Fatal("no heartbeat was told the attempt was gone: the test proves nothing")
	}
	if l := log.String(); !strings.Contains(l, "job completed") || strings.Contains(l, "dropped") {
		t.Errorf("want the completion reported delivered, not dropped:\n%s", l)
	}
}
