package oci_test

import (
	"archive/tar"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
)

// baseImage pushes testutil.ToolImage into the registry and returns its
// reference.
func baseImage(t testing.TB, access protocol.RegistryAccess, repo string) string {
	t.Helper()
	push(t, access, repo, "1", testutil.ToolImage(t))
	return access.Address + "/" + repo + ":1"
}

// dockerfile is multi-stage, from the base image, with a build argument.
const dockerfile = `ARG BASE
FROM ${BASE} AS build
ARG GREETING
RUN ["/tool", "write", "/out/greeting"]

FROM ${BASE} AS runtime
COPY --from=build /out/greeting /greeting
COPY hello.txt /hello.txt
`

func dockerJob(t testing.TB, access protocol.RegistryAccess, files map[string]string, args map[string]string) protocol.OCIManifest {
	return protocol.OCIManifest{
		Operation: protocol.OCIBuildDockerImage, Component: "api", Source: testutil.TarGz(t, files),
		Docker: &protocol.OCIDockerBuild{Dockerfile: "build/Dockerfile", BuildArgs: args, Target: "runtime",
			SourceDigest: "sha256:" + strings.Repeat("ab", 32)},
		Destination: protocol.OCIDestination{Registry: access, Repository: "org_a/app_1/api", Tag: "api.b1"},
	}
}

// fileOf reads a file of an image in the registry, from its last layer
// that has it.
func fileOf(t testing.TB, access protocol.RegistryAccess, repo, digest, path string) string {
	t.Helper()
	img, err := remote.Image(repoOf(t, access, repo).Digest(digest), remoteOpts(access)...)
	if err != nil {
		t.Fatal(err)
	}
	r := mutate.Extract(img)
	defer r.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no %s in the image (%v)", digest, path, err)
		}
		if h.Name == path {
			b, _ := io.ReadAll(tr)
			return string(b)
		}
	}
}

// TestBuildDockerImage: a multi-stage Dockerfile with a build argument,
// FROM an image of a registry that takes credentials, is built by the
// engine, pushed as an OCI image by digest with its provenance, and a
// rebuild after a one-line change takes the unchanged steps from the cache.
func TestBuildDockerImage(t *testing.T) {
	testutil.NeedDockerEngine(t)
	_, access := vendor(t)
	base := baseImage(t, access, "org_a/tools/base")
	files := map[string]string{"build/Dockerfile": dockerfile, "hello.txt": "hello 1\n"}
	args := map[string]string{"BASE": base, "GREETING": "bonjour"}
	j := mustRun(t, dockerJob(t, access, files, args))

	a := j.artifact
	if a.Repository != "org_a/app_1/api" || a.MediaType != string(types.OCIManifestSchema1) || a.ArtifactType != string(types.OCIConfigJSON) {
		t.Fatalf("artifact: %+v", a)
	}
	if got := resolve(t, access, a.Repository, "api.b1"); got != a.Digest {
		t.Errorf("tag api.b1 points at %s, the artifact is %s", got, a.Digest)
	}
	if got := fileOf(t, access, a.Repository, a.Digest, "greeting"); got != "bonjour\n" {
		t.Errorf("/greeting = %q, want the build argument", got)
	}
	desc, err := remote.Get(repoOf(t, access, a.Repository).Digest(a.Digest), remoteOpts(access)...)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Annotations map[string]string
		Layers      []struct{ MediaType string }
	}
	json.Unmarshal(desc.Manifest, &m)
	var gotArgs map[string]string
	json.Unmarshal([]byte(m.Annotations[protocol.AnnotationBuildArgs]), &gotArgs)
	if m.Annotations[protocol.AnnotationSourceDigest] != "sha256:"+strings.Repeat("ab", 32) || gotArgs["GREETING"] != "bonjour" ||
		!strings.HasPrefix(m.Annotations[protocol.AnnotationBuilder], "BuildKit in Docker Engine ") {
		t.Errorf("provenance: %v", m.Annotations)
	}
	for k, v := range a.Provenance { // the job reports what the manifest says
		if k == protocol.AnnotationComponent || m.Annotations[k] != v {
			t.Errorf("the job's provenance %s=%q, the manifest's %q", k, v, m.Annotations[k])
		}
	}
	if len(a.Provenance) != 3 {
		t.Errorf("the job's provenance %v: want source digest, build arguments and builder", a.Provenance)
	}
	for _, l := range m.Layers {
		if l.MediaType != string(types.OCILayer) {
			t.Errorf("layer media type %s", l.MediaType)
		}
	}
	if !strings.Contains(j.logs, `RUN ["/tool", "write", "/out/greeting"]`) {
		t.Errorf("the log does not show the build's steps:\n%s", j.logs)
	}

	// One line changed: a new image, whose RUN step the cache served.
	files["hello.txt"] = "hello 2\n"
	j2 := mustRun(t, dockerJob(t, access, files, args))
	if j2.artifact.Digest == a.Digest {
		t.Fatal("a changed context gave the same image")
	}
	if got := fileOf(t, access, a.Repository, j2.artifact.Digest, "hello.txt"); got != "hello 2\n" {
		t.Errorf("/hello.txt = %q", got)
	}
	if !stepCached(j2.logs, `RUN ["/tool", "write", "/out/greeting"]`) {
		t.Errorf("the rebuild ran the RUN step again instead of using the layer cache:\n%s", j2.logs)
	}
}

// stepCached: the log shows the step named step served from the cache.
func stepCached(logs, step string) bool {
	for _, line := range strings.Split(logs, "\n") {
		if n, name, ok := strings.Cut(line, " "); ok && strings.HasSuffix(name, step) {
			if strings.Contains(logs, n+" CACHED\n") {
				return true
			}
		}
	}
	return false
}

// TestBuildDockerImageFails: a syntax error, a FROM that does not exist
// and a failing RUN each fail the build with the builder's message, and
// push nothing.
func TestBuildDockerImageFails(t *testing.T) {
	testutil.NeedDockerEngine(t)
	_, access := vendor(t)
	base := baseImage(t, access, "org_a/tools/base")
	for _, tc := range []struct {
		name, dockerfile string
		want             *regexp.Regexp
	}{
		{"syntax error", "ARG BASE\nFROM ${BASE} AS runtime\nCOPY\n", regexp.MustCompile(`COPY requires at least (two|one) argument`)},
		{"no such base image", "FROM " + access.Address + "/org_a/tools/nope:1 AS runtime\n", regexp.MustCompile(`org_a/tools/nope:1.*not found`)},
		{"failing RUN", "ARG BASE\nFROM ${BASE} AS runtime\nRUN [\"/tool\", \"fail\"]\n", regexp.MustCompile(`/tool fail.*exit code: 3`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := runJob(t, dockerJob(t, access, map[string]string{"build/Dockerfile": tc.dockerfile}, map[string]string{"BASE": base}))
			if j.err == nil {
				t.Fatalf("the build succeeded: %+v", j.artifact)
			}
			if !tc.want.MatchString(j.err.Error()) {
				t.Errorf("error %q does not match %s\nlogs:\n%s", j.err, tc.want, j.logs)
			}
			if j.artifact.Digest != "" || len(tags(t, access, "org_a/app_1/api")) != 0 {
				t.Errorf("a failed build left an image: %+v, tags %v", j.artifact, tags(t, access, "org_a/app_1/api"))
			}
		})
	}
}
