package terraform

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The helper process of TestKillLeftovers: it adopts orphans as a job
// process does, has a shell leave two processes and a daemon behind, checks
// that both ways of listing its children agree, kills the leftovers and
// prints what it found and the daemon's pid.
func TestKillLeftoversHelper(t *testing.T) {
	if os.Getenv("OUTPOST_TEST_LEFTOVERS") == "" {
		t.Skip("run by TestKillLeftovers")
	}
	if err := adoptOrphans(); err != nil {
		t.Fatal(err)
	}
	const bg = " </dev/null >/dev/null 2>&1 & "
	out, err := exec.Command("sh", "-c", "sleep 60"+bg+"sleep 60"+bg+"OUTPOST_DAEMON=1 sleep 60"+bg+"echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	daemon := strings.TrimSpace(string(out))
	var task, scanned []int
	for range 50 { // the shell's exit may still be on its way
		task, scanned = pidsOf(t, taskChildren), pidsOf(t, func(p int) ([]child, bool) { return scanChildren(p), true })
		if len(task) == 3 && slices.Equal(task, scanned) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(task) != 3 || !slices.Equal(task, scanned) {
		t.Fatalf("children: %v from the task lists, %v from /proc; want the same three", task, scanned)
	}
	fmt.Printf("killed=%d daemon=%s\n", killLeftovers(), daemon)
}

func pidsOf(t *testing.T, list func(int) ([]child, bool)) []int {
	cs, ok := list(os.Getpid())
	if !ok {
		t.Skip("no /proc/<pid>/task/<tid>/children on this kernel")
	}
	var pids []int
	for _, c := range cs {
		pids = append(pids, c.pid)
	}
	slices.Sort(pids)
	return pids
}

// A job process kills what terraform's provisioners leave behind, but a
// daemon (DaemonEnv).
func TestKillLeftovers(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKillLeftoversHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "OUTPOST_TEST_LEFTOVERS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "SKIP") {
		t.Skipf("helper skipped:\n%s", out)
	}
	var killed, daemon int
	for _, line := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(line, "killed=%d daemon=%d", &killed, &daemon); err == nil {
			break
		}
	}
	if daemon == 0 {
		t.Fatalf("helper said nothing:\n%s", out)
	}
	defer syscall.Kill(daemon, syscall.SIGKILL)
	if killed != 2 {
		t.Errorf("killed %d leftovers, want 2\n%s", killed, out)
	}
	if err := syscall.Kill(daemon, 0); err != nil {
		t.Errorf("the daemon (%d) was killed too: %v", daemon, err)
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(daemon) + "/stat"); err == nil && strings.Contains(string(b), ") Z ") {
		t.Errorf("the daemon is a zombie: %s", b)
	}
}
