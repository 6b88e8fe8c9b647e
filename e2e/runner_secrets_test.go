package e2e

import (
	"context"
	"encoding/json"
	"fmt"
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
)

// A real runner, as root, runs its jobs as uids of their own (--job-user
// 100000-100009). A job that reads the runner's /proc/<pid>/environ (where
// its token is), its token file and its work directory gets nothing; a
// daemon a job leaves behind (OUTPOST_DAEMON=1, in a session of its own)
// cannot read a later job's job.json, though it knows its path.
func TestJobsCannotReadTheRunnersToken(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running jobs as another uid needs the runner to run as root")
	}
	s := newStack(t, stackOptions{})
	root := openDir(t)
	bin := filepath.Join(root, "outpost-runner")
	copyFile(t, runnerBin, bin)
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	state, work, spy := filepath.Join(root, "state"), filepath.Join(root, "work"), filepath.Join(root, "spy")
	tokenFile := filepath.Join(state, "runner-token")
	for _, d := range []string{state, work, spy} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(spy, 0o777); err != nil { // the daemon's notes
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenFile, []byte(s.runTok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--gateway-url", s.gateway, "--work-dir", work, "--token-file", tokenFile,
		"--job-user", "100000-100009", "--cancel-grace", "2s", "--allow-debug-commands")
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "OUTPOST_TOKEN=" + s.runTok}
	p := startProcess(t, cmd)
	s.waitRunnerOnline(s.install.ID)

	pid := strconv.Itoa(p.cmd.Process.Pid)
	probe := fmt.Sprintf(`echo "uid $(id -u)"
for f in /proc/%s/environ %s %s; do
  if head -c 100000 "$f" >/dev/null 2>&1; then echo "READ $f"; head -c 100000 "$f" | tr '\0' '\n'; else echo "DENIED $f"; fi
done
ls %s >/dev/null 2>&1 && echo "LISTED jobs" || echo "DENIED jobs"
env`, pid, tokenFile, state, filepath.Join(work, "jobs"))
	out := s.runJobCommand(t, "probe", probe)
	for _, want := range []string{"DENIED /proc/" + pid + "/environ", "DENIED " + tokenFile, "DENIED jobs"} {
		if !strings.Contains(out, want) {
			t.Errorf("the job's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, s.runTok) || strings.Contains(out, "uid 0\n") {
		t.Errorf("the job ran as root or saw the runner's token:\n%s", out)
	}

	// A job leaves a daemon that tries, in a loop, to read the job.json
	// named in spy/target; a later job's manifest carries a secret.
	daemon := fmt.Sprintf(`OUTPOST_DAEMON=1 setsid sh -c 'echo $$ > %[1]s/pid; id -u > %[1]s/uid
while :; do t=$(cat %[1]s/target 2>/dev/null); if [ -n "$t" ]; then cat "$t" >> %[1]s/read 2>> %[1]s/err; fi; sleep 0.2; done' </dev/null >/dev/null 2>&1 &
echo "uid $(id -u)"`, spy)
	s.runJobCommand(t, "daemon", daemon)
	waitFor(t, 10*time.Second, "the daemon's pid", func() bool { _, err := os.Stat(filepath.Join(spy, "uid")); return err == nil })
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(spy, "pid")); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(n, syscall.SIGKILL)
			}
		}
	})
	const secret = "manifest-secret-7f3a"
	later := s.enqueueCommand(t, "later", []string{"sh", "-c", "id -u; sleep 3", secret})
	target := filepath.Join(work, "jobs", later+"-1", "job.json")
	if err := os.WriteFile(filepath.Join(spy, "target"), []byte(target+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j := s.waitJob(later)
	if j.Status != status.JobSucceeded {
		t.Fatalf("the later job: %s", j.Status)
	}
	read, _ := os.ReadFile(filepath.Join(spy, "read"))
	denied, _ := os.ReadFile(filepath.Join(spy, "err"))
	daemonUID, _ := os.ReadFile(filepath.Join(spy, "uid"))
	if strings.Contains(string(read), secret) {
		t.Errorf("the daemon (uid %s) read the later job's manifest", strings.TrimSpace(string(daemonUID)))
	}
	if !strings.Contains(string(denied), "Permission denied") {
		t.Errorf("the daemon did not try (or was not refused) reading %s: %q", target, denied)
	}
	if logs := s.jobLogText(later); strings.Contains(logs, strings.TrimSpace(string(daemonUID))+"\n") {
		t.Errorf("the later job ran as the daemon's uid %s:\n%s", daemonUID, logs)
	}
}

// A runner that is not root runs its jobs as its own uid: its process is
// not dumpable, so a job of that uid cannot read its /proc/<pid>/environ,
// where the token is (the file would be the uid's to read otherwise).
func TestJobsOfTheRunnersUIDCannotReadItsEnvironment(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the test starts the runner as another uid: it needs root")
	}
	const uid = 100500
	s := newStack(t, stackOptions{})
	root := openDir(t)
	bin, work := filepath.Join(root, "outpost-runner"), filepath.Join(root, "work")
	copyFile(t, runnerBin, bin)
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(work, uid, uid); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--gateway-url", s.gateway, "--work-dir", work, "--cancel-grace", "2s", "--allow-debug-commands")
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "OUTPOST_TOKEN=" + s.runTok}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}}
	p := startProcess(t, cmd)
	s.waitRunnerOnline(s.install.ID)

	env := "/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/environ"
	out := s.runJobCommand(t, "probe", fmt.Sprintf(`echo "uid $(id -u)"; if head -c 100000 %[1]s; then echo; echo "READ %[1]s"; else echo "DENIED %[1]s"; fi`, env))
	if !strings.Contains(out, fmt.Sprintf("uid %d\n", uid)) || !strings.Contains(out, "DENIED "+env) || strings.Contains(out, s.runTok) {
		t.Errorf("a job of the runner's uid %d reading %s:\n%s", uid, env, out)
	}
}

