package e2e

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// Faults in the multi-process topology (docs/RELIABILITY.md, "Faults"): one
// `outpost api`, one `outpost worker` and `outpost temporal` as processes, on
// a PostgreSQL server of the test's own; runners reach the gateway through a
// proxy the test can take down. While installs of the example app provision
// and debug commands print numbered lines, PostgreSQL is restarted, the
// Temporal server, the worker and the API are SIGKILLed and started again,
// and then the runners are cut off from the gateway for cutFor. Every
// provision and command succeeds, no job had two attempts at once (nor one
// attempt at all but the cut's lost ones), and each attempt's log is stored
// once, in order, without a gap. Long: OUTPOST_FAULTS=1 (`go tool task faults`).
func TestFaultsInTheMultiProcessTopology(t *testing.T) {
	if os.Getenv("OUTPOST_FAULTS") == "" {
		t.Skip("long (six provisions and a network cut): run with OUTPOST_FAULTS=1, or `go tool task faults`")
	}
	pg := storetest.StartServer(t)
	var cut *faultProxy
	rp := startReplicasWith(t, replicaOptions{apis: 1, workers: 1, databaseURL: pg.AdminURL(),
		runnersVia: func(addr string) string { cut = newFaultProxy(t, addr); return cut.addr }})
	f := &faults{s: rp.demoApp(t), ledgers: t.TempDir()}

	restart := func(p **process, ready string) func() {
		return func() { *p = (*p).restart(t, syscall.SIGKILL); waitOutput(t, *p, ready) }
	}
	injects := []struct {
		name   string
		inject func()
	}{
		{"PostgreSQL restarted", func() { pg.Stop(); time.Sleep(2 * time.Second); pg.Start() }},
		{"Temporal server SIGKILLed and started again", restart(&rp.temporal, "temporal ready")},
		{"worker SIGKILLed and started again", restart(&rp.workers[0], "worker started")},
		{"API and gateway SIGKILLed and started again", restart(&rp.apiProcs[0], "server=gateway")},
	}
	var runs []faultRun
	for i, in := range injects {
		r := f.start("cust-" + strconv.Itoa(i+1))
		f.inject(in.name, in.inject)
		runs = append(runs, r)
	}
	for _, r := range runs {
		f.check(r, true)
	}

	r := f.start("cust-cut")
	f.inject("runners cut off from the gateway for "+cutFor.String(), func() {
		cut.down()
		time.Sleep(cutFor)
		cut.up()
	})
	f.check(r, false)

	t.Run("full work disk", func(t *testing.T) {
		ds := *f.s
		ds.t = t
		(&faults{s: &ds, ledgers: f.ledgers}).fullDisk()
	})
}

// cutFor is how long the runners are cut off: three of the stack's 15 s
// leases, so every attempt running at the cut is killed by its runner, its
// lease expires and is reaped, and the runners' backoff reaches its ceiling.
const cutFor = 45 * time.Second

// fullDisk gives a new install's runner a work disk of its own (a small
// tmpfs) and fills it: a provision and a debug command fail, their errors
// naming the full disk; once space is freed, both succeed when run again.
func (f *faults) fullDisk() {
	s := f.s
	disk := smallDisk(s.t, "64m")
	s.runnerWorkDir = disk
	inst, _ := s.newInstall("cust-disk", map[string]any{"name": "db_password", "value": "pw", "sensitive": true})
	s.runnerWorkDir = ""
	s.waitRunnerOnline(inst)
	s.install.ID = inst
	// What the errors say: the write that failed, or the disk the runner
	// found full when a job could not even write its result.
	full := func(err string) bool {
		return strings.Contains(err, "no space left on device") || strings.Contains(err, "work disk is full")
	}
	// Full while a command prints: it is stopped, failing with a clear
	// error; the lines it printed before arrived in order.
	running := s.runCommand("sh", "-c", `i=1; while :; do echo "line $i"; sleep 0.1; i=$((i+1)); done`)
	jobID := s.commandJobID(running.ID)
	waitFor(s.t, time.Minute, "the command's first lines", func() bool { return s.logsContain(jobID, "line 5\n") })
	filler := filepath.Join(disk, "filler")
	fillDisk(s.t, filler)
	if c := s.waitCommand(running.ID, time.Minute); c.Status != status.JobFailed || !full(c.Error) {
		s.t.Fatalf("command that was running when the disk filled: %+v; want failed, naming the full disk", c)
	} else {
		s.t.Logf("the command running when the disk filled: %q", c.Error)
	}
	f.checkAttempts(jobID)
	f.checkCommandLines(faultRun{inst: inst, cmdJob: jobID}, false)
	// Full again: removing that job's directory freed its log's pages.
	fillDisk(s.t, filler+"2")

	op := s.waitOp(inst, s.startOp(inst, "/provision", nil).ID, 3*time.Minute)
	if errs := opErrors(op); op.Status != status.OpFailed || !full(errs) {
		s.t.Fatalf("provision on a full disk: %s %q; want failed, naming the full disk", op.Status, errs)
	}
	c := s.waitCommand(s.runCommand("echo", "hello").ID, time.Minute)
	if c.Status != status.JobFailed || !full(c.Error) {
		s.t.Fatalf("command on a full disk: %+v; want failed, naming the full disk", c)
	}
	s.t.Logf("on the full disk: provision %q; command %q", opErrors(op), c.Error)

	for _, f := range []string{filler, filler + "2"} {
		if err := os.Remove(f); err != nil {
			s.t.Fatal(err)
		}
	}
	if op := s.waitOp(inst, s.startOp(inst, "/provision", nil).ID, 6*time.Minute); op.Status != status.OpSucceeded {
		s.t.Fatalf("provision once space was freed: %s %q", op.Status, opErrors(op))
	}
	if c := s.waitCommand(s.runCommand("echo", "hello").ID, time.Minute); c.Status != status.JobSucceeded || c.Output != "hello\n" {
		s.t.Fatalf("command once space was freed: %+v", c)
	}
}

