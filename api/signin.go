package api

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// passwordLimitPrefix names password sign-ins for the failure limiter
// (counted per source, and per org and user name).
const passwordLimitPrefix = "pw:"

// SignIn checks a user's password and starts a dashboard session: it sets
// the session and CSRF cookies on w and returns the CSRF token. A wrong org,
// user or password is an *apierr.HTTPError 401 that does not say which; too
// many failures, a 429.
func (s *Server) SignIn(w http.ResponseWriter, r *http.Request, org, user, password string) (string, error) {
	for _, f := range [][2]string{{"org", org}, {"user", user}, {"password", password}} {
		if strings.TrimSpace(f[1]) == "" {
			return "", apierr.Invalid(f[0], "is required")
		}
	}
	org, user = strings.TrimSpace(org), strings.TrimSpace(user)
	// A password (unlike a token) is guessable: once its org/user failed too
	// often it is refused unchecked, so guessing cannot go on behind 429s.
	// The source's count only turns failures into 429s: behind a proxy every
	// client may share one address, and a right password is never refused
	// for its address's failures.
	source, key := s.limiter.Source(r), passwordLimitPrefix+org+"/"+user
	if wait := s.limiter.Wait("", key); wait > 0 {
		return "", authlimit.Refuse(w.Header(), wait)
	}
	u, err := s.store.CheckPassword(r.Context(), org, user, password)
	if errors.Is(err, store.ErrUnauthorized) {
		wait := s.limiter.Wait(source, key)
		s.limiter.Fail(source, key)
		if wait > 0 {
			return "", authlimit.Refuse(w.Header(), wait)
		}
		return "", apierr.New(http.StatusUnauthorized, protocol.CodeUnauthorized, "", "wrong org, user or password")
	}
	if err != nil {
		return "", err
	}
	return s.startSession(w, r, u)
}

// StartExternalSession starts a dashboard session for a person an identity
// provider vouched for (single sign-on): the org's user with id's subject
// (else email) is found or created and given id's roles, then signed in as
// SignIn does. It returns the CSRF token.
func (s *Server) StartExternalSession(w http.ResponseWriter, r *http.Request, orgID string, id store.ExternalIdentity) (string, error) {
	u, err := s.store.UpsertExternalUser(r.Context(), orgID, id)
	if errors.Is(err, store.ErrUnauthorized) {
		return "", apierr.New(http.StatusForbidden, codeForbidden, "", "this user is disabled")
	}
	if err != nil {
		return "", err
	}
	s.principals.forget() // its roles may have changed
	return s.startSession(w, r, u)
}

func (s *Server) startSession(w http.ResponseWriter, r *http.Request, u store.User) (string, error) {
	_, plain, err := s.store.CreateSession(r.Context(), u, s.sessionLifetime)
	if err != nil {
		return "", err
	}
	csrf := randomHex()
	http.SetCookie(w, sessionCookie(r, SessionCookie, plain, 0))
	http.SetCookie(w, sessionCookie(r, CSRFCookie, csrf, 0))
	return csrf, nil
}

// SignOut revokes the request's session, if any, and clears the cookies.
func (s *Server) SignOut(w http.ResponseWriter, r *http.Request) error {
	if ck, err := r.Cookie(SessionCookie); err == nil && ck.Value != "" {
		if err := s.store.RevokeSession(r.Context(), ck.Value); err != nil {
			return err
		}
		s.principals.forget()
	}
	for _, name := range []string{SessionCookie, CSRFCookie} {
		http.SetCookie(w, sessionCookie(r, name, "", -1))
	}
	return nil
}

// sessionCookie is a cookie of the dashboard's session: HttpOnly,
// SameSite=Strict, for the whole origin (the API reads it), and Secure
// unless the request came over plain HTTP to a loopback address (outpost
// dev); maxAge -1 deletes it. It lasts as long as the browser: the server
// ends the session.
func sessionCookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	secure := r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") || !loopbackHost(r.Host)
	return &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: secure,
		SameSite: http.SameSiteStrictMode}
}

// loopbackHost: host (with or without a port) is localhost or a loopback IP.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func randomHex() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}
