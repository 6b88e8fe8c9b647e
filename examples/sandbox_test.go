package examples_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/internal/testutil/terraformtest"
)

// The demo sandbox's registry, killed as a machine or container restart
// kills it: the next plan is not empty, and its apply starts the registry
// again on the same port and data; the plan after that is empty.
func TestSandboxRestartsAStoppedRegistry(t *testing.T) {
	tf := terraformtest.Find(t)
	bin := testutil.Build(t, "../cmd/outpost-registry")
	work, local := t.TempDir(), t.TempDir()
	if err := os.CopyFS(work, os.DirFS("demo-app/sandbox")); err != nil {
		t.Fatal(err)
	}
	addr := testutil.FreeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(tf, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TF_IN_AUTOMATION=1",
			"TF_VAR_install_name=demo", "TF_VAR_install_id=inst_restart", "TF_VAR_region=eu", "TF_VAR_local_dir="+local,
			"TF_VAR_registry_port="+port)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	apply := func(what string) {
		t.Helper()
		if out, code := run("apply", "-input=false", "-auto-approve", "-no-color"); code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, code, out)
		}
	}
	planChanges := func() (string, bool) {
		out, code := run("plan", "-input=false", "-no-color", "-detailed-exitcode")
		if code == 1 {
			t.Fatalf("plan: %s", out)
		}
		return out, code == 2
	}
	if out, code := run("init", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("init: %s", out)
	}
	t.Cleanup(func() { run("destroy", "-input=false", "-auto-approve") })
	apply("first apply")
	registry := "http://127.0.0.1:" + port + "/v2/"
	answers(t, registry)
	if out, changes := planChanges(); changes {
		t.Fatalf("the plan after the first apply is not empty:\n%s", out)
	}

	pidFile := filepath.Join(local, "inst_restart", "registry", "pid")
	pid := readPid(t, pidFile)
	syscall.Kill(pid, syscall.SIGKILL)
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(50 * time.Millisecond)
	}
	out, changes := planChanges()
	if !changes || !strings.Contains(out, "terraform_data.registry_process must be replaced") {
		t.Fatalf("the plan with the registry stopped does not restart it:\n%s", out)
	}
	apply("the apply that restarts it")
	answers(t, registry)
	if readPid(t, pidFile) == pid {
		t.Error("the registry's pid did not change")
	}
	if out, changes := planChanges(); changes {
		t.Errorf("the plan after the restart is not empty:\n%s", out)
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil {
		t.Fatalf("the registry's pid file: %v %v", err, perr)
	}
	return pid
}

// answers waits until the registry answers its API's base (401: it asks for
// credentials).
func answers(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the registry does not answer at %s", url)
}
