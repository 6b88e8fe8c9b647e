package oci_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	helmregistry "helm.sh/helm/v3/pkg/registry"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

var module = map[string]string{
	"main.tf":           "resource \"terraform_data\" \"x\" {}\n",
	"modules/a/main.tf": "variable \"v\" {}\n",
}

func buildModule(t *testing.T, access protocol.RegistryAccess, source []byte, tag string) job {
	t.Helper()
	return mustRun(t, protocol.OCIManifest{
		Operation:   protocol.OCIBuildTerraformModule,
		Component:   "network",
		Source:      source,
		Destination: protocol.OCIDestination{Registry: access, Repository: "org_a/app_1/network", Tag: tag},
	})
}

func TestBuildTerraformModule(t *testing.T) {
	_, access := vendor(t)
	source := testutil.TarGz(t, module)
	j := buildModule(t, access, source, "build-1")

	a := j.artifact
	if a.Repository != "org_a/app_1/network" || a.MediaType != ocispec.MediaTypeImageManifest ||
		a.ArtifactType != protocol.ArtifactTypeTerraformModule || !strings.HasPrefix(a.Digest, "sha256:") {
		t.Fatalf("artifact: %+v", a)
	}
	if got := resolve(t, access, a.Repository, "build-1"); got != a.Digest {
		t.Errorf("tag build-1 points at %s, the artifact is %s", got, a.Digest)
	}
	if !strings.Contains(j.logs, a.Digest) {
		t.Errorf("the logs do not name the digest:\n%s", j.logs)
	}

	// What the terraform plugin will get from the registry: the same bytes.
	ref := protocol.ArtifactRef{Registry: access, Repository: a.Repository, Digest: a.Digest}
	got, _, err := ociclient.FetchTerraformModule(t.Context(), ref)
	if err != nil {
		t.Fatalf("FetchTerraformModule: %v", err)
	}
	if string(got) != string(source) {
		t.Error("the fetched module differs from the built one")
	}

	// The manifest: the component, a fixed creation time, one layer; Size
	// counts it all.
	desc, err := remote.Get(repoOf(t, access, a.Repository).Digest(a.Digest), remoteOpts(access)...)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	if m.Annotations[protocol.AnnotationComponent] != "network" || m.Annotations[ocispec.AnnotationCreated] != "1970-01-01T00:00:00Z" {
		t.Errorf("annotations: %v", m.Annotations)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != protocol.MediaTypeTerraformModuleLayer || m.Layers[0].Size != int64(len(source)) {
		t.Errorf("layers: %+v", m.Layers)
	}
	if want := int64(len(desc.Manifest)) + m.Config.Size + int64(len(source)); a.Size != want {
		t.Errorf("size %d, want %d", a.Size, want)
	}

	// Reproducible: the same module, the same digest; another module, another.
	if again := buildModule(t, access, source, "build-2"); again.artifact.Digest != a.Digest {
		t.Errorf("the same module built twice: %s then %s", a.Digest, again.artifact.Digest)
	}
	changed := testutil.TarGz(t, map[string]string{"main.tf": "# changed\n"})
	if other := buildModule(t, access, changed, ""); other.artifact.Digest == a.Digest {
		t.Error("a changed module kept its digest")
	}
}

var chart = map[string]string{
	"Chart.yaml":             "apiVersion: v2\nname: web\nversion: 1.2.3+build.4\n",
	"values.yaml":            "replicas: 1\n",
	"templates/cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
	".helmignore":            "secret-notes.txt\n",
	"secret-notes.txt":       "not for the package\n",
	"charts/.gitkeep":        "",
	"templates/NOTES.txt":    "installed\n",
	"templates/_helpers.tpl": "{{- define \"web.name\" -}}web{{- end -}}\n",
}

func TestBuildHelmChart(t *testing.T) {
	_, access := vendor(t)
	m := protocol.OCIManifest{
		Operation:   protocol.OCIBuildHelmChart,
		Component:   "web",
		Source:      testutil.TarGz(t, chart),
		Destination: protocol.OCIDestination{Registry: access, Repository: "org_a/app_1/web"},
	}
	j := mustRun(t, m)
	a := j.artifact
	if a.MediaType != ocispec.MediaTypeImageManifest || a.ArtifactType != protocol.MediaTypeHelmChartConfig {
		t.Fatalf("artifact: %+v", a)
	}
	// Tagged with the chart's version, as helm tags charts.
	if got := resolve(t, access, a.Repository, "1.2.3_build.4"); got != a.Digest {
		t.Errorf("tag 1.2.3_build.4 points at %s, the chart is %s", got, a.Digest)
	}

	// helm pulls it and finds the chart, without the ignored file.
	client, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(),
		helmregistry.ClientOptBasicAuth(access.Username, access.Password),
		helmregistry.ClientOptCredentialsFile(t.TempDir()+"/config.json"))
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := client.Pull(access.Address + "/" + a.Repository + "@" + a.Digest)
	if err != nil {
		t.Fatalf("helm pull: %v", err)
	}
	if pulled.Manifest.Digest != a.Digest {
		t.Errorf("helm pulled %s, want %s", pulled.Manifest.Digest, a.Digest)
	}
	ch, err := loader.LoadArchive(strings.NewReader(string(pulled.Chart.Data)))
	if err != nil {
		t.Fatalf("loading the pulled chart: %v", err)
	}
	if ch.Name() != "web" || ch.Metadata.Version != "1.2.3+build.4" || len(ch.Templates) != 3 {
		t.Errorf("pulled chart %s %s with %d templates", ch.Name(), ch.Metadata.Version, len(ch.Templates))
	}
	for _, f := range ch.Files {
		if f.Name == "secret-notes.txt" {
			t.Error("the package holds the file .helmignore excludes")
		}
	}

	// An unchanged chart keeps its digest; a tag can be chosen.
	m.Destination.Tag = "build-2"
	if again := mustRun(t, m); again.artifact.Digest != a.Digest {
		t.Errorf("the same chart built twice: %s then %s", a.Digest, again.artifact.Digest)
	}
	if got := resolve(t, access, a.Repository, "build-2"); got != a.Digest {
		t.Errorf("tag build-2 points at %s", got)
	}
}

