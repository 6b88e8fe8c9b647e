package oci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/runner/dockerbuild/engine"
	"github.com/outpost-dev/outpost/runner/plugins"
	"github.com/outpost-dev/outpost/runner/plugins/oci"
)

// vendorKey signs the vendor registry's credentials.
var vendorKey = registry.Key{ID: "vk", Secret: []byte("vendor-registry-key-of-32-bytes!")}

// startRegistry starts a registry on loopback for the test.
func startRegistry(t testing.TB, cfg registry.Config) *registry.Server {
	t.Helper()
	s, err := registry.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// vendor is a vendor registry (scoped, short-lived credentials) and a
// credential for org_a.
func vendor(t testing.TB) (*registry.Server, protocol.RegistryAccess) {
	t.Helper()
	s := startRegistry(t, registry.Config{Auth: registry.Tokens{Keys: &registry.StaticKeys{vendorKey}}})
	user, pass := registry.IssueCredential(vendorKey, "build-runner-org_a",
		[]registry.Scope{{Repository: "org_a/", Actions: []string{"pull", "push"}}}, time.Hour, time.Now())
	return s, protocol.RegistryAccess{Address: s.Addr(), Username: user, Password: pass, PlainHTTP: true}
}

// install is an install's own registry (one basic-auth user).
func install(t testing.TB) (*registry.Server, protocol.RegistryAccess) {
	t.Helper()
	s := startRegistry(t, registry.Config{Auth: registry.Static{Username: "install", Password: "install-secret-1"}})
	return s, protocol.RegistryAccess{Address: s.Addr(), Username: "install", Password: "install-secret-1", PlainHTTP: true}
}

// job is a finished oci job: what the runner would report.
type job struct {
	artifact protocol.Artifact
	outputs  json.RawMessage
	logs     string
	err      error // Validate's or Execute's
}

// runJob runs m's job; env is the job's environment (the runner's, such
// as OUTPOST_TERRAFORM).
func runJob(t testing.TB, m protocol.OCIManifest, env ...string) job {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	p := pluginFor(m)
	defer func() {
		if err := p.Cleanup(); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
	}()
	if err := p.Validate(raw); err != nil {
		return job{err: err}
	}
	code, err := p.Execute(context.Background(), plugins.Run{Dir: t.TempDir(), Env: env, Stdout: &logs, Stderr: &logs})
	if err != nil {
		return job{logs: logs.String(), err: err}
	}
	if code != 0 {
		t.Fatalf("exit code %d without an error", code)
	}
	out, err := p.Outputs()
	if err != nil {
		t.Fatal(err)
	}
	j := job{outputs: out}
	if err := json.Unmarshal(out, &j.artifact); err != nil {
		t.Fatalf("outputs %s: %v", out, err)
	}
	j.logs = logs.String()
	return j
}

// mustRun runs a job that must succeed.
func mustRun(t testing.TB, m protocol.OCIManifest, env ...string) job {
	t.Helper()
	j := runJob(t, m, env...)
	if j.err != nil {
		t.Fatalf("%s job: %v\nlogs:\n%s", m.Operation, j.err, j.logs)
	}
	return j
}

// remoteOpts reach a registry with an access's credential.
func remoteOpts(a protocol.RegistryAccess) []remote.Option {
	return []remote.Option{remote.WithAuth(&authn.Basic{Username: a.Username, Password: a.Password})}
}

func repoOf(t testing.TB, a protocol.RegistryAccess, repo string) name.Repository {
	t.Helper()
	r, err := name.NewRepository(a.Address+"/"+repo, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tags lists the repository's tags; none when it does not exist.
func tags(t testing.TB, a protocol.RegistryAccess, repo string) []string {
	t.Helper()
	got, err := remote.List(repoOf(t, a, repo), remoteOpts(a)...)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return nil
	}
	if err != nil {
		t.Fatalf("listing tags of %s: %v", repo, err)
	}
	return got
}

// resolve is the digest a tag points at.
func resolve(t testing.TB, a protocol.RegistryAccess, repo, tag string) string {
	t.Helper()
	desc, err := remote.Head(repoOf(t, a, repo).Tag(tag), remoteOpts(a)...)
	if err != nil {
		t.Fatalf("resolving %s:%s: %v", repo, tag, err)
	}
	return desc.Digest.String()
}

// push pushes img (an image or an index) to repo:tag.
func push(t testing.TB, a protocol.RegistryAccess, repo, tag string, img remote.Taggable) v1.Hash {
	t.Helper()
	ref := repoOf(t, a, repo).Tag(tag)
	if err := remote.Push(ref, img, remoteOpts(a)...); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	desc, err := remote.Head(ref, remoteOpts(a)...)
	if err != nil {
		t.Fatal(err)
	}
	return desc.Digest
}

// tamperingProxy fronts a registry and flips a bit of the last byte of the
// bodies of the GETs for which tamper is true: same length, another digest.
// To the pushes (PUTs) for which tamper is true, it answers with another
// digest than the registry's (Docker-Content-Digest).
func tamperingProxy(t testing.TB, addr string, tamper func(r *http.Request) bool) string {
	t.Helper()
	target, _ := url.Parse("http://" + addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		r := resp.Request
		if r.Method == http.MethodPut && resp.StatusCode == http.StatusCreated && tamper(r) {
			// The registry's answer to a push names another digest.
			if d := resp.Header.Get("Docker-Content-Digest"); d != "" {
				other := "0"
				if d[len(d)-1] == '0' {
					other = "1"
				}
				resp.Header.Set("Docker-Content-Digest", d[:len(d)-1]+other)
			}
			return nil
		}
		if r.Method != http.MethodGet || resp.StatusCode != http.StatusOK || !tamper(r) {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if len(body) > 0 {
			body[len(body)-1] ^= 1
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Del("Content-Length")
		return nil
	}
	proxy.ErrorLog = log.New(io.Discard, "", 0) // a client that gives up on a tampered body
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func isManifest(r *http.Request) bool { return strings.Contains(r.URL.Path, "/manifests/") }
func isBlob(r *http.Request) bool     { return strings.Contains(r.URL.Path, "/blobs/sha256:") }

// pluginFor is the plugin the runner runs m in: a helm_chart job's for a
// chart build (in outpost-runner-helm, with helm's chartutil.Save), a
// docker_image job's for an image build (there too, with engine.Build), an
// oci job's for the rest.
func pluginFor(m protocol.OCIManifest) plugins.Plugin {
	switch m.Operation {
	case protocol.OCIBuildHelmChart:
		return oci.ChartBuilder(chartutil.Save)()
	case protocol.OCIBuildDockerImage:
		return oci.ImageBuilder(engine.Build)()
	}
	return oci.New()
}
