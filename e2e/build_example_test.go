package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
)

const buildExampleDir = "../examples/build-app"

// TestDockerBuildExampleDeploysThroughAChart: the demo app with
// examples/build-app laid over it, as `outpost dev --example
// examples/demo-app,examples/build-app` runs it, builds the site image FROM
// scratch and the site chart's Deployment runs the install's copy by
// digest. Then the image becomes a multi-stage build FROM a base image the
// test pushed, with a build argument: a deploy rebuilds it and rolls the
// Deployment to the new digest, again from the install's registry.
func TestDockerBuildExampleDeploysThroughAChart(t *testing.T) {
	s, app, inst := provisionBuildExample(t, "cust-site")
	first := s.checkSiteRunsItsImage(inst)
	s.checkProvenance(first.BuildID, map[string]string{"VERSION": "1.0.0"})

	base := pushToolBase(t)
	multiStage := "ARG BASE\nFROM ${BASE} AS build\nARG GREETING\nRUN [\"/tool\", \"write\", \"/out/greeting\"]\n\n" +
		"FROM ${BASE} AS runtime\nCOPY --from=build /out/greeting /greeting\nCOPY public/ /usr/share/nginx/html/\n"
	component := "name = \"site_image\"\ntype = \"docker_build\"\ncontext = \"images/site\"\ntarget = \"runtime\"\n\n" +
		"[build_args]\nBASE = \"" + base.String() + "\"\nGREETING = \"bonjour\"\n"
	for file, content := range map[string]string{"images/site/Dockerfile": multiStage, "components/site_image.toml": component} {
		if err := os.WriteFile(filepath.Join(app, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.syncConfig(app)
	deploy := s.waitOp(inst, s.startOp(inst, "/deploy", nil).ID, 5*time.Minute)
	if deploy.Status != status.OpSucceeded || deploy.step(t, "site").Status != status.StepSucceeded {
		t.Fatalf("deploy of the multi-stage build: %s %q %+v", deploy.Status, deploy.Error, deploy.Steps)
	}
	second := s.checkSiteRunsItsImage(inst)
	if second.Digest == first.Digest {
		t.Errorf("the multi-stage build has the first build's digest %s", first.Digest)
	}
	s.checkProvenance(second.BuildID, map[string]string{"BASE": base.String(), "GREETING": "bonjour"})
}

// provisionBuildExample starts a stack, syncs the demo app with
// examples/build-app laid over it (app, a directory of the test's), and
// provisions an install of it.
func provisionBuildExample(tb testing.TB, name string) (s *stack, app, inst string) {
	tb.Helper()
	testutil.NeedDockerEngine(tb)
	app = filepath.Join(tb.TempDir(), "app")
	copyDir(tb, exampleDir, app)
	copyDir(tb, buildExampleDir, app)
	s, inst = provisionedDemo(tb, app, name)
	return s, app, inst
}

// checkSiteRunsItsImage: the site chart's Deployment runs the build the
// install records for site_image, from the install's registry by digest,
// and that registry holds it.
func (s *stack) checkSiteRunsItsImage(inst string) installComponent {
	s.t.Helper()
	comps := s.installComponents(inst)
	img := comps["site_image"]
	if img.Digest == "" {
		s.t.Fatalf("the install runs no site_image build: %+v", comps)
	}
	s.checkInstallRegistryHoldsBuilds(inst, []installComponent{img})
	d, err := s.kube(inst).AppsV1().Deployments("site").Get(context.Background(), "site", metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	want := s.installRegistry(inst) + "/outpost/site_image@" + img.Digest
	if got := d.Spec.Template.Spec.Containers[0].Image; got != want {
		s.t.Errorf("the site's Deployment runs %q, want the install registry's %q", got, want)
	}
	return img
}