func TestBuildHelmChartReportsHelmsError(t *testing.T) {
	_, access := vendor(t)
	j := runJob(t, protocol.OCIManifest{
		Operation:   protocol.OCIBuildHelmChart,
		Component:   "web",
		Source:      testutil.TarGz(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: web\n"}),
		Destination: protocol.OCIDestination{Registry: access, Repository: "org_a/app_1/web"},
	})
	if j.err == nil || !strings.Contains(j.err.Error(), "source: loading the chart") || !strings.Contains(j.err.Error(), "version is required") {
		t.Fatalf("a chart without a version: %v", j.err)
	}
}

// public is the stand-in for a public registry (open, for pulling) with a
// private corner (basic auth).
func public(t *testing.T, auth registry.Authorizer) protocol.RegistryAccess {
	s := startRegistry(t, registry.Config{Auth: auth})
	a := protocol.RegistryAccess{Address: s.Addr(), PlainHTTP: true}
	if static, ok := auth.(registry.Static); ok {
		a.Username, a.Password = static.Username, static.Password
	}
	return a
}

func TestBuildContainerImage(t *testing.T) {
	_, access := vendor(t)
	pub := public(t, nil)
	img, _ := random.Image(4096, 3)
	want := push(t, pub, "library/web", "1.27", img)

	j := mustRun(t, protocol.OCIManifest{
		Operation:   protocol.OCIBuildContainerImage,
		Component:   "web",
		Image:       &protocol.OCIImageSource{Reference: pub.Address + "/library/web:1.27", PlainHTTP: true},
		Destination: protocol.OCIDestination{Registry: access, Repository: "org_a/app_1/web", Tag: "build-1"},
	})
	if j.artifact.Digest != want.String() {
		t.Fatalf("artifact digest %s, the image is %s", j.artifact.Digest, want)
	}
	if got := resolve(t, access, "org_a/app_1/web", "build-1"); got != want.String() {
		t.Errorf("build-1 points at %s", got)
	}
	copied, err := remote.Image(repoOf(t, access, "org_a/app_1/web").Digest(want.String()), remoteOpts(access)...)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := copied.Layers()
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatalf("layer of the copy: %v", err)
		}
		rc.Close()
	}
	if wantSize := imageSize(t, img); j.artifact.Size != wantSize {
		t.Errorf("size %d, want %d", j.artifact.Size, wantSize)
	}
}

func imageSize(t testing.TB, img interface {
	RawManifest() ([]byte, error)
}) int64 {
	t.Helper()
	raw, _ := img.RawManifest()
	var m ocispec.Manifest
	json.Unmarshal(raw, &m)
	size := int64(len(raw)) + m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	return size
}

