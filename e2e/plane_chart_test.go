package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// The control plane installed with its chart (charts/outpost) on a node:
// the migration hook brought the fresh database's schema up, the API answers
// through its Service, runners outside the cluster register through the
// gateway's Service (the install's with its one-time registration token),
// and the demo app provisions: built by the org's build runner into the
// vendor registry the api pods serve, every job run once.
func TestControlPlaneChartOnANode(t *testing.T) {
	p := startChartPlane(t)
	res, err := http.Get(p.apiURL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz through the API's Service: %d", res.StatusCode)
	}
	if v, err := p.store.SchemaVersion(context.Background()); err != nil || v != store.LatestSchemaVersion() {
		t.Fatalf("schema version %d (%v) after the install, want %d: the migration hook did not run", v, err, store.LatestSchemaVersion())
	}

	s := p.replicas().demoApp(t)
	inst, _ := s.newInstall("cust-chart", map[string]any{"name": "db_password", "value": "pw", "sensitive": true})
	s.waitRunnerOnline(inst)
	began := time.Now()
	op := s.provisioned(inst, 6*time.Minute)
	t.Logf("the demo app provisioned in %s", time.Since(began).Round(time.Second))
	s.checkJobsRanOnce(inst, op, status.SandboxStep, "network", "database", "cache", "api", "cluster", "web")
	s.checkBuiltOnce(inst)
}

// The image scripts/docker.sh builds, the chart's default, runs under the
// chart: non-root on a read-only root, the migration hook, the API answering
// through its Service. Building it takes many minutes, so the test takes one
// built from this tree beforehand, named by OUTPOST_CHART_IMAGE, loaded into
// the node from the local Docker engine; it skips without:
//
//	OUTPOST_IMAGE_REPO=outpost-test.local OUTPOST_VERSION=test bash scripts/docker.sh
//	OUTPOST_CHART_IMAGE=outpost-test.local/outpost:test go test ./e2e/ -run TestControlPlaneChartRunsTheBuiltImage
func TestControlPlaneChartRunsTheBuiltImage(t *testing.T) {
	ref := os.Getenv("OUTPOST_CHART_IMAGE")
	if ref == "" {
		t.Skip("OUTPOST_CHART_IMAGE names no image built by scripts/docker.sh from this tree")
	}
	if out, err := exec.Command("docker", "image", "inspect", ref).CombinedOutput(); err != nil {
		t.Fatalf("OUTPOST_CHART_IMAGE=%s: not in the local Docker engine: %v %s", ref, err, out)
	}
	p := startChartPlaneWith(t, ref)
	if code := apiCall(t, p.apiURL, p.token, "GET", "/v1/runners", nil, nil); code != http.StatusOK {
		t.Fatalf("GET /v1/runners through the API's Service: %d", code)
	}
	if v, err := p.store.SchemaVersion(context.Background()); err != nil || v != store.LatestSchemaVersion() {
		t.Fatalf("schema version %d (%v), want %d", v, err, store.LatestSchemaVersion())
	}
}

// Upgrades that lose nothing: `helm upgrade` to a new image while an
// operation is in flight (a job in the middle of a slow terraform apply, its
// log followed with outpostctl, a step waiting for approval) replaces every
// api and worker pod while no call of the runner fails, and the operation
// then ends as it would have: the approval is given, the apply ends, every
// job ran once, the followed log holds every line once, the follower never
// failed. `helm rollback` then brings v1 back, which still
// runs operations. The same with a migration in the upgrade (v3 adds a
// column in its pre-upgrade hook, before any v3 pod starts): the v1 pods run
// on until replaced, and after the rollback v1 runs on the newer schema.
func TestControlPlaneChartUpgradesLoseNothing(t *testing.T) {
	p := startChartPlane(t)
	p.pushImage(planeV2)
	p.pushImage(planeV3)
	ctl := outpostctl(t)
	gates := t.TempDir()
	s := p.replicas().app(t, upgradeAppDir(t, gates))

	a := startInFlight(t, s, ctl, "cust-a", gates)
	p.upgradeDuring(a, planeV2)
	a.finish()
	p.rollback(1, planeV1)
	p.checkServes(s, a.inst)

	b := startInFlight(t, s, ctl, "cust-b", gates)
	p.upgradeDuring(b, planeV3)
	p.checkMigrated()
	b.finish()
	p.rollback(1, planeV1)
	p.checkServes(s, b.inst)
	p.checkLogSays("api", "the database schema is newer than this outpost's")
}

