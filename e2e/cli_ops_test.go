package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
)

// Day two with the CLI alone: an install provisioned, then under prompt
// approval a teardown denied and a redeploy approved (its plan shown
// first), operations, jobs and logs read, debug commands run on the runner,
// a reprovision with nothing to change, a deprovision approved step by step.
func TestCLIOps(t *testing.T) {
	s, c := newCLIStack(t)
	c.ok(exampleDir, "apps", "sync", ".", "--app", "demo")
	inst := c.createInstall(s, "cust-a", "--input", "db_password=pw")
	var prov struct{ ID string }
	c.json("", &prov, "provision", "cust-a", "--wait")

	// Bad input: one line each, the documented exit code.
	c.fails(5, "no step of provision "+prov.ID+" (succeeded) waits for approval", "approve", "cust-a", "--yes")
	c.fails(4, `no component "nope" in the latest config`, "deploy", "cust-a", "nope")
	c.fails(1, "no command: ", "exec", "cust-a")
	c.fails(1, `MODE "sometimes": want approve-all or prompt`, "installs", "approval-mode", "cust-a", "sometimes")

	t.Run("exec", func(t *testing.T) { c.checkExec(t) })

	var mode struct {
		ApprovalMode string `json:"approval_mode"`
	}
	c.json("", &mode, "installs", "approval-mode", "cust-a", "prompt")
	if mode.ApprovalMode != "prompt" {
		t.Fatalf("approval-mode: %+v", mode)
	}

	// Deny: api's teardown waits, is denied; the operation ends denied.
	var td struct{ ID string }
	c.json("", &td, "teardown", "cust-a", "api")
	s.waitApproval(inst, td.ID, "api")
	c.fails(1, "pass --yes to deny step api", "deny", "cust-a")
	out := c.ok("", "deny", "cust-a", "--yes")
	if !strings.Contains(out, "plan of step api") || !strings.Contains(out, "terraform_data") || !strings.Contains(out, "denied step api of teardown_component api "+td.ID) {
		t.Fatalf("deny:\n%s", out)
	}
	if op := s.waitOp(inst, td.ID, time.Minute); op.Status != status.OpDenied {
		t.Fatalf("denied teardown: %+v", op)
	}
	c.fails(5, "step api of teardown_component api "+td.ID+" is denied, not waiting for approval", "approve", "cust-a", "api", "--operation", td.ID, "--yes")

	// Approve: web torn down, then deployed again: its plan creates it.
	// approve --wait waits for the step to wait, as a script would.
	c.json("", &td, "teardown", "cust-a", "web")
	if out := c.ok("", "approve", "cust-a", "web", "--wait", "--yes"); !strings.Contains(out, "approved step web of teardown_component web "+td.ID) {
		t.Fatalf("approve --wait:\n%s", out)
	}
	if op := s.waitOp(inst, td.ID, 2*time.Minute); op.Status != status.OpSucceeded {
		t.Fatalf("approved teardown: %+v", op)
	}
	var dep struct{ ID string }
	c.json("", &dep, "deploy", "cust-a", "web")
	s.waitApproval(inst, dep.ID, "web")
	out = c.ok("", "approve", "cust-a", "--yes")
	plan, approved := strings.Index(out, "+++ b/Deployment/demo/web"), strings.Index(out, "approved step web of deploy_component web "+dep.ID)
	if plan < 0 || approved < plan {
		t.Fatalf("approve: want the plan, then the approval:\n%s", out)
	}
	deployed := s.waitOp(inst, dep.ID, 2*time.Minute)
	if deployed.Status != status.OpSucceeded {
		t.Fatalf("approved deploy: %+v", deployed)
	}

	t.Run("operations", func(t *testing.T) { c.checkOperations(t, prov.ID, td.ID, dep.ID) })
	t.Run("jobs and logs", func(t *testing.T) { c.checkJobsAndLogs(t, s, dep.ID, deployed.step(t, "web").ApplyJobID) })

	// Nothing changed: under prompt too, a reprovision waits for nothing.
	if out := c.ok("", "reprovision", "cust-a", "--wait"); !strings.Contains(out, "web: no_changes") || !strings.Contains(out, " succeeded in ") {
		t.Fatalf("reprovision --wait:\n%s", out)
	}
	c.deprovisionApprovingEach(s, inst)
}

