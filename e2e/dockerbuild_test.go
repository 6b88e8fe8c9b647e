package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

// writeDockerBuildApp writes an app whose docker_build component "web"
// builds a multi-stage Dockerfile FROM base with a build argument, and
// whose terraform component "api" takes the image by template.
func writeDockerBuildApp(t *testing.T, base, run string) string {
	t.Helper()
	dir := writeArtifactsApp(t, "unused.example/x:1")
	files := map[string]string{
		"components/web.toml": "name = \"web\"\ntype = \"docker_build\"\ncontext = \"images/web\"\ntarget = \"runtime\"\n\n[build_args]\nBASE = \"" + base + "\"\nGREETING = \"bonjour\"\n",
		"images/web/Dockerfile": "ARG BASE=" + base + "\nFROM ${BASE} AS build\nARG GREETING\nRUN " + run + "\n\n" +
			"FROM ${BASE} AS runtime\nCOPY --from=build /out/greeting /greeting\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDockerBuildSyncDeploy: a docker_build component is built by the org's
// build runner with the Docker engine, synced by digest into the install's
// registry and handed to its dependent by template; syncing the same
// context again reuses the build; a failing RUN fails the build with the
// builder's message, records no digest, and its dependent is skipped.
func TestDockerBuildSyncDeploy(t *testing.T) {
	testutil.NeedDockerEngine(t)
	s := newStack(t, stackOptions{})
	ctx := context.Background()
	baseRef := pushToolBase(t)
	app := writeDockerBuildApp(t, baseRef.String(), `["/tool", "write", "/out/greeting"]`)
	s.syncConfig(app)
	inst, _ := s.newInstall("cust-docker")
	op := s.provisioned(inst, 5*time.Minute)
	comps := s.installComponentList(inst)
	s.checkInstallRegistryHoldsBuilds(inst, comps)
	var web installComponent
	for _, c := range comps {
		if c.Component == "web" {
			web = c
		}
	}
	s.checkProvenance(web.BuildID, map[string]string{"BASE": baseRef.String(), "GREETING": "bonjour"})
	outs, err := s.store.ListOutputs(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	var api protocol.TerraformApplyOutputs
	json.Unmarshal([]byte(outs["api"]), &api)
	want := s.installRegistry(inst) + "/outpost/web@" + web.Digest
	if got := strings.Trim(string(api.Outputs["image"].Value), `"`); web.Digest == "" || got != want {
		t.Errorf("api deployed image %q, want the install registry's %q", got, want)
	}
	s.assertRegistryCredentialsHidden(inst, op)

	// The same context again: the build is reused.
	s.syncConfig(app)
	builds, _ := s.store.ListBuilds(ctx, s.orgID, s.install.AppID, store.BuildFilter{Component: "web"})
	if len(builds) != 1 {
		t.Errorf("%d builds of web after syncing an unchanged context, want 1", len(builds))
	}

	// A failing RUN: the build fails with the builder's message, and api,
	// which takes its image, is skipped.
	s.syncConfig(writeDockerBuildApp(t, baseRef.String(), `["/tool", "fail"]`))
	inst2, _ := s.newInstall("cust-docker-fail")
	failed := s.waitOp(inst2, s.startOp(inst2, "/provision", nil).ID, 5*time.Minute)
	w := failed.step(t, "web")
	if failed.Status != status.OpFailed || w.Status != status.StepFailed || !strings.Contains(w.Error, "exit code: 3") {
		t.Fatalf("deploy %s, web %s: %q; want failed with the builder's message", failed.Status, w.Status, w.Error)
	}
	if a := failed.step(t, "api"); a.Status != status.StepSkipped {
		t.Errorf("api %s, want skipped", a.Status)
	}
	builds, _ = s.store.ListBuilds(ctx, s.orgID, s.install.AppID, store.BuildFilter{Component: "web"})
	for _, b := range builds {
		if b.Status == status.BuildFailed && b.Digest != "" {
			t.Errorf("failed build %s names digest %s", b.ID, b.Digest)
		}
	}
}

// checkProvenance: the API shows how the build's image was made: its source
// digest, its build arguments and the builder.
func (s *stack) checkProvenance(buildID string, args map[string]string) {
	s.t.Helper()
	var b struct {
		SourceDigest string            `json:"source_digest"`
		Provenance   map[string]string `json:"provenance"`
	}
	s.get("/v1/apps/"+s.install.AppID+"/builds/"+buildID, &b)
	var gotArgs map[string]string
	json.Unmarshal([]byte(b.Provenance[protocol.AnnotationBuildArgs]), &gotArgs)
	if b.Provenance[protocol.AnnotationSourceDigest] != b.SourceDigest || !maps.Equal(gotArgs, args) ||
		!strings.HasPrefix(b.Provenance[protocol.AnnotationBuilder], "BuildKit in Docker Engine ") {
		s.t.Errorf("build %s provenance %v (source %s), want its source digest, build arguments %v and builder", buildID, b.Provenance, b.SourceDigest, args)
	}
}

// pushToolBase starts a stand-in public registry (until the test ends) and
// pushes testutil.ToolImage into it: a base image with a registry host.
func pushToolBase(t testing.TB) name.Reference {
	t.Helper()
	public, err := registry.Start(context.Background(), registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { public.Close() })
	base, _ := name.ParseReference(public.Addr()+"/tools/base:1", name.Insecure)
	if err := remote.Write(base, testutil.ToolImage(t)); err != nil {
		t.Fatal(err)
	}
	return base
}
