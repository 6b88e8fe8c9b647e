package oci_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

func syncManifest(from protocol.RegistryAccess, repo, digest string, to protocol.RegistryAccess, tag string) protocol.OCIManifest {
	return protocol.OCIManifest{
		Operation:   protocol.OCISync,
		Artifact:    &protocol.ArtifactRef{Registry: from, Repository: repo, Digest: digest},
		Destination: protocol.OCIDestination{Registry: to, Repository: "web", Tag: tag},
	}
}

func TestSyncCopiesImagesIndexesAndArtifactsByDigest(t *testing.T) {
	_, vendorAccess := vendor(t)
	_, installAccess := install(t)

	img := must(random.Image(8192, 3))
	imgDigest := push(t, vendorAccess, "org_a/app_1/web", "b1", img)
	idx := must(random.Index(1024, 2, 2))
	idxDigest := push(t, vendorAccess, "org_a/app_1/web", "b2", idx)
	source := testutil.TarGz(t, module)
	mod := buildModule(t, vendorAccess, source, "")

	for _, tc := range []struct{ what, repo, digest string }{
		{"image", "org_a/app_1/web", imgDigest.String()},
		{"index", "org_a/app_1/web", idxDigest.String()},
		{"terraform module", mod.artifact.Repository, mod.artifact.Digest},
	} {
		t.Run(tc.what, func(t *testing.T) {
			m := syncManifest(vendorAccess, tc.repo, tc.digest, installAccess, "")
			m.Destination.Repository = tc.repo
			j := mustRun(t, m)
			if j.artifact.Digest != tc.digest || j.artifact.Repository != tc.repo {
				t.Fatalf("synced %+v, want %s in %s", j.artifact, tc.digest, tc.repo)
			}
			desc, err := remote.Get(repoOf(t, installAccess, tc.repo).Digest(tc.digest), remoteOpts(installAccess)...)
			if err != nil {
				t.Fatalf("the install's registry does not serve %s: %v", tc.digest, err)
			}
			if desc.Digest.String() != tc.digest {
				t.Fatalf("the install's registry serves %s", desc.Digest)
			}
		})
	}

	// The index's platform images came along.
	children, _ := idx.IndexManifest()
	for _, c := range children.Manifests {
		if _, err := remote.Image(repoOf(t, installAccess, "org_a/app_1/web").Digest(c.Digest.String()), remoteOpts(installAccess)...); err != nil {
			t.Errorf("platform image %s: %v", c.Digest, err)
		}
	}
	// The terraform plugin can take its module from the install's registry.
	got, _, err := ociclient.FetchTerraformModule(t.Context(), protocol.ArtifactRef{Registry: installAccess, Repository: mod.artifact.Repository, Digest: mod.artifact.Digest})
	if err != nil || string(got) != string(source) {
		t.Errorf("module from the install's registry: %v", err)
	}
}

func TestSyncTagsAndResyncsWithoutCopying(t *testing.T) {
	vendorSrv, vendorAccess := vendor(t)
	_, installAccess := install(t)
	digest := push(t, vendorAccess, "org_a/app_1/web", "b1", must(random.Image(4096, 2))).String()

	first := mustRun(t, syncManifest(vendorAccess, "org_a/app_1/web", digest, installAccess, "v1"))
	if got := resolve(t, installAccess, "web", "v1"); got != digest {
		t.Fatalf("v1 points at %s, want %s", got, digest)
	}

	// Unchanged: nothing is copied, so the vendor's registry is not needed.
	vendorSrv.Close()
	again := mustRun(t, syncManifest(vendorAccess, "org_a/app_1/web", digest, installAccess, "v2"))
	if !reflect.DeepEqual(again.artifact, first.artifact) {
		t.Errorf("re-sync: %+v, first sync: %+v", again.artifact, first.artifact)
	}
	if !strings.Contains(again.logs, "already holds "+digest) {
		t.Errorf("re-sync logs:\n%s", again.logs)
	}
	if got := resolve(t, installAccess, "web", "v2"); got != digest {
		t.Errorf("v2 points at %s", got)
	}
}

