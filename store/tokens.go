package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/protocol"
)

// API token scopes: what a token may do, within its user's roles.
const (
	ScopeRead    = "read"
	ScopeDeploy  = "deploy"
	ScopeApprove = "approve"
	ScopeExec    = "exec"
	ScopeAdmin   = "admin" // every scope
)

// Scopes lists every scope.
var Scopes = []string{ScopeRead, ScopeDeploy, ScopeApprove, ScopeExec, ScopeAdmin}

// NewAPIToken is a token to issue. UserID "" is allowed only for tokens the
// platform makes for itself (none today): the API always sets it.
type NewAPIToken struct {
	OrgID, UserID, Name string
	Scopes              []string
	ExpiresAt           *time.Time
}

// TokenScopes is a token's scopes as a list.
func (t APIToken) TokenScopes() []string {
	if t.Scopes == "" {
		return nil
	}
	return strings.Split(t.Scopes, ",")
}

// CreateAPIToken issues a new API token. The plain token is returned once;
// only its hash is stored.
func (s *Store) CreateAPIToken(ctx context.Context, n NewAPIToken) (APIToken, string, error) {
	return createAPIToken(s.db.WithContext(ctx), n, s.now())
}

func createAPIToken(tx *gorm.DB, n NewAPIToken, now time.Time) (APIToken, string, error) {
	n.Name = strings.TrimSpace(n.Name)
	if err := validName("name", n.Name); err != nil {
		return APIToken{}, "", err
	}
	if len(n.Scopes) == 0 {
		return APIToken{}, "", fieldErr("scopes", "at least one scope is required (%s)", strings.Join(Scopes, ", "))
	}
	for i, sc := range n.Scopes {
		if !slices.Contains(Scopes, sc) {
			return APIToken{}, "", fieldErr(fmt.Sprintf("scopes[%d]", i), "%q is not a scope (%s)", sc, strings.Join(Scopes, ", "))
		}
	}
	if n.ExpiresAt != nil && !n.ExpiresAt.After(now) {
		return APIToken{}, "", fieldErr("expires_at", "is not in the future")
	}
	plain := newToken(protocol.APITokenPrefix)
	t := APIToken{ID: NewID("tok"), OrgID: n.OrgID, UserID: n.UserID, Name: n.Name, TokenHash: HashToken(plain),
		Scopes: strings.Join(slices.Compact(slices.Sorted(slices.Values(n.Scopes))), ","), ExpiresAt: n.ExpiresAt, CreatedAt: now}
	if err := tx.Create(&t).Error; err != nil {
		return APIToken{}, "", fmt.Errorf("create API token: %w", err)
	}
	return t, plain, nil
}

// ListAPITokens lists an org's tokens (never their values); userID "" lists
// everyone's.
func (s *Store) ListAPITokens(ctx context.Context, orgID, userID string) ([]APIToken, error) {
	out := []APIToken{}
	q := s.db.WithContext(ctx).Where("org_id = ?", orgID)
	if userID != "" {
		q = q.Where("user_id = ?", userID)
	}
	err := q.Order("created_at, id").Find(&out).Error
	return out, err
}

// GetAPIToken reads one of the org's tokens.
func (s *Store) GetAPIToken(ctx context.Context, orgID, id string) (APIToken, error) {
	return first[APIToken](s.db.WithContext(ctx), "token "+id, "org_id = ? AND id = ?", orgID, id)
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

// AuthenticateAPIToken returns the token record of a valid token: neither
// revoked nor expired.
func (s *Store) AuthenticateAPIToken(ctx context.Context, plain string) (APIToken, error) {
	if !strings.HasPrefix(plain, protocol.APITokenPrefix) {
		return APIToken{}, ErrUnauthorized
	}
	var t APIToken
	err := s.db.WithContext(ctx).Where("token_hash = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)",
		HashToken(plain), s.now()).First(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return APIToken{}, ErrUnauthorized
	}
	if err != nil {
		return APIToken{}, fmt.Errorf("authenticate: %w", err)
	}
	return t, nil
}

// AuthenticateToken is the principal of a valid API token: the token and
// its (enabled) user, none for a token made before users.
func (s *Store) AuthenticateToken(ctx context.Context, plain string) (Principal, error) {
	t, err := s.AuthenticateAPIToken(ctx, plain)
	if err != nil || t.UserID == "" {
		return Principal{Token: t}, err
	}
	u, err := s.activeUser(ctx, t.OrgID, t.UserID)
	return Principal{User: u, Token: t}, err
}

// TouchAPIToken records the token's last use.
func (s *Store) TouchAPIToken(ctx context.Context, id string, at time.Time) error {
	return s.db.WithContext(ctx).Model(&APIToken{}).Where("id = ?", id).Update("last_used_at", at).Error
}

// LookupAPIToken finds the API token plain is, revoked or not, to say whose
// a refused call was; ErrNotFound when it is none.
func (s *Store) LookupAPIToken(ctx context.Context, plain string) (APIToken, error) {
	return first[APIToken](s.db.WithContext(ctx), "API token", "token_hash = ?", HashToken(plain))
}
