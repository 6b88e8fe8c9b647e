package oci_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/dockerbuild/engine"
	"github.com/outpost-dev/outpost/runner/ociclient"
	"github.com/outpost-dev/outpost/runner/plugins/oci"
)

func TestValidateNamesTheField(t *testing.T) {
	dest := protocol.OCIDestination{Registry: protocol.RegistryAccess{Address: "127.0.0.1:5000"}, Repository: "org_a/app_1/web"}
	mod := testutil.TarGz(t, module)
	ref := &protocol.ArtifactRef{Registry: dest.Registry, Repository: "org_a/app_1/web", Digest: "sha256:" + strings.Repeat("a", 64)}
	withDest := func(f func(*protocol.OCIDestination)) protocol.OCIDestination { d := dest; f(&d); return d }
	withRef := func(f func(*protocol.ArtifactRef)) *protocol.ArtifactRef { r := *ref; f(&r); return &r }

	for _, tc := range []struct {
		name string
		m    protocol.OCIManifest
		want string
	}{
		{"no operation", protocol.OCIManifest{}, "operation: required"},
		{"unknown operation", protocol.OCIManifest{Operation: "build"}, `operation: must be build_terraform_module, build_helm_chart, build_container_image, build_docker_image, sync or sync_plan, got "build"`},
		{"build without component", protocol.OCIManifest{Operation: protocol.OCIBuildTerraformModule, Source: mod, Destination: dest}, "component: required for build_terraform_module"},
		{"build without source", protocol.OCIManifest{Operation: protocol.OCIBuildHelmChart, Component: "web", Destination: dest}, "source: required for build_helm_chart"},
		{"source not an archive", protocol.OCIManifest{Operation: protocol.OCIBuildTerraformModule, Component: "c", Source: []byte("main.tf"), Destination: dest}, "source: not a gzipped tar archive"},
		{"module without .tf", protocol.OCIManifest{Operation: protocol.OCIBuildTerraformModule, Component: "c", Source: testutil.TarGz(t, map[string]string{"sub/main.tf": ""}), Destination: dest}, "source: the archive holds no .tf or .tf.json file at its root"},
		{"chart without Chart.yaml", protocol.OCIManifest{Operation: protocol.OCIBuildHelmChart, Component: "c", Source: mod, Destination: dest}, "source: the archive holds no Chart.yaml at its root"},
		{"escaping archive", protocol.OCIManifest{Operation: protocol.OCIBuildTerraformModule, Component: "c", Source: testutil.TarGz(t, map[string]string{"../main.tf": ""}), Destination: dest}, `source: "../main.tf": paths must stay inside the directory`},
		{"sync with a source", protocol.OCIManifest{Operation: protocol.OCISync, Artifact: ref, Source: mod, Destination: dest}, "source: sync takes none"},
		{"image without reference", protocol.OCIManifest{Operation: protocol.OCIBuildContainerImage, Component: "c", Image: &protocol.OCIImageSource{}, Destination: dest}, "image.reference: required"},
		{"bad image reference", protocol.OCIManifest{Operation: protocol.OCIBuildContainerImage, Component: "c", Image: &protocol.OCIImageSource{Reference: "Nginx:::"}, Destination: dest}, "image.reference: "},
		{"sync without artifact", protocol.OCIManifest{Operation: protocol.OCISync, Destination: dest}, "artifact: required for sync"},
		{"artifact without digest", protocol.OCIManifest{Operation: protocol.OCISync, Artifact: withRef(func(r *protocol.ArtifactRef) { r.Digest = "latest" }), Destination: dest}, `artifact.digest: must be a digest (sha256:<64 hex digits>), got "latest"`},
		{"artifact without address", protocol.OCIManifest{Operation: protocol.OCISync, Artifact: withRef(func(r *protocol.ArtifactRef) { r.Registry.Address = "" }), Destination: dest}, "artifact.registry.address: required"},
		{"address with scheme", protocol.OCIManifest{Operation: protocol.OCISync, Artifact: ref, Destination: withDest(func(d *protocol.OCIDestination) { d.Registry.Address = "http://r:5000" })}, "destination.registry.address: must be host[:port] without a scheme"},
		{"no destination repository", protocol.OCIManifest{Operation: protocol.OCISync, Artifact: ref, Destination: withDest(func(d *protocol.OCIDestination) { d.Repository = "" })}, "destination.repository: required"},
		{"bad destination repository", protocol.OCIManifest{Operation: protocol.OCISync, Artifact: ref, Destination: withDest(func(d *protocol.OCIDestination) { d.Repository = "Org_A/Web" })}, "destination.repository: "},
		{"bad tag", protocol.OCIManifest{Operation: protocol.OCISync, Artifact: ref, Destination: withDest(func(d *protocol.OCIDestination) { d.Tag = "v1+2" })}, `destination.tag: "v1+2" is not a valid tag`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(tc.m)
			err := pluginFor(tc.m).Validate(raw)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Validate: %v\nwant an error starting with %q", err, tc.want)
			}
		})
	}
	if err := oci.New().Validate(json.RawMessage(`{"operation":"sync","artifact":{"digest":7}}`)); err == nil || !strings.Contains(err.Error(), "artifact.digest") {
		t.Errorf("a number for a digest: %v", err)
	}

	// A chart build is a helm_chart job (outpost-runner-helm), and such a job
	// builds charts only.
	chartBuild, _ := json.Marshal(protocol.OCIManifest{Operation: protocol.OCIBuildHelmChart, Component: "c", Source: testutil.TarGz(t, chart), Destination: dest})
	const wantOCI = "operation: build_helm_chart runs in a helm_chart job (in outpost-runner-helm), not in an oci job"
	if err := oci.New().Validate(chartBuild); err == nil || err.Error() != wantOCI {
		t.Errorf("a chart build in an oci job: %v, want %q", err, wantOCI)
	}
	moduleBuild, _ := json.Marshal(protocol.OCIManifest{Operation: protocol.OCIBuildTerraformModule, Component: "c", Source: mod, Destination: dest})
	const wantChart = `operation: a helm_chart job takes build_helm_chart, got "build_terraform_module" (job type oci runs it)`
	if err := oci.ChartBuilder(chartutil.Save)().Validate(moduleBuild); err == nil || err.Error() != wantChart {
		t.Errorf("a module build in a helm_chart job: %v, want %q", err, wantChart)
	}
	// An image build is a docker_image job (outpost-runner-helm too), and
	// such a job builds images only.
	imageBuild, _ := json.Marshal(protocol.OCIManifest{Operation: protocol.OCIBuildDockerImage, Component: "c", Source: mod,
		Docker: &protocol.OCIDockerBuild{Dockerfile: "Dockerfile"}, Destination: dest})
	const wantImageOCI = "operation: build_docker_image runs in a docker_image job (in outpost-runner-helm), not in an oci job"
	if err := oci.New().Validate(imageBuild); err == nil || err.Error() != wantImageOCI {
		t.Errorf("an image build in an oci job: %v, want %q", err, wantImageOCI)
	}
	const wantImage = `operation: a docker_image job takes build_docker_image, got "build_helm_chart" (job type helm_chart runs it)`
	if err := oci.ImageBuilder(engine.Build)().Validate(chartBuild); err == nil || err.Error() != wantImage {
		t.Errorf("a chart build in a docker_image job: %v, want %q", err, wantImage)
	}
}

