package wire

import "time"

// Error is the answer of every failed call.
type Error struct {
	// machine-readable, e.g. invalid_field, not_found, conflict, unauthorized, too_large
	Code    string `json:"code" required:"true"`
	Message string `json:"message" required:"true"`
	// the offending field, when there is one
	Field string `json:"field,omitempty"`
}

// Health says whether the API can serve: ok, or unavailable while its
// database does not answer.
type Health struct {
	// ok or unavailable
	Status string `json:"status" required:"true"`
}

// OpenAPIDocument is this API's OpenAPI 3.0 document.
type OpenAPIDocument map[string]any

// Org is a vendor: everything else belongs to exactly one org.
type Org struct {
	ID        string    `json:"id" required:"true"`
	Name      string    `json:"name" required:"true"`
	CreatedAt time.Time `json:"created_at" required:"true"`
}

// CreateTokenRequest creates an API token of the caller's (or, for an admin,
// another user's or a service account's) in the caller's org.
type CreateTokenRequest struct {
	Name string `json:"name" required:"true"`
	// what the token may do, within its user's roles: read, deploy, approve, exec, admin (every scope); each
	// includes read; left out: admin (all that its user's roles allow)
	Scopes []string `json:"scopes,omitempty"`
	// how long it lasts (a Go duration, or days: 30d); left out: until revoked
	ExpiresIn string `json:"expires_in,omitempty"`
	// the user it belongs to (admins only); left out: the caller
	UserID string   `json:"user_id,omitempty"`
	_      struct{} `additionalProperties:"false"`
}

// Token is an API token, never its value.
type Token struct {
	ID    string `json:"id" required:"true"`
	OrgID string `json:"org_id" required:"true"`
	Name  string `json:"name" required:"true"`
	// the user or service account it belongs to; empty for a token made before users (an admin token)
	UserID string   `json:"user_id,omitempty"`
	Scopes []string `json:"scopes" required:"true"`
	// when it stops working; left out: never
	ExpiresAt *time.Time `json:"expires_at,omitempty" nullable:"true"`
	// its last use (to the minute); left out: never used
	LastUsedAt *time.Time `json:"last_used_at,omitempty" nullable:"true"`
	CreatedAt  time.Time  `json:"created_at" required:"true"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty" nullable:"true"`
}

// NewToken is an API token as created: the only answer that holds its value.
type NewToken struct {
	ID        string     `json:"id" required:"true"`
	OrgID     string     `json:"org_id" required:"true"`
	Name      string     `json:"name" required:"true"`
	UserID    string     `json:"user_id" required:"true"`
	Scopes    []string   `json:"scopes" required:"true"`
	ExpiresAt *time.Time `json:"expires_at,omitempty" nullable:"true"`
	CreatedAt time.Time  `json:"created_at" required:"true"`
	// the token; shown only here
	Token string `json:"token" required:"true"`
}

// TokenList is the org's API tokens.
type TokenList struct {
	Tokens []Token `json:"tokens" required:"true"`
}

// SessionRequest signs in to the dashboard as a user of an org.
type SessionRequest struct {
	Org      string `json:"org"`
	User     string `json:"user"`
	Password string `json:"password"`
}

// Session is what the dashboard's page learns of its session: never the
// token, only the CSRF token its changes must repeat.
type Session struct {
	CSRFToken string `json:"csrf_token"`
}

// AuditEvent is one changing call to the API (or a refused one), recorded
// once answered. Never the request's body.
type AuditEvent struct {
	ID string `json:"id" required:"true"`
	// when the call was answered
	At time.Time `json:"at" required:"true"`
	// the API token that made the call (a revoked one, when that is why it was refused)
	TokenID   string `json:"token_id" required:"true"`
	TokenName string `json:"token_name" required:"true"`
	// the user the token or session belongs to (empty for a token made before users)
	UserID   string `json:"user_id,omitempty"`
	UserName string `json:"user_name,omitempty"`
	// bearer (Authorization header) or session (the dashboard's cookie)
	Via    string `json:"via" required:"true"`
	Method string `json:"method" required:"true"`
	// the route's pattern, e.g. /v1/installs/{id}
	Route string `json:"route" required:"true"`
	// the route's operationId
	Action string `json:"action" required:"true"`
	// the objects the call named in its path or made, by kind: app_id, install_id, operation_id, step, step_id,
	// token_id, token_name…; new_<kind> when it made one of a kind its path named; forget ("true") on a deprovision
	// that forgets what it cannot destroy
	Objects map[string]string `json:"objects" required:"true"`
	// the answer's HTTP status (499: the client went away first)
	Status int `json:"status" required:"true"`
	// a failure's error code (the Error's code)
	ErrorCode  string `json:"error_code,omitempty"`
	DurationMS int64  `json:"duration_ms" required:"true"`
}

// AuditEventList is a page of the org's audit log, newest first.
type AuditEventList struct {
	Events []AuditEvent `json:"events" required:"true"`
	// set when the page is full: pass as ?before= for the next, older, page
	NextBefore string `json:"next_before,omitempty"`
}
