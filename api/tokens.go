package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/store"
)

type createTokenRequest struct {
	Name string `json:"name"`
}

// newTokenView is a token as created: the only answer that holds its value.
type newTokenView struct {
	store.APIToken
	Token string `json:"token"`
}

func (s *Server) createToken(c echo.Context) error {
	var req createTokenRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	tok, plain, err := s.store.CreateAPIToken(c.Request().Context(), orgID(c), req.Name)
	if err != nil {
		return err
	}
	noteObject(c.Request().Context(), "token_id", tok.ID)
	noteObject(c.Request().Context(), "token_name", tok.Name) // never its value
	return c.JSON(http.StatusCreated, newTokenView{APIToken: tok, Token: plain})
}

func (s *Server) listTokens(c echo.Context) error {
	toks, err := s.store.ListAPITokens(c.Request().Context(), orgID(c))
	if err != nil {
		return err
	}
	if toks == nil {
		toks = []store.APIToken{}
	}
	return c.JSON(http.StatusOK, map[string]any{"tokens": toks})
}

func (s *Server) revokeToken(c echo.Context) error { return deleteByID(c, s.store.RevokeAPIToken) }
