package build_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// module is a terraform module that needs no provider download: terraform_data
// is built in, and its local-exec provisioner runs in the image's /bin/sh.
var module = map[string]string{"main.tf": `
resource "terraform_data" "greeting" {
  input = "images-ok"
  provisioner "local-exec" {
    command = "echo local-exec as uid $(id -u)"
  }
}
output "greeting" { value = terraform_data.greeting.output }
`}

var chart = map[string]string{
	"Chart.yaml":        "apiVersion: v2\nname: web\nversion: 1.0.0\n",
	"values.yaml":       "replicas: 1\n",
	"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
}

func TestRunnerImageRunsATerraformAndAHelmChartJob(t *testing.T) {
	im := buildImages(t)
	p := newPlane(t)
	p.startRunner(im.runner)

	ws := p.tn.Install.ID + ".images"
	tok := store.NewStateToken()
	lock := p.url + strings.ReplaceAll(protocol.PathLock, "{workspace}", ws)
	tf := p.enqueue(store.JobSpec{Type: protocol.JobTypeTerraform, Workspace: ws, StateToken: tok}, protocol.TerraformManifest{
		Operation: protocol.TerraformPlanApply, Workspace: ws, Module: testutil.TarGz(t, module),
		Backend: protocol.TerraformBackend{Address: p.url + strings.ReplaceAll(protocol.PathState, "{workspace}", ws),
			LockAddress: lock, UnlockAddress: lock, Password: tok}})
	access := startRegistry(t)
	hc := p.enqueue(store.JobSpec{Type: protocol.JobTypeHelmChart}, protocol.OCIManifest{
		Operation: protocol.OCIBuildHelmChart, Component: "web", Source: testutil.TarGz(t, chart),
		Destination: protocol.OCIDestination{Registry: access, Repository: "org/app/web"}})

	var applied protocol.TerraformPlanApplyOutputs
	p.succeeded(tf.ID, &applied)
	if !applied.Applied || applied.Plan.Add != 1 {
		t.Errorf("terraform job outputs: %+v; want one resource added and applied", applied)
	}
	if logs := p.logs(tf.ID); !strings.Contains(logs, "local-exec as uid 65532") {
		t.Errorf("the terraform job's logs lack local-exec's line:\n%s", logs)
	}
	state, err := p.s.GetTerraformState(context.Background(), p.tn.Org.ID, ws)
	if err != nil || !strings.Contains(string(state.State), `"images-ok"`) {
		t.Errorf("terraform state on the gateway: %v\n%s", err, state.State)
	}

	var artifact protocol.Artifact
	p.succeeded(hc.ID, &artifact)
	if !strings.HasPrefix(artifact.Digest, "sha256:") || artifact.ArtifactType != protocol.MediaTypeHelmChartConfig {
		t.Errorf("helm chart job's artifact: %+v", artifact)
	}
}

func TestRunnerImageDeploysAHelmChart(t *testing.T) {
	im := buildImages(t)
	c := localclustertest.Start(t)
	kubeconfig, err := os.ReadFile(c.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	p := newPlane(t)
	p.startRunner(im.runner)

	under := map[string]string{}
	for name, content := range chart {
		under["web/"+name] = content
	}
	j := p.enqueue(store.JobSpec{Type: protocol.JobTypeHelm}, protocol.HelmManifest{Operation: protocol.HelmDeploy,
		Kubeconfig: string(kubeconfig), Release: "web", Namespace: "images", CreateNamespace: true, ChartArchive: testutil.TarGz(t, under)})
	var release protocol.HelmReleaseOutputs
	p.succeeded(j.ID, &release)
	if release.Status != "deployed" || release.Chart != "web-1.0.0" || len(release.Objects) != 1 ||
		release.Objects[0].Kind != "ConfigMap" || release.Objects[0].Name != "web" {
		t.Errorf("helm release: %+v", release)
	}
}

// plane is a runner gateway on a fresh PostgreSQL database, with a tenant
// whose install runner the container is.
type plane struct {
	t   *testing.T
	s   *store.Store
	tn  storetest.Tenant
	url string
}

func newPlane(t *testing.T) *plane {
	s := storetest.Open(t, store.Postgres)
	tn := storetest.NewTenant(t, s)
	g := gateway.New(gateway.Config{Store: s, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { g.Run(ctx); close(done) }()
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		cancel()
		<-done
	})
	return &plane{t: t, s: s, tn: tn, url: srv.URL}
}

// startRunner runs the runner image on the host's network (the gateway
// listens on loopback) with the install's registration token, as the chart does.
func (p *plane) startRunner(image string) {
	name := "outpost-images-" + strings.ToLower(store.NewID("r"))
	docker(p.t, "run", "-d", "--name", name, "--network", "host",
		"-e", "OUTPOST_GATEWAY_URL="+p.url, "-e", "OUTPOST_TOKEN="+p.tn.RegistrationToken,
		"-e", "OUTPOST_TOKEN_FILE=/var/lib/outpost-runner/runner-token", "-e", "OUTPOST_NAME=images", image)
	p.t.Cleanup(func() {
		if p.t.Failed() {
			p.t.Logf("runner container's log:\n%s", docker(p.t, "logs", name))
		}
		docker(p.t, "rm", "-f", name)
	})
}

func (p *plane) enqueue(spec store.JobSpec, manifest any) store.Job {
	p.t.Helper()
	raw, err := json.Marshal(manifest)
	if err != nil {
		p.t.Fatal(err)
	}
	spec.Key, spec.OrgID, spec.RunnerID, spec.InstallID = store.NewID("key"), p.tn.Org.ID, p.tn.Runner.ID, &p.tn.Install.ID
	spec.Manifest, spec.TimeoutMS = raw, (5 * time.Minute).Milliseconds()
	j, _, err := p.s.EnqueueJob(context.Background(), spec)
	if err != nil {
		p.t.Fatal(err)
	}
	return j
}

// succeeded waits for the job to end, fails the test unless it succeeded,
// and decodes its outputs into out.
func (p *plane) succeeded(jobID string, out any) {
	p.t.Helper()
	j := storetest.WaitJob(p.t, p.s, jobID, 5*time.Minute)
	if j.Status != status.JobSucceeded {
		p.t.Fatalf("job %s (%s) %s: %s\n%s", jobID, j.Type, j.Status, j.Error, p.logs(jobID))
	}
	if err := json.Unmarshal([]byte(j.Outputs), out); err != nil {
		p.t.Fatalf("job %s outputs %q: %v", jobID, j.Outputs, err)
	}
}

func (p *plane) logs(jobID string) string { return storetest.JobLogs(p.t, p.s, jobID) }

// startRegistry starts an OCI registry on loopback with one basic-auth user.
func startRegistry(t *testing.T) protocol.RegistryAccess {
	r, err := registry.Start(context.Background(), registry.Config{Auth: registry.Static{Username: "images", Password: "images-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return protocol.RegistryAccess{Address: r.Addr(), Username: "images", Password: "images-secret", PlainHTTP: true}
}
