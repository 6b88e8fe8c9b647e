package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

// installComponent is the API's view of which build an install's component
// runs.
type installComponent struct {
	Component string `json:"component"`
	BuildID   string `json:"build_id"`
	Digest    string `json:"digest"`
	Reference string `json:"reference"`
	// ConfigVersion is the config version it was deployed from.
	ConfigVersion int `json:"config_version"`
}

// writeArtifactsApp writes an app whose components are an external image
// (copied from a stand-in public registry) and a terraform module that
// takes the image as the install's registry names it.
func writeArtifactsApp(t *testing.T, image string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	files := map[string]string{
		"outpost.toml":        "[app]\nname = \"demo\"\n\n[sandbox]\nsource = \"sandbox\"\n\n[sandbox.variables]\ninstall_id = \"{{ .install.id }}\"\n",
		"sandbox/main.tf":     "resource \"terraform_data\" \"sandbox\" {\n  input = \"sandbox\"\n}\n",
		"components/web.toml": "name = \"web\"\ntype = \"container_image\"\nimage = \"" + image + "\"\nplain_http = true\n",
		"components/api.toml": "name = \"api\"\ntype = \"terraform_module\"\nsource = \"modules/api\"\n\n[variables]\nimage = \"{{ .components.web.outputs.image }}\"\n",
		"modules/api/main.tf": "variable \"image\" {\n  type = string\n}\n\nresource \"terraform_data\" \"deployment\" {\n  input = var.image\n}\n\noutput \"image\" {\n  value = terraform_data.deployment.output\n}\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Every component is built once into the vendor registry, synced by digest
// into the install's own registry, and deployed from there: the install's
// registry holds the same digests, a terraform component gets the image as
// the install's registry names it, and with the vendor registry stopped a
// deploy still succeeds.
func TestBuildSyncDeploy(t *testing.T) {
	s := newStack(t, stackOptions{})
	ctx := context.Background()

	// The stand-in public registry, with an image the test pushes.
	publicRef, srcDigest := publicImage(t, "library/app:1.0", 1<<20, 3)

	s.syncConfig(writeArtifactsApp(t, publicRef))
	inst, _ := s.newInstall("cust-art")
	s.waitRunnerOnline(inst) // so the operation need not wait for it (checked below)
	op := s.provisioned(inst, 3*time.Minute)

	// Which build each component runs, and that the install's registry
	// holds exactly those digests.
	comps := s.installComponentList(inst)
	if len(comps) != 2 {
		t.Fatalf("install components %+v, want api and web", comps)
	}
	// Under approve-all the terraform component's plan_apply job copied its
	// build into the install's registry itself; the image's step had a
	// sync job (its sync is its deploy).
	if a := op.step(t, "api"); a.SyncJobID == "" || a.SyncJobID != a.PlanJobID {
		t.Errorf("api synced by job %q, planned and applied by %q: want the plan_apply job to sync", a.SyncJobID, a.PlanJobID)
	}
	if w := op.step(t, "web"); w.SyncJobID == "" || w.SyncJobID == w.PlanJobID {
		t.Errorf("web synced by job %q: want a sync job", w.SyncJobID)
	}
	installReg := s.installRegistry(inst)
	s.checkInstallRegistryHoldsBuilds(inst, comps)
	for _, c := range comps {
		if c.Component == "web" && c.Digest != srcDigest.String() {
			t.Errorf("the image build is %s, the public image %s: it must be pinned by digest", c.Digest, srcDigest)
		}
	}
	outs, err := s.store.ListOutputs(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	var api protocol.TerraformApplyOutputs
	if err := json.Unmarshal([]byte(outs["api"]), &api); err != nil {
		t.Fatal(err)
	}
	wantImage := installReg + "/outpost/web@" + srcDigest.String()
	if got := strings.Trim(string(api.Outputs["image"].Value), `"`); got != wantImage {
		t.Errorf("api deployed image %q, want the install registry's %q", got, wantImage)
	}

	// The registry credentials the jobs were given appear nowhere a person
	// could see them.
	s.assertRegistryCredentialsHidden(inst, op)

	// The operation's and the builds' histories replay on today's code.
	s.replay(op.WorkflowID)
	// Its runner online, the operation began and ended with local
	// activities only: it did not wait for the runner through an activity.
	if got := s.activitiesScheduled(op.WorkflowID); slices.ContainsFunc(got, func(a string) bool {
		return a == "BeginOperation" || a == "WaitForRunner" || a == "FinishOperation"
	}) {
		t.Errorf("activities scheduled %v: want no BeginOperation, WaitForRunner or FinishOperation (local activities)", got)
	}
	for _, c := range comps {
		b, _ := s.store.GetBuild(ctx, s.orgID, c.BuildID)
		s.replay(b.WorkflowID)
	}

	// A new build whose module changes nothing terraform manages: the plan
	// is a no-op, and the install now runs the new build.
	app := writeArtifactsApp(t, publicRef)
	mainTF := filepath.Join(app, "modules", "api", "main.tf")
	src2, err := os.ReadFile(mainTF)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mainTF, append(src2, "\n# a comment: a new build, the same infrastructure\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	s.syncConfig(app)
	noop := s.waitOp(inst, s.startOp(inst, "/components/api/deploy", nil).ID, 2*time.Minute)
	if noop.Status != status.OpSucceeded || noop.step(t, "api").Status != status.StepNoChanges {
		t.Fatalf("deploy of a no-op build: %s %+v", noop.Status, noop.Steps)
	}
	for _, c := range s.installComponentList(inst) {
		if c.Component == "api" && c.BuildID == comps[0].BuildID && comps[0].Component == "api" {
			t.Errorf("after a no-op deploy of a new build, api still runs build %s", c.BuildID)
		}
	}

	// The vendor registry goes away: the install depends only on its own.
	s.registry.Close()
	redeploy := s.waitOp(inst, s.startOp(inst, "/components/api/deploy", nil).ID, 2*time.Minute)
	if redeploy.Status != status.OpSucceeded {
		t.Fatalf("deploy with the vendor registry stopped: %s %s %+v", redeploy.Status, redeploy.Error, redeploy.Steps)
	}
}

// installRegistry is the install's registry address, from its sandbox's
// outputs.
func (s *stack) installRegistry(installID string) string {
	s.t.Helper()
	addr, _ := s.installRegistryAuth(installID)
	return addr
}

// installRegistryAuth is the install's registry address and credential,
// from its sandbox's outputs (read from the store: the API hides the
// password).
func (s *stack) installRegistryAuth(installID string) (string, authn.Authenticator) {
	s.t.Helper()
	sb := s.sandboxOutputs(installID)
	str := func(name string) string {
		var v string
		_ = json.Unmarshal(sb.Outputs[name].Value, &v)
		return v
	}
	addr := str("registry_address")
	if addr == "" {
		s.t.Fatalf("sandbox outputs %v: no registry_address", slices.Sorted(maps.Keys(sb.Outputs)))
	}
	if user := str("registry_username"); user != "" {
		return addr, &authn.Basic{Username: user, Password: str("registry_password")}
	}
	return addr, authn.Anonymous
}

// checkInstallRegistryHoldsBuilds checks that each component runs a build
// that succeeded and that the install's own registry serves exactly that
// build's digest where the component's reference says.
func (s *stack) checkInstallRegistryHoldsBuilds(inst string, comps []installComponent) {
	s.t.Helper()
	addr, auth := s.installRegistryAuth(inst)
	for _, c := range comps {
		b, err := s.store.GetBuild(context.Background(), s.orgID, c.BuildID)
		if err != nil || b.Status != status.BuildSucceeded || b.Digest != c.Digest {
			s.t.Fatalf("%s runs build %+v (%v), install component %+v", c.Component, b, err, c)
		}
		ref, err := name.ParseReference(addr+"/outpost/"+c.Component+"@"+c.Digest, name.Insecure)
		if err != nil {
			s.t.Fatal(err)
		}
		desc, err := remote.Head(ref, remote.WithAuth(auth))
		if err != nil || desc.Digest.String() != c.Digest {
			s.t.Errorf("install registry's %s: %+v %v, want %s", ref, desc, err, c.Digest)
		}
		if c.Reference != ref.String() {
			s.t.Errorf("%s reference %q, want %q", c.Component, c.Reference, ref.String())
		}
	}
}

// An external image that does not exist fails its build with the
// registry's answer; the build names no artifact and the deploy that needs
// it fails saying why.
func TestMissingExternalImageFailsTheBuild(t *testing.T) {
	s := newStack(t, stackOptions{})
	public, err := registry.Start(context.Background(), registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer public.Close()
	s.syncConfig(writeArtifactsApp(t, public.Addr()+"/library/missing:1.0"))
	inst, _ := s.newInstall("cust-missing")
	op := s.waitOp(inst, s.startOp(inst, "/provision", nil).ID, 3*time.Minute)
	web := op.step(t, "web")
	if op.Status != status.OpFailed || web.Status != status.StepFailed || !strings.Contains(web.Error, "MANIFEST_UNKNOWN") &&
		!strings.Contains(strings.ToLower(web.Error), "manifest unknown") {
		t.Fatalf("provision %s, web %s: %q; want failed with the registry's answer", op.Status, web.Status, web.Error)
	}
	if api := op.step(t, "api"); api.Status != status.StepSkipped {
		t.Errorf("api %s, want skipped (its dependency's build failed)", api.Status)
	}
	builds, err := s.store.ListBuilds(context.Background(), s.orgID, s.install.AppID, store.BuildFilter{Component: "web"})
	if err != nil || len(builds) == 0 {
		t.Fatalf("builds of web: %v %v", builds, err)
	}
	for _, b := range builds {
		if b.Status != status.BuildFailed || b.Digest != "" {
			t.Errorf("build %s: %s digest %q; a failed build names no artifact", b.ID, b.Status, b.Digest)
		}
	}
}

// assertRegistryCredentialsHidden collects the registry passwords of every
// oci and helm_chart job's manifest (builds and syncs) and of every terraform job that
// synced its build (module_sync), and looks for them in API answers, job
// logs and the Temporal histories of the operation and the builds.
func (s *stack) assertRegistryCredentialsHidden(inst string, op operation) {
	s.t.Helper()
	ctx := context.Background()
	var jobs []store.Job
	if err := s.store.DB().WithContext(ctx).Where("org_id = ? AND type IN ?", s.orgID,
		[]string{protocol.JobTypeOCI, protocol.JobTypeHelmChart, protocol.JobTypeDockerImage, protocol.JobTypeTerraform}).Find(&jobs).Error; err != nil {
		s.t.Fatal(err)
	}
	var secrets []string
	syncs := 0 // sync jobs, and terraform jobs that synced
	for _, j := range jobs {
		if j.Type == protocol.JobTypeTerraform {
			var m protocol.TerraformManifest
			if err := json.Unmarshal([]byte(j.Manifest), &m); err != nil {
				s.t.Fatal(err)
			}
			if m.ModuleSync != nil {
				syncs++
				secrets = append(secrets, m.ModuleSync.Source.Registry.Password, m.ModuleSync.Destination.Registry.Password)
			}
			if j.Inputs != nil { // the install's registry may come with them
				var in protocol.TerraformInputs
				if err := json.Unmarshal([]byte(*j.Inputs), &in); err != nil {
					s.t.Fatal(err)
				}
				if in.Registry != nil {
					secrets = append(secrets, in.Registry.Password)
				}
			}
			continue
		}
		var m protocol.OCIManifest
		if err := json.Unmarshal([]byte(j.Manifest), &m); err != nil {
			s.t.Fatal(err)
		}
		secrets = append(secrets, m.Destination.Registry.Password)
		if m.Artifact != nil {
			syncs++
			secrets = append(secrets, m.Artifact.Registry.Password)
		}
	}
	if syncs < 2 || len(secrets) == 0 {
		s.t.Fatalf("%d jobs, %d of them syncs: want the builds and the syncs", len(jobs), syncs)
	}
	builds, err := s.store.ListBuilds(ctx, s.orgID, s.install.AppID, store.BuildFilter{})
	if err != nil {
		s.t.Fatal(err)
	}
	workflowIDs := []string{op.WorkflowID}
	for _, b := range builds {
		workflowIDs = append(workflowIDs, b.WorkflowID)
	}
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		for _, path := range []string{"/v1/installs/" + inst + "/operations/" + op.ID, "/v1/installs/" + inst + "/jobs",
			"/v1/apps/" + s.install.AppID + "/builds", "/v1/installs/" + inst + "/components", "/v1/installs/" + inst + "/outputs"} {
			var raw json.RawMessage
			s.do("GET", path, nil, &raw)
			if strings.Contains(string(raw), secret) {
				s.t.Fatalf("GET %s shows a registry credential", path)
			}
		}
		for _, j := range jobs {
			if s.logsContain(j.ID, secret) {
				s.t.Fatalf("the logs of job %s show a registry credential", j.ID)
			}
		}
		for _, id := range workflowIDs {
			iter := s.client.GetWorkflowHistory(ctx, id, "", false, 0)
			for iter.HasNext() {
				ev, err := iter.Next()
				if err != nil {
					s.t.Fatal(err)
				}
				if b, _ := json.Marshal(ev); strings.Contains(string(b), secret) {
					s.t.Fatalf("Temporal history of %s holds a registry credential (event %d)", id, ev.EventId)
				}
			}
		}
	}
}
