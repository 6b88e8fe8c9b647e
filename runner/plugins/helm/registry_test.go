package helm_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	helmregistry "helm.sh/helm/v3/pkg/registry"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/runner"
	"github.com/outpost-dev/outpost/runner/plugins"
	"github.com/outpost-dev/outpost/runner/plugins/helm"
)

// registryPassword guards the test registry; it must never show.
const registryPassword = "registry-Password-never-shown"

// pushChart starts a registry that wants a credential, pushes the chart to
// it as `helm push` does, and returns the chart's reference by digest.
func pushChart(t *testing.T, files map[string]string) protocol.ArtifactRef {
	t.Helper()
	srv, err := registry.Start(context.Background(), registry.Config{Auth: registry.Static{Username: "outpost", Password: registryPassword}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	creds := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(creds, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	client, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptCredentialsFile(creds),
		helmregistry.ClientOptBasicAuth("outpost", registryPassword))
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Push(chartArchive(t, "shop", files), srv.Addr()+"/charts/shop:0.1.0")
	if err != nil {
		t.Fatalf("helm push: %v", err)
	}
	return protocol.ArtifactRef{
		Registry:   protocol.RegistryAccess{Address: srv.Addr(), Username: "outpost", Password: registryPassword, PlainHTTP: true},
		Repository: "charts/shop",
		Digest:     res.Manifest.Digest,
	}
}

func TestChartFromARegistry(t *testing.T) {
	e := newEnv(t)
	ref := pushChart(t, shop)
	const ns = "shop-registry"
	m := e.manifest(protocol.HelmDeploy, ns, "shop")
	m.CreateNamespace = true
	m.Chart = &ref
	m.Values = valuesJSON(t, map[string]any{"greeting": "from the registry"})

	rel, logs := succeed[protocol.HelmReleaseOutputs](t, m)
	if rel.Revision != 1 || rel.Chart != "shop-0.1.0" || e.configMap(ns, "shop-settings")["greeting"] != "from the registry" {
		t.Errorf("deploy from the registry: %+v", rel)
	}
	if strings.Contains(logs, registryPassword) {
		t.Errorf("the logs show the registry password:\n%s", logs)
	}

	// A wrong password: the registry's refusal, without the password.
	wrong := ref
	wrong.Registry.Password = "wrong-Password-not-shown"
	m.Chart = &wrong
	msg, logs := fail(t, m)
	if !strings.Contains(msg, "pulling "+ref.Registry.Address+"/charts/shop@"+ref.Digest) || !strings.Contains(strings.ToLower(msg), "unauthorized") {
		t.Errorf("pull with a wrong password: %q", msg)
	}
	if strings.Contains(msg+logs, "wrong-Password-not-shown") {
		t.Errorf("the error or the logs show the password: %q\n%s", msg, logs)
	}

	// A digest the repository does not hold.
	missing := ref
	missing.Digest = "sha256:" + strings.Repeat("0", 64)
	m.Chart = &missing
	if msg, _ := fail(t, m); !strings.Contains(msg, "not found") {
		t.Errorf("pull of a missing digest: %q", msg)
	}
	e.onlyRelease(ns, "shop", 1, "deployed")
}

// TestTheRunnerRunsHelmJobs runs a job the way the runner does, in a job
// directory through the job process: the helm job type is the runner's.
func TestTheRunnerRunsHelmJobs(t *testing.T) {
	e := newEnv(t)
	m := e.manifest(protocol.HelmDeploy, "shop-runner", "shop")
	m.CreateNamespace = true
	m.ChartArchive = chartArchive(t, "shop", shop)
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	job, err := json.Marshal(protocol.Job{ID: "job_helm", Type: protocol.JobTypeHelm, Attempt: 1, Manifest: raw})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "job.json"), job, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	if err := runner.RunJobProcessWith(context.Background(), dir, plugins.Registry{protocol.JobTypeHelm: helm.New}, &logs, &logs); err != nil {
		t.Fatal(err)
	}
	res, err := runner.ReadResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out protocol.HelmReleaseOutputs
	if res.Status != protocol.StatusSucceeded || json.Unmarshal(res.Outputs, &out) != nil || out.Revision != 1 {
		t.Fatalf("result %+v\nlogs:\n%s", res, logs.String())
	}
	e.onlyRelease("shop-runner", "shop", 1, "deployed")
}
