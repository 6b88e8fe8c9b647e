package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/store"
)

func (s *Server) createToken(c echo.Context) error {
	var req wire.CreateTokenRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	tok, plain, err := s.store.CreateAPIToken(c.Request().Context(), orgID(c), req.Name)
	if err != nil {
		return err
	}
	noteObject(c.Request().Context(), "token_id", tok.ID)
	noteObject(c.Request().Context(), "token_name", tok.Name) // never its value
	// The only answer that holds the token's value.
	return c.JSON(http.StatusCreated, wire.NewToken{ID: tok.ID, OrgID: tok.OrgID, Name: tok.Name, CreatedAt: tok.CreatedAt, Token: plain})
}

func (s *Server) listTokens(c echo.Context) error {
	toks, err := s.store.ListAPITokens(c.Request().Context(), orgID(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.TokenList{Tokens: views(toks, tokenView)})
}

func (s *Server) revokeToken(c echo.Context) error { return deleteByID(c, s.store.RevokeAPIToken) }

// tokenView shows an API token, never its hash.
func tokenView(t store.APIToken) wire.Token {
	return wire.Token{ID: t.ID, OrgID: t.OrgID, Name: t.Name, CreatedAt: t.CreatedAt, RevokedAt: t.RevokedAt}
}
