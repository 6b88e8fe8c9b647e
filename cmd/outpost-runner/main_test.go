package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner"
)

// binary is the outpost-runner binary, built once by TestMain.
var binary string

func TestMain(m *testing.M) { testutil.RunWithMain(m, "outpost-runner", &binary) }

// outpostRunner runs the binary with args and only the given environment.
func outpostRunner(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// TestRunnerDoesNotLinkTheControlPlane keeps the runner binary small and
// free of the control plane, the store and Temporal, as the design requires.
func TestRunnerDoesNotLinkTheControlPlane(t *testing.T) {
	testutil.CheckDeps(t, "outpost-runner", "github.com/outpost-dev/outpost/protocol", append(testutil.ControlPlane,
		// Heavy to initialise in every job process: helm jobs and chart builds run in
		// outpost-runner-helm (docs/architecture/processes.md).
		"helm.sh/helm/v3/pkg/action",
		"helm.sh/helm/v3/pkg/chartutil",
		"github.com/santhosh-tekuri/jsonschema/",
		"k8s.io/client-go/kubernetes/scheme",
		"k8s.io/kubectl/",
		"github.com/mattn/go-runewidth",
		// Image builds (docker_image jobs) run in outpost-runner-helm too.
		"github.com/moby/moby/client",
		"github.com/moby/buildkit/",
	))
}

func TestVersion(t *testing.T) {
	stdout, _, code := outpostRunner(t, nil, "version")
	if code != 0 || stdout != fmt.Sprintf("outpost-runner %s (protocol %s)\n", runner.Version, protocol.Version) {
		t.Errorf("version: exit %d, %q", code, stdout)
	}
}

func TestBadFlagsAreNamed(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, nil, "Usage"},
		{nil, []string{"launch"}, `unknown command "launch"`},
		{nil, []string{"run", "--token", "oprn_x"}, "--gateway-url is required"},
		{nil, []string{"run", "--gateway-url", "http://gw"}, "--token is required"},
		{nil, []string{"run", "--gateway-url", "http://gw", "--token", "oprn_x", "--concurrency", "many"}, "-concurrency"},
		{nil, []string{"run", "--gateway-url", "http://gw", "--token", "oprn_x", "--concurrency", "0"}, "--concurrency must be at least 1"},
		{nil, []string{"run", "--gateway-url", "http://gw", "--token", "oprn_x", "--cancel-grace", "soon"}, "-cancel-grace"},
		{nil, []string{"run", "--gateway-url", "http://gw", "--token", "oprn_x", "--colour"}, "-colour"},
		{nil, []string{"run", "--gateway-url", "ftp://gw", "--token", "oprn_x"}, "gateway URL"},
		{nil, []string{"run", "--gateway-url", "http://gw", "--token", "hunter2"}, "token: must start with"},
		{[]string{"OUTPOST_GATEWAY_URL=http://gw", "OUTPOST_TOKEN=oprn_x", "OUTPOST_CONCURRENCY=lots"}, []string{"run"}, "OUTPOST_CONCURRENCY"},
		{nil, []string{"run", "--gateway-url", "http://gw", "--token", "oprn_x", "--health-addr", "8081"}, "health address"},
		{[]string{"OUTPOST_HEALTH_ADDR=localhost"}, []string{"run", "--gateway-url", "http://gw", "--token", "oprn_x"}, "health address"},
		{[]string{"OUTPOST_JOB_TYPES=terraform", "OUTPOST_ACTIONS=migrate"}, []string{"run", "--gateway-url", "http://gw", "--token", "oprn_x"},
			"--actions needs the job type action in --job-types"},
		{nil, []string{"job"}, "--dir is required"},
	} {
		_, stderr, code := outpostRunner(t, tc.env, tc.args...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("outpost-runner %q: exit %d, stderr %q; want non-zero and %q", tc.args, code, stderr, tc.want)
		}
		if strings.Contains(stderr, "hunter2") {
			t.Errorf("outpost-runner %q: the token is in the message: %q", tc.args, stderr)
		}
	}
}

// TestPlanPoliciesThatDoNotCompileStopTheRunner: a customer's policy with
// a mistake is named, file and line, when the runner starts.
func TestPlanPoliciesThatDoNotCompileStopTheRunner(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "no_destroy.rego"), []byte("package acme\n\ndeny contains msg if {\n\tmsg := \n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := outpostRunner(t, []string{"OUTPOST_PLAN_POLICIES=" + dir}, "run", "--gateway-url", "http://127.0.0.1:1", "--token", "oprn_x")
	if code == 0 || !strings.Contains(stderr, "plan policies") || !strings.Contains(stderr, "no_destroy.rego:5") {
		t.Errorf("exit %d, stderr %q: want non-zero naming no_destroy.rego:5", code, stderr)
	}
}

func TestJobCommandWritesTheResult(t *testing.T) {
	dir := t.TempDir()
	manifest, _ := json.Marshal(protocol.NoopManifest{Lines: []string{"one", "two"}, ExitCode: 4, Outputs: map[string]string{"a": "b"}})
	job, _ := json.Marshal(protocol.Job{ID: "job-1", Type: protocol.JobTypeNoop, Attempt: 1, Manifest: manifest})
	if err := os.WriteFile(filepath.Join(dir, "job.json"), job, 0o600); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code := outpostRunner(t, nil, "job", "--dir", dir)
	if code != 0 || stdout != "one\ntwo\n" {
		t.Errorf("job: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	res, err := runner.ReadResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != protocol.StatusFailed || res.ExitCode == nil || *res.ExitCode != 4 ||
		res.Error != "exited with code 4" || string(res.Outputs) != `{"a":"b"}` {
		t.Errorf("result.json: %+v", res)
	}
}

// TestHealthAddrServesLivenessProbes: what the Helm chart's liveness probe
// asks, answered even while the gateway cannot be reached.
func TestHealthAddrServesLivenessProbes(t *testing.T) {
	addr := testutil.FreeAddr(t)
	cmd := exec.Command(binary, "run", "--gateway-url", "http://127.0.0.1:1", "--work-dir", t.TempDir())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "OUTPOST_TOKEN=oprn_x", "OUTPOST_HEALTH_ADDR=" + addr}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err = http.Get("http://" + addr + "/healthz"); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("GET /healthz: %v\nstderr:\n%s", err, stderr.String())
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"ok"`) {
		t.Errorf("GET /healthz: %d %s", resp.StatusCode, body)
	}
}
