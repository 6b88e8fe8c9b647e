package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/store"
)

// The dashboard's session cookie authenticates like the bearer header; a
// change made with it needs the CSRF header matching the CSRF cookie, and a
// bearer header needs none.
func TestSessionCookieAndCSRF(t *testing.T) {
	e := newTestEnv(t)
	call := func(method, path, csrf string, cookies ...*http.Cookie) int {
		t.Helper()
		return e.sendCookies(method, path, csrf, `{"name":"ci","scopes":["read"]}`, cookies...).status
	}
	session, proof := e.signIn("acme", store.LocalAdminName, e.password)
	if got := call("GET", "/v1/org", "", session); got != 200 {
		t.Fatalf("GET /v1/org with the session cookie: %d", got)
	}
	for name, v := range map[string]string{"a wrong session": "opss_wrong", "an API token": e.token} {
		if got := call("GET", "/v1/org", "", &http.Cookie{Name: SessionCookie, Value: v}); got != 401 {
			t.Fatalf("%s in the cookie: %d, want 401", name, got)
		}
	}
	for _, csrf := range []string{"", "proof-2"} {
		if got := call("POST", "/v1/tokens", csrf, session, proof); got != 403 {
			t.Fatalf("POST with the cookie and CSRF header %q: %d, want 403", csrf, got)
		}
	}
	if got := call("POST", "/v1/tokens", proof.Value, session, proof); got != 201 {
		t.Fatalf("POST with the cookie and its CSRF proof: %d, want 201", got)
	}
	e.call("POST", "/v1/tokens", map[string]any{"name": "ci2", "scopes": []string{"read"}}, 201, nil)
}

// A GET answer carries an ETag; asked again with it, the API answers 304
// until the answer changes.
func TestETagRevalidation(t *testing.T) {
	e := newTestEnv(t)
	get := func(etag string) response {
		t.Helper()
		req, _ := http.NewRequest("GET", e.http.URL+"/v1/tokens", nil)
		req.Header.Set("Authorization", "Bearer "+e.token)
		req.Header.Set("If-None-Match", etag)
		return e.do(req)
	}
	first := get("")
	tag := first.header.Get("ETag")
	if first.status != 200 || tag == "" {
		t.Fatalf("first GET: %d, ETag %q", first.status, tag)
	}
	if res := get(tag); res.status != 304 || len(res.body) != 0 {
		t.Fatalf("GET with If-None-Match of the same answer: %s, want 304 and no body", res)
	}
	e.call("POST", "/v1/tokens", map[string]any{"name": "another", "scopes": []string{"read"}}, 201, nil)
	if res := get(tag); res.status != 200 || res.header.Get("ETag") == tag {
		t.Fatalf("GET after a change: %d, ETag %q (was %q)", res.status, res.header.Get("ETag"), tag)
	}
}

// sendCookies calls the API as the dashboard does: with cookies and, unless
// csrf is "", the CSRF header.
func (e *testEnv) sendCookies(method, path, csrf, body string, cookies ...*http.Cookie) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.http.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if csrf != "" {
		req.Header.Set(CSRFHeader, csrf)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return e.do(req)
}

// signIn signs in with a password as the dashboard does (Server.SignIn on
// a loopback request) and returns the session and CSRF cookies it set.
func (e *testEnv) signIn(org, user, password string) (session, csrf *http.Cookie) {
	e.t.Helper()
	rec := httptest.NewRecorder()
	if _, err := e.srv.SignIn(rec, httptest.NewRequest("POST", "http://127.0.0.1/ui/session", nil), org, user, password); err != nil {
		e.t.Fatalf("sign in as %s/%s: %v", org, user, err)
	}
	for _, c := range rec.Result().Cookies() {
		switch c.Name {
		case SessionCookie:
			session = c
		case CSRFCookie:
			csrf = c
		}
	}
	if session == nil || csrf == nil {
		e.t.Fatalf("sign-in set cookies %v", rec.Result().Cookies())
	}
	return session, csrf
}

// A session ends 12 h after its last request (idle) and 7 days after
// sign-in (absolute), whatever its use; the cookie then answers 401.
func TestSessionExpiry(t *testing.T) {
	e := newTestEnv(t)
	if store.DefaultSessionIdle != 12*time.Hour || store.DefaultSessionLifetime != 7*24*time.Hour {
		t.Fatalf("defaults: idle %v, lifetime %v", store.DefaultSessionIdle, store.DefaultSessionLifetime)
	}
	now := time.Now()
	for _, tc := range []struct {
		name    string
		set     map[string]any
		wantGet int
	}{
		{"used 11 h ago, 6 days old", map[string]any{"last_seen_at": now.Add(-11 * time.Hour), "created_at": now.Add(-6 * 24 * time.Hour)}, 200},
		{"idle 12 h", map[string]any{"last_seen_at": now.Add(-12*time.Hour - time.Minute)}, 401},
		{"used now, past its 7 days", map[string]any{"last_seen_at": now, "expires_at": now.Add(-time.Second)}, 401},
	} {
		session, _ := e.signIn("acme", store.LocalAdminName, e.password)
		var ses store.Session
		if err := e.store.DB().Where("token_hash = ?", store.HashToken(session.Value)).First(&ses).Error; err != nil {
			t.Fatal(err)
		}
		if d := ses.ExpiresAt.Sub(ses.CreatedAt); d != store.DefaultSessionLifetime {
			t.Fatalf("a new session expires %v after sign-in", d)
		}
		if err := e.store.DB().Model(&store.Session{}).Where("id = ?", ses.ID).Updates(tc.set).Error; err != nil {
			t.Fatal(err)
		}
		e.srv.principals.forget() // as on a replica that has not seen it, or 10 s later
		if got := e.sendCookies("GET", "/v1/org", "", "", session).status; got != tc.wantGet {
			t.Errorf("%s: GET /v1/org: %d, want %d", tc.name, got, tc.wantGet)
		}
	}
}
