package registry_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/outpost-dev/outpost/registry"
)

var key = registry.Key{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}

func start(t *testing.T, cfg registry.Config) *registry.Server {
	t.Helper()
	s, err := registry.Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func ref(t testing.TB, s *registry.Server, repo string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s.Addr()+"/"+repo+":v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newImage(t testing.TB) v1.Image {
	t.Helper()
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func basic(username, password string) remote.Option {
	return remote.WithAuth(&authn.Basic{Username: username, Password: password})
}

func push(t testing.TB, r name.Reference, img v1.Image, opts ...remote.Option) error {
	t.Helper()
	return remote.Write(r, img, append(opts, remote.WithContext(t.Context()))...)
}

func pull(t *testing.T, r name.Reference, opts ...remote.Option) (v1.Hash, error) {
	t.Helper()
	img, err := remote.Image(r, append(opts, remote.WithContext(t.Context()))...)
	if err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

// statusOf returns the HTTP status of a registry error, or 0.
func statusOf(err error) int {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return terr.StatusCode
	}
	return 0
}

func assertRefused(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: succeeded, want refused", what)
	}
	if s := statusOf(err); s != http.StatusUnauthorized && s != http.StatusForbidden {
		t.Fatalf("%s: %v (status %d), want 401 or 403", what, err, s)
	}
}

func TestTokensPushAndPullWithinScope(t *testing.T) {
	s := start(t, registry.Config{Auth: registry.Tokens{Keys: &registry.StaticKeys{key}}})
	user, pass := registry.IssueCredential(key, "build-1", []registry.Scope{
		{Repository: "org_a/", Actions: []string{"pull", "push"}},
	}, time.Hour, time.Now())

	img := newImage(t)
	r := ref(t, s, "org_a/app_1/web")
	if err := push(t, r, img, basic(user, pass)); err != nil {
		t.Fatalf("push with an issued credential: %v", err)
	}
	got, err := pull(t, r, basic(user, pass))
	if err != nil {
		t.Fatalf("pull with an issued credential: %v", err)
	}
	want, _ := img.Digest()
	if got != want {
		t.Fatalf("pulled %s, pushed %s", got, want)
	}

	_, err = pull(t, r)
	assertRefused(t, "anonymous pull", err)
}

func TestTokensScopeIsolation(t *testing.T) {
	s := start(t, registry.Config{Auth: registry.Tokens{Keys: &registry.StaticKeys{key}}})
	now := time.Now()
	admin := func(repo string) remote.Option {
		return basic(registry.IssueCredential(key, "admin", []registry.Scope{{Repository: repo, Actions: []string{"pull", "push"}}}, time.Hour, now))
	}
	// org B's repository and another app of org A, holding images.
	for _, repo := range []string{"org_b/app_9/web", "org_ab/app_1/web", "org_a/app_2/web"} {
		if err := push(t, ref(t, s, repo), newImage(t), admin(repo)); err != nil {
			t.Fatalf("seeding %s: %v", repo, err)
		}
	}

	orgA := basic(registry.IssueCredential(key, "runner-a", []registry.Scope{
		{Repository: "org_a/", Actions: []string{"pull", "push"}},
	}, time.Hour, now))
	// Fresh images: an image whose blobs already exist may need only pull.
	assertRefused(t, "org A pushing to org B", push(t, ref(t, s, "org_b/app_9/web"), newImage(t), orgA))
	assertRefused(t, "org A pushing to org_ab (prefix look-alike)", push(t, ref(t, s, "org_ab/app_1/web"), newImage(t), orgA))
	_, err := pull(t, ref(t, s, "org_b/app_9/web"), orgA)
	assertRefused(t, "org A pulling from org B", err)

	oneApp := basic(registry.IssueCredential(key, "install-1", []registry.Scope{
		{Repository: "org_a/app_1/web", Actions: []string{"pull"}},
	}, time.Hour, now))
	_, err = pull(t, ref(t, s, "org_a/app_2/web"), oneApp)
	assertRefused(t, "pulling another app's repository", err)
	assertRefused(t, "pushing with a pull-only credential", push(t, ref(t, s, "org_a/app_1/web"), newImage(t), oneApp))
}

func TestTokensRefusesExpiredTamperedAndForeignCredentials(t *testing.T) {
	s := start(t, registry.Config{Auth: registry.Tokens{Keys: &registry.StaticKeys{key}}})
	scopes := []registry.Scope{{Repository: "org_a/", Actions: []string{"pull", "push"}}}
	r := ref(t, s, "org_a/app_1/web")
	if err := push(t, r, newImage(t), basic(registry.IssueCredential(key, "seed", scopes, time.Hour, time.Now()))); err != nil {
		t.Fatal(err)
	}

	user, pass := registry.IssueCredential(key, "runner-a", scopes, time.Hour, time.Now().Add(-2*time.Hour))
	_, err := pull(t, r, basic(user, pass))
	assertRefused(t, "expired credential", err)

	user, pass = registry.IssueCredential(key, "runner-a", []registry.Scope{{Repository: "org_b/", Actions: []string{"pull"}}}, time.Hour, time.Now())
	_, good := registry.IssueCredential(key, "runner-a", scopes, time.Hour, time.Now())
	// Claims of one credential with the signature of another.
	tampered := strings.Split(good, ".")[0] + "." + strings.Split(pass, ".")[1]
	_, err = pull(t, r, basic(user, tampered))
	assertRefused(t, "tampered credential", err)

	_, err = pull(t, r, basic("someone-else", good))
	assertRefused(t, "credential presented under another username", err)

	_, otherKey := registry.IssueCredential(registry.Key{ID: key.ID, Secret: []byte("another key of 32 bytes, 1234567")}, "runner-a", scopes, time.Hour, time.Now())
	_, err = pull(t, r, basic("runner-a", otherKey))
	assertRefused(t, "credential signed with another key", err)
}

func TestRefusalChallengesForBasicAuth(t *testing.T) {
	s := start(t, registry.Config{Auth: registry.Static{Username: "u", Password: "p"}})
	resp, err := http.Get("http://" + s.Addr() + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic realm=") {
		t.Fatalf("GET /v2/ without credentials: %d, WWW-Authenticate %q; want 401 with a Basic challenge",
			resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

func TestStatic(t *testing.T) {
	s := start(t, registry.Config{Auth: registry.Static{Username: "install", Password: "s3cret"}})
	r := ref(t, s, "anything/at/all")
	img := newImage(t)
	if err := push(t, r, img, basic("install", "s3cret")); err != nil {
		t.Fatalf("push: %v", err)
	}
	if _, err := pull(t, r, basic("install", "s3cret")); err != nil {
		t.Fatalf("pull: %v", err)
	}
	_, err := pull(t, r, basic("install", "wrong"))
	assertRefused(t, "wrong password", err)
	_, err = pull(t, r, basic("other", "s3cret"))
	assertRefused(t, "wrong user", err)
}

func TestFilesystemStorageSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := registry.Start(t.Context(), registry.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	img := newImage(t)
	if err := push(t, ref(t, s, "org_a/app_1/web"), img); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := start(t, registry.Config{Dir: dir})
	got, err := pull(t, ref(t, s2, "org_a/app_1/web"))
	if err != nil {
		t.Fatalf("pull after restart: %v", err)
	}
	if want, _ := img.Digest(); got != want {
		t.Fatalf("after restart: %s, want %s", got, want)
	}
}

func TestCloseOnContextEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s, err := registry.Start(ctx, registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get("http://" + s.Addr() + "/v2/")
		if err != nil {
			return // no longer serving
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("registry still serving 5s after its context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStartRefusesBusyAddress(t *testing.T) {
	s := start(t, registry.Config{})
	_, err := registry.Start(t.Context(), registry.Config{Addr: s.Addr()})
	if err == nil || !strings.Contains(err.Error(), s.Addr()) {
		t.Fatalf("second Start on %s: %v, want an error naming the address", s.Addr(), err)
	}
}

// A credential names its key: an org's key grants only the org's
// repositories (and pull of the platform's), whatever its scopes say; a
// credential of a key no longer known (retired) is refused.
func TestTokensKeysPerOrg(t *testing.T) {
	orgA, orgB := registry.Key{ID: "ka", Owner: "org_a", Secret: []byte("key of org a, 32 bytes long.....")},
		registry.Key{ID: "kb", Owner: "org_b", Secret: []byte("key of org b, 32 bytes long.....")}
	keys := registry.StaticKeys{key, orgA, orgB}
	s := start(t, registry.Config{Auth: registry.Tokens{Keys: &keys}})
	all := []registry.Scope{{Repository: "org_a/", Actions: []string{"pull", "push"}}, {Repository: "org_b/", Actions: []string{"pull", "push"}},
		{Repository: registry.Shared, Actions: []string{"pull", "push"}}}
	for _, repo := range []string{"org_a/app_1/web", "org_b/app_1/web", registry.Shared + "runner"} {
		if err := push(t, ref(t, s, repo), newImage(t), basic(registry.IssueCredential(key, "admin", all, time.Hour, time.Now()))); err != nil {
			t.Fatalf("seeding %s with the platform's key: %v", repo, err)
		}
	}
	a := basic(registry.IssueCredential(orgA, "runner-a", all, time.Hour, time.Now()))
	if _, err := pull(t, ref(t, s, "org_a/app_1/web"), a); err != nil {
		t.Errorf("org A's key pulling org A's repository: %v", err)
	}
	if _, err := pull(t, ref(t, s, registry.Shared+"runner"), a); err != nil {
		t.Errorf("org A's key pulling the platform's repository: %v", err)
	}
	_, err := pull(t, ref(t, s, "org_b/app_1/web"), a)
	assertRefused(t, "org A's key granting org B's repository", err)
	assertRefused(t, "org A's key pushing to the platform's repository", push(t, ref(t, s, registry.Shared+"runner"), newImage(t), a))

	b := basic(registry.IssueCredential(orgB, "runner-b", all, time.Hour, time.Now()))
	keys = registry.StaticKeys{key, orgA} // org B's key retired
	_, err = pull(t, ref(t, s, "org_b/app_1/web"), b)
	assertRefused(t, "a credential of a retired key", err)
}
