package api

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// The dashboard's session (package dashboard sets the cookies): the API token
// in SessionCookie, and a random CSRF token in CSRFCookie that a
// state-changing request authenticated by the cookie must repeat in
// CSRFHeader (docs/architecture/dashboard.md).
const (
	SessionCookie = "outpost_session"
	CSRFCookie    = "outpost_csrf"
	CSRFHeader    = "X-Outpost-CSRF"
)

// codeCSRF is the error code of a cookie-authenticated change without the
// CSRF proof.
const codeCSRF = "csrf_refused"

// CheckToken says whether plain, sent by r, is a valid API token (the
// dashboard's sign-in); the error is a failure to find out, or an
// *apierr.HTTPError to answer as it is (429: too many failures, Retry-After
// set on w).
func (s *Server) CheckToken(w http.ResponseWriter, r *http.Request, plain string) (bool, error) {
	_, err := s.checkAPIToken(w.Header(), r, plain)
	if errors.Is(err, store.ErrUnauthorized) {
		return false, nil
	}
	return err == nil, err
}

// checkAPIToken authenticates plain and counts a failure: 429 when r's
// source or plain's prefix failed too often (authlimit).
func (s *Server) checkAPIToken(h http.Header, r *http.Request, plain string) (store.APIToken, error) {
	att := s.limiter.Begin(r, protocol.APITokenPrefix, plain)
	tok, err := s.store.AuthenticateAPIToken(r.Context(), plain)
	if errors.Is(err, store.ErrUnauthorized) {
		if refused := att.Failed(h); refused != nil {
			return tok, refused
		}
	}
	return tok, err
}

// requestToken is the request's API token: the bearer header's, else the
// session cookie's (with the CSRF proof checked for a state-changing
// request).
func requestToken(c echo.Context) (string, error) {
	req := c.Request()
	switch plain, via := credential(req); via {
	case store.ViaBearer:
		return plain, nil
	case store.ViaSession:
		return plain, checkCSRF(req)
	}
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="outpost"`)
	return "", apierr.New(http.StatusUnauthorized, protocol.CodeUnauthorized, "", "missing API token: send Authorization: Bearer <token>")
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

// authenticate checks the request's API token and remembers it for orgID.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		plain, err := requestToken(c)
		if err != nil {
			return err
		}
		tok, err := s.checkAPIToken(c.Response().Header(), c.Request(), plain)
		if err != nil {
			if errors.Is(err, store.ErrUnauthorized) {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="outpost", error="invalid_token"`)
			}
			return err
		}
		c.Set(tokenKey, tok)
		return next(c)
	}
}

// getOrg is the org of the request's token (the dashboard shows its name).
func (s *Server) getOrg(c echo.Context) error {
	org, err := s.store.GetOrg(c.Request().Context(), orgID(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.Org{ID: org.ID, Name: org.Name, CreatedAt: org.CreatedAt})
}
