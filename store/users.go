package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Roles a user holds in an org (docs/architecture/api.md, "Users and roles").
const (
	RoleAdmin    = "admin"    // users, tokens, settings, and all the others
	RoleOperator = "operator" // provision, deploy, releases, inputs, actions
	RoleApprover = "approver" // approve and deny plans
	RoleViewer   = "viewer"   // read
)

// Roles lists every role.
var Roles = []string{RoleAdmin, RoleOperator, RoleApprover, RoleViewer}

// Kinds of user.
const (
	UserPerson  = "person"
	UserService = "service" // a service account: tokens only, no password
)

// User is a person or service account of an org.
type User struct {
	ID           string        `gorm:"primaryKey;size:32" json:"id"`
	OrgID        string        `gorm:"size:32;not null" json:"org_id"`
	Name         string        `gorm:"size:200;not null" json:"name"`
	Email        string        `gorm:"size:300;not null;default:''" json:"email,omitempty"`
	Subject      string        `gorm:"size:300;not null;default:''" json:"subject,omitempty"` // an identity provider's
	Kind         string        `gorm:"size:20;not null" json:"kind"`
	PasswordHash string        `gorm:"size:200;not null;default:''" json:"-"`
	CreatedAt    time.Time     `json:"created_at"`
	DisabledAt   *time.Time    `json:"disabled_at,omitempty"`
	Roles        []RoleBinding `gorm:"foreignKey:UserID" json:"roles"`
}

// RoleBinding gives a user a role, in every app or (AppID set) in one.
type RoleBinding struct {
	ID     string `gorm:"primaryKey;size:32" json:"-"`
	OrgID  string `gorm:"size:32;not null" json:"-"`
	UserID string `gorm:"size:32;not null" json:"-"`
	Role   string `gorm:"size:20;not null" json:"role"`
	AppID  string `gorm:"size:32;not null;default:''" json:"app_id,omitempty"`
}

// NewUser is a user to create; Password may be empty (no password sign-in).
type NewUser struct {
	OrgID, Name, Email, Subject, Kind, Password string
	Roles                                       []RoleBinding
}

// CreateUser creates a user with its roles (a FieldError names a bad field).
func (s *Store) CreateUser(ctx context.Context, n NewUser) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		u, err = createUser(tx, n, s.now())
		return err
	})
	return u, err
}

func createUser(tx *gorm.DB, n NewUser, now time.Time) (User, error) {
	n.Name = strings.TrimSpace(n.Name)
	if err := validName("name", n.Name); err != nil {
		return User{}, err
	}
	if n.Kind == "" {
		n.Kind = UserPerson
	}
	if n.Kind != UserPerson && n.Kind != UserService {
		return User{}, fieldErr("kind", "%q is not a kind of user (person or service)", n.Kind)
	}
	if n.Kind == UserService && n.Password != "" {
		return User{}, fieldErr("password", "a service account has no password: it uses API tokens")
	}
	if err := checkRoles(tx, n.OrgID, n.Roles); err != nil {
		return User{}, err
	}
	u := User{ID: NewID("usr"), OrgID: n.OrgID, Name: n.Name, Email: strings.TrimSpace(n.Email), Subject: n.Subject,
		Kind: n.Kind, CreatedAt: now}
	if n.Password != "" {
		if len(n.Password) < MinPasswordLen {
			return User{}, fieldErr("password", "must be at least %d characters", MinPasswordLen)
		}
		u.PasswordHash = hashPassword(n.Password)
	}
	if err := tx.Create(&u).Error; err != nil {
		return User{}, fmt.Errorf("create user: %w", uniqueConflict(err, "user", n.Name))
	}
	roles, err := bindRoles(tx, u, n.Roles)
	u.Roles = roles
	return u, err
}

// checkRoles refuses an unknown role or an app not of the org.
func checkRoles(tx *gorm.DB, orgID string, roles []RoleBinding) error {
	for i, r := range roles {
		if !slices.Contains(Roles, r.Role) {
			return fieldErr(fmt.Sprintf("roles[%d].role", i), "%q is not a role (%s)", r.Role, strings.Join(Roles, ", "))
		}
		if r.AppID == "" {
			continue
		}
		if _, err := first[App](tx, "app "+r.AppID, "org_id = ? AND id = ?", orgID, r.AppID); err != nil {
			if errors.Is(err, ErrNotFound) {
				return fieldErr(fmt.Sprintf("roles[%d].app_id", i), "no app %s in this org", r.AppID)
			}
			return err
		}
	}
	return nil
}

func bindRoles(tx *gorm.DB, u User, roles []RoleBinding) ([]RoleBinding, error) {
	out := []RoleBinding{}
	for _, r := range roles {
		b := RoleBinding{ID: NewID("rol"), OrgID: u.OrgID, UserID: u.ID, Role: r.Role, AppID: r.AppID}
		if err := tx.Create(&b).Error; err != nil {
			return nil, fmt.Errorf("bind role: %w", err)
		}
		out = append(out, b)
	}
	return out, nil
}