// echoingRegistry has nothing (HEAD: 404) and refuses everything else,
// repeating in its answer the credential it was sent, as a careless registry
// or proxy might.
func echoingRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="echo"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		user, pass, _ := r.BasicAuth()
		msg := fmt.Sprintf("user %s with password %s refused (%s)", user, pass, r.Header.Get("Authorization"))
		json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": "UNAUTHORIZED", "message": msg}}})
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestCredentialsAreNeverShown(t *testing.T) {
	const password = "p4ssw0rd-never-shown"
	echo := protocol.RegistryAccess{Address: echoingRegistry(t), Username: "robot", Password: password, PlainHTTP: true}
	_, install := install(t)
	dest := protocol.OCIDestination{Registry: echo, Repository: "org_a/app_1/web", Tag: "v1"}
	for _, m := range []protocol.OCIManifest{
		{Operation: protocol.OCIBuildTerraformModule, Component: "c", Source: testutil.TarGz(t, module), Destination: dest},
		{Operation: protocol.OCIBuildHelmChart, Component: "c", Source: testutil.TarGz(t, chart), Destination: dest},
		{Operation: protocol.OCIBuildContainerImage, Component: "c", Destination: protocol.OCIDestination{Registry: install, Repository: "web"},
			Image: &protocol.OCIImageSource{Reference: echo.Address + "/library/web:1", Username: "robot", Password: password, PlainHTTP: true}},
		{Operation: protocol.OCISync, Destination: protocol.OCIDestination{Registry: install, Repository: "web"},
			Artifact: &protocol.ArtifactRef{Registry: echo, Repository: "org_a/app_1/web", Digest: "sha256:" + strings.Repeat("1", 64)}},
	} {
		t.Run(m.Operation, func(t *testing.T) {
			j := runJob(t, m)
			if j.err == nil {
				t.Fatal("succeeded against a registry that refuses everything")
			}
			shown := j.err.Error() + "\n" + j.logs
			for _, secret := range []string{password, base64.StdEncoding.EncodeToString([]byte("robot:" + password))} {
				if strings.Contains(shown, secret) {
					t.Errorf("a credential is shown:\n%s", shown)
				}
			}
			// The registry's answer is there, scrubbed.
			if !strings.Contains(j.err.Error(), "with password "+ociclient.Redacted) {
				t.Errorf("error without the registry's (scrubbed) answer: %v", j.err)
			}
			t.Logf("error: %v", j.err)
		})
	}
}
