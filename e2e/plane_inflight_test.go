package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
)

// inFlight is an operation of testdata/upgrade-app held in its middle: the
// install's provision under prompt, its sandbox approved, "slow" approved
// and applying (its log a line longer every 0.2 s until the test opens the
// gate), "quick" waiting for its approval; the slow apply's log followed by
// `outpostctl logs --follow`, as a user follows it.
type inFlight struct {
	s        *stack
	inst, op string
	gate     string // the file that ends slow's apply
	job      string // slow's apply job
	follow   *logFollower
}

// startInFlight creates install name (its runner outside the cluster,
// registering through the gateway) and holds its provision in flight; s's
// app is testdata/upgrade-app with its gates in gateDir (upgradeAppDir).
func startInFlight(t testing.TB, s *stack, ctl, name, gateDir string) *inFlight {
	t.Helper()
	inst, _ := s.newInstall(name)
	if code := s.do("PUT", "/v1/installs/"+inst+"/approval-mode", map[string]string{"approval_mode": "prompt"}, nil); code != http.StatusOK {
		t.Fatalf("approval mode: %d", code)
	}
	f := &inFlight{s: s, inst: inst, gate: filepath.Join(gateDir, inst)}
	f.op = s.startOp(inst, "/provision", nil).ID
	for _, step := range []string{"sandbox", "slow"} {
		s.waitApproval(inst, f.op, step)
		f.approve(step)
	}
	s.waitApproval(inst, f.op, "quick")
	waitFor(t, 3*time.Minute, "slow's apply job to run", func() bool {
		st := s.getOp(inst, f.op, 0).step(t, "slow")
		f.job = st.ApplyJobID
		return f.job != "" && s.job(f.job).Attempts != nil
	})
	f.follow = followLogs(t, ctl, s, f.job)
	f.follow.waitLines(t, 5)
	return f
}

func (f *inFlight) approve(step string) {
	f.s.t.Helper()
	path := fmt.Sprintf("/v1/installs/%s/operations/%s/steps/%s/approve", f.inst, f.op, step)
	if code := f.s.do("POST", path, nil, nil); code != http.StatusAccepted {
		f.s.t.Fatalf("approve %s: %d", step, code)
	}
}

// finish gives the waiting approval, opens the gate and checks that the
// operation ends as it would have without what happened meanwhile: it
// succeeded, each of its jobs ran once (one attempt), and the followed log
// holds every line of slow's apply once, in order, as stored.
func (f *inFlight) finish() {
	t := f.s.t
	t.Helper()
	f.approve("quick")
	if err := os.WriteFile(f.gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	op := f.s.waitOp(f.inst, f.op, 5*time.Minute)
	if op.Status != status.OpSucceeded {
		t.Fatalf("provision of %s: %s %q %+v", f.inst, op.Status, op.Error, op.Steps)
	}
	f.s.checkJobsRanOnce(f.inst, op, "sandbox", "slow", "quick")
	f.follow.checkWhole(t, f.s.logs(f.job))
}

// logFollower is `outpostctl logs JOB --follow -o json`: each chunk it
// prints, with when it arrived.
type logFollower struct {
	p      *process
	mu     sync.Mutex
	chunks []followedChunk
	done   chan struct{}
}

type followedChunk struct {
	logChunk
	at time.Time
}

// followLogs starts following the job's log through the API with the
// outpostctl binary ctl.
func followLogs(t testing.TB, ctl string, s *stack, job string) *logFollower {
	t.Helper()
	env := []string{"PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + t.TempDir()}
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(s.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := exec.Command(ctl, "context", "add", "e2e", "--api", s.apiURL, "--token-file", tok)
	ctx.Env = env
	if out, err := ctx.CombinedOutput(); err != nil {
		t.Fatalf("outpostctl context add: %v\n%s", err, out)
	}
	cmd := exec.Command(ctl, "logs", job, "--follow", "-o", "json")
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errOut := &testutil.LockedBuffer{}
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &logFollower{p: &process{cmd: cmd, out: errOut, done: make(chan struct{})}, done: make(chan struct{})}
	t.Cleanup(func() { cmd.Process.Kill(); <-f.p.done })
	go func() {
		// Wait closes the pipe: only once everything is read.
		defer func() { close(f.done); cmd.Wait(); close(f.p.done) }()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			var c logChunk
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				c.Data = "undecodable: " + sc.Text()
			}
			f.mu.Lock()
			f.chunks = append(f.chunks, followedChunk{c, time.Now()})
			f.mu.Unlock()
		}
	}()
	return f
}

var numberedLine = regexp.MustCompile(`(?m)\bline ([0-9]+)$`)

// lines are the numbers of the "line N" lines followed so far.
func (f *logFollower) lines() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ns []int
	for _, c := range f.chunks {
		for _, m := range numberedLine.FindAllStringSubmatch(c.Data, -1) {
			n, _ := strconv.Atoi(m[1])
			ns = append(ns, n)
		}
	}
	return ns
}

