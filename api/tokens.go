package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/store"
)

// createToken issues a token of the caller's, or (admins only) of another
// user or service account of the org.
func (s *Server) createToken(c echo.Context) error {
	ctx, p := c.Request().Context(), caller(c)
	var req wire.CreateTokenRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	owner := p.user.ID
	if req.UserID != "" && req.UserID != owner {
		if !p.isAdmin() {
			return apierr.New(http.StatusForbidden, codeForbidden, "user_id", "only an admin creates tokens for another user")
		}
		u, err := s.store.GetUser(ctx, p.orgID, req.UserID)
		if errors.Is(err, store.ErrNotFound) {
			return apierr.Invalid("user_id", "no user %s in this org", req.UserID)
		}
		if err != nil {
			return err
		}
		owner = u.ID
	}
	var expires *time.Time
	if req.ExpiresIn != "" {
		d, err := parseDays(req.ExpiresIn)
		if err != nil || d <= 0 {
			return apierr.Invalid("expires_in", "%q is not a duration above 0 (30d, 12h, 90m)", req.ExpiresIn)
		}
		at := s.now().Add(d)
		expires = &at
	}
	scopes := req.Scopes
	if scopes == nil {
		scopes = []string{store.ScopeAdmin} // what its user's roles allow
	}
	tok, plain, err := s.store.CreateAPIToken(ctx, store.NewAPIToken{OrgID: p.orgID, UserID: owner, Name: req.Name,
		Scopes: scopes, ExpiresAt: expires})
	if err != nil {
		return err
	}
	noteObject(ctx, "token_id", tok.ID)
	noteObject(ctx, "token_name", tok.Name) // never its value
	// The only answer that holds the token's value.
	return c.JSON(http.StatusCreated, wire.NewToken{ID: tok.ID, OrgID: tok.OrgID, Name: tok.Name, UserID: tok.UserID,
		Scopes: tok.TokenScopes(), ExpiresAt: tok.ExpiresAt, CreatedAt: tok.CreatedAt, Token: plain})
}

// parseDays is a Go duration, or a whole number of days ("30d").
func parseDays(v string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.Atoi(n)
		return time.Duration(days) * 24 * time.Hour, err
	}
	return time.ParseDuration(v)
}

// listTokens lists the org's tokens for an admin, the caller's own otherwise.
func (s *Server) listTokens(c echo.Context) error {
	p := caller(c)
	owner := p.user.ID
	if p.isAdmin() {
		owner = ""
	}
	toks, err := s.store.ListAPITokens(c.Request().Context(), p.orgID, owner)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.TokenList{Tokens: views(toks, tokenView)})
}

// revokeToken revokes one of the caller's tokens, or (an admin) any of the
// org's; another user's is not found.
func (s *Server) revokeToken(c echo.Context) error {
	ctx, p := c.Request().Context(), caller(c)
	tok, err := s.store.GetAPIToken(ctx, p.orgID, c.Param("id"))
	if err != nil {
		return err
	}
	if tok.UserID != p.user.ID && !p.isAdmin() {
		return fmt.Errorf("token %s: %w", tok.ID, store.ErrNotFound) // as a missing one

	}
	defer s.principals.forget()
	return deleteByID(c, s.store.RevokeAPIToken)
}

// tokenView shows an API token, never its hash.
func tokenView(t store.APIToken) wire.Token {
	return wire.Token{ID: t.ID, OrgID: t.OrgID, Name: t.Name, UserID: t.UserID, Scopes: nonNil(t.TokenScopes()),
		ExpiresAt: t.ExpiresAt, LastUsedAt: t.LastUsedAt, CreatedAt: t.CreatedAt, RevokedAt: t.RevokedAt}
}
