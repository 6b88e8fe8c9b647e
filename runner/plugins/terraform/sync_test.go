package terraform_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
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
// build there before it plans and applies. When the source cannot be read,
// it waits for its inputs and takes the module from the install's registry,
// which holds the build already.
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
	src := buildModule(t, vendor, "org/app/app", module(t, app))
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
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(h.logs(j.ID), "outpost: waiting for the variables") {
			if time.Now().After(deadline) {
				t.Fatalf("the job did not come to wait for its inputs:\n%s", h.logs(j.ID))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := h.s.ProvideJobInputs(ctx, j.ID, inputs); err != nil {
			t.Fatal(err)
		}
		var out protocol.TerraformPlanApplyOutputs
		h.succeeded(h.wait(j.ID), &out)
		return j, out
	}

	j, out := run("synced")
	logs := h.logs(j.ID)
	initAt, syncAt := strings.Index(logs, "Terraform has been successfully initialized!"), strings.Index(logs, "outpost: sync ")
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

	// The vendor's registry cannot be read: the install's has the build.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := closed.Addr().String()
	closed.Close()
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
}