// waitLines waits until the follower has seen more than n numbered lines.
func (f *logFollower) waitLines(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for len(f.lines()) <= n {
		if time.Now().After(deadline) {
			f.mu.Lock()
			defer f.mu.Unlock()
			exited := "runs"
			select {
			case <-f.p.done:
				exited = fmt.Sprintf("exited %d", f.p.cmd.ProcessState.ExitCode())
			default:
			}
			t.Fatalf("outpostctl logs --follow (%s) printed %d chunks, not more than %d numbered lines, in 2 minutes; its stderr: %s; chunks: %+v",
				exited, len(f.chunks), n, f.p.out.String(), f.chunks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// maxGap is the longest time between two chunks arriving from first on.
func (f *logFollower) maxGap(from time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var gap time.Duration
	var prev time.Time
	for _, c := range f.chunks {
		if c.at.Before(from) {
			prev = c.at
			continue
		}
		if !prev.IsZero() {
			gap = max(gap, c.at.Sub(prev))
		}
		prev = c.at
	}
	return gap
}

// checkWhole waits for the follower to end and checks it succeeded and saw
// exactly the stored chunks, whose numbered lines run 1, 2, … to the last,
// which the gate line names.
func (f *logFollower) checkWhole(t testing.TB, stored []logChunk) {
	t.Helper()
	select {
	case <-f.p.done:
	case <-time.After(time.Minute):
		t.Fatal("outpostctl logs --follow did not end with the job")
	}
	<-f.done
	if code := f.p.cmd.ProcessState.ExitCode(); code != 0 || strings.TrimSpace(f.p.out.String()) != "" {
		t.Errorf("outpostctl logs --follow: exit %d, stderr %q; want 0 and nothing", code, f.p.out.String())
	}
	f.mu.Lock()
	var got, want []string
	for _, c := range f.chunks {
		got = append(got, fmt.Sprintf("%d.%d", c.Attempt, c.Seq))
	}
	var all strings.Builder
	for _, c := range stored {
		want = append(want, fmt.Sprintf("%d.%d", c.Attempt, c.Seq))
		all.WriteString(c.Data)
	}
	f.mu.Unlock()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("followed chunks %v, stored %v", got, want)
	}
	lines := f.lines()
	for i, n := range lines {
		if n != i+1 {
			t.Fatalf("followed line %d is line %d: a line lost or twice (%v)", i+1, n, lines)
		}
	}
	if end := fmt.Sprintf("the gate opened after %d lines", len(lines)); len(lines) == 0 || !strings.Contains(all.String(), end) {
		t.Errorf("the log does not end with %q after %d followed lines", end, len(lines))
	}
}

// outpostctlBinary builds outpostctl once per test binary.
var outpostctlBinary = sync.OnceValues(func() (string, error) {
	dir := filepath.Join(binDir, "outpostctl-bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(dir, "outpostctl"), testutil.BuildBinaries(dir, "../cmd/outpostctl")
})

func outpostctl(t testing.TB) string {
	t.Helper()
	bin, err := outpostctlBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
