package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// The dashboard's session: the session ID in SessionCookie (the store keeps
// its hash), and a random CSRF token in CSRFCookie that a state-changing
// request authenticated by the cookie must repeat in CSRFHeader
// (docs/architecture/dashboard.md).
const (
	SessionCookie = "outpost_session"
	CSRFCookie    = "outpost_csrf"
	CSRFHeader    = "X-Outpost-CSRF"
)

// codeCSRF is the error code of a cookie-authenticated change without the
// CSRF proof.
const codeCSRF = "csrf_refused"

// requestToken is the request's credential and how it came: the bearer
// header's API token, else the session cookie's session (with the CSRF proof checked for a state-changing
// request).
func requestToken(c echo.Context) (string, string, error) {
	req := c.Request()
	switch plain, via := credential(req); via {
	case store.ViaBearer:
		return plain, via, nil
	case store.ViaSession:
		return plain, via, checkCSRF(req)
	}
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="outpost"`)
	return "", "", apierr.New(http.StatusUnauthorized, protocol.CodeUnauthorized, "", "missing API token: send Authorization: Bearer <token>")
}

// credential is the API token the request carries and how (store.ViaBearer
// or store.ViaSession), unchecked: the bearer header's, else the session
// cookie's; "" when it carries none (or a malformed header).
func credential(req *http.Request) (plain, via string) {
	if h := req.Header.Get(echo.HeaderAuthorization); h != "" {
		scheme, plain, _ := strings.Cut(h, " ")
		if plain = strings.TrimSpace(plain); strings.EqualFold(scheme, "Bearer") && plain != "" {
			return plain, store.ViaBearer
		}
		return "", ""
	}
	if ck, err := req.Cookie(SessionCookie); err == nil && ck.Value != "" {
		return ck.Value, store.ViaSession
	}
	return "", ""
}

// checkCSRF refuses a state-changing request authenticated by the session
// cookie unless it comes from the same origin and repeats the CSRF cookie in
// CSRFHeader.
func checkCSRF(req *http.Request) error {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if site := req.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return errCSRF("the request comes from another site (Sec-Fetch-Site: %s)", site)
	}
	ck, err := req.Cookie(CSRFCookie)
	sent := req.Header.Get(CSRFHeader)
	if err != nil || ck.Value == "" || sent == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(sent)) != 1 {
		return errCSRF("a change made with the session cookie needs the %s header (sign in again if it persists)", CSRFHeader)
	}
	return nil
}

func errCSRF(format string, args ...any) error {
	return apierr.New(http.StatusForbidden, codeCSRF, "", format, args...)
}

// touchEvery is how often a session's or token's last use is written: its
// idle expiry and "last used" are to this precision.
const touchEvery = time.Minute

// authenticate checks the request's credential (an API token, or the
// dashboard's session) and remembers its principal for orgID and authorize.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		plain, via, err := requestToken(c)
		if err != nil {
			return err
		}
		p, err := s.principalOf(c.Response().Header(), c.Request(), plain, via)
		if err != nil {
			if errors.Is(err, store.ErrUnauthorized) {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="outpost", error="invalid_token"`)
			}
			return err
		}
		c.Set(principalKey, p)
		req := c.Request()
		c.SetRequest(req.WithContext(context.WithValue(req.Context(), principalCtxKey{}, p)))
		return next(c)
	}
}

// principalOf is the principal of a credential: from the cache when warm,
// else from the store, counting a failure (429 once r's source or the
// credential's prefix failed too often: authlimit; a valid credential is
// never refused). A warm entry is checked again
// for expiry, and its last use written once per touchEvery.
//
// A bearer header carries an API token, the session cookie a session.
func (s *Server) principalOf(h http.Header, r *http.Request, plain, via string) (principal, error) {
	hash, now := store.HashToken(plain), s.now()
	if e, ok := s.principals.get(hash, now); ok && e.p.via == via && s.alive(e, now) {
		s.touch(r, hash, e, now)
		return e.p, nil
	}
	prefix := protocol.APITokenPrefix
	if via == store.ViaSession {
		prefix = store.SessionPrefix
	}
	att := s.limiter.Begin(r, prefix, plain)
	e, err := s.loadPrincipal(r, plain, prefix)
	if errors.Is(err, store.ErrUnauthorized) {
		if refused := att.Failed(h); refused != nil {
			return principal{}, refused
		}
	}
	if err != nil {
		return principal{}, err
	}
	s.principals.put(hash, e)
	s.touch(r, hash, e, now)
	return e.p, nil
}

func (s *Server) loadPrincipal(r *http.Request, plain, prefix string) (cachedPrincipal, error) {
	var sp store.Principal
	var err error
	via := store.ViaBearer
	if prefix == store.SessionPrefix {
		via = store.ViaSession
		sp, err = s.store.AuthenticateSession(r.Context(), plain, s.sessionIdle)
	} else {
		sp, err = s.store.AuthenticateToken(r.Context(), plain)
	}
	if err != nil {
		return cachedPrincipal{}, err
	}
	org := sp.Token.OrgID
	if via == store.ViaSession {
		org = sp.Session.OrgID
	}
	return cachedPrincipal{p: principal{orgID: org, user: sp.User, token: sp.Token, via: via}, session: sp.Session, at: s.now()}, nil
}

// alive: a cached session has not passed its expiry nor been idle too
// long; a cached token has not expired.
func (s *Server) alive(e cachedPrincipal, now time.Time) bool {
	if e.p.via == store.ViaSession {
		return now.Before(e.session.ExpiresAt) && now.Sub(e.session.LastSeenAt) < s.sessionIdle
	}
	return e.p.token.ExpiresAt == nil || now.Before(*e.p.token.ExpiresAt)
}

// touch writes a session's or token's last use when the one recorded is
// older than touchEvery.
func (s *Server) touch(r *http.Request, hash string, e cachedPrincipal, now time.Time) {
	var err error
	switch {
	case e.p.via == store.ViaSession && now.Sub(e.session.LastSeenAt) >= touchEvery:
		err = s.store.TouchSession(r.Context(), e.session.ID, now)
	case e.p.via == store.ViaBearer && (e.p.token.LastUsedAt == nil || now.Sub(*e.p.token.LastUsedAt) >= touchEvery):
		err = s.store.TouchAPIToken(r.Context(), e.p.token.ID, now)
	default:
		return
	}
	if err != nil {
		s.log.Warn("the last use of a credential was not recorded", "err", err)
		return
	}
	s.principals.touched(hash, now)
}

// getOrg is the org of the request's token (the dashboard shows its name).
func (s *Server) getOrg(c echo.Context) error {
	org, err := s.store.GetOrg(c.Request().Context(), orgID(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.Org{ID: org.ID, Name: org.Name, CreatedAt: org.CreatedAt})
}
