package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/dashboard"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// newServer is the API with the dashboard mounted, over TLS when tls is set,
// and the password of org acme's admin.
func newServer(t *testing.T, tls bool) (*httptest.Server, string) {
	t.Helper()
	s := storetest.Open(t, store.Postgres)
	org, err := s.CreateOrgWithAdmin(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	a := api.New(api.Config{Store: s})
	h := a.Handler()
	dashboard.Register(h, dashboard.Config{Sessions: a})
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, org.Password
}

// signIn posts acme's admin and password to the sign-in.
func signIn(t *testing.T, srv *httptest.Server, password string) *http.Response {
	t.Helper()
	body := `{"org":"acme","user":"` + store.LocalAdminName + `","password":"` + password + `"}`
	res, err := srv.Client().Post(srv.URL+"/ui/session", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// The page is served with a strict CSP and no sniffing or framing.
func TestPageHeaders(t *testing.T) {
	srv, _ := newServer(t, false)
	for _, path := range []string{"/ui/", "/ui/js/app.js", "/ui/style.css"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		csp := res.Header.Get("Content-Security-Policy")
		if res.StatusCode != 200 || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("GET %s: %d, CSP %q, nosniff %q", path, res.StatusCode, csp, res.Header.Get("X-Content-Type-Options"))
		}
	}
}

// Each asset has an ETag: a browser that asks again with it gets a 304 and
// no body; another asset's tag does not match.
func TestAssetsRevalidate(t *testing.T) {
	srv, _ := newServer(t, false)
	get := func(path, tag string) *http.Response {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if tag != "" {
			req.Header.Set("If-None-Match", tag)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	for _, path := range []string{"/ui/", "/ui/js/app.js", "/ui/style.css"} {
		tag := get(path, "").Header.Get("ETag")
		if len(tag) < 10 {
			t.Fatalf("GET %s: ETag %q", path, tag)
		}
		if res := get(path, tag); res.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d, want 304", path, res.StatusCode)
		}
		if res := get("/ui/js/api.js", tag); res.StatusCode != http.StatusOK {
			t.Errorf("GET api.js with %s's ETag: %d, want 200", path, res.StatusCode)
		}
	}
}

// Signing in with the admin's password sets a server session's ID (never a
// token) in an HttpOnly, SameSite=Strict cookie, Secure over TLS (plain
// HTTP is allowed on loopback only); a wrong password is 401 and sets
// nothing. Signing out revokes the session: its cookie no longer works.
func TestSignInCookie(t *testing.T) {
	for _, tls := range []bool{false, true} {
		srv, password := newServer(t, tls)
		if res := signIn(t, srv, "wrong password"); res.StatusCode != 401 || len(res.Cookies()) != 0 {
			t.Fatalf("a wrong password: %d, cookies %v", res.StatusCode, res.Cookies())
		}
		res := signIn(t, srv, password)
		if res.StatusCode != 200 {
			t.Fatalf("sign-in: %d", res.StatusCode)
		}
		session := cookieNamed(res, api.SessionCookie)
		if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Secure != tls ||
			!strings.HasPrefix(session.Value, store.SessionPrefix) {
			t.Fatalf("TLS %v: session cookie %+v", tls, session)
		}
		if got := withCookie(t, srv, "GET", "/v1/org", session); got != 200 {
			t.Fatalf("GET /v1/org with the session: %d", got)
		}
		out := withCookie(t, srv, "DELETE", "/ui/session", session)
		if got := withCookie(t, srv, "GET", "/v1/org", session); out != 204 || got != 401 {
			t.Fatalf("sign-out: %d; then GET /v1/org with the old cookie: %d, want 401", out, got)
		}
	}
}

func cookieNamed(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// withCookie is the status of a request with the session cookie.
func withCookie(t *testing.T, srv *httptest.Server, method, path string, session *http.Cookie) int {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, nil)
	req.AddCookie(session)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Guessing a password is limited: after the burst of failures, 429 with
// Retry-After, and that user's password is not even checked (the right one
// too), so guessing cannot go on behind the 429s. Another user's right
// password from the same address still signs in: behind a proxy every
// client may share one.
func TestSignInGuessingIsLimited(t *testing.T) {
	s := storetest.Open(t, store.Postgres)
	ctx := context.Background()
	org, err := s.CreateOrgWithAdmin(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	const otherPassword = "correct horse battery"
	if _, err := s.CreateUser(ctx, store.NewUser{OrgID: org.Org.ID, Name: "bob", Password: otherPassword,
		Roles: []store.RoleBinding{{Role: store.RoleViewer}}}); err != nil {
		t.Fatal(err)
	}
	a := api.New(api.Config{Store: s, AuthLimiter: authlimit.New(authlimit.Config{Burst: 2, Every: time.Hour})})
	h := a.Handler()
	dashboard.Register(h, dashboard.Config{Sessions: a})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for i, want := range []int{401, 401, 429} {
		res := signIn(t, srv, "wrong password"+strings.Repeat("x", i))
		if res.StatusCode != want {
			t.Fatalf("wrong password %d: %d, want %d", i+1, res.StatusCode, want)
		}
		if want == 429 && res.Header.Get("Retry-After") != "3600" {
			t.Fatalf("429 without Retry-After 3600: %q", res.Header.Get("Retry-After"))
		}
	}
	if res := signIn(t, srv, org.Password); res.StatusCode != 429 || len(res.Cookies()) != 0 {
		t.Fatalf("the right password while limited: %d, cookies %v; want 429 and no session", res.StatusCode, res.Cookies())
	}
	res, err := srv.Client().Post(srv.URL+"/ui/session", "application/json",
		strings.NewReader(`{"org":"acme","user":"bob","password":"`+otherPassword+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || cookieNamed(res, api.SessionCookie) == nil {
		t.Fatalf("another user's right password from the same address: %d; want a session", res.StatusCode)
	}
}
