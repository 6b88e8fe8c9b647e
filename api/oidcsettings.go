package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/store"
)

// getOIDC shows the org's single sign-on settings, never the client secret.
func (s *Server) getOIDC(c echo.Context) error {
	o, err := s.store.GetOIDC(c.Request().Context(), orgID(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, oidcView(o))
}

// putOIDC sets the org's single sign-on settings.
func (s *Server) putOIDC(c echo.Context) error {
	var req wire.OIDCSettings
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	if req.HasClientSecret {
		return apierr.Invalid("has_client_secret", "is shown in answers only: send client_secret")
	}
	o := store.OIDCSettings{Issuer: req.Issuer, ClientID: req.ClientID, ClientSecret: req.ClientSecret,
		RedirectURL: req.RedirectURL, GroupsClaim: req.GroupsClaim, Scopes: req.Scopes, Groups: map[string][]store.RoleBinding{}}
	for g, roles := range req.Groups {
		o.Groups[g] = bindings(roles)
	}
	ctx := c.Request().Context()
	if err := s.store.SetOIDC(ctx, orgID(c), o); err != nil {
		return err
	}
	if o, err := s.store.GetOIDC(ctx, orgID(c)); err != nil {
		return err
	} else {
		return c.JSON(http.StatusOK, oidcView(o))
	}
}

// deleteOIDC turns the org's single sign-on off (its users' sessions go on).
func (s *Server) deleteOIDC(c echo.Context) error {
	if err := s.store.DeleteOIDC(c.Request().Context(), orgID(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func oidcView(o store.OIDCSettings) wire.OIDCSettings {
	groups := map[string][]wire.RoleBinding{}
	for g, roles := range o.Groups {
		groups[g] = make([]wire.RoleBinding, len(roles))
		for i, r := range roles {
			groups[g][i] = wire.RoleBinding{Role: r.Role, AppID: r.AppID}
		}
	}
	return wire.OIDCSettings{Issuer: o.Issuer, ClientID: o.ClientID, HasClientSecret: o.ClientSecret != "",
		RedirectURL: o.RedirectURL, GroupsClaim: o.GroupsClaim, Scopes: o.Scopes, Groups: groups}
}