func TestBuildContainerImageCopiesEveryPlatformWithCredentials(t *testing.T) {
	_, access := vendor(t)
	private := public(t, registry.Static{Username: "puller", Password: "source-secret-9"})
	idx, _ := random.Index(1024, 2, 3)
	idx = mutate.IndexMediaType(idx, types.OCIImageIndex)
	want := push(t, private, "acme/api", "2.0", idx)

	j := mustRun(t, protocol.OCIManifest{
		Operation: protocol.OCIBuildContainerImage,
		Component: "api",
		Image: &protocol.OCIImageSource{Reference: private.Address + "/acme/api@" + want.String(),
			Username: "puller", Password: "source-secret-9", PlainHTTP: true},
		Destination: protocol.OCIDestination{Registry: access, Repository: "org_a/app_1/api"},
	})
	if j.artifact.Digest != want.String() || j.artifact.MediaType != string(types.OCIImageIndex) {
		t.Fatalf("artifact %+v, want the index %s", j.artifact, want)
	}
	manifest, _ := idx.IndexManifest()
	for _, child := range manifest.Manifests {
		if _, err := remote.Image(repoOf(t, access, "org_a/app_1/api").Digest(child.Digest.String()), remoteOpts(access)...); err != nil {
			t.Errorf("platform image %s not copied: %v", child.Digest, err)
		}
	}
	if got := tags(t, access, "org_a/app_1/api"); len(got) != 0 {
		t.Errorf("tags %v without a destination tag", got)
	}
	if strings.Contains(j.logs, "source-secret-9") {
		t.Errorf("the source's password is in the logs:\n%s", j.logs)
	}
}

func TestBuildContainerImageOfAMissingImage(t *testing.T) {
	_, access := vendor(t)
	pub := public(t, nil)
	push(t, pub, "library/web", "1.27", must(random.Image(100, 1)))

	j := runJob(t, protocol.OCIManifest{
		Operation:   protocol.OCIBuildContainerImage,
		Component:   "web",
		Image:       &protocol.OCIImageSource{Reference: pub.Address + "/library/web:9.99", PlainHTTP: true},
		Destination: protocol.OCIDestination{Registry: access, Repository: "org_a/app_1/web", Tag: "build-1"},
	})
	if j.err == nil || !strings.Contains(j.err.Error(), "library/web:9.99") || !strings.Contains(j.err.Error(), "response status code 404: manifest unknown") {
		t.Fatalf("a missing image: %v; want the registry's answer (404 manifest unknown) naming the image", j.err)
	}
	if got := tags(t, access, "org_a/app_1/web"); len(got) != 0 {
		t.Errorf("the destination has tags %v after a failed build", got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A chart's build copies the images it lists, by digest, beside the chart
// (tagged as the chart is) and its artifact names each; an image that
// cannot be copied fails the build naming it, with no chart tagged.
func TestBuildHelmChartCopiesItsImages(t *testing.T) {
	_, access := vendor(t)
	pub := public(t, nil)
	idx := mutate.IndexMediaType(must(random.Index(512, 1, 2)), types.OCIImageIndex)
	want := push(t, pub, "library/nginx", "1.27", idx)
	listed := pub.Address + "/library/nginx:1.27"
	m := protocol.OCIManifest{Operation: protocol.OCIBuildHelmChart, Component: "web", Source: testutil.TarGz(t, chart),
		Images: []string{listed}, Destination: protocol.OCIDestination{Registry: access, Repository: "org_a/app_1", Tag: "web.bld_1"}}
	a := mustRun(t, m).artifact

	repo := "org_a/app_1/images/" + strings.ReplaceAll(pub.Address, ":", "-") + "/library/nginx"
	if len(a.Images) != 1 || a.Images[0] != (protocol.ArtifactImage{Reference: listed, Repository: repo, Digest: want.String(), Size: a.Images[0].Size}) ||
		a.Images[0].Size <= 0 {
		t.Fatalf("the chart's images %+v, want %s at %s@%s", a.Images, listed, repo, want)
	}
	if got := resolve(t, access, repo, "web.bld_1"); got != want.String() {
		t.Errorf("%s:web.bld_1 is %s, want the image %s", repo, got, want)
	}
	manifest, _ := idx.IndexManifest()
	for _, child := range manifest.Manifests {
		if _, err := remote.Image(repoOf(t, access, repo).Digest(child.Digest.String()), remoteOpts(access)...); err != nil {
			t.Errorf("platform image %s not copied: %v", child.Digest, err)
		}
	}

	m.Images, m.Destination.Tag = []string{pub.Address + "/library/nginx:9.99"}, "web.bld_2"
	j := runJob(t, m)
	if j.err == nil || !strings.Contains(j.err.Error(), "image "+pub.Address+"/library/nginx:9.99: ") {
		t.Fatalf("a missing image: %v; want the error to name it", j.err)
	}
	if got := tags(t, access, "org_a/app_1"); strings.Contains(strings.Join(got, ","), "web.bld_2") {
		t.Errorf("the chart is tagged %v after its image failed", got)
	}
}
