package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/store"
)

// Single sign-on (docs/architecture/dashboard.md): /auth/oidc/login sends
// the browser to the org's OpenID provider (authorization code flow with
// state, nonce and PKCE S256), /auth/oidc/callback checks what comes back
// and starts a dashboard session (StartExternalSession).
const (
	oidcLoginPath    = "/auth/oidc/login"
	oidcCallbackPath = "/auth/oidc/callback"
	oidcStatusPath   = "/auth/oidc/status"
	// oidcCookie holds a sign-in under way: state, nonce, PKCE verifier
	// and org ID. SameSite=Lax: the provider's redirect back is a
	// cross-site navigation.
	oidcCookie = "outpost_oidc"
	oidcWithin = 10 * time.Minute // how long a sign-in may take at the provider
)

// registerOIDC mounts the single sign-on's endpoints (public: they are the
// way in).
func (s *Server) registerOIDC(e *echo.Echo) {
	lim := limitBody(4096)
	e.GET(oidcStatusPath, s.oidcStatus, lim)
	e.GET(oidcLoginPath, s.oidcLogin, lim)
	e.GET(oidcCallbackPath, s.oidcCallback, lim)
}

// oidcStatus says whether the org named ?org= signs in with SSO (the
// sign-in page shows its button); an unknown org is simply false.
func (s *Server) oidcStatus(c echo.Context) error {
	_, _, err := s.orgOIDC(c.Request().Context(), c.QueryParam("org"))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return c.JSON(http.StatusOK, map[string]bool{"sso": err == nil})
}

// orgOIDC is the org named name's ID and OIDC settings.
func (s *Server) orgOIDC(ctx context.Context, name string) (string, store.OIDCSettings, error) {
	org, err := s.store.GetOrgByName(ctx, strings.TrimSpace(name))
	if err != nil {
		return "", store.OIDCSettings{}, err
	}
	o, err := s.store.GetOIDC(ctx, org.ID)
	return org.ID, o, err
}

// oauthConfig is the org's client at its provider (discovered).
func oauthConfig(ctx context.Context, o store.OIDCSettings) (*oidc.Provider, *oauth2.Config, error) {
	p, err := oidc.NewProvider(ctx, o.Issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("discover the OpenID provider %s: %w", o.Issuer, err)
	}
	return p, &oauth2.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, RedirectURL: o.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: append([]string{oidc.ScopeOpenID, "profile", "email"}, o.Scopes...)}, nil
}

// oidcLogin sends the browser to the provider of the org named ?org=.
func (s *Server) oidcLogin(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 15*time.Second)
	defer cancel()
	org := c.QueryParam("org")
	orgID, o, err := s.orgOIDC(ctx, org)
	if errors.Is(err, store.ErrNotFound) {
		return oidcPage(c, http.StatusNotFound, "No single sign-on for this org",
			fmt.Sprintf("The org %q does not sign in with SSO: sign in with a user and password.", org))
	}
	if err != nil {
		return err
	}
	_, cfg, err := oauthConfig(ctx, o)
	if err != nil {
		s.log.Error("single sign-on: the provider is not reachable", "org", orgID, "err", err)
		return oidcPage(c, http.StatusBadGateway, "The identity provider is not reachable", "Try again in a moment.")
	}
	state, nonce, verifier := randomHex(), randomHex(), oauth2.GenerateVerifier()
	ck := sessionCookie(c.Request(), oidcCookie, strings.Join([]string{state, nonce, verifier, orgID}, "."), int(oidcWithin.Seconds()))
	ck.Path, ck.SameSite = "/auth/oidc/", http.SameSiteLaxMode
	http.SetCookie(c.Response(), ck)
	return c.Redirect(http.StatusFound, cfg.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)))
}