// openDir is a directory every uid may traverse (a job of another uid runs
// the runner binary from it), removed when the test ends.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "outpost-e2e-open-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// enqueueCommand queues a command job on the install's runner, as the
// API's debug commands do.
func (s *stack) enqueueCommand(t *testing.T, name string, args []string) string {
	t.Helper()
	return s.enqueueCommandWithin(t, name, args, time.Minute)
}

// enqueueCommandWithin is enqueueCommand with the job's timeout.
func (s *stack) enqueueCommandWithin(t *testing.T, name string, args []string, timeout time.Duration) string {
	t.Helper()
	m, _ := json.Marshal(protocol.CommandManifest{Args: args})
	j, _, err := s.store.EnqueueJob(context.Background(), store.JobSpec{Key: t.Name() + "/" + name, OrgID: s.orgID,
		RunnerID: s.runnerID, InstallID: &s.install.ID, Type: protocol.JobTypeCommand, Manifest: m, TimeoutMS: timeout.Milliseconds()})
	if err != nil {
		t.Fatal(err)
	}
	return j.ID
}

// runJobCommand runs script with sh in a command job and returns its log.
func (s *stack) runJobCommand(t *testing.T, name, script string) string {
	t.Helper()
	return s.runJobArgs(t, name, "sh", "-c", script)
}

// runJobArgs runs args in a command job, which must succeed, and returns its log.
func (s *stack) runJobArgs(t *testing.T, name string, args ...string) string {
	t.Helper()
	id := s.enqueueCommand(t, name, args)
	if j := s.waitJob(id); j.Status != status.JobSucceeded {
		t.Fatalf("job %s: %s\n%s", name, j.Status, s.jobLogText(id))
	}
	return s.jobLogText(id)
}

func (s *stack) jobLogText(id string) string {
	var b strings.Builder
	for _, c := range s.logs(id) {
		b.WriteString(c.Data)
	}
	return b.String()
}