// deprovisionApprovingEach deprovisions under prompt, approving each step as
// it waits; database and cache wait together: approve then names them.
func (c *cli) deprovisionApprovingEach(s *stack, inst string) {
	t := c.t
	var de struct{ ID string }
	c.json("", &de, "deprovision", "cust-a")
	several, approved := false, map[string]bool{}
	waitFor(t, 3*time.Minute, "the deprovision, approved step by step", func() bool {
		cur := s.getOp(inst, de.ID, 0)
		var waiting []string
		for _, st := range cur.Steps {
			if st.Status == status.StepWaitingApproval && !approved[st.Name] {
				waiting = append(waiting, st.Name)
			}
		}
		// database and cache both wait once api is destroyed: hold them
		// until both do, so that approve sees two waiting.
		if slices.Contains(waiting, "database") != slices.Contains(waiting, "cache") {
			waiting = slices.DeleteFunc(waiting, func(n string) bool { return n == "database" || n == "cache" })
		}
		if len(waiting) > 1 && !several {
			c.fails(1, "steps of deprovision "+de.ID+" wait for approval (", "approve", "cust-a", "--yes")
			several = true
		}
		for _, name := range waiting {
			if len(approved) == 0 {
				c.approveOnTerminal(name)
			} else {
				c.ok("", "approve", "cust-a", name, "--yes")
			}
			approved[name] = true
		}
		return cur.FinishedAt != nil
	})
	if op := s.getOp(inst, de.ID, 0); op.Status != status.OpSucceeded || !several {
		t.Fatalf("deprovision under prompt: %s, several steps waited at once: %v", op.Status, several)
	}
}

// waitApproval waits until the operation's step waits for approval.
func (s *stack) waitApproval(inst, op, step string) {
	s.t.Helper()
	waitFor(s.t, 3*time.Minute, step+" to wait for approval", func() bool {
		cur := s.getOp(inst, op, 0)
		if cur.FinishedAt != nil {
			s.t.Fatalf("operation %s finished (%s) before %s waited for approval: %+v", op, cur.Status, step, cur.Steps)
		}
		for _, st := range cur.Steps {
			if st.Name == step && st.Status == status.StepWaitingApproval {
				return true
			}
		}
		return false
	})
}

