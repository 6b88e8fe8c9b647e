package wire

import "time"

// RoleBinding gives a user a role in every app, or in one (app_id).
type RoleBinding struct {
	// admin (users, tokens, settings, and all the others), operator (provision, deploy, releases, inputs,
	// actions), approver (approve and deny plans) or viewer (read)
	Role string `json:"role" required:"true"`
	// the app the role is limited to; left out: every app
	AppID string   `json:"app_id,omitempty"`
	_     struct{} `additionalProperties:"false"`
}

// User is a person or service account of the org; never its password.
type User struct {
	ID    string `json:"id" required:"true"`
	OrgID string `json:"org_id" required:"true"`
	Name  string `json:"name" required:"true"`
	Email string `json:"email,omitempty"`
	// person or service (a service account: API tokens only)
	Kind string `json:"kind" required:"true"`
	// the person signs in with the org's identity provider (single sign-on), which gives its roles at each sign-in;
	// it has no password
	External   bool          `json:"external,omitempty"`
	Roles      []RoleBinding `json:"roles" required:"true"`
	CreatedAt  time.Time     `json:"created_at" required:"true"`
	DisabledAt *time.Time    `json:"disabled_at,omitempty" nullable:"true"`
}

// UserList is the org's users.
type UserList struct {
	Users []User `json:"users" required:"true"`
}

// CreateUserRequest adds a user or service account to the org.
type CreateUserRequest struct {
	Name  string `json:"name" required:"true"`
	Email string `json:"email,omitempty"`
	// person (default) or service
	Kind string `json:"kind,omitempty"`
	// a person's password for the dashboard (at least 12 characters); left out: no password sign-in
	Password string        `json:"password,omitempty"`
	Roles    []RoleBinding `json:"roles" required:"true"`
	_        struct{}      `additionalProperties:"false"`
}

// SetRolesRequest replaces a user's roles.
type SetRolesRequest struct {
	Roles []RoleBinding `json:"roles" required:"true"`
	_     struct{}      `additionalProperties:"false"`
}

// Me is who the request's credential stands for.
type Me struct {
	Org  Org   `json:"org" required:"true"`
	User *User `json:"user,omitempty"`
	// the token's ID and scopes (left out for a dashboard session)
	TokenID string   `json:"token_id,omitempty"`
	Scopes  []string `json:"scopes,omitempty"`
}