// oidcCallback checks the provider's answer (state; the code exchanged
// with the PKCE verifier; the ID token's signature, issuer, audience,
// expiry and nonce), maps the person's groups to roles and starts a
// session. Anything wrong is a page saying what, and no session.
func (s *Server) oidcCallback(c echo.Context) error {
	r := c.Request()
	ck, _ := r.Cookie(oidcCookie)
	clear := sessionCookie(r, oidcCookie, "", -1)
	clear.Path = "/auth/oidc/"
	http.SetCookie(c.Response(), clear)
	if e := r.URL.Query().Get("error"); e != "" {
		return oidcPage(c, http.StatusForbidden, "The identity provider refused the sign-in",
			e+": "+r.URL.Query().Get("error_description"))
	}
	var parts []string
	if ck != nil {
		parts = strings.Split(ck.Value, ".")
	}
	state := r.URL.Query().Get("state")
	if len(parts) != 4 || state == "" || subtle.ConstantTimeCompare([]byte(parts[0]), []byte(state)) != 1 {
		return oidcPage(c, http.StatusBadRequest, "Sign-in refused",
			"The sign-in's state does not match the one this browser started (it expired, or the link was not yours): start again from the sign-in page.")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	id, err := s.oidcIdentity(ctx, parts[3], parts[1], parts[2], r.URL.Query().Get("code"))
	var refused *oidcRefusal
	if errors.As(err, &refused) {
		return oidcPage(c, http.StatusForbidden, "Sign-in refused", refused.msg)
	}
	if err != nil {
		s.log.Warn("single sign-on failed", "org", parts[3], "err", err)
		return oidcPage(c, http.StatusBadGateway, "Sign-in failed", "The identity provider's answer could not be checked: start again from the sign-in page.")
	}
	if _, err := s.StartExternalSession(c.Response(), r, parts[3], id); err != nil {
		var he *apierr.HTTPError
		if errors.As(err, &he) {
			return oidcPage(c, he.Status, "Sign-in refused", he.Body.Message)
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/ui/")
}

// oidcRefusal is a sign-in the provider vouched for that Outpost refuses.
type oidcRefusal struct{ msg string }

func (e *oidcRefusal) Error() string { return e.msg }

// oidcIdentity exchanges code and verifies the ID token it brings: the
// person and the roles its groups give (an *oidcRefusal when none).
func (s *Server) oidcIdentity(ctx context.Context, orgID, nonce, verifier, code string) (store.ExternalIdentity, error) {
	o, err := s.store.GetOIDC(ctx, orgID)
	if err != nil {
		return store.ExternalIdentity{}, err
	}
	p, cfg, err := oauthConfig(ctx, o)
	if err != nil {
		return store.ExternalIdentity{}, err
	}
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return store.ExternalIdentity{}, fmt.Errorf("exchange the code: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := p.Verifier(&oidc.Config{ClientID: o.ClientID}).Verify(ctx, raw)
	if err != nil {
		return store.ExternalIdentity{}, fmt.Errorf("verify the ID token: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return store.ExternalIdentity{}, errors.New("the ID token's nonce is not the sign-in's")
	}
	claims := map[string]any{}
	if err := idt.Claims(&claims); err != nil {
		return store.ExternalIdentity{}, fmt.Errorf("read the ID token's claims: %w", err)
	}
	groups := stringsClaim(claims[o.GroupsClaim])
	roles := o.RolesOf(groups)
	if len(roles) == 0 {
		return store.ExternalIdentity{}, &oidcRefusal{fmt.Sprintf(
			"Your groups (%s) give no role in this org: ask its admin to map one of them to a role.", strings.Join(groups, ", "))}
	}
	email, _ := claims["email"].(string)
	name, _ := claims["preferred_username"].(string)
	if email == "" { // many providers put it only in the userinfo
		if ui, err := p.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil {
			email = ui.Email
		}
	}
	return store.ExternalIdentity{Subject: idt.Subject, Email: email, Name: name, Roles: roles}, nil
}

// stringsClaim is a claim holding a list of strings, or one string.
func stringsClaim(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

var oidcPageTemplate = template.Must(template.New("oidc").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} · Outpost</title></head>
<body><main><h1 id="sso-title">{{.Title}}</h1><p id="sso-message">{{.Message}}</p>
<p><a href="/ui/">Back to the sign-in page</a></p></main></body></html>`))

// oidcPage answers a page saying why the sign-in stopped.
func oidcPage(c echo.Context, status int, title, message string) error {
	var b strings.Builder
	if err := oidcPageTemplate.Execute(&b, map[string]string{"Title": title, "Message": message}); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	h.Set("Cache-Control", "no-store")
	return c.HTML(status, b.String())
}
