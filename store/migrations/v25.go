package migrations

import (
	"time"
)

// v25 adds people: users (and service accounts) with roles, sessions held by
// the server, API tokens owned by a user with scopes, an expiry and their last
// use, the user who started each operation, who decided each plan (on its
// step, beside v22's decision), the app's four-eyes rule, and the user in
// each audit event. Tokens made before it keep working as admin tokens
// (scopes "admin", no owner).
var v25 = steps(
	create(&v25User{}, &v25RoleBinding{}, &v25Session{}),
	add("api_tokens", &v25APIToken{}, "UserID", "Scopes", "ExpiresAt", "LastUsedAt"),
	exec("UPDATE api_tokens SET scopes = 'admin'"),
	add("install_operations", &v25Operation{}, "StartedByUser"),
	add("install_steps", &v25InstallStep{}, "DecidedBy", "DecidedByUser", "DecidedAt"),
	add("apps", &v25App{}, "FourEyes"),
	add("audit_events", &v25AuditEvent{}, "UserID", "UserName"),
)

type v25User struct {
	ID           string `gorm:"primaryKey;size:32"`
	OrgID        string `gorm:"size:32;not null;uniqueIndex:idx_users_org_name"`
	Name         string `gorm:"size:200;not null;uniqueIndex:idx_users_org_name"`
	Email        string `gorm:"size:300;not null;default:''"`
	Subject      string `gorm:"size:300;not null;default:''"`
	Kind         string `gorm:"size:20;not null"`
	PasswordHash string `gorm:"size:200;not null;default:''"`
	CreatedAt    time.Time
	DisabledAt   *time.Time
}

func (v25User) TableName() string { return "users" }

type v25RoleBinding struct {
	ID     string `gorm:"primaryKey;size:32"`
	OrgID  string `gorm:"size:32;not null"`
	UserID string `gorm:"size:32;not null;index"`
	Role   string `gorm:"size:20;not null"`
	AppID  string `gorm:"size:32;not null;default:''"`
}

func (v25RoleBinding) TableName() string { return "role_bindings" }

type v25Session struct {
	ID         string    `gorm:"primaryKey;size:32"`
	OrgID      string    `gorm:"size:32;not null"`
	UserID     string    `gorm:"size:32;not null;index"`
	TokenHash  string    `gorm:"size:64;not null;uniqueIndex"`
	CreatedAt  time.Time `gorm:"not null"`
	LastSeenAt time.Time `gorm:"not null"`
	ExpiresAt  time.Time `gorm:"not null"`
	RevokedAt  *time.Time
}

func (v25Session) TableName() string { return "sessions" }

// The columns v25 adds to existing tables.
type v25APIToken struct {
	UserID     string `gorm:"size:32;not null;default:''"`
	Scopes     string `gorm:"size:100;not null;default:''"`
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
}

// v25Operation: started_by (v19) keeps the starter's name; started_by_user
// is the user's ID ("" for the platform or a token made before users).
type v25Operation struct {
	StartedByUser string `gorm:"size:32;not null;default:''"`
}

// v25InstallStep: who recorded v22's decision (name and user ID), and when.
type v25InstallStep struct {
	DecidedBy     string `gorm:"size:200;not null;default:''"`
	DecidedByUser string `gorm:"size:32;not null;default:''"`
	DecidedAt     *time.Time
}

type v25App struct {
	FourEyes bool `gorm:"not null;default:false"`
}

type v25AuditEvent struct {
	UserID   string `gorm:"size:32;not null;default:''"`
	UserName string `gorm:"size:200;not null;default:''"`
}