// A re-sync that finds the digest in the install's registry (not from what
// it fetched itself: an oci sync job fetches nothing first) checks the
// manifest the registry serves before tagging it.
func TestResyncChecksWhatTheDestinationServes(t *testing.T) {
	_, vendorAccess := vendor(t)
	installSrv, installAccess := install(t)
	digest := push(t, vendorAccess, "org_a/app_1/web", "b1", must(random.Image(1024, 1))).String()
	mustRun(t, syncManifest(vendorAccess, "org_a/app_1/web", digest, installAccess, "v1"))

	tampered := installAccess
	tampered.Address = tamperingProxy(t, installSrv.Addr(), isManifest)
	j := runJob(t, syncManifest(vendorAccess, "org_a/app_1/web", digest, tampered, "v2"))
	if j.err == nil || !strings.Contains(j.err.Error(), "checking the destination: ") ||
		!strings.Contains(j.err.Error(), "/web serves a manifest with digest sha256:") {
		t.Fatalf("re-sync from a destination that serves another manifest: %v", j.err)
	}
	if got := tags(t, installAccess, "web"); len(got) != 1 || got[0] != "v1" {
		t.Errorf("after the failed re-sync the tags are %v, want [v1]", got)
	}
}

func TestSyncRefusesContentThatIsNotTheDigest(t *testing.T) {
	vendorSrv, vendorAccess := vendor(t)
	installSrv, installAccess := install(t)
	img := must(random.Image(4096, 2))
	digest := push(t, vendorAccess, "org_a/app_1/web", "b1", img).String()
	through := func(addr string, tamper func(*http.Request) bool) protocol.RegistryAccess {
		a := vendorAccess
		if addr == installSrv.Addr() {
			a = installAccess
		}
		a.Address = tamperingProxy(t, addr, tamper)
		return a
	}
	missing := "sha256:" + strings.Repeat("0", 64)
	idx := must(random.Index(1024, 1, 2))
	idxDigest := push(t, vendorAccess, "org_a/app_1/web", "b2", idx).String()
	children, _ := idx.IndexManifest()
	isChild := func(r *http.Request) bool {
		return isManifest(r) && strings.HasSuffix(r.URL.Path, children.Manifests[1].Digest.String())
	}

	for i, tc := range []struct {
		name     string
		from, to protocol.RegistryAccess
		digest   string
		want     []string // in the error
		// tagged is what v1 names after the failure ("": there is no tag).
		tagged string
	}{
		{"a digest the vendor registry does not have", vendorAccess, installAccess, missing,
			[]string{missing, "response status code 404: manifest unknown"}, ""},
		{"a tampered manifest from the vendor registry", through(vendorSrv.Addr(), isManifest), installAccess, digest,
			[]string{"org_a/app_1/web serves a manifest with digest sha256:", "for " + digest}, ""},
		{"a tampered layer from the vendor registry", through(vendorSrv.Addr(), isBlob), installAccess, digest,
			[]string{"copying " + digest, "digest invalid"}, ""},
		{"a tampered platform manifest of an index", through(vendorSrv.Addr(), isChild), installAccess, idxDigest,
			[]string{"copying " + idxDigest, children.Manifests[1].Digest.String(), "mismatch"}, ""},
		{"a destination that answers the manifest's push with another digest", vendorAccess, through(installSrv.Addr(), isManifest), digest,
			[]string{"copying " + digest, "/web-4/manifests/v1", "digest mismatch in Docker-Content-Digest", "expecting \"" + digest},
			// The manifest is pushed by tag, in one request: the registry
			// tagged what it stored, the right manifest; its answer was wrong.
			digest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := fmt.Sprintf("web-%d", i)
			m := syncManifest(tc.from, "org_a/app_1/web", tc.digest, tc.to, "v1")
			m.Destination.Repository = repo
			j := runJob(t, m)
			if j.err == nil {
				t.Fatalf("sync succeeded: %+v", j.artifact)
			}
			t.Logf("error: %v", j.err)
			for _, w := range tc.want {
				if !strings.Contains(j.err.Error(), w) {
					t.Errorf("error %q lacks %q", j.err, w)
				}
			}
			switch got := tags(t, installAccess, repo); {
			case tc.tagged == "" && len(got) != 0:
				t.Errorf("the install's registry has tags %v after a failed sync", got)
			case tc.tagged != "" && resolve(t, installAccess, repo, "v1") != tc.tagged:
				t.Errorf("after the failed sync, v1 names %s, want %s", resolve(t, installAccess, repo, "v1"), tc.tagged)
			}
		})
	}
}
