package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/protocol"
)

// CreateOrg creates an org and its first API token, returned in plain text
// (the only time it is shown).
func (s *Store) CreateOrg(ctx context.Context, name string) (Org, string, error) {
	name = strings.TrimSpace(name)
	if err := validName("name", name); err != nil {
		return Org{}, "", err
	}
	org := Org{ID: NewID("org"), Name: name, CreatedAt: s.now()}
	var token string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&org).Error; err != nil {
			return uniqueConflict(err, "org", name)
		}
		var err error
		_, token, err = createAPIToken(tx, org.ID, "admin", s.now())
		return err
	})
	if err != nil {
		return Org{}, "", fmt.Errorf("create org: %w", err)
	}
	return org, token, nil
}

// GetOrgByName finds an org by name.
func (s *Store) GetOrgByName(ctx context.Context, name string) (Org, error) {
	return first[Org](s.db.WithContext(ctx), "org "+name, "name = ?", name)
}

// CreateAPIToken issues a new API token for an org. The plain token is
// returned once; only its hash is stored.
func (s *Store) CreateAPIToken(ctx context.Context, orgID, name string) (APIToken, string, error) {
	name = strings.TrimSpace(name)
	if err := validName("name", name); err != nil {
		return APIToken{}, "", err
	}
	return createAPIToken(s.db.WithContext(ctx), orgID, name, s.now())
}

func createAPIToken(tx *gorm.DB, orgID, name string, now time.Time) (APIToken, string, error) {
	plain := newToken(protocol.APITokenPrefix)
	t := APIToken{ID: NewID("tok"), OrgID: orgID, Name: name, TokenHash: HashToken(plain), CreatedAt: now}
	if err := tx.Create(&t).Error; err != nil {
		return APIToken{}, "", fmt.Errorf("create API token: %w", err)
	}
	return t, plain, nil
}

// ListAPITokens lists an org's tokens (never their values).
func (s *Store) ListAPITokens(ctx context.Context, orgID string) ([]APIToken, error) {
	var out []APIToken
	err := s.db.WithContext(ctx).Where("org_id = ?", orgID).Order("created_at, id").Find(&out).Error
	return out, err
}

// RevokeAPIToken revokes one of the org's tokens.
func (s *Store) RevokeAPIToken(ctx context.Context, orgID, id string) error {
	res := s.db.WithContext(ctx).Model(&APIToken{}).
		Where("org_id = ? AND id = ? AND revoked_at IS NULL", orgID, id).Update("revoked_at", s.now())
	if res.Error != nil {
		return fmt.Errorf("revoke token: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("token %s: %w", id, ErrNotFound)
	}
	return nil
}

// AuthenticateAPIToken returns the token record of a valid, unrevoked token.
func (s *Store) AuthenticateAPIToken(ctx context.Context, plain string) (APIToken, error) {
	if !strings.HasPrefix(plain, protocol.APITokenPrefix) {
		return APIToken{}, ErrUnauthorized
	}
	var t APIToken
	err := s.db.WithContext(ctx).Where("token_hash = ? AND revoked_at IS NULL", HashToken(plain)).First(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return APIToken{}, ErrUnauthorized
	}
	if err != nil {
		return APIToken{}, fmt.Errorf("authenticate: %w", err)
	}
	return t, nil
}

// LookupAPIToken finds the API token plain is, revoked or not, to say whose
// a refused call was; ErrNotFound when it is none.
func (s *Store) LookupAPIToken(ctx context.Context, plain string) (APIToken, error) {
	return first[APIToken](s.db.WithContext(ctx), "API token", "token_hash = ?", HashToken(plain))
}

// GetOrg reads an org by ID.
func (s *Store) GetOrg(ctx context.Context, id string) (Org, error) {
	return first[Org](s.db.WithContext(ctx), "org "+id, "id = ?", id)
}
