package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// SessionPrefix starts every session ID as the dashboard's cookie holds it.
const SessionPrefix = "opss_"

// Default session lifetimes: idle (since the last request) and absolute.
const (
	DefaultSessionIdle     = 12 * time.Hour
	DefaultSessionLifetime = 7 * 24 * time.Hour
)

// Session is a signed-in user; the cookie holds its ID in plain text, the
// store only its hash.
type Session struct {
	ID         string     `gorm:"primaryKey;size:32"`
	OrgID      string     `gorm:"size:32;not null"`
	UserID     string     `gorm:"size:32;not null"`
	TokenHash  string     `gorm:"size:64;not null"`
	CreatedAt  time.Time  `gorm:"not null"`
	LastSeenAt time.Time  `gorm:"not null"`
	ExpiresAt  time.Time  `gorm:"not null"`
	RevokedAt  *time.Time ``
}

// CreateSession starts a session of u lasting at most lifetime; the plain
// session ID is returned once.
func (s *Store) CreateSession(ctx context.Context, u User, lifetime time.Duration) (Session, string, error) {
	plain, now := newToken(SessionPrefix), s.now()
	ses := Session{ID: NewID("ses"), OrgID: u.OrgID, UserID: u.ID, TokenHash: HashToken(plain), CreatedAt: now,
		LastSeenAt: now, ExpiresAt: now.Add(lifetime)}
	if err := s.db.WithContext(ctx).Create(&ses).Error; err != nil {
		return Session{}, "", fmt.Errorf("create session: %w", err)
	}
	return ses, plain, nil
}

// Principal is who a credential stands for: the user (with roles) of a
// session or token; User.ID is "" for a token made before users.
type Principal struct {
	User    User
	Session Session  // set for a session
	Token   APIToken // set for an API token
}

// AuthenticateSession returns the principal of a session neither revoked,
// past its absolute expiry, idle longer than idle, nor of a disabled user;
// ErrUnauthorized otherwise.
func (s *Store) AuthenticateSession(ctx context.Context, plain string, idle time.Duration) (Principal, error) {
	if !strings.HasPrefix(plain, SessionPrefix) {
		return Principal{}, ErrUnauthorized
	}
	now := s.now()
	var ses Session
	err := s.db.WithContext(ctx).Where("token_hash = ? AND revoked_at IS NULL AND expires_at > ? AND last_seen_at > ?",
		HashToken(plain), now, now.Add(-idle)).First(&ses).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Principal{}, ErrUnauthorized
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate session: %w", err)
	}
	u, err := s.activeUser(ctx, ses.OrgID, ses.UserID)
	return Principal{User: u, Session: ses}, err
}

// activeUser is an enabled user with its roles; ErrUnauthorized when it is
// disabled or gone.
func (s *Store) activeUser(ctx context.Context, orgID, id string) (User, error) {
	u, err := s.GetUser(ctx, orgID, id)
	if errors.Is(err, ErrNotFound) || (err == nil && u.DisabledAt != nil) {
		return User{}, ErrUnauthorized
	}
	return u, err
}

// TouchSession records a request of the session at "at" (its idle expiry
// counts from there).
func (s *Store) TouchSession(ctx context.Context, id string, at time.Time) error {
	return s.db.WithContext(ctx).Model(&Session{}).Where("id = ?", id).Update("last_seen_at", at).Error
}

// RevokeSession ends the session plain is (signing out); a session that
// is not one, or ended already, is no error.
func (s *Store) RevokeSession(ctx context.Context, plain string) error {
	err := s.db.WithContext(ctx).Model(&Session{}).Where("token_hash = ? AND revoked_at IS NULL", HashToken(plain)).
		Update("revoked_at", s.now()).Error
	if err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	return nil
}

// LookupSession finds the session plain is, ended or not, to say whose a
// refused call was; ErrNotFound when it is none.
func (s *Store) LookupSession(ctx context.Context, plain string) (Session, error) {
	return first[Session](s.db.WithContext(ctx), "session", "token_hash = ?", HashToken(plain))
}
