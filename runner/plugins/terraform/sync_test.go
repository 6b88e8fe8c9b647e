package terraform_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/runner/ociclient"
	"github.com/outpost-dev/outpost/runner/plugins"
	"github.com/outpost-dev/outpost/runner/plugins/oci"
	"github.com/outpost-dev/outpost/store"
)

// buildModule builds a terraform module artifact into repository of a
// registry, as a build job does, and returns where it is.
func buildModule(t *testing.T, reg *registry.Server, repository string, mod []byte) protocol.ArtifactRef {
	t.Helper()
	m, _ := json.Marshal(protocol.OCIManifest{Operation: protocol.OCIBuildTerraformModule, Component: "app", Source: mod,
		Destination: protocol.OCIDestination{Registry: protocol.RegistryAccess{Address: reg.Addr(), PlainHTTP: true}, Repository: repository}})
	p := oci.New()
	if err := p.Validate(m); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Execute(context.Background(), plugins.Run{Dir: t.TempDir(), Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	raw, err := p.Outputs()
	if err != nil {
		t.Fatal(err)
	}
	var art protocol.Artifact
	if err := json.Unmarshal(raw, &art); err != nil {
		t.Fatal(err)
	}
	return protocol.ArtifactRef{Registry: protocol.RegistryAccess{Address: reg.Addr(), PlainHTTP: true}, Repository: repository, Digest: art.Digest}
}

// A plan_apply job that syncs its module (module_sync) while the install's
// registry is not known yet: it fetches the module from the build's source
// and runs init, then, given its variables and the registry, copies the
// build there before it plans and applies. With the registry known, it
// copies the build while it fetches and initialises the module. When the
// source cannot be read, it takes the module from the install's registry,
// which holds the build already (waiting for its inputs first when they
// bring the registry).
func TestPlanApplySyncsItsModule(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	vendor, err := registry.Start(ctx, registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer vendor.Close()
	install, err := registry.Start(ctx, registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer install.Close()
	src := buildModule(t, vendor, "org/app/app", testutil.TarGz(t, app))
	installAccess := protocol.RegistryAccess{Address: install.Addr(), PlainHTTP: true}
	inputs, _ := json.Marshal(protocol.TerraformInputs{Registry: &installAccess, Variables: map[string]json.RawMessage{
		"name": []byte(`"synced"`), "password": []byte(`"` + password + `"`)}})

	ws := h.inst.ID + ".component.app"
	m := h.manifest(protocol.TerraformPlanApply, ws, nil)
	m.Module = nil
	m.ModuleSync = &protocol.TerraformModuleSync{Source: src, Destination: protocol.OCIDestination{Repository: "outpost/app", Tag: "v1"}}
	run := func(key string) (store.Job, protocol.TerraformPlanApplyOutputs) {
		t.Helper()
		j, _ := h.enqueueSpec(key, m, true)
		h.awaitLog(j.ID, "outpost: waiting for the variables")
		if err := h.s.ProvideJobInputs(ctx, j.ID, inputs); err != nil {
			t.Fatal(err)
		}
		var out protocol.TerraformPlanApplyOutputs
		h.succeeded(h.wait(j.ID), &out)
		return j, out
	}

	j, out := run("synced")
	logs := h.logs(j.ID)
	initAt, syncAt := strings.Index(logs, "outpost: terraform initialised"), strings.Index(logs, "outpost: sync ")
	if initAt < 0 || syncAt < initAt || !strings.Contains(logs, "fetching the module "+vendor.Addr()) {
		t.Errorf("want the module fetched from the source and init run before the sync:\n%s", logs)
	}
	if out.Synced == nil || out.Synced.Digest != src.Digest || !out.Applied {
		t.Fatalf("outputs: synced %+v, applied %v; want the build's digest %s, applied", out.Synced, out.Applied, src.Digest)
	}
	if got := string(h.stateOutputs(ws)["greeting"].Value); got != `"hello synced"` {
		t.Errorf("greeting %s, want \"hello synced\"", got)
	}
	h.lockFree(ws)

	// The install's registry is known when the job is queued (with its
	// variables): the build is copied there while the module, fetched from
	// the source, is initialised, and the copy is done before the plan.
	kws := h.inst.ID + ".component.known"
	known := h.manifest(protocol.TerraformPlanApply, kws, nil)
	known.ModuleSync = &protocol.TerraformModuleSync{Source: src, Destination: protocol.OCIDestination{
		Registry: installAccess, Repository: "outpost/known", Tag: "v1"}}
	known.Variables = map[string]json.RawMessage{"name": []byte(`"known"`), "password": []byte(`"` + password + `"`)}
	var kout protocol.TerraformPlanApplyOutputs
	kj, _ := h.enqueue("known-registry", known)
	h.succeeded(h.wait(kj.ID), &kout)
	logs = h.logs(kj.ID)
	// (The first job initialised the same module: this one reuses its init,
	// from the runner's init cache.)
	syncAt, initAt = strings.Index(logs, "outpost: sync "), strings.Index(logs, "outpost: terraform initialised: reused")
	syncedAt, planAt := strings.Index(logs, "outpost: synced: "+install.Addr()+"/outpost/known holds "+src.Digest), strings.Index(logs, "Plan: ")
	switch {
	case !strings.Contains(logs, "fetching the module "+vendor.Addr()):
		t.Errorf("want the module fetched from the source:\n%s", logs)
	case syncAt < 0 || initAt < syncAt:
		t.Errorf("want the sync started before the module is initialised, to overlap it:\n%s", logs)
	case syncedAt < 0 || planAt < syncedAt:
		t.Errorf("want the sync done before the plan:\n%s", logs)
	}
	if kout.Synced == nil || kout.Synced.Digest != src.Digest || !kout.Applied {
		t.Fatalf("outputs: synced %+v, applied %v; want the build's digest %s, applied", kout.Synced, kout.Applied, src.Digest)
	}
	if _, _, err := ociclient.FetchTerraformModule(ctx, protocol.ArtifactRef{Registry: installAccess, Repository: "outpost/known", Digest: src.Digest}); err != nil {
		t.Errorf("the install's registry does not serve the build: %v", err)
	}
	h.lockFree(kws)

	// The vendor's registry cannot be read: the install's has the build.
	unreachable := testutil.FreeAddr(t)
	m.ModuleSync.Source.Registry.Address = unreachable
	j, out = run("source-down")
	if logs := h.logs(j.ID); !strings.Contains(logs, "it is fetched from the install's registry once the job has its inputs") ||
		!strings.Contains(logs, install.Addr()+"/outpost/app already holds "+src.Digest) {
		t.Errorf("want the fallback to the install's registry:\n%s", logs)
	}
	if out.Synced == nil || out.Synced.Digest != src.Digest || out.Applied || out.Plan.HasChanges {
		t.Errorf("outputs: synced %+v, applied %v; want the build's digest, no changes", out.Synced, out.Applied)
	}
	h.lockFree(ws)

	// The same with the install's registry known when the job is queued.
	known.ModuleSync.Source.Registry.Address = unreachable
	kj, _ = h.enqueue("known-registry-source-down", known)
	kout = protocol.TerraformPlanApplyOutputs{}
	h.succeeded(h.wait(kj.ID), &kout)
	if logs := h.logs(kj.ID); !strings.Contains(logs, "it is fetched from the install's registry") ||
		!strings.Contains(logs, install.Addr()+"/outpost/known already holds "+src.Digest) {
		t.Errorf("want the fallback to the install's registry:\n%s", logs)
	}
	if kout.Synced == nil || kout.Synced.Digest != src.Digest || kout.Plan.HasChanges {
		t.Errorf("outputs: synced %+v, changes %v; want the build's digest, no changes", kout.Synced, kout.Plan.HasChanges)
	}
	h.lockFree(kws)
}
