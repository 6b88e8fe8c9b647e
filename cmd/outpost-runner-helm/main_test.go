package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner"
)

// runJob runs the job as the runner would, "<bin> job --dir DIR", and
// returns the result it wrote.
func runJob(t *testing.T, bin string, job protocol.Job) runner.Result {
	t.Helper()
	dir := t.TempDir()
	raw, _ := json.Marshal(job)
	if err := os.WriteFile(filepath.Join(dir, "job.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "job", "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("job: %v\n%s", err, out)
	}
	var res runner.Result
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("result.json: %v %s", err, b)
	}
	return res
}

// The binary runs helm jobs, chart and image builds, support bundles and logs requests only, writes the job's result
// as outpost-runner does, and names what is wrong with its arguments.
func TestRunsHelmJobsOnly(t *testing.T) {
	bin := testutil.BuildMain(t, "outpost-runner-helm")
	res := runJob(t, bin, protocol.Job{ID: "job_1", Type: protocol.JobTypeTerraform, Attempt: 1, Manifest: json.RawMessage(`{}`)})
	if res.Status != protocol.StatusFailed || res.Error != `unknown job type "terraform": this runner runs docker_image, helm, helm_chart, kube_logs, support` {
		t.Errorf("a terraform job: %+v, want refused, naming docker_image, helm, helm_chart, kube_logs and support", res)
	}

	// A helm job with a bad manifest: the plugin's own error, naming the field.
	res = runJob(t, bin, protocol.Job{ID: "job_2", Type: protocol.JobTypeHelm, Attempt: 1, Manifest: json.RawMessage(`{"operation":"deploy"}`)})
	if res.Status != protocol.StatusFailed || !strings.Contains(res.Error, "kubeconfig") {
		t.Errorf("a helm job without a kubeconfig: %+v, want failed naming kubeconfig", res)
	}

	// A helm_chart job is a chart build, and nothing else.
	res = runJob(t, bin, protocol.Job{ID: "job_3", Type: protocol.JobTypeHelmChart, Attempt: 1, Manifest: json.RawMessage(`{"operation":"sync"}`)})
	if res.Status != protocol.StatusFailed || !strings.Contains(res.Error, `operation: a helm_chart job takes build_helm_chart, got "sync"`) {
		t.Errorf("a helm_chart job that syncs: %+v, want failed naming the operation", res)
	}

	var stderr bytes.Buffer
	cmd := exec.Command(bin, "job")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "--dir is required") {
		t.Errorf("job without --dir: %v %q", err, stderr.String())
	}
}

// deployment-image names a bad --deployment and touches no cluster.
func TestDeploymentImageNamesABadDeployment(t *testing.T) {
	for _, args := range [][]string{{}, {"--deployment", "outpost-runner"}, {"--deployment", "ns/"}} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"deployment-image"}, args...), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "--deployment must be NAMESPACE/NAME") || stdout.Len() != 0 {
			t.Errorf("deployment-image %v: exit %d, stderr %q, stdout %q", args, code, stderr.String(), stdout.String())
		}
	}
}