// SetUserRoles replaces the user's roles.
func (s *Store) SetUserRoles(ctx context.Context, orgID, userID string, roles []RoleBinding) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if u, err = getUser(tx, orgID, userID); err != nil {
			return err
		}
		if err := checkRoles(tx, orgID, roles); err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", u.ID).Delete(&RoleBinding{}).Error; err != nil {
			return fmt.Errorf("set roles: %w", err)
		}
		u.Roles, err = bindRoles(tx, u, roles)
		return err
	})
	return u, err
}

// GetUser reads one of the org's users with its roles.
func (s *Store) GetUser(ctx context.Context, orgID, id string) (User, error) {
	return getUser(s.db.WithContext(ctx), orgID, id)
}

func getUser(db *gorm.DB, orgID, id string) (User, error) {
	var u User
	err := db.Preload("Roles").Where("org_id = ? AND id = ?", orgID, id).First(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return User{}, fmt.Errorf("user %s: %w", id, ErrNotFound)
	}
	return u, err
}

// ListUsers lists the org's users (disabled ones too) by name.
func (s *Store) ListUsers(ctx context.Context, orgID string) ([]User, error) {
	out := []User{}
	err := s.db.WithContext(ctx).Preload("Roles").Where("org_id = ?", orgID).Order("name").Find(&out).Error
	return out, err
}

// DisableUser disables a user: its sessions and tokens stop working at once.
func (s *Store) DisableUser(ctx context.Context, orgID, id string) error {
	now := s.now()
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&User{}).Where("org_id = ? AND id = ? AND disabled_at IS NULL", orgID, id).Update("disabled_at", now)
		if res.Error != nil {
			return fmt.Errorf("disable user: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("user %s: %w", id, ErrNotFound)
		}
		if err := tx.Model(&Session{}).Where("user_id = ? AND revoked_at IS NULL", id).Update("revoked_at", now).Error; err != nil {
			return err
		}
		return tx.Model(&APIToken{}).Where("user_id = ? AND revoked_at IS NULL", id).Update("revoked_at", now).Error
	})
}

// CheckPassword returns the enabled user named userName of the org named
// orgName whose password is password; ErrUnauthorized otherwise (which of
// the three was wrong is not said).
func (s *Store) CheckPassword(ctx context.Context, orgName, userName, password string) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Preload("Roles").Joins("JOIN orgs ON orgs.id = users.org_id").
		Where("orgs.name = ? AND users.name = ? AND users.disabled_at IS NULL", orgName, userName).First(&u).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		verifyPassword(dummyHash, password) // as slow as a wrong password
		return User{}, ErrUnauthorized
	case err != nil:
		return User{}, fmt.Errorf("check password: %w", err)
	case u.PasswordHash == "": // a service account, or a person without one: as slow as a wrong password
		verifyPassword(dummyHash, password)
		return User{}, ErrUnauthorized
	case !verifyPassword(u.PasswordHash, password):
		return User{}, ErrUnauthorized
	}
	return u, nil
}

// ExternalIdentity is a person an identity provider vouched for.
type ExternalIdentity struct {
	Subject, Email, Name string
	Roles                []RoleBinding
}

// UpsertExternalUser finds the org's user by subject (else by email), or
// creates it, and gives it id's roles: the user a single sign-on makes a
// session for. A disabled user is ErrUnauthorized.
func (s *Store) UpsertExternalUser(ctx context.Context, orgID string, id ExternalIdentity) (User, error) {
	if id.Subject == "" {
		return User{}, fieldErr("subject", "is required")
	}
	var u User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Where("org_id = ? AND (subject = ? OR (subject = '' AND email <> '' AND email = ?))", orgID, id.Subject, id.Email).
			Order("subject DESC").First(&u).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			n := NewUser{OrgID: orgID, Name: externalName(id), Email: id.Email, Subject: id.Subject, Roles: id.Roles}
			if taken, err := first[User](tx, "user", "org_id = ? AND name = ?", orgID, n.Name); err == nil && taken.ID != "" {
				n.Name = strings.Trim(truncate(n.Name, 54), ".-_") + "-" + HashToken(id.Subject)[:8]
			}
			u, err = createUser(tx, n, s.now())
			return err
		}
		if err != nil {
			return fmt.Errorf("find user: %w", err)
		}
		if u.DisabledAt != nil {
			return ErrUnauthorized
		}
		if err := tx.Model(&u).Updates(map[string]any{"subject": id.Subject, "email": id.Email}).Error; err != nil {
			return err
		}
		if err := checkRoles(tx, orgID, id.Roles); err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", u.ID).Delete(&RoleBinding{}).Error; err != nil {
			return err
		}
		u.Roles, err = bindRoles(tx, u, id.Roles)
		return err
	})
	return u, err
}

// externalName is a user name (nameRE) for an identity: its email, name or
// subject, lower-cased, other characters made '-'; one taken gets a suffix.
func externalName(id ExternalIdentity) string {
	b := []byte(strings.ToLower(cmpOr(id.Email, id.Name, id.Subject)))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	name := strings.Trim(truncate(string(b), 63), ".-_")
	if name == "" {
		name = "sso-" + HashToken(id.Subject)[:8]
	}
	return name
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// GetUserByName reads one of the org's users by name.
func (s *Store) GetUserByName(ctx context.Context, orgID, name string) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Preload("Roles").Where("org_id = ? AND name = ?", orgID, name).First(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return User{}, fmt.Errorf("user %s: %w", name, ErrNotFound)
	}
	return u, err
}
