package store

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// CreateOrg creates an org, its local admin user and the admin's first API
// token, returned in plain text (the only time it is shown).
func (s *Store) CreateOrg(ctx context.Context, name string) (Org, string, error) {
	a, err := s.CreateOrgWithAdmin(ctx, name)
	return a.Org, a.Token, err
}

// LocalAdminName is the name of the user an org is created with.
const LocalAdminName = "admin"

// OrgAdmin is a new org with its local admin: the password and the token are
// in plain text here, and only here.
type OrgAdmin struct {
	Org      Org
	Admin    User
	Password string
	Token    string
}

// CreateOrgWithAdmin creates an org, its local admin user (role admin, a
// random password) and an API token of the admin's with scope admin.
func (s *Store) CreateOrgWithAdmin(ctx context.Context, name string) (OrgAdmin, error) {
	name = strings.TrimSpace(name)
	if err := validName("name", name); err != nil {
		return OrgAdmin{}, err
	}
	a := OrgAdmin{Org: Org{ID: NewID("org"), Name: name, CreatedAt: s.now()}, Password: NewPassword()}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&a.Org).Error; err != nil {
			return uniqueConflict(err, "org", name)
		}
		var err error
		a.Admin, err = createUser(tx, NewUser{OrgID: a.Org.ID, Name: LocalAdminName, Password: a.Password,
			Roles: []RoleBinding{{Role: RoleAdmin}}}, s.now())
		if err != nil {
			return err
		}
		_, a.Token, err = createAPIToken(tx, NewAPIToken{OrgID: a.Org.ID, UserID: a.Admin.ID, Name: "admin",
			Scopes: []string{ScopeAdmin}}, s.now())
		return err
	})
	if err != nil {
		return OrgAdmin{}, fmt.Errorf("create org: %w", err)
	}
	return a, nil
}

// GetOrgByName finds an org by name.
func (s *Store) GetOrgByName(ctx context.Context, name string) (Org, error) {
	return first[Org](s.db.WithContext(ctx), "org "+name, "name = ?", name)
}

// GetOrg reads an org by ID.
func (s *Store) GetOrg(ctx context.Context, id string) (Org, error) {
	return first[Org](s.db.WithContext(ctx), "org "+id, "id = ?", id)
}
