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
// and an org's token.
func newServer(t *testing.T, tls bool) (*httptest.Server, string) {
	t.Helper()
	s := storetest.Open(t, store.Postgres)
	_, token, err := s.CreateOrg(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	a := api.New(api.Config{Store: s})
	h := a.Handler()
	dashboard.Register(h, dashboard.Config{Tokens: a})
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, token
}

func signIn(t *testing.T, srv *httptest.Server, token string) *http.Response {
	t.Helper()
	res, err := srv.Client().Post(srv.URL+"/ui/session", "application/json", strings.NewReader(`{"token":"`+token+`"}`))
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

// Sign-in sets the token in an HttpOnly, SameSite=Strict cookie, Secure over
// TLS; a wrong token is 401 and sets nothing.
func TestSignInCookie(t *testing.T) {
	for _, tls := range []bool{false, true} {
		srv, token := newServer(t, tls)
		if res := signIn(t, srv, "opk_wrong"); res.StatusCode != 401 || len(res.Cookies()) != 0 {
			t.Fatalf("a wrong token: %d, cookies %v", res.StatusCode, res.Cookies())
		}
		res := signIn(t, srv, token)
		if res.StatusCode != 200 {
			t.Fatalf("sign-in: %d", res.StatusCode)
		}
		var session *http.Cookie
		for _, c := range res.Cookies() {
			if c.Name == api.SessionCookie {
				session = c
			}
		}
		if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Secure != tls {
			t.Fatalf("TLS %v: session cookie %+v", tls, session)
		}
	}
}

// Signing in with wrong tokens is limited like the API's tokens: after the
// burst, 429 with Retry-After; the right token still signs in from there.
func TestSignInGuessingIsLimited(t *testing.T) {
	s := storetest.Open(t, store.Postgres)
	_, token, err := s.CreateOrg(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	a := api.New(api.Config{Store: s, AuthLimiter: authlimit.New(authlimit.Config{Burst: 2, Every: time.Hour})})
	h := a.Handler()
	dashboard.Register(h, dashboard.Config{Tokens: a})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for i, want := range []int{401, 401, 429} {
		res := signIn(t, srv, "opat_wrong"+strings.Repeat("x", i+40))
		if res.StatusCode != want {
			t.Fatalf("wrong token %d: %d, want %d", i+1, res.StatusCode, want)
		}
		if want == 429 && res.Header.Get("Retry-After") != "3600" {
			t.Fatalf("429 without Retry-After 3600: %q", res.Header.Get("Retry-After"))
		}
	}
	if res := signIn(t, srv, token); res.StatusCode >= 400 || len(res.Cookies()) == 0 {
		t.Fatalf("the right token from the limited source: %d, cookies %v; want a session", res.StatusCode, res.Cookies())
	}
}
