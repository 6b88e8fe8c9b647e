package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"gorm.io/gorm"
)

// OIDCSettings is an org's single sign-on with an OpenID provider
// (docs/architecture/dashboard.md, "Single sign-on"): its client, and the
// roles each of the provider's groups gives.
type OIDCSettings struct {
	Issuer       string `json:"issuer"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"` // sealed at rest with the org's data key
	// RedirectURL is the dashboard's /auth/oidc/callback as the provider
	// knows it.
	RedirectURL string `json:"redirect_url"`
	// GroupsClaim is the ID token's claim listing the person's groups.
	GroupsClaim string `json:"groups_claim"`
	// Scopes are asked for beside openid, profile and email (dex: groups).
	Scopes []string `json:"scopes,omitempty"`
	// Groups gives each group's roles; a person's roles are those of all
	// its groups.
	Groups map[string][]RoleBinding `json:"groups"`
}

// DefaultGroupsClaim is the groups claim when none is set.
const DefaultGroupsClaim = "groups"

// oidcSetting is the settings row of an org's OIDC settings.
func oidcSetting(orgID string) string { return "oidc/" + orgID }

// SetOIDC stores the org's OIDC settings (a FieldError names a bad field);
// an empty ClientSecret keeps the one stored.
func (s *Store) SetOIDC(ctx context.Context, orgID string, o OIDCSettings) error {
	if o.GroupsClaim == "" {
		o.GroupsClaim = DefaultGroupsClaim
	}
	for _, f := range [][2]string{{"issuer", o.Issuer}, {"redirect_url", o.RedirectURL}} {
		if u, err := url.Parse(f[1]); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fieldErr(f[0], "must be an http(s) URL")
		}
	}
	if strings.TrimSpace(o.ClientID) == "" {
		return fieldErr("client_id", "is required")
	}
	for i, sc := range o.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\"\\") {
			return fieldErr(fmt.Sprintf("scopes[%d]", i), "%q is not a scope", sc)
		}
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for group, roles := range o.Groups {
			if err := checkRoles(tx, orgID, roles); err != nil {
				var fe *FieldError
				if errors.As(err, &fe) {
					fe.Field = "groups." + group + "." + fe.Field
				}
				return err
			}
		}
		if o.ClientSecret == "" {
			old, err := getOIDC(tx, orgID)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			o.ClientSecret = old.ClientSecret
		}
		var err error
		if o.ClientSecret, err = sealValue(tx, orgID, "settings."+oidcSetting(orgID), o.ClientSecret); err != nil {
			return err
		}
		b, err := json.Marshal(o)
		if err != nil {
			return err
		}
		return tx.Save(&Setting{Name: oidcSetting(orgID), Value: string(b)}).Error
	})
}

// GetOIDC reads the org's OIDC settings, the client secret opened;
// ErrNotFound when the org has none.
func (s *Store) GetOIDC(ctx context.Context, orgID string) (OIDCSettings, error) {
	return getOIDC(s.db.WithContext(ctx), orgID)
}

func getOIDC(tx *gorm.DB, orgID string) (OIDCSettings, error) {
	st, err := first[Setting](tx, "OIDC settings", "name = ?", oidcSetting(orgID))
	if err != nil {
		return OIDCSettings{}, err
	}
	var o OIDCSettings
	if err := json.Unmarshal([]byte(st.Value), &o); err != nil {
		return OIDCSettings{}, fmt.Errorf("OIDC settings of %s: %w", orgID, err)
	}
	o.ClientSecret, err = openValue(tx, "settings."+oidcSetting(orgID), o.ClientSecret)
	return o, err
}

// DeleteOIDC turns the org's single sign-on off.
func (s *Store) DeleteOIDC(ctx context.Context, orgID string) error {
	return s.db.WithContext(ctx).Where("name = ?", oidcSetting(orgID)).Delete(&Setting{}).Error
}

// RolesOf is the roles o's groups give a person in groups (none: no
// role), each once.
func (o OIDCSettings) RolesOf(groups []string) []RoleBinding {
	var out []RoleBinding
	seen := map[RoleBinding]bool{}
	for _, g := range groups {
		for _, r := range o.Groups[g] {
			r = RoleBinding{Role: r.Role, AppID: r.AppID}
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}
