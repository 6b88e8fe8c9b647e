package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/outpost-dev/outpost/store"
)

// An org's OIDC settings: read back with the client secret opened, kept
// when a change leaves it out, bad URLs and roles refused naming the
// field; a person's roles are those all its groups give, each once.
func TestOIDCSettings(t *testing.T) {
	f := newFixture(t, store.Postgres)
	ctx := context.Background()
	if _, err := f.s.GetOIDC(ctx, f.org.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an org without SSO: %v, want not found", err)
	}
	o := store.OIDCSettings{Issuer: "https://idp.test", ClientID: "outpost", ClientSecret: "s3cret",
		RedirectURL: "https://outpost.test/auth/oidc/callback", Groups: map[string][]store.RoleBinding{
			"ops": {{Role: store.RoleOperator}}, "leads": {{Role: store.RoleApprover}, {Role: store.RoleOperator}}}}
	if err := f.s.SetOIDC(ctx, f.org.ID, o); err != nil {
		t.Fatal(err)
	}
	o.ClientSecret = ""
	if err := f.s.SetOIDC(ctx, f.org.ID, o); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.GetOIDC(ctx, f.org.ID)
	if err != nil || got.ClientSecret != "s3cret" || got.GroupsClaim != store.DefaultGroupsClaim {
		t.Fatalf("settings read back: %+v, %v", got, err)
	}
	roles := got.RolesOf([]string{"ops", "leads", "unknown"})
	if want := []store.RoleBinding{{Role: store.RoleOperator}, {Role: store.RoleApprover}}; !slices.Equal(roles, want) {
		t.Fatalf("roles of ops and leads: %+v, want %+v", roles, want)
	}
	if roles := got.RolesOf([]string{"guests"}); len(roles) != 0 {
		t.Fatalf("roles of guests: %+v", roles)
	}
	for field, bad := range map[string]store.OIDCSettings{
		"issuer":    {Issuer: "idp.test", ClientID: "c", RedirectURL: o.RedirectURL},
		"client_id": {Issuer: o.Issuer, RedirectURL: o.RedirectURL},
		"scopes[1]": {Issuer: o.Issuer, ClientID: "c", RedirectURL: o.RedirectURL, Scopes: []string{"groups", "a b"}},
		"groups.ops.roles[0].role": {Issuer: o.Issuer, ClientID: "c", RedirectURL: o.RedirectURL,
			Groups: map[string][]store.RoleBinding{"ops": {{Role: "root"}}}},
	} {
		var fe *store.FieldError
		if err := f.s.SetOIDC(ctx, f.org.ID, bad); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("settings with a bad %s: %v", field, err)
		}
	}
}