// upgradeAppDir is testdata/upgrade-app with its gates in gateDir.
func upgradeAppDir(t testing.TB, gateDir string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "upgrade-app")
	copyDir(t, "testdata/upgrade-app", dir)
	cfg := filepath.Join(dir, "components", "slow.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(string(b), "GATE_DIR", gateDir)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// upgradeDuring upgrades the release to version v while f is in flight,
// and checks that every api and worker pod was replaced and that f's job
// still runs, on its first attempt, its log still followed.
func (p *chartPlane) upgradeDuring(f *inFlight, v string) {
	p.t.Helper()
	before := p.pods()
	lines := len(f.follow.lines())
	began := time.Now()
	if _, err := p.helm.Upgrade(planeRelease, p.chart, p.values(v), 5*time.Minute); err != nil {
		p.t.Fatalf("helm upgrade to %s: %v", v, err)
	}
	p.waitRolledOut(v)
	ready := time.Since(began)
	for name := range p.pods() {
		if _, ok := before[name]; ok {
			p.t.Errorf("pod %s outlived the upgrade to %s", name, v)
		}
	}
	f.follow.waitLines(p.t, lines+10)
	if j := f.s.job(f.job); len(j.Attempts) != 1 || j.Attempts[0].Status != status.JobRunning {
		p.t.Fatalf("slow's apply job after the upgrade: %+v; want its first attempt still running", j.Attempts)
	}
	for _, e := range f.s.installRunner(f.inst).ConnectionErrors {
		if e.At.After(began) {
			p.t.Errorf("a call of the runner failed during the upgrade to %s: %+v", v, e)
		}
	}
	p.t.Logf("upgrade to %s: every pod ready %s after helm upgrade began; longest gap in the followed log %s",
		v, ready.Round(time.Millisecond), f.follow.maxGap(began).Round(time.Millisecond))
}

// rollback is `helm rollback` to revision, whose pods run version v.
func (p *chartPlane) rollback(revision int, v string) {
	p.t.Helper()
	if err := p.helm.Rollback(planeRelease, revision, 5*time.Minute); err != nil {
		p.t.Fatalf("helm rollback to %d: %v", revision, err)
	}
	p.waitRolledOut(v)
}

// checkServes checks the control plane runs an operation end to end: a
// reprovision of inst, with nothing to change (nothing waits for approval).
func (p *chartPlane) checkServes(s *stack, inst string) {
	p.t.Helper()
	if op := s.waitOp(inst, s.startOp(inst, "/reprovision", nil).ID, 5*time.Minute); op.Status != status.OpSucceeded {
		p.t.Fatalf("reprovision of %s: %s %q %+v", inst, op.Status, op.Error, op.Steps)
	}
}

// checkMigrated checks v3's hook applied its migration: one more version,
// and its column.
func (p *chartPlane) checkMigrated() {
	p.t.Helper()
	db := p.store.DB()
	var name string
	if err := db.Raw("SELECT name FROM schema_migrations WHERE version = ?", store.LatestSchemaVersion()+1).Scan(&name).Error; err != nil || name != "upgrade test: jobs.upgrade_note" {
		p.t.Fatalf("migration %d: %q %v; want v3's", store.LatestSchemaVersion()+1, name, err)
	}
	var n int
	if err := db.Raw("SELECT count(*) FROM information_schema.columns WHERE table_name = 'jobs' AND column_name = 'upgrade_note'").Scan(&n).Error; err != nil || n != 1 {
		p.t.Fatalf("column jobs.upgrade_note: %d %v", n, err)
	}
}

// checkLogSays checks a pod of the component logged text.
func (p *chartPlane) checkLogSays(component, text string) {
	p.t.Helper()
	var logs []string
	for _, pod := range p.pods() {
		if pod.Labels["app.kubernetes.io/component"] != component {
			continue
		}
		b, err := p.cs.CoreV1().Pods(planeNS).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
		if err != nil {
			p.t.Fatal(err)
		}
		if strings.Contains(string(b), text) {
			return
		}
		logs = append(logs, fmt.Sprintf("%s:\n%s", pod.Name, b))
	}
	p.t.Errorf("no %s pod logged %q:\n%s", component, text, strings.Join(logs, "\n"))
}

// runnerView is the API's view of a runner.
type runnerView struct {
	ID               string                     `json:"id"`
	InstallID        *string                    `json:"install_id"`
	Status           string                     `json:"status"`
	ConnectionErrors []protocol.ConnectionError `json:"connection_errors"`
}

// installRunner is the install's runner, as the API shows it.
func (s *stack) installRunner(inst string) runnerView {
	s.t.Helper()
	var list struct{ Runners []runnerView }
	s.get("/v1/runners", &list)
	for _, r := range list.Runners {
		if r.InstallID != nil && *r.InstallID == inst {
			return r
		}
	}
	s.t.Fatalf("no runner of install %s", inst)
	return runnerView{}
}
