package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
)

// pane is the CLI run in a real terminal: a tmux session of its own
// server, 120x40, that shows "CLI exit code N" once the CLI ends (a job's
// log line may say "exit code" too).
type pane struct {
	t    testing.TB
	sock string
	env  []string
}

// newPane runs `outpostctl args...` in a new tmux server's pane.
func (c *cli) newPane(args ...string) *pane {
	c.t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		c.t.Fatal("no tmux on PATH: `bash scripts/tools.sh tmux` installs it")
	}
	p := &pane{t: c.t, sock: filepath.Join(c.t.TempDir(), "tmux.sock"), env: append(c.env, "LANG=C.UTF-8", "TERM=xterm-256color")}
	quoted := []string{shellQuote(c.bin)}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	script := strings.Join(quoted, " ") + `; echo "CLI exit code $?"; exec cat`
	p.tmux("new-session", "-d", "-x", "120", "-y", "40", "sh", "-c", script)
	c.t.Cleanup(func() { exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	return p
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-u", "-S", p.sock}, args...)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is what the pane shows now.
func (p *pane) screen() string { return p.tmux("capture-pane", "-p") }

// waitScreen waits until the screen matches every pattern, and returns it.
func (p *pane) waitScreen(what string, patterns ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		screen, missing := p.screen(), ""
		for _, pat := range patterns {
			if !regexp.MustCompile(pat).MatchString(screen) {
				missing = pat
				break
			}
		}
		if missing == "" {
			p.t.Logf("%s:\n%s", what, screen)
			return screen
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s: the screen lacks %s:\n%s", what, missing, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// row is the line of the screen that holds step's line of the tree, and
// how many do.
func row(screen, step string) (int, int) {
	at, n := -1, 0
	for i, l := range strings.Split(screen, "\n") {
		if regexp.MustCompile(`^[├└]── \S+ ` + step + ` `).MatchString(l) {
			at, n = i, n+1
		}
	}
	return at, n
}

// provision --wait in a real terminal: the step tree (after below gated,
// which it depends on; in a deprovision, gated below after) is redrawn in place
// (the gated step running with its job's last log line, then succeeded, on
// the same row, never repeated) and the summary stays on screen. A Ctrl-C
// during deprovision detaches (exit 130) naming `outpostctl wait`, which
// follows the operation, still running, to its end. A plan waiting for
// approval shows with the commands that approve or deny it. With
// --cancel-on-interrupt a Ctrl-C cancels the operation.
func TestCLITUI(t *testing.T) {
	s := newStack(t, stackOptions{})
	gate := s.syncGatedApp()
	inst, _ := s.newInstall("cust-tui")
	c := newCLI(t, s)

	p := c.newPane("provision", "cust-tui", "--wait")
	running := p.waitScreen("the gated step running, with its log line",
		`(?m)^├── \S+ sandbox +succeeded`, `(?m)^[│ ]*[├└]── \S+ gated +(planning|applying) `, `(?m)^[│ ]+[├└]── › terraform_data\.gated`, `Ctrl-C detaches`)
	before, _ := row(running, "gated")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	done := p.waitScreen("the summary", `(?m)^CLI exit code 0$`)
	for _, want := range []string{`(?m)^provision op_\S+ on cust-tui: succeeded`, `(?m)^└── ✓ gated +succeeded`, `(?m)^ +└── ✓ after +succeeded`,
		`(?m)^provision op_\S+ succeeded in \S+ \(3 steps: 3 succeeded\)$`} {
		if !regexp.MustCompile(want).MatchString(done) {
			t.Errorf("the final screen lacks %s", want)
		}
	}
	if after, n := row(done, "gated"); after != before || n != 1 || strings.Contains(done, "Ctrl-C") || strings.Count(done, " on cust-tui: ") != 1 {
		t.Errorf("the gated step was on row %d, then on row %d (%d times): want it redrawn in place, the hint gone", before, after, n)
	}

	de := c.newPane("deprovision", "cust-tui", "--wait")
	deID := regexp.MustCompile(`deprovision (op_\w+) on`).FindStringSubmatch(de.waitScreen("deprovision's tree", `deprovision op_\w+ on`))[1]
	s.waitAtGate(inst, deID, "waiting for the gate down")
	de.waitScreen("deprovision at the gated step", `(?m)^[│ ]*[├└]── \S+ gated +(planning|applying) `, `› terraform_data\.gated`)
	de.tmux("send-keys", "C-c")
	detached := de.waitScreen("the detach message", `(?m)^CLI exit code 130$`)
	m := regexp.MustCompile("detached from deprovision (op_\\w+); it goes on: `outpostctl wait cust-tui (op_\\w+)`").FindStringSubmatch(strings.ReplaceAll(detached, "\n", ""))
	if m == nil || m[1] != deID || m[2] != deID {
		t.Fatalf("no re-attach message on the screen:\n%s", detached)
	}
	if op := s.getOp(inst, m[1], 0); op.FinishedAt != nil {
		t.Fatalf("the operation ended on the detach: %+v", op)
	}
	os.WriteFile(gate+".down", nil, 0o644)
	if out := c.ok("", "wait", "cust-tui"); !strings.Contains(out, "deprovision "+m[1]+" succeeded in ") {
		t.Fatalf("wait after the detach:\n%s", out)
	}

	os.Remove(gate)
	// A plan waiting for approval shows with the commands that decide it.
	if code := s.do("PUT", "/v1/installs/"+inst+"/approval-mode", map[string]string{"approval_mode": "prompt"}, nil); code != 200 {
		t.Fatalf("approval mode: %d", code)
	}
	ask := c.newPane("provision", "cust-tui", "--wait")
	// (The sandbox first: deprovision destroyed it.)
	asking := ask.waitScreen("a plan waiting for approval", `(?m)^├── \? sandbox +waiting_approval`,
		`(?m)^│ +├── plan: 2 to add, 0 to change, 0 to destroy`, `(?m)^│ +├── # terraform_data\.sandbox will be created`,
		"(?m)^│ +└── `outpostctl approve cust-tui sandbox` or `outpostctl deny cust-tui sandbox`")
	askID := regexp.MustCompile(`provision (op_\w+) on`).FindStringSubmatch(asking)[1]
	if code := s.do("POST", "/v1/installs/"+inst+"/operations/"+askID+"/steps/sandbox/deny", nil, nil); code != 202 {
		t.Fatalf("deny: %d", code)
	}
	denied := ask.waitScreen("the denied summary", `(?m)^CLI exit code 6$`, `(?m)^├── ✗ sandbox +denied`, "provision "+askID+" denied in ")
	if n := strings.Count(denied, "provision "+askID+" on cust-tui"); n != 1 || strings.Contains(denied, "will be created") {
		t.Errorf("the denied tree is drawn %d times, or the plan is left over: want the last frame alone", n)
	}
	if code := s.do("PUT", "/v1/installs/"+inst+"/approval-mode", map[string]string{"approval_mode": "approve-all"}, nil); code != 200 {
		t.Fatalf("approval mode: %d", code)
	}

	cancel := c.newPane("provision", "cust-tui", "--wait", "--cancel-on-interrupt")
	id := regexp.MustCompile(`provision (op_\w+) on`).FindStringSubmatch(cancel.waitScreen("the third tree", `provision op_\w+ on`))[1]
	s.waitAtGate(inst, id, "waiting for the gate")
	cancel.waitScreen("provision at the gate, Ctrl-C cancelling", `› terraform_data\.gated`, `Ctrl-C cancels the operation`)
	cancel.tmux("send-keys", "C-c")
	end := cancel.waitScreen("the cancelled summary", `(?m)^CLI exit code 6$`, `(?m)^[├└]── ⊘ gated +cancelled`)
	if !strings.Contains(end, "provision "+id+" cancelled in ") {
		t.Fatalf("no cancelled summary:\n%s", end)
	}
	if op := s.getOp(inst, id, 0); op.Status != status.OpCancelled {
		t.Fatalf("operation %s is %s, want cancelled", id, op.Status)
	}

	// Without a terminal: plain lines, SIGINT detaches, `cancel` cancels.
	plain := exec.Command(c.bin, "provision", "cust-tui", "--wait")
	var out, errOut testutil.LockedBuffer
	plain.Env, plain.Stdout, plain.Stderr = c.env, &out, &errOut
	if err := plain.Start(); err != nil {
		t.Fatal(err)
	}
	var last operation
	waitFor(t, time.Minute, "the plain provision's operation", func() bool {
		var ops struct{ Operations []operation }
		s.do("GET", "/v1/installs/"+inst+"/operations?limit=1", nil, &ops)
		last = ops.Operations[0]
		return last.ID != id
	})
	s.waitAtGate(inst, last.ID, "waiting for the gate")
	waitFor(t, time.Minute, "the plain line of the gated step", func() bool { return strings.Contains(out.String(), "gated: planning") })
	plain.Process.Signal(os.Interrupt)
	plain.Wait()
	if code := plain.ProcessState.ExitCode(); code != 130 || !strings.Contains(out.String(), "gated: planning") ||
		!strings.Contains(errOut.String(), "detached from provision "+last.ID+"; it goes on: `outpostctl wait cust-tui "+last.ID+"`") {
		t.Fatalf("plain provision --wait, interrupted: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	if cancelled := c.ok("", "cancel", "cust-tui"); !strings.Contains(cancelled, "cancelling provision "+last.ID) {
		t.Fatalf("cancel: %s", cancelled)
	}
	waited, stderr, code := c.run("", "wait", "cust-tui", last.ID)
	if code != 6 || !strings.Contains(waited, "provision "+last.ID+" cancelled in ") || !strings.Contains(stderr, "cancelled") {
		t.Fatalf("wait for the cancelled operation: exit %d\n%s\n%s", code, waited, stderr)
	}
}