// failedLogs is the end of the logs of the operation's failed steps' jobs.
func (f *faults) failedLogs(op operation) string {
	var b strings.Builder
	for _, st := range op.Steps {
		if id := cmp.Or(st.ApplyJobID, st.PlanJobID); st.Status == status.StepFailed && id != "" {
			logs := storetest.JobLogs(f.s.t, f.s.store, id)
			fmt.Fprintf(&b, "%s (job %s): …%s\n", st.Name, id, logs[max(0, len(logs)-3000):])
		}
	}
	return b.String()
}

// opErrors is the operation's error and its steps'.
func opErrors(op operation) string {
	errs := []string{op.Error}
	for _, st := range op.Steps {
		if st.Error != "" {
			errs = append(errs, st.Name+": "+st.Error)
		}
	}
	return strings.Join(errs, "; ")
}

// smallDisk mounts a tmpfs of the given size on a new directory, unmounted
// when the test ends; it skips the test where it cannot (not root).
func smallDisk(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("a disk of the runner's own needs root (mount -t tmpfs): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fillDisk writes the file until the disk it is on is full.
func fillDisk(t testing.TB, path string) {
	t.Helper()
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err = file.Write(buf); err != nil {
			break
		}
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling %s: %v", path, err)
	}
}

// faults drives work on a stack while faults are injected.
type faults struct {
	s       *stack
	ledgers string // where debug commands write which process printed what
}

// faultRun is an install provisioning and a debug command running on it.
type faultRun struct {
	inst, opID string
	cmd        command
	cmdJob     string
	lines      int
	ledger     string
}

// commandLines is how many numbered lines a debug command prints, one
// every 0.1 s.
const commandLines = 150

// start creates an install, starts its provision and a debug command on
// its runner, and returns once the provision has a job done and one
// running and the command has printed its first lines.
func (f *faults) start(name string) faultRun {
	s := f.s
	r := faultRun{lines: commandLines, ledger: filepath.Join(f.ledgers, name)}
	r.inst, _ = s.newInstall(name, map[string]any{"name": "db_password", "value": "pw", "sensitive": true})
	r.opID = s.startOp(r.inst, "/provision", nil).ID
	s.waitJobsRunning([]string{r.inst})
	s.install.ID = r.inst
	r.cmd = s.runCommand("sh", "-c", fmt.Sprintf(
		`i=1; while [ $i -le %d ]; do echo "line $i"; echo "$$ $i" >> %s; sleep 0.1; i=$((i+1)); done`, r.lines, r.ledger))
	r.cmdJob = s.commandJobID(r.cmd.ID)
	waitFor(s.t, time.Minute, "the command's first lines", func() bool { return s.logsContain(r.cmdJob, "line 5\n") })
	return r
}

// inject runs a fault and waits until the API answers again.
func (f *faults) inject(name string, fault func()) {
	t := f.s.t
	at := time.Now()
	fault()
	waitFor(t, time.Minute, "the API to answer after: "+name, f.apiAnswers)
	t.Logf("fault: %s (%s)", name, time.Since(at).Round(time.Millisecond))
}

// apiAnswers reports whether the API lists the installs (a call through the
// store), without failing the test when it does not.
func (f *faults) apiAnswers() bool {
	req, _ := http.NewRequest("GET", f.s.apiURL+"/v1/installs", nil)
	req.Header.Set("Authorization", "Bearer "+f.s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// check waits for the run's provision and command to succeed, and checks
// that no job had two attempts at once, and that each attempt's log is
// whole and in order; once: that every job ran one attempt, each step's.
func (f *faults) check(r faultRun, once bool) {
	s := f.s
	s.t.Helper()
	op := s.waitOp(r.inst, r.opID, 8*time.Minute)
	if op.Status != status.OpSucceeded {
		s.t.Fatalf("provision of %s: %s %q; failed steps' logs:\n%s", r.inst, op.Status, opErrors(op), f.failedLogs(op))
	}
	s.install.ID = r.inst
	if c := s.waitCommand(r.cmd.ID, 5*time.Minute); c.Status != status.JobSucceeded {
		s.t.Fatalf("command on %s: %+v", r.inst, c)
	}
	lost := 0
	for _, j := range s.installJobs(r.inst) {
		lost += f.checkAttempts(j.ID)
	}
	if once {
		s.checkJobsRanOnce(r.inst, op, status.SandboxStep, "network", "database", "cache", "api", "cluster", "web")
		if lost > 0 {
			s.t.Errorf("%s: %d attempts lost", r.inst, lost)
		}
	} else if lost == 0 {
		s.t.Errorf("no attempt of %s was lost to the cut: the test shows nothing", r.inst)
	}
	f.checkCommandLines(r, true)
	s.t.Logf("%s: provision and command succeeded; %d attempts lost", r.inst, lost)
}

// checkAttempts checks the job's attempts one after the other (each ended
// before the next was claimed), all but the last lost, and each attempt's
// log chunks numbered 1, 2, 3… without a gap, up to the last one the runner
// reported; it returns how many attempts were lost.
func (f *faults) checkAttempts(jobID string) int {
	t := f.s.t
	t.Helper()
	ctx := context.Background()
	attempts, _, err := f.s.store.JobHistory(ctx, jobID)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := f.s.store.ListLogs(ctx, jobID, store.LogCursor{}, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	next := map[int]int64{}
	for _, c := range chunks {
		if c.Seq != next[c.Attempt]+1 {
			t.Errorf("job %s attempt %d: chunk %d after %d (a line lost, duplicated or out of order)", jobID, c.Attempt, c.Seq, next[c.Attempt])
		}
		next[c.Attempt] = c.Seq
	}
	lost := 0
	for i, a := range attempts {
		switch {
		case a.FinishedAt == nil:
			t.Errorf("job %s attempt %d never ended: %+v", jobID, a.Attempt, a)
		case i+1 < len(attempts) && attempts[i+1].ClaimedAt.Before(*a.FinishedAt):
			t.Errorf("job %s: attempt %d claimed at %s, before attempt %d ended (%s)", jobID, attempts[i+1].Attempt,
				attempts[i+1].ClaimedAt, a.Attempt, a.FinishedAt)
		case i+1 < len(attempts) && a.Status != status.JobLost:
			t.Errorf("job %s attempt %d: %s, yet retried", jobID, a.Attempt, a.Status)
		case i+1 == len(attempts) && a.LastSeq != next[a.Attempt]:
			t.Errorf("job %s attempt %d: the runner reported %d chunks, %d stored", jobID, a.Attempt, a.LastSeq, next[a.Attempt])
		}
		if a.Status == status.JobLost {
			lost++
		}
	}
	return lost
}

// checkCommandLines checks the lines of the command's last attempt are in
// order, once each, and (whole) all of them; and its ledger, if any: no two
// processes printed at once (once a process has printed, the one before it
// prints no more).
func (f *faults) checkCommandLines(r faultRun, whole bool) {
	t := f.s.t
	t.Helper()
	last := map[int][]string{}
	for _, c := range f.s.logs(r.cmdJob) {
		if c.Stream == protocol.StreamStdout {
			last[c.Attempt] = append(last[c.Attempt], strings.Split(strings.TrimSuffix(c.Data, "\n"), "\n")...)
		}
	}
	got := last[len(f.s.job(r.cmdJob).Attempts)]
	if whole && len(got) != r.lines || len(got) == 0 {
		t.Errorf("command on %s: %d lines, want %d", r.inst, len(got), r.lines)
	}
	for i, l := range got {
		if l != "line "+strconv.Itoa(i+1) {
			t.Fatalf("command on %s: line %d = %q (lost, duplicated or out of order)", r.inst, i+1, l)
		}
	}
	if r.ledger == "" {
		return
	}
	b, err := os.ReadFile(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		pid, _, _ := strings.Cut(l, " ")
		switch {
		case len(pids) == 0 || pids[len(pids)-1] != pid:
			for _, p := range pids {
				if p == pid {
					t.Fatalf("command on %s: process %s printed again after process %s had started: two attempts at once\n%s",
						r.inst, pid, pids[len(pids)-1], b)
				}
			}
			pids = append(pids, pid)
		}
	}
}