// checkExec runs debug commands: output streams as it comes, the command's
// exit code passes through, Ctrl-C cancels it.
func (c *cli) checkExec(t *testing.T) {
	out := c.ok("", "exec", "cust-a", "--", "sh", "-c", "echo hello from the runner; echo to stderr >&2")
	if out != "hello from the runner\n" {
		t.Errorf("exec stdout %q", out)
	}
	stdout, stderr, code := c.run("", "exec", "cust-a", "--timeout", "1m", "--", "sh", "-c", "echo about to fail; exit 3")
	if code != 3 || stdout != "about to fail\n" || !strings.Contains(stderr, "the command exited 3") {
		t.Errorf("exec of a command exiting 3: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	c.fails(6, "(no-such-program) failed: ", "exec", "cust-a", "--", "no-such-program")

	// The first line arrives while the command still runs: it waits for a
	// file the test writes once it has seen that line.
	flag := filepath.Join(t.TempDir(), "go-on")
	p := c.start("exec", "cust-a", "--", "sh", "-c", "echo first; while [ ! -f "+flag+" ]; do sleep 0.1; done; echo second")
	waitFor(t, time.Minute, "exec's first line", func() bool { return strings.Contains(p.out.String(), "first\n") })
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-p.done
	if code := p.cmd.ProcessState.ExitCode(); code != 0 || p.out.String() != "first\nsecond\n" {
		t.Errorf("streamed exec: exit %d, output %q", code, p.out.String())
	}

	p = c.start("exec", "cust-a", "--", "sh", "-c", "echo ready; sleep 300")
	waitFor(t, time.Minute, "the command to start", func() bool { return strings.Contains(p.out.String(), "ready\n") })
	p.cmd.Process.Signal(syscall.SIGINT)
	<-p.done
	if code := p.cmd.ProcessState.ExitCode(); code != 6 || !strings.Contains(p.out.String(), "cancelled") {
		t.Errorf("exec after Ctrl-C: exit %d, output %q", code, p.out.String())
	}
}

// start runs the CLI in the background; its stdout and stderr are out.
func (c *cli) start(args ...string) *process {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	out := &testutil.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	p := &process{cmd: cmd, out: out, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	c.t.Cleanup(func() { cmd.Process.Kill(); <-p.done })
	return p
}

func (c *cli) checkOperations(t *testing.T, prov, teardown, deploy string) {
	var ops struct {
		Operations []struct{ ID, Kind, Status string }
	}
	c.json("", &ops, "operations", "list", "cust-a")
	if len(ops.Operations) != 4 || ops.Operations[0].ID != deploy || ops.Operations[0].Kind != "deploy_component" || ops.Operations[3].ID != prov {
		t.Errorf("operations list: %+v", ops)
	}
	list := c.ok("", "operations", "list", "cust-a")
	for _, want := range []string{"ID  ", deploy, "deploy_component web", "teardown_component api", "denied", teardown} {
		if !strings.Contains(list, want) {
			t.Errorf("operations list lacks %q:\n%s", want, list)
		}
	}
	var shown struct{ ID, Status string }
	c.json("", &shown, "operations", "show", "cust-a", prov)
	if shown.ID != prov || shown.Status != "succeeded" {
		t.Errorf("operations show -o json: %+v", shown)
	}
	// The tree: each component below what it depends on.
	tree := c.ok("", "operations", "show", "cust-a", prov)
	depth := func(name string) int {
		for _, line := range strings.Split(tree, "\n") {
			if i := strings.Index(line, "─ "+name+" "); i >= 0 && strings.Contains(line, "succeeded") {
				return len([]rune(line[:i]))
			}
		}
		t.Fatalf("operations show has no succeeded step %s:\n%s", name, tree)
		return 0
	}
	if depth("sandbox") != 1 || depth("network") != 1 || depth("database") <= depth("network") || depth("api") <= depth("database") && depth("api") <= depth("cache") {
		t.Errorf("operations show, not a tree of the dependencies:\n%s", tree)
	}
	t.Logf("operations show:\n%s", tree)
}

func (c *cli) checkJobsAndLogs(t *testing.T, s *stack, deploy, applyJob string) {
	var jobs struct {
		Jobs []struct{ ID, Type, Status string }
	}
	c.json("", &jobs, "jobs", "list", "cust-a")
	found := false
	for _, j := range jobs.Jobs {
		found = found || j.ID == applyJob && j.Status == "succeeded"
	}
	if !found || !strings.Contains(c.ok("", "jobs", "list", "cust-a"), applyJob) {
		t.Errorf("jobs list lacks the deploy's apply job %s: %+v", applyJob, jobs)
	}
	var job struct {
		Status   string
		Attempts []struct{ Status string }
		History  []struct{ Status string }
	}
	c.json("", &job, "jobs", "show", applyJob)
	if job.Status != "succeeded" || len(job.Attempts) != 1 || len(job.History) < 2 {
		t.Errorf("jobs show: %+v", job)
	}
	if text := c.ok("", "jobs", "show", applyJob); !strings.Contains(text, "attempts:") || !strings.Contains(text, "history:") {
		t.Errorf("jobs show:\n%s", text)
	}

	var want strings.Builder
	for _, ch := range s.logs(applyJob) {
		want.WriteString(ch.Data)
	}
	if want.Len() == 0 {
		t.Fatalf("job %s has no logs", applyJob)
	}
	for _, args := range [][]string{{"logs", applyJob}, {"logs", applyJob, "--follow"}, {"logs", "cust-a", "--step", "web", "--operation", deploy}} {
		if got := c.ok("", args...); got != want.String() {
			t.Errorf("%q printed:\n%s\nwant:\n%s", args, got, want.String())
		}
	}
	c.fails(4, "not found: ", "logs", "job_nope", "--follow")
	// -o json: one LogChunk a line.
	lines := strings.Split(strings.TrimSpace(c.ok("", "logs", applyJob, "--follow", "-o", "json")), "\n")
	var first struct{ Seq int }
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Seq != 1 || len(lines) != len(s.logs(applyJob)) {
		t.Errorf("logs -o json: %d lines, first %q (%v)", len(lines), lines[0], err)
	}
}

// approveOnTerminal approves the step on a terminal (script(1) gives the CLI
// one): answered n, it stays waiting; answered y, it is approved.
func (c *cli) approveOnTerminal(step string) {
	c.t.Helper()
	for _, answer := range []string{"n", "y"} {
		cmd := exec.Command("script", "-q", "-e", "-c", c.bin+" approve cust-a "+step, "/dev/null")
		cmd.Env = c.env
		in, err := cmd.StdinPipe()
		if err != nil {
			c.t.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			c.t.Fatal(err)
		}
		io.WriteString(in, answer+"\n")
		err = cmd.Wait()
		prompted := strings.Contains(out.String(), "plan of step "+step) && strings.Contains(out.String(), "Approve step "+step+"? [y/N]")
		switch {
		case answer == "n" && (!prompted || cmd.ProcessState.ExitCode() != 1 || !strings.Contains(out.String(), "step "+step+" left waiting")),
			answer == "y" && (!prompted || err != nil || !strings.Contains(out.String(), "approved step "+step)):
			c.t.Fatalf("approve on a terminal, answered %s: %v\n%s", answer, err, out.String())
		}
	}
}
